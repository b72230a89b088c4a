// ImagePHash of a 12-megapixel RGBA buffer (4000 x 3000, already decoded): ours (core
// kernel, SIMD and scalar builds; the public wrapper includes the copy into wasm memory)
// against plain JavaScript: a straightforward implementation that visits only the taps
// inside each triangle, and the tests' reference (test/lib/dhash-reference.ts), which
// follows the definition literally. Every timed call checks the hash.
// Run: node --import tsx bench/dhash.bench.ts
import Benchmark from 'benchmark';
import { imageHashFromPixels } from '../src/lib/dhash.js';
import { loadKernel, simdSupported, type BaseExports } from '../src/lib/wasm.js';
import { refImageHash, refHash, refWeights } from '../test/lib/dhash-reference.js';
import { cpuMs } from './support.js';

const W = 4000;
const H = 3000;

function syntheticRgba(): Uint8Array {
  const px = new Uint8Array(W * H * 4);
  let s = 2463534242;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      const o = (y * W + x) * 4;
      px[o] = (x * 255) / W + (s & 15);
      px[o + 1] = 128 + 100 * Math.sin(x / 300 + y / 200);
      px[o + 2] = (y * 255) / H;
      px[o + 3] = (s >>> 8) & 1 ? 255 : (s >>> 16) & 255;
    }
  }
  return px;
}

/**
 * A plain JS implementation written for speed: the same definition, but each output
 * only visits the taps inside its triangle, and the luma of a row is computed once.
 */
function plainJsHash(px: Uint8Array, w: number, h: number): Uint8Array {
  const spans = (inSize: number, outSize: number) => refWeights(inSize, outSize).map((ws) => {
    const lo = ws.findIndex((v) => v > 0);
    const hi = ws.length - 1 - [...ws].reverse().findIndex((v) => v > 0);
    return { lo, weights: Float64Array.from(ws.slice(lo, hi + 1)) };
  });
  const xs = spans(w, 9);
  const ys = spans(h, 8);
  const luma = new Float64Array(w);
  const rows = new Float64Array(h * 9);
  for (let y = 0; y < h; y++) {
    for (let x = 0, o = y * w * 4; x < w; x++, o += 4) {
      const a = px[o + 3] / 255;
      const white = 255 * (1 - a);
      luma[x] = 0.299 * (px[o] * a + white) + 0.587 * (px[o + 1] * a + white) + 0.114 * (px[o + 2] * a + white);
    }
    for (let i = 0; i < 9; i++) {
      const { lo, weights } = xs[i];
      let acc = 0;
      for (let k = 0; k < weights.length; k++) acc += weights[k] * luma[lo + k];
      rows[y * 9 + i] = acc;
    }
  }
  const grey: number[] = [];
  for (let j = 0; j < 8; j++) {
    for (let i = 0; i < 9; i++) {
      const { lo, weights } = ys[j];
      let acc = 0;
      for (let k = 0; k < weights.length; k++) acc += weights[k] * rows[(lo + k) * 9 + i];
      grey.push(Math.floor(acc + 0.5));
    }
  }
  return refHash(grey);
}

const pixels = syntheticRgba();
const expected = Array.from(refImageHash(pixels, W, H, 4)).join(',');
const check = (hash: Uint8Array) => {
  if (Array.from(hash).join(',') !== expected) throw new Error(`hash ${hash} differs from the reference ${expected}`);
};

interface DhashExports extends BaseExports {
  dhashFromPixels(src: number, width: number, height: number, channels: number): number;
}
const suite = new Benchmark.Suite();
const cases: [string, () => void][] = [];
const add = (name: string, fn: () => void) => {
  cases.push([name, fn]);
  suite.add(name, fn);
};
add('ours (public wrapper, default build, with copy)', () => check(imageHashFromPixels(pixels, W, H, 4)));
for (const flavor of simdSupported ? ['simd', 'scalar'] as const : ['scalar'] as const) {
  const k = loadKernel<DhashExports>('core', flavor);
  // Each build is its own instance with its own scratch block; the pixels are
  // copied in once and stay put (nothing else asks that instance for a larger block).
  const src = k.writeScratch(pixels);
  add(`ours (${flavor} kernel, pixels already in wasm memory)`, () => {
    check(k.read(k.exports.dhashFromPixels(src, W, H, 4), 8));
  });
}
add('plain JS, taps inside each triangle only', () => check(plainJsHash(pixels, W, H)));
add('plain TypeScript reference (test/lib/dhash-reference.ts)', () => check(refImageHash(pixels, W, H, 4)));

Benchmark.options.maxTime = 3;
Benchmark.options.minSamples = 5;
const rows: { name: string; ms: number }[] = [];
suite.on('cycle', (e: Benchmark.Event) => {
  const b = e.target as unknown as Benchmark;
  rows.push({ name: String(b.name), ms: (b.stats?.mean ?? NaN) * 1000 });
});
suite.run({ async: false });
const cpu = cases.map(([, fn]) => cpuMs(fn));
const peer = rows[rows.length - 2];
console.log(`\nImagePHash of a ${W} x ${H} RGBA buffer (${(W * H) / 1e6} MP, ${(W * H * 4) / 1e6} MB)`);
console.log('| implementation | ms per image (wall, mean) | MP/s | vs plain JS | CPU ms (best of 5) | vs plain JS (CPU) |');
console.log('|---|---:|---:|---:|---:|---:|');
const peerCpu = cpu[cpu.length - 2];
rows.forEach((r, i) => {
  console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${((W * H) / 1e6 / (r.ms / 1000)).toFixed(0)} | ${(peer.ms / r.ms).toFixed(1)}x | ${cpu[i].toFixed(1)} | ${(peerCpu / cpu[i]).toFixed(1)}x |`);
});
