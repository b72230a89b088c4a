// decodeAudio per format and decoder, the WAV variants, and audioFingerprint on
// re-encoded, garbage and truncated input.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { decodeAudio, audioFingerprint, readAudioFile, type AudioFormat } from '../../src/media/audio.js';
import { ffmpegPath } from '../../src/media/ffmpeg-audio.js';
import { parseWav, parseWavMono } from '../../src/media/wav.js';
import { mixToMono } from '../../src/lib/resample.js';
import { fingerprintSimilarity } from '../../src/lib/hamming.js';

const dir = new URL('../fixtures/audio/', import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));

const CASES: [string, AudioFormat, number][] = [
  ['frontiers-25s.mp3', 'mp3', 25.02],
  ['drascula-track2-18s.ogg', 'ogg-vorbis', 18.02],
  ['time-to-strike-8s.flac', 'flac', 8.0],
  ['machine-wars-6s.wav', 'wav', 6.0],
  ['drascula-track1-20s.opus', 'ogg-opus', 20.01],
];

for (const [file, format, seconds] of CASES) {
  for (const decoder of ['js', 'ffmpeg'] as const) {
    if (format === 'ogg-opus' && decoder === 'js') continue;
    test(`decodeAudio ${file} (${decoder}): 11025 Hz mono of the file's duration`, async () => {
      const samples = await decodeAudio(fixture(file), format, { decoder });
      // durations from fpcalc (the committed JSON); allow 0.1 s for codec padding
      assert.ok(Math.abs(samples.length / 11025 - seconds) < 0.1, `${samples.length / 11025} s vs ${seconds} s`);
      let peak = 0;
      for (const v of samples) peak = Math.max(peak, Math.abs(v));
      assert.ok(peak > 0.05 && peak <= 1.01, `peak ${peak}`);
    });
  }
}

test('decodeAudio stops at maxSeconds', async () => {
  for (const decoder of ['js', 'ffmpeg'] as const) {
    const s = await decodeAudio(fixture('frontiers-25s.mp3'), 'mp3', { decoder, maxSeconds: 5 });
    assert.is(s.length, 5 * 11025, decoder);
  }
});

// ---- WAV variants, written here from one known signal ----

function wavFile(opts: { format: 1 | 3; bits: number; channels: number; rate: number; extensible?: boolean }, frames: (ch: number, i: number) => number, n: number): Uint8Array {
  const bps = opts.bits / 8;
  const block = bps * opts.channels;
  const fmtSize = opts.extensible ? 40 : 16;
  const buf = new Uint8Array(12 + 8 + fmtSize + 8 + n * block);
  const v = new DataView(buf.buffer);
  const text = (o: number, s: string) => { for (let i = 0; i < s.length; i++) buf[o + i] = s.charCodeAt(i); };
  text(0, 'RIFF'); v.setUint32(4, buf.length - 8, true); text(8, 'WAVE');
  text(12, 'fmt '); v.setUint32(16, fmtSize, true);
  v.setUint16(20, opts.extensible ? 0xfffe : opts.format, true);
  v.setUint16(22, opts.channels, true); v.setUint32(24, opts.rate, true);
  v.setUint32(28, opts.rate * block, true); v.setUint16(32, block, true); v.setUint16(34, opts.bits, true);
  if (opts.extensible) {
    v.setUint16(36, 22, true); v.setUint16(38, opts.bits, true); v.setUint32(40, opts.channels === 2 ? 3 : 4, true);
    v.setUint16(44, opts.format, true); // SubFormat GUID starts with the format code
    buf.set([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71], 46);
  }
  const d = 20 + fmtSize;
  text(d, 'data'); v.setUint32(d + 4, n * block, true);
  let p = d + 8;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < opts.channels; c++, p += bps) {
      const x = frames(c, i);
      if (opts.format === 3) { if (opts.bits === 32) v.setFloat32(p, x, true); else v.setFloat64(p, x, true); }
      else if (opts.bits === 8) buf[p] = Math.round(x * 127) + 128;
      else if (opts.bits === 16) v.setInt16(p, Math.round(x * 32767), true);
      else if (opts.bits === 24) { const q = Math.round(x * 8388607); buf[p] = q & 255; buf[p + 1] = (q >> 8) & 255; buf[p + 2] = (q >> 16) & 255; }
      else v.setInt32(p, Math.round(x * 2147483647), true);
    }
  }
  return buf;
}

