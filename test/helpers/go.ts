// Go's reference implementation of the transparency log (golang.org/x/mod/sumdb/note and
// sumdb/tlog, Debian's golang-golang-x-mod-dev) as test/go/tlogref, built once per run
// with GOPATH=/usr/share/gocode GO111MODULE=off. Where Go or the x/mod sources are
// missing the suites that need it are skipped and say why; under CI=true that is a
// failure (.ci/run installs golang-go and golang-golang-x-mod-dev).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from './temp.js';

export const GOPATH = '/usr/share/gocode';
const ROOT = new URL('../../', import.meta.url).pathname;

/** Why Go's reference cannot be built here (null: it can). */
export function goUnavailable(): string | null {
  const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/tlog'))) return `golang.org/x/mod is not in ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

/** Runs `tests` when Go is there; otherwise says why and skips them, or under CI=true fails in their place. */
export function runWithGo(tests: Test): void {
  const reason = goUnavailable();
  if (reason === null) return tests.run();
  if (process.env.CI === 'true') {
    const ci = suite('Go reference (CI)');
    ci('Go and golang.org/x/mod are installed', () => assert.unreachable(reason));
    return ci.run();
  }
  console.log(`  (skipped: ${reason})`);
}

let built: string | undefined;

/** Builds test/go/tlogref (once per process) and returns the binary's path. */
export function tlogref(): string {
  if (built !== undefined) return built;
  const out = join(tempDir('provenant-tlogref-'), 'tlogref');
  const env = {
    ...process.env,
    GOPATH,
    GO111MODULE: 'off',
    // a build cache this user can write, shared by runs
    GOCACHE: process.env.GOCACHE ?? join(tmpdir(), `provenant-gocache-${process.getuid?.() ?? 0}`),
  };
  const r = spawnSync('go', ['build', '-o', out, './test/go/tlogref'], { cwd: ROOT, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`go build test/go/tlogref failed: ${r.stderr || r.error?.message}`);
  built = out;
  return out;
}

/** Runs tlogref with `args`; its stdout parsed as JSON, or an Error carrying its stderr. */
export function runTlogref(...args: string[]): { ok: true; json: any } | { ok: false; stderr: string } {
  const r = spawnSync(tlogref(), args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) return { ok: false, stderr: r.stderr };
  return { ok: true, json: JSON.parse(r.stdout) };
}
