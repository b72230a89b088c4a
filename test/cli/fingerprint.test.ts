// `provenant fingerprint FILE [--json]` run as a process (through tsx, as the sources).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintFile } from '../../src/media/fingerprint.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const FIX = new URL('../fixtures/media/', import.meta.url).pathname;
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

test('--json prints the fingerprint of an image and of a video', async () => {
  for (const name of ['fruits.jpg', 'vtest.avi']) {
    const r = cli('fingerprint', FIX + name, '--json');
    assert.is(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), await fingerprintFile(FIX + name));
  }
});

test('without --json the output is readable lines', async () => {
  const r = cli('fingerprint', FIX + 'fruits.jpg');
  assert.is(r.status, 0);
  const fp = await fingerprintFile(FIX + 'fruits.jpg');
  const hex = fp!.hash_value.map((b) => b.toString(16).padStart(2, '0')).join('');
  assert.match(r.stdout, /hash_type:\s+ImagePHash/);
  assert.ok(r.stdout.includes(hex));
});

test('an unsupported file prints null; a missing file exits 1 with a message', () => {
  const r = cli('fingerprint', FIX + 'README.md', '--json');
  assert.is(r.status, 0);
  assert.is(r.stdout.trim(), 'null');
  const missing = cli('fingerprint', FIX + 'no-such-file.png', '--json');
  assert.is(missing.status, 1);
  assert.is(missing.stdout, '');
  assert.match(missing.stderr, /no such file/);
});

test('a directory and a file that cannot be decoded exit 1 with the reason', () => {
  const dir = cli('fingerprint', FIX, '--json');
  assert.is(dir.status, 1);
  assert.is(dir.stdout, '');
  assert.match(dir.stderr, /^provenant fingerprint: cannot read .*: it is a directory\n$/);
  const tmp = mkdtempSync(join(tmpdir(), 'provenant-cli-'));
  try {
    const jpeg = readFileSync(FIX + 'fruits.jpg');
    writeFileSync(join(tmp, 'cut.jpg'), jpeg.subarray(0, jpeg.length >> 1));
    const cut = cli('fingerprint', join(tmp, 'cut.jpg'));
    assert.is(cut.status, 1);
    assert.is(cut.stdout, '');
    assert.match(cut.stderr, /^provenant fingerprint: cannot decode this jpeg file: /);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('usage errors and unknown commands exit 2 (usage.test.ts covers every command)', () => {
  assert.is(cli('fingerprint').status, 2);
  const r = cli('no-such-command');
  assert.is(r.status, 2);
  assert.match(r.stderr, /unknown command/);
});

test.run();
