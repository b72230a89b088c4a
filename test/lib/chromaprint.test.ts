// The Chromaprint kernel stage by stage (hand-computed input, naive references in plain
// TS), then end to end against fpcalc output committed beside the fixtures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { loadKernel, type BaseExports } from '../../src/lib/wasm.js';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import { chromaprint, ChromaprintStream, audioBands, audioFingerprintFromSamples, wordsToBytes, bytesToWords } from '../../src/lib/chromaprint.js';
import { decodeAudio, type AudioFormat } from '../../src/media/audio.js';
import { fpcalcAgreement } from '../helpers/fpcalc-agreement.js';

interface K extends BaseExports {
  windowAt(i: number): number;
  complexFft(ptr: number): void;
  powerSpectrum(frame: number, power: number): void;
  noteOfBin(i: number): number;
  chromaConsume(power: number, features: number): void;
  chromaFilterConsume(row: number, out: number): number;
  resetChromaFilter(): void;
  normalizeRow(row: number): void;
  resetIntegralImage(): void;
  integralAddRow(row: number): void;
  area(r1: number, c1: number, r2: number, c2: number): number;
  filterValue(k: number, x: number): number;
  quantize(k: number, value: number): number;
  subFingerprint(x: number): number;
  grayCode(level: number): number;
}

const kernel = loadKernel<K>('chromaprint');
const k = kernel.exports;
const N = 4096;
// long-lived blocks for stage inputs and outputs
const bufA = k.alloc(N * 8);
const bufB = k.alloc((N / 2 + 1) * 8);
const f64 = (ptr: number, len: number) => kernel.view(Float64Array, ptr, len);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function close(actual: number, expected: number, tol: number, what: string): void {
  if (Math.abs(actual - expected) > tol * Math.max(1, Math.abs(expected))) {
    assert.unreachable(`${what}: ${actual} vs ${expected}`);
  }
}

test('Hamming window: 0.54 - 0.46 cos(2 pi i / 4095), over 32767', () => {
  for (const i of [0, 1, 100, 2047, 2048, 3000, 4095]) {
    close(k.windowAt(i) * 32767, 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / 4095), 1e-12, `w[${i}]`);
  }
  close(k.windowAt(0) * 32767, 0.08, 1e-12, 'w[0]');
});

test('complex FFT of 2048 points equals a naive DFT', () => {
  const M = 2048;
  const r = rng(7);
  const input = new Float64Array(2 * M);
  for (let i = 0; i < input.length; i++) input[i] = r() * 2 - 1;
  f64(bufA, 2 * M).set(input);
  k.complexFft(bufA);
  const out = f64(bufA, 2 * M).slice();
  for (const bin of [0, 1, 2, 17, 511, 1024, 2047]) {
    let re = 0;
    let im = 0;
    for (let n = 0; n < M; n++) {
      const a = (-2 * Math.PI * bin * n) / M;
      re += input[2 * n] * Math.cos(a) - input[2 * n + 1] * Math.sin(a);
      im += input[2 * n] * Math.sin(a) + input[2 * n + 1] * Math.cos(a);
    }
    close(out[2 * bin], re, 1e-9, `re[${bin}]`);
    close(out[2 * bin + 1], im, 1e-9, `im[${bin}]`);
  }
});

test('power spectrum of a real frame equals |naive DFT|^2 at every bin', () => {
  const r = rng(11);
  const x = new Float64Array(N);
  for (let i = 0; i < N; i++) x[i] = r() * 2 - 1;
  f64(bufA, N).set(x);
  k.powerSpectrum(bufA, bufB);
  const power = f64(bufB, N / 2 + 1).slice();
  const cos = new Float64Array(N);
  const sin = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / N);
    sin[i] = Math.sin((2 * Math.PI * i) / N);
  }
  for (let bin = 0; bin <= N / 2; bin += 1) {
    let re = 0;
    let im = 0;
    for (let n = 0; n < N; n++) {
      const idx = (bin * n) % N;
      re += x[n] * cos[idx];
      im -= x[n] * sin[idx];
    }
    close(power[bin], re * re + im * im, 1e-8, `power[${bin}]`);
  }
});

