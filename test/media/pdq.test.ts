// PDQ in the file-level path (src/media): one decode gives ImagePHash and PDQ, in process
// and in the decoder sandbox, equal to Meta's fixture values; vPDQ hashes the frames
// VideoPHash samples (checked against ffmpeg's own seek), survives re-encoding, and
// files without a picture have no PDQ. The sandbox runs the compiled child of dist/
// (`npm run build:ts` first).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { perceptualHashes } from '../../src/media/examine.js';
import { DecoderSandbox } from '../../src/media/sandbox.js';
import { createFingerprintPool } from '../../src/pool/index.js';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import { pdqDistance, pdqHash, type VpdqFingerprint } from '../../src/lib/pdq.js';

const FIX = new URL('../fixtures/', import.meta.url).pathname;
const PDQ_FIX = join(FIX, 'pdq');
const tmp = mkdtempSync(join(tmpdir(), 'provenant-pdq-test-'));
const ffmpeg = (...args: string[]) => execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args]);

const rows = readFileSync(join(PDQ_FIX, 'expected.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
const expected = (file: string) => {
  const row = rows.find((r) => r[0] === file)!;
  return { hash_type: 'PDQ', hash_value: row[4], quality: Number(row[5]) };
};
const CASES = ['reg-test-input/dih/bridge-1-original.jpg', 'misc-images/modes/PA.webp', 'misc-images/modes/CMYK.jpg', 'reg-test-input/labelme-subset/q2821.jpg', 'misc-images/wee.jpg'];

test('an image\'s PDQ from the same decode as its ImagePHash: Meta\'s values, path and bytes alike', async () => {
  for (const file of CASES) {
    const path = join(PDQ_FIX, 'images', file);
    const got = await perceptualHashes(path);
    assert.equal(got.pdq_hash, expected(file), file);
    assert.equal(got.fingerprint, await fingerprintFile(path), `${file}: the ImagePHash is fingerprintFile's`);
    assert.equal(await perceptualHashes(new Uint8Array(readFileSync(path))), got, `${file}: bytes and path agree`);
  }
});

test('the same in the decoder sandbox process', async () => {
  const sandbox = new DecoderSandbox();
  try {
    for (const file of CASES) {
      const path = join(PDQ_FIX, 'images', file);
      const got = await perceptualHashes(path, { sandbox });
      assert.equal(got.pdq_hash, expected(file), file);
      assert.equal(got.fingerprint, await fingerprintFile(path));
    }
  } finally {
    await sandbox.close();
  }
});

test('the pool\'s examine: the same PDQ beside the fingerprint and the credentials; without credentials, none read', async () => {
  const pool = createFingerprintPool({ workers: 1 });
  try {
    const file = CASES[0];
    const bytes = new Uint8Array(readFileSync(join(PDQ_FIX, 'images', file)));
    const found = await pool.examine(bytes.slice());
    assert.equal(found.pdq_hash, expected(file));
    assert.equal(found.fingerprint, await fingerprintFile(bytes));
    assert.is(found.content_credentials.present, false);
    const without = await pool.examine(bytes.slice(), { credentials: false });
    assert.not.ok('content_credentials' in without);
    assert.equal(without.pdq_hash, found.pdq_hash);
    assert.equal(without.fingerprint, found.fingerprint);
  } finally {
    await pool.close();
  }
});

test('audio and unsupported files have no PDQ', async () => {
  const audio = await perceptualHashes(join(FIX, 'audio/machine-wars-6s.wav'));
  assert.is(audio.fingerprint?.hash_type, 'AudioChromaprint');
  assert.is(audio.pdq_hash, null);
  assert.equal(await perceptualHashes(join(FIX, 'media/README.md')), { fingerprint: null, pdq_hash: null });
});

test('vPDQ: one PDQ per frame VideoPHash samples, at t = k + 0.5 s, each the frame ffmpeg seeks to', async () => {
  for (const [name, seconds] of [['cockatoo.mp4', 8], ['vtest.avi', 4]] as const) {
    const got = await perceptualHashes(join(FIX, 'media', name));
    assert.is(got.fingerprint?.hash_type, 'VideoPHash');
    const v = got.pdq_hash as VpdqFingerprint;
    assert.is(v.hash_type, 'vPDQ');
    assert.is(v.frames.length, got.fingerprint!.hash_value.length / 8, `${name}: as many frames as VideoPHash`);
    assert.is(v.frames.length, seconds);
    assert.equal(v.frames.map((f) => f.timestamp), Array.from({ length: seconds }, (_, k) => k + 0.5));
  }
  const v = (await perceptualHashes(join(FIX, 'media/cockatoo.mp4'))).pdq_hash as VpdqFingerprint;
  for (const k of [0, 3, 6]) {
    const png = join(tmp, `frame${k}.png`);
    ffmpeg('-i', join(FIX, 'media/cockatoo.mp4'), '-ss', String(k + 0.5), '-frames:v', '1', png);
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const full = pdqHash(new Uint8Array(data), info.width, info.height);
    const d = pdqDistance(full.hex, v.frames[k].hash_value);
    assert.ok(d <= 16, `frame ${k}: ${d} bits from the full-size PDQ of the frame at ${k + 0.5} s`);
    const other = pdqDistance(full.hex, v.frames[(k + 1) % v.frames.length].hash_value);
    assert.ok(other > 31, `frame ${k} is not its neighbour (${other} bits)`);
  }
});

test('vPDQ of a resized, re-encoded copy: every frame within distance 31 of its original', async () => {
  const original = (await perceptualHashes(join(FIX, 'media/cockatoo.mp4'))).pdq_hash as VpdqFingerprint;
  const small = join(tmp, 'small.mp4');
  ffmpeg('-i', join(FIX, 'media/cockatoo.mp4'), '-vf', 'scale=320:-2', '-c:v', 'libx264', '-crf', '30', small);
  const copy = (await perceptualHashes(small)).pdq_hash as VpdqFingerprint;
  assert.is(copy.frames.length, original.frames.length);
  copy.frames.forEach((f, k) => {
    const d = pdqDistance(f.hash_value, original.frames[k].hash_value);
    assert.ok(d <= 31, `frame ${k}: ${d} bits`);
  });
});

test('a clip under a second gives its middle frame', async () => {
  const clip = join(tmp, 'short.mp4');
  ffmpeg('-i', join(FIX, 'media/cockatoo.mp4'), '-t', '0.6', '-c:v', 'libx264', clip);
  const got = await perceptualHashes(clip);
  const v = got.pdq_hash as VpdqFingerprint;
  assert.is(v.frames.length, 1);
  assert.is(got.fingerprint!.hash_value.length, 8);
  assert.ok(Math.abs(v.frames[0].timestamp - 0.3) < 0.05, `timestamp ${v.frames[0].timestamp}`);
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
