// VideoPHash end to end through ffmpeg: frame choice against ffmpeg's own seek plus the
// reference dHash, robustness to re-encoding/resizing/trimming, and unreadable input.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fingerprintFile, similarity } from '../../src/media/fingerprint.js';
import { FingerprintError } from '../../src/media/errors.js';
import { ffmpegPath, runFfmpeg, FfmpegError } from '../../src/media/ffmpeg.js';
import { videoBands } from '../../src/media/video.js';
import type { Fingerprint } from '../../src/lib/types.js';
import { referenceDHash } from './reference-dhash.js';

const FIX = new URL('../fixtures/media/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'provenant-video-test-'));
const ffmpeg = (...args: string[]) => execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...args]);

const fp = async (input: string | Uint8Array) => {
  const f = await fingerprintFile(input);
  assert.ok(f, 'expected a fingerprint');
  return f as Fingerprint;
};
const frame = (f: Fingerprint, i: number) => Uint8Array.from(f.hash_value.slice(8 * i, 8 * i + 8));
const sharesBand = (a: Fingerprint, b: Fingerprint) => a.bands.some((band, i) => band.every((v, j) => v === b.bands[i][j]));
const bits = (a: Uint8Array, b: Uint8Array) => a.reduce((d, x, i) => { let v = x ^ b[i]; while (v) { d += v & 1; v >>= 1; } return d; }, 0);

test('MP4 (H.264), WebM (VP8) and AVI (MPEG-4) give one frame hash per second, bands of 4 bytes', async () => {
  for (const [name, seconds] of [['cockatoo.mp4', 8], ['cockatoo-vp8.webm', 8], ['vtest.avi', 4]] as const) {
    const f = await fp(FIX + name);
    assert.is(f.hash_type, 'VideoPHash');
    assert.is(f.hash_value.length, seconds * 8, name); // t = 0.5, 1.5, ... seconds - 0.5
    assert.is(f.bands.length, 8);
    assert.ok(f.bands.every((b) => b.length === 4 && b.every((v) => Number.isInteger(v) && v >= 0 && v < 256)));
    assert.equal(f.bands, videoBands(Uint8Array.from(f.hash_value)));
    assert.equal(await fp(new Uint8Array(readFileSync(FIX + name))), f, `${name}: bytes and path agree`);
  }
});

test('frame k is the frame shown at k + 0.5 s (checked with ffmpeg seeking and the reference dHash)', async () => {
  const f = await fp(FIX + 'cockatoo.mp4');
  for (const k of [0, 2]) {
    const png = join(tmp, `frame${k}.png`);
    ffmpeg('-i', FIX + 'cockatoo.mp4', '-ss', String(k + 0.5), '-frames:v', '1', png);
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const expected = referenceDHash(new Uint8Array(data), info.width, info.height, 3);
    assert.ok(bits(expected, frame(f, k)) <= 3, `frame ${k}: ${bits(expected, frame(f, k))} bits off`);
  }
});

test('a resized, re-encoded copy keeps similarity >= 70 and shares a band; so does a trimmed one', async () => {
  const original = await fp(FIX + 'cockatoo.mp4');
  const small = join(tmp, 'small.mp4');
  ffmpeg('-i', FIX + 'cockatoo.mp4', '-vf', 'scale=160:-2', '-c:v', 'libx264', '-crf', '35', small);
  const copy = await fp(small);
  assert.ok(similarity(original, copy)! >= 70, `resized: ${similarity(original, copy)}`);
  assert.ok(sharesBand(original, copy), 'resized copy shares a band');
  const webm = await fp(FIX + 'cockatoo-vp8.webm');
  assert.ok(similarity(original, webm)! >= 70, `webm: ${similarity(original, webm)}`);
  const trimmed = join(tmp, 'trimmed.mp4');
  ffmpeg('-ss', '1', '-i', FIX + 'cockatoo.mp4', '-c:v', 'libx264', '-crf', '30', trimmed);
  const t = await fp(trimmed);
  assert.is(t.hash_value.length, 7 * 8, 'trimmed to 7 s');
  assert.ok(similarity(original, t)! >= 70, `trimmed: ${similarity(original, t)}`);
  assert.ok(sharesBand(original, t), 'trimmed copy shares a band');
});

test('different videos score below 70', async () => {
  const a = await fp(FIX + 'cockatoo.mp4');
  const b = await fp(FIX + 'vtest.avi');
  assert.ok(similarity(a, b)! < 70, `similarity ${similarity(a, b)}`);
  assert.is(similarity(a, { hash_type: 'ImagePHash', hash_value: a.hash_value.slice(0, 8), bands: [] }), null);
});

test('a clip under 1 s gives its middle frame', async () => {
  const short = join(tmp, 'short.mp4');
  ffmpeg('-i', FIX + 'cockatoo.mp4', '-t', '0.6', '-c:v', 'libx264', '-crf', '20', short);
  const f = await fp(short);
  assert.is(f.hash_value.length, 8);
  const png = join(tmp, 'middle.png');
  ffmpeg('-i', short, '-ss', '0.3', '-frames:v', '1', png);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  assert.ok(bits(referenceDHash(new Uint8Array(data), info.width, info.height, 3), frame(f, 0)) <= 3);
});

test('garbage and truncated videos reject with decode_failed', async () => {
  const mp4 = new Uint8Array(readFileSync(FIX + 'cockatoo.mp4'));
  const garbage = mp4.slice(0, 4096);
  for (let i = 64; i < garbage.length; i++) garbage[i] = (i * 31) & 255;
  const webm = new Uint8Array(readFileSync(FIX + 'cockatoo-vp8.webm'));
  for (const [name, bytes] of [['garbage', garbage], ['truncated mp4', mp4.subarray(0, 2000)], ['truncated webm', webm.subarray(0, 300)]] as const) {
    try {
      await fingerprintFile(bytes);
      assert.unreachable(`${name}: should fail`);
    } catch (e) {
      assert.instance(e, FingerprintError, name);
      assert.is((e as FingerprintError).code, 'decode_failed', name);
    }
  }
});

test('the ffmpeg runner stops early once the caller has enough, keeping what came before', async () => {
  const run = { input: FIX + 'vtest.avi', demuxer: 'avi', outputArgs: ['-vf', 'scale=160:120', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'] };
  const frameBytes = 160 * 120 * 3; // 40 frames: far more than a pipe holds
  const full = await runFfmpeg(run);
  let durationSeen = false;
  const early = await runFfmpeg({
    ...run,
    enough: (bytes, stderr) => {
      durationSeen ||= stderr.includes('Duration:');
      return bytes >= 3 * frameBytes;
    },
  });
  assert.ok(durationSeen, 'stderr so far is passed in');
  assert.ok(early.stdout.length >= 3 * frameBytes && early.stdout.length < full.stdout.length, `${early.stdout.length} of ${full.stdout.length}`);
  assert.equal(early.stdout, full.stdout.subarray(0, early.stdout.length));
});

test('the ffmpeg runner enforces its deadline and output cap', async () => {
  const big = { input: FIX + 'vtest.avi', demuxer: 'avi', outputArgs: ['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'] };
  try {
    await runFfmpeg({ ...big, maxOutputBytes: 1000 });
    assert.unreachable();
  } catch (e) {
    assert.ok(e instanceof FfmpegError && e.code === 'output_limit', String(e));
  }
  try {
    await runFfmpeg({ ...big, inputArgs: ['-re'], deadline: Date.now() + 300 });
    assert.unreachable();
  } catch (e) {
    assert.ok(e instanceof FfmpegError && e.code === 'timeout', String(e));
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