test('power spectrum of an impulse is flat and of a bin-centred sine is one peak', () => {
  const x = new Float64Array(N);
  x[0] = 1;
  f64(bufA, N).set(x);
  k.powerSpectrum(bufA, bufB);
  for (const v of f64(bufB, N / 2 + 1)) close(v, 1, 1e-12, 'impulse');
  for (let i = 0; i < N; i++) x[i] = Math.sin((2 * Math.PI * 100 * i) / N);
  f64(bufA, N).set(x);
  k.powerSpectrum(bufA, bufB);
  const p = f64(bufB, N / 2 + 1);
  close(p[100], (N / 2) ** 2, 1e-9, 'peak');
  for (let i = 0; i <= N / 2; i++) if (i !== 100) assert.ok(p[i] < 1e-12, `leak at ${i}`);
});

test('chroma: each FFT bin maps to floor(12 frac(log2(f / 27.5))) within 28..3520 Hz', () => {
  const fs = 11025;
  for (let i = 0; i <= N / 2; i++) {
    const f = (i * fs) / N;
    const lo = Math.round((N * 28) / fs);
    const hi = Math.round((N * 3520) / fs);
    const expected = i < Math.max(1, lo) || i >= hi ? -1 : Math.floor(12 * (Math.log2(f / 27.5) - Math.floor(Math.log2(f / 27.5))));
    assert.is(k.noteOfBin(i), expected, `bin ${i}`);
  }
});

test('chroma of a pure tone lands in its pitch class', () => {
  const fs = 11025;
  for (const [octave, note] of [[3, 0], [4, 3], [4, 7], [5, 10], [2, 5]]) {
    const freq = 27.5 * 2 ** (octave + (note + 0.5) / 12); // the middle of the pitch class
    const x = new Float64Array(N);
    for (let i = 0; i < N; i++) x[i] = Math.sin((2 * Math.PI * freq * i) / fs) * k.windowAt(i) * 10000;
    f64(bufA, N).set(x);
    k.powerSpectrum(bufA, bufB);
    const feats = k.alloc(12 * 8);
    k.chromaConsume(bufB, feats);
    const c = Array.from(f64(feats, 12));
    k.release(feats);
    const best = c.indexOf(Math.max(...c));
    assert.is(best, note, `${freq.toFixed(1)} Hz`);
  }
});

test('chroma filter: 0.25, 0.75, 1, 0.75, 0.25 over the last five rows, first after five', () => {
  k.resetChromaFilter();
  const row = k.alloc(12 * 8);
  const out = k.alloc(12 * 8);
  const rows: number[][] = [];
  for (let t = 0; t < 9; t++) {
    const r = Array.from({ length: 12 }, (_, i) => (t + 1) * (i + 1) + (t % 3));
    rows.push(r);
    f64(row, 12).set(r);
    const ready = k.chromaFilterConsume(row, out);
    assert.is(Boolean(ready), t >= 4, `row ${t}`);
    if (t >= 4) {
      const got = f64(out, 12);
      const c = [0.25, 0.75, 1, 0.75, 0.25];
      for (let i = 0; i < 12; i++) {
        let e = 0;
        for (let j = 0; j < 5; j++) e += c[j] * rows[t - 4 + j][i];
        close(got[i], e, 1e-12, `out ${t},${i}`);
      }
    }
  }
  k.release(row);
  k.release(out);
});

