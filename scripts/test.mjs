// `npm test`: the type check, a fresh compile of the parts that run as plain JS
// (workers load from dist/, `provenant serve` from server/dist/), then every uvu
// suite with the default WebAssembly build, and the library suites again with the
// scalar build. Ends with the line
// "N passed, N failed[, N skipped]" and exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
let passed = 0;
let failed = 0;
let skipped = 0;

// A suite that keeps running past this (a part a failed test left open keeps the process
// alive after its summary) is stopped and counted as failed, so CI ends within its time.
const SUITE_LIMIT_MS = 45 * 60_000;

function run(label, cmd, args, env = {}) {
  console.log(`\n== ${label}`);
  const res = spawnSync(cmd, args, { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...env }, encoding: 'utf8', maxBuffer: 256 << 20, timeout: SUITE_LIMIT_MS, killSignal: 'SIGKILL' });
  if (res.error?.code === 'ETIMEDOUT') console.log(`FAILED: ${label} was still running after ${SUITE_LIMIT_MS / 60_000} minutes and was stopped (something left open keeps it alive)`);
  process.stdout.write(res.stdout ?? '');
  process.stderr.write(res.stderr ?? '');
  return res;
}

function step(label, cmd, args) {
  const res = run(label, cmd, args);
  if (res.status === 0) passed += 1;
  else {
    failed += 1;
    console.log(`FAILED: ${label}`);
  }
}

function suite(label, pattern, env) {
  const args = ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern];
  const res = run(label, process.execPath, args, env);
  const out = (res.stdout ?? '') + (res.stderr ?? '');
  const total = Number(/Total:\s+(\d+)/.exec(out)?.[1] ?? NaN);
  const ok = Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? NaN);
  const skip = Number(/Skipped:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (Number.isNaN(total) || Number.isNaN(ok)) {
    failed += 1; // the runner died before its summary
    console.log(`FAILED: ${label} ended without a summary (exit ${res.status})`);
    return;
  }
  passed += ok;
  skipped += skip;
  let bad = total - ok - skip;
  if (res.status !== 0 && bad <= 0) bad = 1;
  failed += Math.max(0, bad);
}

step('type check (tsc --noEmit)', process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']);
step('compile the library (tsc -p tsconfig.build.json)', process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
step('compile the server (tsc -p server/tsconfig.json)', process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'server/tsconfig.json']);
if (!existsSync(`${root}build/core.simd.wasm`)) step('build WebAssembly', process.execPath, ['scripts/build-wasm.mjs']);
step('the kernels beside the browser loader (scripts/copy-browser-wasm.mjs)', process.execPath, ['scripts/copy-browser-wasm.mjs']);
step('the browser bundle the verification page loads (scripts/bundle-browser.mjs)', process.execPath, ['scripts/bundle-browser.mjs']);
suite('all suites (default WebAssembly build)', '.*\\.test\\.ts$', {});
suite('library suites again with the scalar WebAssembly build', '^(lib|assembly)/.*\\.test\\.ts$', { PROVENANT_WASM: 'scalar' });

const tail = skipped > 0 ? `, ${skipped} skipped` : '';
console.log(`\n${passed} passed, ${failed} failed${tail}`);
process.exit(failed > 0 ? 1 : 0);