test('WAV: 8/16/24/32-bit PCM, 32/64-bit float and WAVE_FORMAT_EXTENSIBLE decode to the same signal', async () => {
  const rate = 44100;
  const n = rate * 3;
  const tone = (c: number, i: number) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate) * (c === 0 ? 1 : 0.5);
  const variants: [string, Parameters<typeof wavFile>[0]][] = [
    ['pcm8', { format: 1, bits: 8, channels: 2, rate }],
    ['pcm16', { format: 1, bits: 16, channels: 2, rate }],
    ['pcm24', { format: 1, bits: 24, channels: 2, rate }],
    ['pcm32', { format: 1, bits: 32, channels: 2, rate }],
    ['float32', { format: 3, bits: 32, channels: 2, rate }],
    ['float64', { format: 3, bits: 64, channels: 2, rate }],
    ['ext24', { format: 1, bits: 24, channels: 2, rate, extensible: true }],
    ['extfloat', { format: 3, bits: 32, channels: 2, rate, extensible: true }],
  ];
  // raw parse: channel values match the written signal
  for (const [name, opts] of variants) {
    const wav = parseWav(wavFile(opts, tone, n));
    assert.is(wav.sampleRate, rate, name);
    assert.is(wav.channels.length, 2, name);
    const tol = opts.bits === 8 ? 1 / 100 : 1e-4;
    for (const i of [0, 1, 100, 12345, n - 1]) {
      for (const c of [0, 1]) assert.ok(Math.abs(wav.channels[c][i] - tone(c, i)) < tol, `${name} ch${c}[${i}]`);
    }
  }
  // the one-pass mono mix: the same values as mixing parseWav's channels
  for (const [name, opts] of variants) {
    const bytes = wavFile(opts, tone, n);
    const mono = parseWavMono(bytes);
    assert.is(mono.sampleRate, rate, name);
    assert.equal(Array.from(mono.samples), Array.from(mixToMono(parseWav(bytes).channels)), name);
  }
  // decoded: 11025 Hz mono = the mean of the channels, 440 Hz preserved (zero crossings)
  for (const [name, opts] of variants) {
    const s = await decodeAudio(wavFile(opts, tone, n), 'wav');
    assert.is(s.length, 3 * 11025, name);
    let crossings = 0;
    for (let i = 1000; i < s.length - 1000; i++) if (s[i - 1] < 0 && s[i] >= 0) crossings++;
    const expected = (440 * (s.length - 2000)) / 11025;
    assert.ok(Math.abs(crossings - expected) <= 2, `${name}: ${crossings} vs ${expected}`);
    let peak = 0;
    for (let i = 1000; i < s.length - 1000; i++) peak = Math.max(peak, Math.abs(s[i]));
    assert.ok(Math.abs(peak - 0.375) < 0.01, `${name}: peak ${peak}`); // (0.5 + 0.25) / 2
  }
});