test('normalizer: unit Euclidean length, zero below a norm of 0.01', () => {
  const row = k.alloc(12 * 8);
  f64(row, 12).set([3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  k.normalizeRow(row);
  assert.equal(Array.from(f64(row, 12)).slice(0, 3), [0.6, 0.8, 0]);
  f64(row, 12).set([0.004, 0.004, 0.004, 0.004, 0, 0, 0, 0, 0, 0, 0, 0.0049]); // norm 0.0094
  k.normalizeRow(row);
  assert.equal(Array.from(f64(row, 12)), new Array(12).fill(0));
  k.release(row);
});

test('gray code: 0, 1, 3, 2', () => {
  assert.equal([0, 1, 2, 3].map((v) => k.grayCode(v)), [0, 1, 3, 2]);
});

// Independent restatement of the test2 classifiers (chromaprint fingerprinter_configuration.cpp)
const CLASSIFIERS: [number, number, number, number, number, number, number][] = [
  [0, 4, 3, 15, 1.98215, 2.35817, 2.63523], [4, 4, 6, 15, -1.03809, -0.651211, -0.282167],
  [1, 0, 4, 16, -0.298702, 0.119262, 0.558497], [3, 8, 2, 12, -0.105439, 0.0153946, 0.135898],
  [3, 4, 4, 8, -0.142891, 0.0258736, 0.200632], [4, 0, 3, 5, -0.826319, -0.590612, -0.368214],
  [1, 2, 2, 9, -0.557409, -0.233035, 0.0534525], [2, 7, 3, 4, -0.0646826, 0.00620476, 0.0784847],
  [2, 6, 2, 16, -0.192387, -0.029699, 0.215855], [2, 1, 3, 2, -0.0397818, -0.00568076, 0.0292026],
  [5, 10, 1, 15, -0.53823, -0.369934, -0.190235], [3, 6, 2, 10, -0.124877, 0.0296483, 0.139239],
  [2, 1, 1, 14, -0.101475, 0.0225617, 0.231971], [3, 5, 6, 4, -0.0799915, -0.00729616, 0.063262],
  [1, 9, 2, 12, -0.272556, 0.019424, 0.302559], [3, 4, 2, 14, -0.164292, -0.0321188, 0.0846339],
];

function naiveFilter(img: number[][], c: number, x: number): number {
  const [type, y, h, w] = CLASSIFIERS[c];
  // sum of rows x+r0..x+r1-1, columns y+c0..y+c1-1
  const sum = (r0: number, r1: number, c0: number, c1: number) => {
    let s = 0;
    for (let r = x + r0; r < x + r1; r++) for (let q = y + c0; q < y + c1; q++) s += img[r][q];
    return s;
  };
  const sl = (a: number, b: number) => Math.log(1 + a) - Math.log(1 + b);
  const h2 = Math.floor(h / 2), w2 = Math.floor(w / 2), h3 = Math.floor(h / 3), w3 = Math.floor(w / 3);
  switch (type) {
    case 0: return sl(sum(0, w, 0, h), 0);
    case 1: return sl(sum(0, w, h2, h), sum(0, w, 0, h2));
    case 2: return sl(sum(w2, w, 0, h), sum(0, w2, 0, h));
    case 3: return sl(sum(0, w2, h2, h) + sum(w2, w, 0, h2), sum(0, w2, 0, h2) + sum(w2, w, h2, h));
    case 4: return sl(sum(0, w, h3, 2 * h3), sum(0, w, 0, h3) + sum(0, w, 2 * h3, h));
    default: return sl(sum(w3, 2 * w3, 0, h), sum(0, w3, 0, h) + sum(2 * w3, w, 0, h));
  }
}

function naiveQuantize(c: number, v: number): number {
  const [, , , , t0, t1, t2] = CLASSIFIERS[c];
  return v < t0 ? 0 : v < t1 ? 1 : v < t2 ? 2 : 3;
}

test('integral image areas and the 16 classifiers on a hand-made 17-row image', () => {
  const r = rng(3);
  const img = Array.from({ length: 17 }, () => Array.from({ length: 12 }, () => r()));
  k.resetIntegralImage();
  const row = k.alloc(12 * 8);
  for (const rw of img) {
    f64(row, 12).set(rw);
    k.integralAddRow(row);
  }
  k.release(row);
  let brute = 0;
  for (let rr = 3; rr < 9; rr++) for (let c = 2; c < 7; c++) brute += img[rr][c];
  close(k.area(3, 2, 9, 7), brute, 1e-12, 'area');
  for (const x of [0, 1]) {
    let word = 0;
    for (let c = 0; c < 16; c++) {
      const v = naiveFilter(img, c, x);
      close(k.filterValue(c, x), v, 1e-9, `filter ${c} at ${x}`);
      assert.is(k.quantize(c, v), naiveQuantize(c, v), `quantize ${c}`);
      word = ((word << 2) | [0, 1, 3, 2][naiveQuantize(c, v)]) >>> 0;
    }
    assert.is(k.subFingerprint(x) >>> 0, word, `word at ${x}`);
  }
  // quantizer boundaries: t0 belongs to level 1, t1 to level 2, t2 to level 3
  assert.equal([1.98215, 2.35817, 2.63523, 1.9].map((v) => k.quantize(0, v)), [1, 2, 3, 0]);
});

// ---- end to end against fpcalc ----

const FIXTURES: [string, AudioFormat][] = [
  ['frontiers-25s.mp3', 'mp3'],
  ['drascula-track2-18s.ogg', 'ogg-vorbis'],
  ['time-to-strike-8s.flac', 'flac'],
  ['machine-wars-6s.wav', 'wav'],
  ['drascula-track1-20s.opus', 'ogg-opus'],
];
const dir = new URL('../fixtures/audio/', import.meta.url);

for (const [file, format] of FIXTURES) {
  for (const decoder of ['js', 'ffmpeg'] as const) {
    if (format === 'ogg-opus' && decoder === 'js') continue;
    test(`${file} (${decoder} decoder) agrees with fpcalc on >= 95 % of bits`, async () => {
      const ref = JSON.parse(readFileSync(new URL(`${file}.fpcalc.json`, dir), 'utf8')) as { fingerprint: number[] };
      const samples = await decodeAudio(readFileSync(new URL(file, dir)), format, { decoder });
      const words = chromaprint(samples);
      assert.ok(Math.abs(words.length - ref.fingerprint.length) <= 2, `${words.length} vs ${ref.fingerprint.length} words`);
      const a = fpcalcAgreement(words, ref.fingerprint);
      assert.ok(a >= 0.95, `agreement ${a}`);
    });
  }
}

test('float samples become int16 as ffmpeg (swresample) converts them, in both builds', () => {
  // ties at every half step, values past full scale, NaN, and random values
  const x = new Float32Array(4 * 1000 + 7 + 4096);
  const next = rng(7);
  for (let i = 0; i < 4000; i++) x[i] = (i - 2000 + 0.5) / 32768;
  x.set([1, -1, 1.5, -1.5, 32767.5 / 32768, -32768.5 / 32768, -6e4], 4000);
  for (let i = 4007; i < x.length; i++) x[i] = (next() * 2 - 1) * 1.05;
  const nan = x.length - 1;
  const huge = x.length - 2; // past 2^31 once scaled: lrintf overflows, ours clips
  x[nan] = NaN;
  x[huge] = 1e30;
  const reference = new Int16Array(
    new Uint8Array(execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'f32le', '-ar', '11025', '-ac', '1', '-i', 'pipe:0', '-f', 's16le', 'pipe:1'], { input: new Uint8Array(x.buffer) })).buffer,
  );
  assert.is(reference.length, x.length);
  // ffmpeg leaves NaN and overflow to lrintf (undefined); ours makes them 0 and clips
  reference[nan] = 0;
  reference[huge] = 32767;
  for (const flavor of ['simd', 'scalar'] as const) {
    const kf = loadKernel<BaseExports & { int16FromFloat(src: number, dst: number, len: number): void }>('chromaprint', flavor);
    const ptr = kf.exports.alloc(x.length * 4);
    kf.view(Float32Array, ptr, x.length).set(x);
    kf.exports.int16FromFloat(ptr, ptr, x.length); // in place, as the host calls it
    const got = kf.view(Int16Array, ptr, x.length).slice();
    kf.exports.release(ptr);
    const diff = got.findIndex((v, i) => v !== reference[i]);
    assert.is(diff, -1, `${flavor}: sample ${diff} (${x[diff]}) gave ${got[diff]}, ffmpeg ${reference[diff]}`);
  }
});

