// ImagePHash of a 12-megapixel RGBA buffer (4000 x 3000, already decoded): ours (core
// kernel, SIMD and scalar builds; the public wrapper includes the copy into wasm memory)
// against the plain TypeScript reference of the tests (test/lib/dhash-reference.ts),
// which follows the definition directly. Every timed call checks the hash.
// Run: node --import tsx bench/dhash.bench.ts
import Benchmark from 'benchmark';
import { imageHashFromPixels } from '../src/lib/dhash.js';
import { loadKernel, simdSupported, type BaseExports } from '../src/lib/wasm.js';
import { refImageHash } from '../test/lib/dhash-reference.js';

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

const pixels = syntheticRgba();
const expected = Array.from(refImageHash(pixels, W, H, 4)).join(',');
const check = (hash: Uint8Array) => {
  if (Array.from(hash).join(',') !== expected) throw new Error(`hash ${hash} differs from the reference ${expected}`);
};

interface DhashExports extends BaseExports {
  dhashFromPixels(src: number, width: number, height: number, channels: number): number;
}
const suite = new Benchmark.Suite();
suite.add('ours (public wrapper, default build, with copy)', () => check(imageHashFromPixels(pixels, W, H, 4)));
for (const flavor of simdSupported ? ['simd', 'scalar'] as const : ['scalar'] as const) {
  const k = loadKernel<DhashExports>('core', flavor);
  // Each build is its own instance with its own scratch block; the pixels are
  // copied in once and stay put (nothing else asks that instance for a larger block).
  const src = k.writeScratch(pixels);
  suite.add(`ours (${flavor} kernel, pixels already in wasm memory)`, () => {
    check(k.read(k.exports.dhashFromPixels(src, W, H, 4), 8));
  });
}
suite.add('plain TypeScript reference (test/lib/dhash-reference.ts)', () => check(refImageHash(pixels, W, H, 4)));

Benchmark.options.maxTime = 3;
Benchmark.options.minSamples = 5;
const rows: { name: string; ms: number }[] = [];
suite.on('cycle', (e: Benchmark.Event) => {
  const b = e.target as unknown as Benchmark;
  rows.push({ name: String(b.name), ms: (b.stats?.mean ?? NaN) * 1000 });
});
suite.run({ async: false });
const peer = rows[rows.length - 1];
console.log(`\nImagePHash of a ${W} x ${H} RGBA buffer (${(W * H) / 1e6} MP, ${(W * H * 4) / 1e6} MB)`);
console.log('| implementation | ms per image | MP/s | vs reference |');
console.log('|---|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${((W * H) / 1e6 / (r.ms / 1000)).toFixed(0)} | ${(peer.ms / r.ms).toFixed(1)}x |`);
}
