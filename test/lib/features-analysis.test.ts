// The features kernel's analysis image (assembly/features/luma.ts) against a plain
// reference of its definition written here: luma (299 R + 587 G + 114 B) / 1000 of k x k
// block sums (RGBA over white first), centred, then an area-weighted resample to the
// analysis size, rows then columns, in f32, rounded half to even. Byte for byte, in both
// builds (the SIMD build resamples the columns four at a time), for pictures with no
// reduction (k = 1, their luma straight from the pixels), with reductions, grey, RGB,
// RGBA, odd sizes and one exactly at the analysis size.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import sharp from 'sharp';
import { loadKernel, simdSupported, type BaseExports, type WasmFlavor } from '../../src/lib/wasm.js';

interface AnalysisExports extends BaseExports {
  analysisLuma(src: number, w: number, h: number, channels: number): number;
  analysisWidth(): number;
  analysisHeight(): number;
}

const PHOTO = join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg');
const ANALYSIS_PIXELS = 640 * 480;
const f32 = Math.fround;

/** Round half to even (wasm's nearest). */
function nearest(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : r;
}

/** Per output index: the first input and four weights of the area resample from inLen to outLen. */
function plan(inLen: number, outLen: number): { first: number; weights: number[] }[] {
  const r = inLen / outLen;
  return Array.from({ length: outLen }, (_, o) => {
    const lo = o * r;
    const hi = (o + 1) * r;
    const first = Math.floor(lo);
    const weights = [0, 1, 2, 3].map((t) => {
      const cover = Math.min(first + t + 1, hi) - Math.max(first + t, lo);
      return cover < 0 || first + t >= inLen ? 0 : f32(cover / r);
    });
    return { first, weights };
  });
}

/** f32 sum of the taps (the kernel's order: 0 + w0 v0 + w1 v1 ..., stopping at the end of the line). */
function tapped(value: (i: number) => number, e: { first: number; weights: number[] }, limit: number): number {
  let s = 0;
  for (let t = 0; t < 4 && e.first + t < limit; t++) s = f32(s + f32(e.weights[t] * value(e.first + t)));
  return s;
}

function reference(data: Uint8Array, w: number, h: number, channels: number): { width: number; height: number; grey: Uint8Array } {
  const s = Math.sqrt((w * h) / ANALYSIS_PIXELS);
  const k = Math.max(1, Math.floor(s));
  const w1 = Math.floor(w / k);
  const h1 = Math.floor(h / k);
  const [w2, h2] = s <= 1 ? [w, h] : [Math.min(w1, Math.max(1, Math.round(w / s))), Math.min(h1, Math.max(1, Math.round(h / s)))];
  const ox = (w - w1 * k) >> 1;
  const oy = (h - h1 * k) >> 1;
  const channel = (x: number, y: number, c: number) => {
    const p = (y * w + x) * channels;
    if (channels !== 4) return data[p + c];
    const a = data[p + 3];
    return Math.floor((data[p + c] * a + 255 * (255 - a)) / 255);
  };
  const stage1 = new Float64Array(w1 * h1);
  const norm = 1 / (k * k);
  for (let i = 0; i < h1; i++) for (let j = 0; j < w1; j++) {
    const sums = [0, 0, 0];
    for (let r = 0; r < k; r++) for (let t = 0; t < k; t++) {
      for (let c = 0; c < (channels === 1 ? 1 : 3); c++) sums[c] += channel(ox + j * k + t, oy + i * k + r, c);
    }
    stage1[i * w1 + j] = channels === 1 ? f32(sums[0] * norm) : f32(((299 * sums[0] + 587 * sums[1] + 114 * sums[2]) * norm) / 1000);
  }
  const grey = new Uint8Array(w2 * h2);
  if (w2 === w1 && h2 === h1) {
    for (let i = 0; i < w1 * h1; i++) grey[i] = nearest(stage1[i]);
    return { width: w2, height: h2, grey };
  }
  const px = plan(w1, w2);
  const py = plan(h1, h2);
  const stage2 = new Float64Array(h1 * w2);
  for (let i = 0; i < h1; i++) for (let j = 0; j < w2; j++) stage2[i * w2 + j] = tapped((x) => stage1[i * w1 + x], px[j], w1);
  for (let i = 0; i < h2; i++) for (let j = 0; j < w2; j++) {
    const v = Math.min(255, Math.max(0, tapped((y) => stage2[y * w2 + j], py[i], h1)));
    grey[i * w2 + j] = nearest(v);
  }
  return { width: w2, height: h2, grey };
}

function kernelAnalysis(flavor: WasmFlavor, data: Uint8Array, w: number, h: number, channels: number) {
  const k = loadKernel<AnalysisExports>('features', flavor);
  const ptr = k.exports.analysisLuma(k.writeScratch(data), w, h, channels);
  const width = k.exports.analysisWidth();
  const height = k.exports.analysisHeight();
  return { width, height, grey: k.read(ptr, width * height) };
}

test('the analysis image is its definition, byte for byte, in both builds', async () => {
  const flavors: WasmFlavor[] = simdSupported ? ['simd', 'scalar'] : ['scalar'];
  const cases: [number, number, 1 | 3 | 4][] = [[900, 700, 3], [1500, 1100, 3], [700, 500, 4], [2000, 1500, 1], [640, 480, 3], [1001, 333, 3], [517, 1203, 4]];
  for (const [w, h, channels] of cases) {
    let img = sharp(PHOTO).resize(w, h, { fit: 'fill' });
    if (channels === 1) img = img.greyscale();
    if (channels === 4) img = img.ensureAlpha().composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><circle cx="${w / 2}" cy="${h / 2}" r="${h / 3}" fill="#000" fill-opacity="0.6"/></svg>`), blend: 'dest-out' }]);
    const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
    assert.is(info.channels, channels);
    const pixels = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const want = reference(pixels, w, h, channels);
    for (const flavor of flavors) {
      const got = kernelAnalysis(flavor, pixels, w, h, channels);
      assert.equal([got.width, got.height], [want.width, want.height], `${w} x ${h} x ${channels}, ${flavor}: the size`);
      const first = got.grey.findIndex((v, i) => v !== want.grey[i]);
      assert.is(first, -1, `${w} x ${h} x ${channels}, ${flavor}: pixel ${first} is ${got.grey[first]}, the definition's ${want.grey[first]}`);
    }
  }
});

test('a picture\'s own luma (no reduction) as the block sums give it: sum / 1000 and sum * 0.001 are the same f32 for every sum', () => {
  for (let n = 0; n <= 255_000; n++) if (f32(n / 1000) !== f32(n * 0.001)) assert.unreachable(`${n}`);
});

test.run();