test('fingerprint shape: little-endian words, 8 bands of 4 bytes', async () => {
  const samples = await decodeAudio(readFileSync(new URL('frontiers-25s.mp3', dir)), 'mp3');
  const fp = audioFingerprintFromSamples(samples);
  const words = chromaprint(samples);
  assert.is(fp.hash_type, 'AudioChromaprint');
  assert.is(fp.hash_value.length, words.length * 4);
  assert.is(fp.hash_value[0] | (fp.hash_value[1] << 8) | (fp.hash_value[2] << 16) | (fp.hash_value[3] << 24), words[0] | 0);
  assert.equal(Array.from(bytesToWords(wordsToBytes(words))), Array.from(words));
  assert.is(fp.bands.length, 8);
  for (const b of fp.bands) {
    assert.is(b.length, 4);
    for (const v of b) assert.ok(Number.isInteger(v) && v >= 0 && v <= 255);
  }
  assert.equal(fp.bands, audioBands(words));
  // int16 input gives the same words as the equivalent floats (ties are rare enough
  // in decoded audio that rounding them up, not to even, changes no word)
  const ints = Int16Array.from(samples, (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32768))));
  assert.equal(Array.from(chromaprint(ints)), Array.from(words));
});

test('bands: the same audio cut at the start shares bands; different music shares none', async () => {
  const a = chromaprint(await decodeAudio(readFileSync(new URL('frontiers-25s.mp3', dir)), 'mp3'));
  const b = chromaprint(await decodeAudio(readFileSync(new URL('drascula-track2-18s.ogg', dir)), 'ogg-vorbis'));
  const ba = audioBands(a);
  const cut = audioBands(a.subarray(24)); // 3 s later start, whole-word aligned
  const shared = ba.filter((x, i) => x.join() === cut[i].join()).length;
  assert.ok(shared >= 4, `shared ${shared}`);
  const bb = audioBands(b);
  assert.is(ba.filter((x, i) => x.join() === bb[i].join()).length, 0);
  assert.equal(audioBands(new Uint32Array(0)), new Array(8).fill([255, 255, 255, 255]));
});

