import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  imagePHashFromPixels, imageHashFromPixels, imagePHashFromGrey72, imageHashFromGrey72, resizeTo9x8,
} from '../../src/lib/dhash.js';
import { imageBands } from '../../src/lib/bands.js';
import { loadKernel, wasmFlavor, type BaseExports } from '../../src/lib/wasm.js';

import { refResizeExact, refHash } from './dhash-reference.js';
import { rng } from '../helpers/random.js';

/** Random-ish images with structure (gradients + noise) so hashes are not all noise. */
function randomImage(rand: () => number, w: number, h: number, ch: number): Uint8Array {
  const px = new Uint8Array(w * h * ch);
  const fx = rand() * 0.2;
  const fy = rand() * 0.2;
  const noise = rand() * 120;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < ch; c++) {
        const base = 128 + 100 * Math.sin(fx * x * (c + 1) + fy * y);
        const v = base + (rand() - 0.5) * noise;
        px[(y * w + x) * ch + c] = Math.max(0, Math.min(255, Math.round(v)));
      }
      if (ch === 4 && rand() < 0.3) px[(y * w + x) * 4 + 3] = Math.floor(rand() * 256);
    }
  }
  return px;
}

// ---- hand-computed cases ----

test('a flat image hashes to all zeros', () => {
  assert.equal(Array.from(imageHashFromGrey72(new Array(72).fill(117))), [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(Array.from(imageHashFromPixels(new Uint8Array(640 * 480).fill(40), 640, 480, 1)), [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(Array.from(imageHashFromPixels(new Uint8Array(33 * 21 * 3).fill(200), 33, 21, 3)), [0, 0, 0, 0, 0, 0, 0, 0]);
});

test('strictly falling rows hash to all ones', () => {
  const grey = Array.from({ length: 72 }, (_, i) => 200 - 10 * (i % 9) + (i / 9) | 0);
  assert.equal(Array.from(imageHashFromGrey72(grey)), [255, 255, 255, 255, 255, 255, 255, 255]);
});

test('bit 8y + x is p[y][x] > p[y][x+1], most significant bit first', () => {
  // Row y rises everywhere except one fall between x = y and x = y + 1.
  const grey: number[] = [];
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 9; x++) grey.push(x === y + 1 ? 10 * y + 5 : 10 * x + 20);
  }
  // row y: p[y] = 10y + 20 > p[y+1] = 10y + 5 only there
  assert.equal(Array.from(imageHashFromGrey72(grey)), [0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01]);
  // One fall at x = 0 in row 0 only: the very first bit is the top bit of byte 0.
  const one = new Array(72).fill(0).map((_, i) => (i % 9) * 3);
  one[0] = 100;
  assert.equal(Array.from(imageHashFromGrey72(one)), [0x80, 0, 0, 0, 0, 0, 0, 0]);
  // Equal neighbours give 0 (strictly greater).
  const eq = new Array(72).fill(50);
  eq[71] = 49; // last pair of the last row: bit 63 = least significant bit of byte 7
  assert.equal(Array.from(imageHashFromGrey72(eq)), [0, 0, 0, 0, 0, 0, 0, 1]);
});

test('a 9 x 8 grey image is its own thumbnail (s = 1: weight 1 at the centre)', () => {
  const rand = rng(7);
  for (let n = 0; n < 20; n++) {
    const px = Uint8Array.from({ length: 72 }, () => Math.floor(rand() * 256));
    assert.equal(Array.from(resizeTo9x8(px, 9, 8, 1)), Array.from(px));
    assert.equal(imageHashFromPixels(px, 9, 8, 1), imageHashFromGrey72(px));
  }
});

test('fully transparent RGBA is white; opaque RGBA equals RGB', () => {
  const rand = rng(9);
  const rgba = randomImage(rand, 50, 40, 4);
  const clear = rgba.slice();
  for (let i = 3; i < clear.length; i += 4) clear[i] = 0;
  assert.equal(Array.from(resizeTo9x8(clear, 50, 40, 4)), new Array(72).fill(255));
  const opaque = rgba.slice();
  const rgb = new Uint8Array(50 * 40 * 3);
  for (let i = 0; i < 2000; i++) {
    opaque[i * 4 + 3] = 255;
    rgb.set(opaque.subarray(i * 4, i * 4 + 3), i * 3);
  }
  assert.equal(resizeTo9x8(opaque, 50, 40, 4), resizeTo9x8(rgb, 50, 40, 3));
});

test('the fingerprint object: hash_type, 8 hash bytes, 8 bands of 1 byte', () => {
  const grey = Array.from({ length: 72 }, (_, i) => (i * 37) % 256);
  const fp = imagePHashFromGrey72(grey);
  assert.is(fp.hash_type, 'ImagePHash');
  assert.equal(fp.hash_value, Array.from(refHash(grey)));
  assert.equal(fp.bands, fp.hash_value.map((b) => [b]));
  assert.equal(fp.bands, imageBands(Uint8Array.from(fp.hash_value)));
  const px = randomImage(rng(3), 64, 48, 3);
  const fp2 = imagePHashFromPixels(px, 64, 48, 3);
  assert.equal(fp2.hash_value, Array.from(imageHashFromPixels(px, 64, 48, 3)));
  assert.equal(fp2.bands.length, 8);
  // the kernel's band split (assembly/bands.ts) agrees: band i = byte i
  const k = loadKernel<BaseExports & { imageBands(hash: number, out: number): void }>('core');
  const p = k.writeScratch(Uint8Array.from(fp2.hash_value), 8);
  k.exports.imageBands(p, p + 8);
  assert.equal(Array.from(k.read(p + 8, 8), (b) => [b]), fp2.bands);
});

test('bad input is refused', () => {
  assert.throws(() => imagePHashFromGrey72(new Array(71).fill(0)), RangeError);
  assert.throws(() => imagePHashFromGrey72(new Array(73).fill(0)), RangeError);
  assert.throws(() => imagePHashFromGrey72([...new Array(71).fill(0), 256]), RangeError);
  assert.throws(() => imagePHashFromGrey72([...new Array(71).fill(0), 1.5]), RangeError);
  assert.throws(() => imagePHashFromGrey72([...new Array(71).fill(0), -1]), RangeError);
  assert.throws(() => imagePHashFromGrey72(null as unknown as number[]), RangeError);
  assert.throws(() => imageHashFromPixels(new Uint8Array(10), 3, 3, 1), RangeError);
  assert.throws(() => imageHashFromPixels(new Uint8Array(0), 0, 0, 1), RangeError);
  assert.throws(() => imageHashFromPixels(new Uint8Array(8), 2, 2, 2 as 1), RangeError);
  assert.throws(() => imageBands(new Uint8Array(7)), RangeError);
});

// ---- differential: the kernel against the reference ----

test('resize and hash agree with the reference on random images (grey, RGB, RGBA; up and down)', () => {
  const rand = rng(20261122);
  let compared = 0;
  let hashesCompared = 0;
  const sizes: [number, number][] = [[1, 1], [2, 3], [9, 8], [8, 9], [5, 100], [100, 4], [10, 9], [17, 16], [1000, 3], [640, 480], [3001, 20], [20, 3001]];
  for (let n = 0; n < 60; n++) sizes.push([1 + Math.floor(rand() * 300), 1 + Math.floor(rand() * 300)]);
  for (const [w, h] of sizes) {
    for (const ch of [1, 3, 4] as const) {
      const px = randomImage(rand, w, h, ch);
      const exact = refResizeExact(px, w, h, ch);
      const ours = resizeTo9x8(px, w, h, ch);
      const rounded = Array.from(exact, (v) => Math.floor(v + 0.5));
      let nearHalf = false;
      for (let i = 0; i < 72; i++) {
        assert.ok(Math.abs(ours[i] - rounded[i]) <= 1, `${w}x${h}x${ch} pixel ${i}: ${ours[i]} vs ${exact[i]}`);
        const frac = exact[i] - Math.floor(exact[i]);
        if (Math.abs(frac - 0.5) < 0.01) nearHalf = true;
        else assert.is(ours[i], rounded[i], `${w}x${h}x${ch} pixel ${i}: ${ours[i]} vs ${exact[i]}`);
      }
      compared++;
      const hash = imageHashFromPixels(px, w, h, ch);
      const want = refHash(rounded);
      if (!nearHalf) {
        assert.equal(Array.from(hash), Array.from(want), `${w}x${h}x${ch}`);
        hashesCompared++;
      }
      // Bit by bit where neither pixel of the pair is near a rounding boundary.
      for (let bit = 0; bit < 64; bit++) {
        const i = (bit >> 3) * 9 + (bit & 7);
        const near = (v: number) => Math.abs(v - Math.floor(v) - 0.5) < 0.01;
        if (near(exact[i]) || near(exact[i + 1])) continue;
        const mask = 0x80 >> (bit & 7);
        assert.is(hash[bit >> 3] & mask, want[bit >> 3] & mask, `${w}x${h}x${ch} bit ${bit}`);
      }
    }
  }
  assert.ok(hashesCompared > compared * 0.15, `${hashesCompared} of ${compared} whole hashes compared`);
});

test('the SIMD and scalar builds give identical thumbnails', () => {
  type E = { dhashResize(src: number, w: number, h: number, ch: number): number };
  const builds = [loadKernel<E & BaseExports>('core', 'scalar')];
  if (wasmFlavor === 'simd') builds.push(loadKernel('core', 'simd'));
  const rand = rng(5);
  for (let n = 0; n < 30; n++) {
    const w = 1 + Math.floor(rand() * 200);
    const h = 1 + Math.floor(rand() * 200);
    const ch = ([1, 3, 4] as const)[n % 3];
    const px = randomImage(rand, w, h, ch);
    const outs = builds.map((k) => k.read(k.exports.dhashResize(k.writeScratch(px), w, h, ch), 72));
    for (const o of outs) assert.equal(o, outs[0]);
    assert.equal(outs[0], resizeTo9x8(px, w, h, ch));
  }
});

test('memory stays flat over 1,000,000 calls of each function', () => {
  const core = loadKernel('core');
  const small = randomImage(rng(1), 12, 10, 4);
  const grey = Array.from({ length: 72 }, (_, i) => i);
  // warm up (first calls size the grow-only blocks)
  imageHashFromPixels(small, 12, 10, 4);
  resizeTo9x8(small, 12, 10, 4);
  imagePHashFromGrey72(grey);
  imagePHashFromPixels(small, 12, 10, 4);
  const before = core.exports.memory.buffer.byteLength;
  for (let i = 0; i < 1_000_000; i++) imageHashFromPixels(small, 12, 10, 4);
  for (let i = 0; i < 1_000_000; i++) resizeTo9x8(small, 12, 10, 4);
  for (let i = 0; i < 1_000_000; i++) imagePHashFromGrey72(grey);
  for (let i = 0; i < 1_000_000; i++) imagePHashFromPixels(small, 12, 10, 4);
  assert.is(core.exports.memory.buffer.byteLength, before);
});

test.run();
