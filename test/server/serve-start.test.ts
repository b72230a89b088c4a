// `provenant serve` start failures (issue 14 item 8): the CLI as a child process
// against a port that is taken exits non-zero on its own, saying why, having closed
// whatever it had started (a thread or timer left running would keep it alive).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('serve on a busy port exits 1 with the reason, releasing what it started', async () => {
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  const port = (holder.address() as AddressInfo).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-busy-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
      cwd: root,
      env: { ...process.env, PROVENANT_LOG_LEVEL: 'silent' },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // a bound on the wait, not a timing assertion: a process that hangs is killed and fails
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('close', (c, s) => r([c, s])));
    clearTimeout(killer);
    assert.is(signal, null, `serve did not exit on its own; stderr: ${stderr}`);
    assert.is(code, 1);
    assert.match(stderr, /could not start: listen EADDRINUSE/);
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
