// `provenant fingerprint FILE [--json]` run as a process (through tsx, as the sources).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { perceptualHashes } from '../../src/media/examine.js';
import type { VpdqFingerprint } from '../../src/lib/pdq.js';

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

test('--pdq prints Meta\'s exchange text: hash,quality for an image (Meta\'s fixture value), frame,quality,hash,timestamp per frame for a video', async () => {
  const bridge = new URL('../fixtures/pdq/images/reg-test-input/dih/bridge-1-original.jpg', import.meta.url).pathname;
  const image = cli('fingerprint', '--pdq', bridge);
  assert.is(image.status, 0, image.stderr);
  assert.is(image.stdout, 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22,100\n');
  const json = cli('fingerprint', bridge, '--pdq', '--json');
  assert.equal(JSON.parse(json.stdout), { hash_type: 'PDQ', hash_value: 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22', quality: 100 });
  const video = cli('fingerprint', '--pdq', FIX + 'vtest.avi');
  assert.is(video.status, 0, video.stderr);
  const frames = ((await perceptualHashes(FIX + 'vtest.avi')).pdq_hash as VpdqFingerprint).frames;
  assert.is(video.stdout, frames.map((f, i) => `${i},${f.quality},${f.hash_value},${(i + 0.5).toFixed(3)}\n`).join(''));
  assert.match(video.stdout, /^(\d+,\d+,[0-9a-f]{64},\d+\.\d{3}\n){4}$/);
  const audio = cli('fingerprint', '--pdq', new URL('../fixtures/audio/machine-wars-6s.wav', import.meta.url).pathname);
  assert.is(audio.status, 0);
  assert.match(audio.stdout, /^null \(PDQ is for images and video/);
  assert.is(cli('fingerprint', '--pdq').status, 2);
  assert.match(cli('fingerprint', '--help').stdout, /provenant fingerprint --pdq FILE/);
});

test('usage errors and unknown commands exit 2 (usage.test.ts covers every command)', () => {
  assert.is(cli('fingerprint').status, 2);
  const r = cli('no-such-command');
  assert.is(r.status, 2);
  assert.match(r.stderr, /unknown command/);
});

test.run();
