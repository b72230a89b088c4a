// `provenant sha256 FILE [--json]` run as a process, against node:crypto.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

test('prints the SHA-256 node:crypto computes, for small and multi-chunk files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-sha256-'));
  try {
    for (const size of [0, 100, 3 * 65536 + 17]) {
      const file = join(dir, `f${size}`);
      const bytes = randomBytes(size);
      writeFileSync(file, bytes);
      const expected = createHash('sha256').update(bytes).digest('hex');
      const json = cli('sha256', file, '--json');
      assert.is(json.status, 0, json.stderr);
      assert.equal(JSON.parse(json.stdout), { file, sha256: expected });
      const plain = cli('sha256', file);
      assert.is(plain.stdout, `${expected}  ${file}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a missing file exits 1 with a message; no file is a usage error (exit 2)', () => {
  const missing = cli('sha256', '/no/such/file');
  assert.is(missing.status, 1);
  assert.match(missing.stderr, /no such file/);
  assert.is(cli('sha256').status, 2);
});

test.run();
