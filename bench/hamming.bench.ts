// Scan of N 64-bit hashes for those at similarity >= 70 (verify-fuzzy's threshold):
// ours (core kernel: SIMD and scalar builds, and the i8x16.popcnt variant; hashes resident in a HashTable) against
// plain JavaScript loops over the same bytes. Every timed call checks its result.
// Throughput = N * 8 bytes per scan. Run: node --import tsx bench/hamming.bench.ts
import Benchmark from 'benchmark';
import { HashTable, maxDistanceFor, type HammingExports } from '../src/lib/hamming.js';
import { loadKernel, simdSupported } from '../src/lib/wasm.js';
import { cpuMs } from './support.js';

const THRESHOLD = 70;
const MAX_D = maxDistanceFor(THRESHOLD);

function randomPacked(n: number, seed: number): Uint8Array {
  const words = new Uint32Array(n * 2);
  let s = seed >>> 0;
  for (let i = 0; i < words.length; i++) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    words[i] = s;
  }
  return new Uint8Array(words.buffer);
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Plain JS, two 32-bit halves per hash, popcount by bit tricks. */
function jsScanU32(query: Uint8Array, packed: Uint8Array, maxD: number): number[] {
  const w = new Uint32Array(packed.buffer, packed.byteOffset, packed.length >> 2);
  const q = new Uint32Array(query.buffer, query.byteOffset, 2);
  const q0 = q[0];
  const q1 = q[1];
  const out: number[] = [];
  for (let i = 0, j = 0; j < w.length; i++, j += 2) {
    if (popcount32(w[j] ^ q0) + popcount32(w[j + 1] ^ q1) <= maxD) out.push(i);
  }
  return out;
}

const TABLE = Uint8Array.from({ length: 65536 }, (_, i) => popcount32(i));

/** Plain JS, BigUint64Array XOR, popcount by a 16-bit table. */
function jsScanBigInt(query: Uint8Array, packed: Uint8Array, maxD: number): number[] {
  const w = new BigUint64Array(packed.buffer, packed.byteOffset, packed.length >> 3);
  const q = new BigUint64Array(query.buffer, query.byteOffset, 1)[0];
  const out: number[] = [];
  for (let i = 0; i < w.length; i++) {
    const x = w[i] ^ q;
    const d = TABLE[Number(x & 0xffffn)] + TABLE[Number((x >> 16n) & 0xffffn)]
      + TABLE[Number((x >> 32n) & 0xffffn)] + TABLE[Number(x >> 48n)];
    if (d <= maxD) out.push(i);
  }
  return out;
}

interface Row { name: string; ms: number; gbs: number; cpuMs: number }

function run(n: number): Promise<Row[]> {
  const packed = randomPacked(n, 12345 + n);
  const query = packed.slice(8 * 777, 8 * 778);
  // plant near-duplicates (a few bits flipped) so the result is not just the query itself
  for (let k = 1; k <= 50; k++) {
    const at = ((k * 2654435761) >>> 0) % n;
    packed.set(query, at * 8);
    packed[at * 8 + (k % 8)] ^= 0x11 * (k % 5);
  }
  const expected = jsScanU32(query, packed, MAX_D);
  const tables = (simdSupported ? ['simd', 'scalar'] as const : ['scalar'] as const).map((flavor) => {
    const t = new HashTable({ flavor, capacity: n });
    t.addPacked(packed);
    return [flavor, t] as const;
  });
  const check = (got: ArrayLike<number>) => {
    if (got.length !== expected.length || got[got.length - 1] !== expected[expected.length - 1]) {
      throw new Error(`wrong result: ${got.length} matches, expected ${expected.length}`);
    }
  };
  const suite = new Benchmark.Suite();
  const cases = new Map<string, () => void>();
  const add = (name: string, fn: () => void) => {
    cases.set(name, fn);
    suite.add(name, fn);
  };
  for (const [flavor, t] of tables) add(`ours (${flavor} build, i64.popcnt)`, () => check(t.scan(query, THRESHOLD)));
  if (simdSupported) {
    // the i8x16.popcnt variant over the SIMD table's block
    const [, t] = tables[0];
    const k = loadKernel<HammingExports>('core', 'simd');
    add('ours (simd build, i8x16.popcnt variant)', () => {
      const q = k.exports.scratch(8);
      k.u8.set(query, q);
      const count = k.exports.hammingScanBytewise(q, t.pointer, t.size, MAX_D);
      check(k.view(Uint32Array, k.exports.hammingResults(), count));
    });
  }
  add('plain JS (Uint32 pairs, bit-trick popcount)', () => check(jsScanU32(query, packed, MAX_D)));
  if (n <= 1_000_000) add('plain JS (BigUint64Array, 16-bit table)', () => check(jsScanBigInt(query, packed, MAX_D)));
  return new Promise((resolve) => {
    const rows: Row[] = [];
    suite.on('cycle', (e: Benchmark.Event) => {
      const b = e.target as unknown as Benchmark;
      const ms = (b.stats?.mean ?? NaN) * 1000;
      rows.push({ name: String(b.name), ms, gbs: (n * 8) / (ms / 1000) / 1e9, cpuMs: NaN });
    });
    suite.on('complete', () => {
      for (const r of rows) r.cpuMs = cpuMs(cases.get(r.name)!);
      for (const [, t] of tables) t.free();
      resolve(rows);
    });
    suite.run({ async: false });
  });
}

for (const n of [1_000_000, 10_000_000]) {
  // benchmark.js: a few samples each; the machine is shared, so figures are approximate
  Benchmark.options.maxTime = n > 1_000_000 ? 3 : 2;
  Benchmark.options.minSamples = 5;
  const rows = await run(n);
  const peer = rows.find((r) => r.name.startsWith('plain JS (Uint32'))!;
  console.log(`\nscan of ${n.toLocaleString('en')} 64-bit hashes (${(n * 8) / 1e6} MB), similarity >= ${THRESHOLD}`);
  console.log('| implementation | ms per scan (wall, mean) | GB/s | vs plain JS (Uint32) | CPU ms (best of 5) | GB/s (CPU) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const cpuGbs = (n * 8) / (r.cpuMs / 1000) / 1e9;
    console.log(`| ${r.name} | ${r.ms.toFixed(2)} | ${r.gbs.toFixed(2)} | ${(peer.ms / r.ms).toFixed(2)}x | ${r.cpuMs.toFixed(2)} | ${cpuGbs.toFixed(1)} |`);
  }
}