test('WAV from a path: only the bytes of the first 120 s are read, also behind a long chunk', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'provenant-wav-'));
  try {
    const rate = 8000;
    const tone = (_c: number, i: number) => 0.4 * Math.sin((2 * Math.PI * 330 * i) / rate) * (1 + 0.5 * Math.sin(i / 3000));
    const long = wavFile({ format: 1, bits: 16, channels: 2, rate }, tone, rate * 150);
    const path = join(tmp, 'long.wav');
    writeFileSync(path, long);
    const read = await readAudioFile(path, 'wav', 120);
    assert.is(read.length, 44 + 120 * rate * 4);
    assert.equal(await audioFingerprint(path, 'wav'), await audioFingerprint(long, 'wav'));
    // a 100 KB 'junk' chunk before the data: past the first read, so the whole file is read
    const junk = new Uint8Array(long.length + 8 + 100_000);
    junk.set(long.subarray(0, 36));
    junk.set(new TextEncoder().encode('junk'), 36);
    new DataView(junk.buffer).setUint32(40, 100_000, true);
    junk.set(long.subarray(36), 44 + 100_000);
    new DataView(junk.buffer).setUint32(4, junk.length - 8, true);
    const junkPath = join(tmp, 'junk.wav');
    writeFileSync(junkPath, junk);
    assert.is((await readAudioFile(junkPath, 'wav', 120)).length, junk.length);
    assert.equal(await audioFingerprint(junkPath, 'wav'), await audioFingerprint(long, 'wav'));
    // a data chunk that declares more than the file holds: what is there
    const cut = join(tmp, 'cut.wav');
    writeFileSync(cut, long.subarray(0, 44 + 10 * rate * 4));
    assert.is((await readAudioFile(cut, 'wav', 120)).length, 44 + 10 * rate * 4);
    // a small file whose header declares 120 s of 768 kHz x 8 channels x 64-bit (5.9 GB): no such buffer is made
    const huge = wavFile({ format: 3, bits: 64, channels: 8, rate: 768_000 }, () => 0.1, 1000);
    new DataView(huge.buffer).setUint32(40, 0xffffffff, true);
    const hugePath = join(tmp, 'huge.wav');
    writeFileSync(hugePath, huge);
    assert.is((await readAudioFile(hugePath, 'wav', 120)).length, huge.length);
    assert.is(await audioFingerprint(hugePath, 'wav'), null); // 1000 frames: too short
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('WAV: malformed files are rejected', () => {
  assert.throws(() => parseWav(new TextEncoder().encode('RIFF\0\0\0\0WAVEjunk')));
  const ok = wavFile({ format: 1, bits: 16, channels: 1, rate: 8000 }, () => 0, 10);
  const bad = ok.slice();
  bad[34] = 12; // 12-bit samples
  assert.throws(() => parseWav(bad));
});

// ---- audioFingerprint ----

test('audioFingerprint: a path (read by ffmpeg) and the same bytes (through stdin) give the same fingerprint', async () => {
  for (const [file, format] of CASES) {
    const fromBytes = await audioFingerprint(fixture(file), format, { decoder: 'ffmpeg' });
    assert.ok(fromBytes, file);
    assert.equal(await audioFingerprint(new URL(file, dir).pathname, format, { decoder: 'ffmpeg' }), fromBytes, file);
  }
  // the JavaScript decoders (WAV's default) read the file first
  assert.equal(await audioFingerprint(new URL('frontiers-25s.mp3', dir).pathname, 'mp3', { decoder: 'js' }), await audioFingerprint(fixture('frontiers-25s.mp3'), 'mp3', { decoder: 'js' }));
  assert.equal(await audioFingerprint(new URL('machine-wars-6s.wav', dir).pathname, 'wav'), await audioFingerprint(fixture('machine-wars-6s.wav'), 'wav'));
  await rejects(audioFingerprint('/nonexistent/provenant.mp3', 'mp3'), /No such file/);
});

async function rejects(pending: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await pending;
    assert.unreachable('should reject');
  } catch (e) {
    assert.match((e as Error).message, message);
  }
}

test('audioFingerprint: garbage and audio cut before its first samples reject; too-short audio gives null', async () => {
  const garbage = new Uint8Array(50_000);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919) & 255;
  for (const format of ['mp3', 'flac', 'ogg-vorbis', 'ogg-opus'] as const) await rejects(audioFingerprint(garbage, format), /ffmpeg exited with 1/);
  await rejects(audioFingerprint(garbage, 'wav'), /not a RIFF\/WAVE file/);
  await rejects(audioFingerprint(fixture('drascula-track2-18s.ogg').subarray(0, 4000), 'ogg-vorbis'), /ffmpeg exited with 1/);
  await rejects(audioFingerprint(new Uint8Array(0), 'flac'), /ffmpeg exited with 1/);
  // decoded, but under the 2.7 s one Chromaprint word needs
  assert.is(await audioFingerprint(fixture('frontiers-25s.mp3').subarray(0, 3000), 'mp3'), null);
  assert.is(await audioFingerprint(fixture('machine-wars-6s.wav').subarray(0, 44 + 20_000), 'wav'), null);
});

test('a 64 kbps MP3 re-encode keeps similarity >= 80 and shares a band', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'provenant-audio-'));
  try {
    const src = join(tmp, 'in.ogg');
    const out = join(tmp, 'out.mp3');
    writeFileSync(src, fixture('drascula-track2-18s.ogg'));
    const r = spawnSync(ffmpegPath(), ['-nostdin', '-v', 'error', '-y', '-i', src, '-c:a', 'libmp3lame', '-b:a', '64k', out]);
    assert.is(r.status, 0, r.stderr?.toString());
    const a = await audioFingerprint(fixture('drascula-track2-18s.ogg'), 'ogg-vorbis');
    const b = await audioFingerprint(new Uint8Array(readFileSync(out)), 'mp3');
    assert.ok(a && b);
    const sim = fingerprintSimilarity(a, b);
    assert.ok(sim !== null && sim >= 80, `similarity ${sim}`);
    assert.ok(a.bands.some((band, i) => band.join() === b.bands[i].join()), 'no shared band');
    const other = await audioFingerprint(fixture('frontiers-25s.mp3'), 'mp3');
    assert.ok(other);
    const simOther = fingerprintSimilarity(a, other);
    assert.ok(simOther !== null && simOther < 80, `unrelated similarity ${simOther}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test.run();