test('ChromaprintStream: pieces give the one-shot words, also when streams and chromaprint() interleave', async () => {
  const a = await decodeAudio(readFileSync(new URL('frontiers-25s.mp3', dir)), 'mp3');
  const b = await decodeAudio(readFileSync(new URL('drascula-track2-18s.ogg', dir)), 'ogg-vorbis');
  const wa = Array.from(chromaprint(a));
  const wb = Array.from(chromaprint(b));
  const sizes = [1, 4095, 4096, 1365, 7000, 33000, 100000];
  const cut = (x: Float32Array) => {
    const out: Float32Array[] = [];
    for (let at = 0, i = 0; at < x.length; i++) {
      const n = sizes[i % sizes.length];
      out.push(x.subarray(at, at + n));
      at += n;
    }
    return out;
  };
  const one = new ChromaprintStream();
  for (const p of cut(a)) one.push(p);
  assert.equal(Array.from(one.finish()), wa);
  // two streams and one-shot calls in between, in one thread
  const sa = new ChromaprintStream();
  const sb = new ChromaprintStream();
  const pa = cut(a);
  const pb = cut(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (i < pa.length) sa.push(pa[i]);
    if (i === 3) assert.equal(Array.from(chromaprint(b)), wb);
    if (i < pb.length) sb.push(Int16Array.from(pb[i], (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32768)))));
  }
  assert.equal(Array.from(sb.finish()), wb);
  assert.equal(Array.from(sa.finish()), wa);
  assert.throws(() => sa.push(a));
});

test('too little audio gives no words; memory stays flat over many calls', () => {
  assert.is(chromaprint(new Float32Array(4096 + 18 * 1365)).length, 0);
  assert.is(chromaprint(new Float32Array(4096 + 19 * 1365)).length, 1);
  const before = k.memory.buffer.byteLength;
  const small = new Int16Array(500);
  for (let i = 0; i < 1_000_000; i++) chromaprint(small);
  const long = new Float32Array(11025 * 10);
  for (let i = 0; i < 50; i++) chromaprint(long);
  assert.is(k.memory.buffer.byteLength, before);
});

test.run();
