// `provenant serve` as a child process: JSON log lines, SIGTERM stops it cleanly, and
// a bad variable stops the start with one line naming it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const test = suite('serve');
const root = fileURLToPath(new URL('../..', import.meta.url));

function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

test('serve listens, logs JSON lines, and exits 0 on SIGTERM after closing', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-serve-'));
  try {
    const p = serve({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'info' });
    let url: string | undefined;
    for (let i = 0; i < 200 && !url; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const line = p.out().split('\n').find((l) => l.includes('"listening"'));
      if (line) url = JSON.parse(line).url;
    }
    assert.ok(url, `server did not start: ${p.err()}`);
    const health = await fetch(`${url}/healthz`);
    assert.is(health.status, 200);
    p.child.kill('SIGTERM');
    assert.is(await p.exited, 0);
    const entries = p.out().trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(entries.some((e) => e.msg === 'request' && e.path === '/healthz' && e.status === 200));
    assert.ok(entries.some((e) => e.msg === 'shutting down' && e.signal === 'SIGTERM'));
    assert.is(entries[entries.length - 1].msg, 'stopped');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a bad variable stops the start with one line naming it', async () => {
  const p = serve({ PORT: 'http', PROVENANT_LOG_LEVEL: 'silent' });
  assert.is(await p.exited, 1);
  assert.is(p.err().trim().split('\n').length, 1);
  assert.match(p.err(), /PORT/);
});

test.run();
