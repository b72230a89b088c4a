import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  hammingDistance, hammingSimilarity, similarityFromDistance, maxDistanceFor, scanHashes, topKHashes, HashTable,
  alignedSimilarity, fingerprintSimilarity, SEQUENCE_ALIGNMENT,
} from '../../src/lib/hamming.js';
import type { HammingExports } from '../../src/lib/hamming.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';
import { bruteAligned, bruteDistance, bruteSimilarity } from '../helpers/brute.js';

/** Flips `count` distinct random bits of a copy of `hash`. */
function flipBits(rand: () => number, hash: Uint8Array, count: number): Uint8Array {
  const out = hash.slice();
  const bits = new Set<number>();
  while (bits.size < count) bits.add(Math.floor(rand() * hash.length * 8));
  for (const b of bits) out[b >> 3] ^= 0x80 >> (b & 7);
  return out;
}

test('Hamming distance: symmetric, zero to itself, equal to a bit count, any length', () => {
  const rand = rng(1);
  for (let n = 0; n < 300; n++) {
    const len = n < 100 ? n : Math.floor(rand() * 5000);
    const a = randomBytes(rand, len);
    const b = randomBytes(rand, len);
    assert.is(hammingDistance(a, b), bruteDistance(a, b));
    assert.is(hammingDistance(a, b), hammingDistance(b, a));
    assert.is(hammingDistance(a, a), 0);
  }
  assert.is(hammingDistance(new Uint8Array(8), new Uint8Array(8).fill(255)), 64);
  // subarrays at odd offsets (unaligned in the scratch block)
  const big = randomBytes(rand, 1000);
  assert.is(hammingDistance(big.subarray(3, 503), big.subarray(499, 999)), bruteDistance(big, big, 3, 503, 499));
});

test('similarity: 100 at distance 0, 70 at 19 of 64 bits, 0 at 64', () => {
  const a = new Uint8Array(8);
  assert.is(hammingSimilarity(a, a), 100);
  assert.is(hammingSimilarity(a, flipBits(rng(2), a, 19)), 70); // floor(100 * 45 / 64) = 70
  assert.is(hammingSimilarity(a, flipBits(rng(2), a, 20)), 68); // floor(100 * 44 / 64) = 68
  assert.is(hammingSimilarity(a, new Uint8Array(8).fill(255)), 0);
  assert.is(similarityFromDistance(19, 64), 70);
  for (let d = 0; d <= 64; d++) assert.is(similarityFromDistance(d, 64), bruteSimilarity(d, 64));
  // maxDistanceFor is the largest d that still reaches the threshold
  for (let t = -5; t <= 105; t++) {
    const m = maxDistanceFor(t);
    const ok = [...Array(65).keys()].filter((d) => bruteSimilarity(d, 64) >= t);
    assert.is(m, ok.length ? Math.max(...ok) : -1, `threshold ${t}`);
  }
  assert.is(maxDistanceFor(70), 19);
  const rand = rng(3);
  for (let n = 0; n < 200; n++) {
    const a2 = randomBytes(rand, 1 + Math.floor(rand() * 64));
    const b2 = randomBytes(rand, a2.length);
    assert.is(hammingSimilarity(a2, b2), bruteSimilarity(bruteDistance(a2, b2), a2.length * 8));
  }
});

test('different lengths and empty hashes are refused', () => {
  assert.throws(() => hammingDistance(new Uint8Array(8), new Uint8Array(7)), RangeError);
  assert.throws(() => hammingSimilarity(new Uint8Array(8), new Uint8Array(9)), RangeError);
  assert.throws(() => hammingSimilarity(new Uint8Array(0), new Uint8Array(0)), RangeError);
  assert.throws(() => scanHashes(new Uint8Array(7), new Uint8Array(8), 50), RangeError);
  assert.throws(() => scanHashes(new Uint8Array(8), new Uint8Array(12), 50), RangeError);
  assert.throws(() => topKHashes(new Uint8Array(8), new Uint8Array(16), -1), RangeError);
});

// 100,000 random hashes with near-duplicates of the query planted at known distances.
const N = 100_000;
const rand = rng(42);
const query = randomBytes(rand, 8);
const packed = randomBytes(rand, N * 8);
for (let p = 0; p < 400; p++) {
  const at = Math.floor(rand() * N);
  packed.set(flipBits(rand, query, Math.floor(rand() * 24)), at * 8);
}
const distances = Array.from({ length: N }, (_, i) => bruteDistance(query, packed.subarray(i * 8, i * 8 + 8)));

test('scanHashes equals a brute-force loop at several thresholds', () => {
  for (const t of [100, 95, 90, 80, 75, 70, 65, 60, 0]) {
    const want = [];
    for (let i = 0; i < N; i++) if (bruteSimilarity(distances[i], 64) >= t) want.push(i);
    const got = scanHashes(query, packed, t);
    assert.ok(got instanceof Uint32Array);
    assert.equal(Array.from(got), want, `threshold ${t}`);
    if (t >= 60) assert.ok(want.length >= 1 && want.length < N, `threshold ${t} found ${want.length}`);
  }
  assert.is(scanHashes(query, packed, 101).length, 0);
  // sizes that are not multiples of the kernel's unroll
  for (const n of [0, 1, 3, 7, 8, 9, 15, 17]) {
    const sub = packed.subarray(0, n * 8);
    const want = distances.slice(0, n).flatMap((d, i) => (bruteSimilarity(d, 64) >= 50 ? [i] : []));
    assert.equal(Array.from(scanHashes(query, sub, 50)), want);
  }
});

test('hammingDistancesAt gathers the distances of listed indexes (kernel)', () => {
  const k = loadKernel<HammingExports>('core');
  const r = rng(8);
  const indexes = Uint32Array.from({ length: 5000 }, () => Math.floor(r() * N));
  const q = k.exports.scratch(8 + indexes.length * 4 + N * 8);
  k.u8.set(query, q);
  const idx = q + 8;
  const table = idx + indexes.length * 4;
  k.view(Uint32Array, idx, indexes.length).set(indexes);
  k.u8.set(packed, table);
  k.exports.hammingDistancesAt(q, table, idx, indexes.length);
  assert.equal(Array.from(k.view(Uint32Array, k.exports.hammingResults(), indexes.length)), Array.from(indexes, (i) => distances[i]));
});

function bruteTopK(k: number, ds: number[]) {
  return ds.map((distance, index) => ({ index, distance }))
    .sort((a, b) => a.distance - b.distance || a.index - b.index)
    .slice(0, k);
}

test('topKHashes equals a brute-force sort (distance, then index)', () => {
  for (const k of [0, 1, 5, 10, 100, 401, 5000]) assert.equal(topKHashes(query, packed, k), bruteTopK(k, distances), `k ${k}`);
  // ties: many identical hashes
  const same = new Uint8Array(80 * 8);
  for (let i = 0; i < 80; i++) same.set(i % 3 === 0 ? query : flipBits(rng(i), query, 1 + (i % 2)), i * 8);
  const ds = Array.from({ length: 80 }, (_, i) => bruteDistance(query, same.subarray(i * 8, i * 8 + 8)));
  for (const k of [1, 10, 27, 28, 60, 80, 200]) assert.equal(topKHashes(query, same, k), bruteTopK(k, ds), `ties k ${k}`);
  assert.equal(topKHashes(query, new Uint8Array(0), 3), []);
});

test('HashTable keeps hashes resident: scan and topK equal the one-shot functions', () => {
  const table = new HashTable({ capacity: 16 });
  // grows several times while adding one by one and in packs
  for (let i = 0; i < 1000; i++) table.add(packed.subarray(i * 8, i * 8 + 8));
  table.addPacked(packed.subarray(1000 * 8));
  assert.is(table.size, N);
  assert.equal(table.get(12345), packed.slice(12345 * 8, 12346 * 8));
  for (const t of [90, 70, 60]) assert.equal(table.scan(query, t), scanHashes(query, packed, t));
  assert.equal(table.topK(query, 50), bruteTopK(50, distances));
  table.set(7, query);
  assert.equal(table.topK(query, 1), [{ index: 7, distance: 0 }]);
  table.clear();
  assert.is(table.scan(query, 0).length, 0);
  table.free();
  assert.throws(() => table.scan(query, 0));
});

test('both builds agree on scans', () => {
  const builds = (['scalar', 'simd'] as const).map((flavor) => {
    try { return new HashTable({ flavor }); } catch { return null; }
  }).filter((t): t is HashTable => t !== null);
  for (const t of builds) t.addPacked(packed);
  for (const th of [95, 80, 70, 50]) {
    const want = Array.from(scanHashes(query, packed, th));
    for (const t of builds) assert.equal(Array.from(t.scan(query, th)), want);
  }
  // the i8x16.popcnt variant of the scan, every build, sizes around its 16-hash step
  for (const flavor of ['scalar', 'simd'] as const) {
    let k;
    try { k = loadKernel<HammingExports>('core', flavor); } catch { continue; }
    for (const n of [0, 5, 15, 16, 17, 33, 1000, N]) {
      const q = k.exports.scratch(8 + n * 8);
      k.u8.set(query, q);
      k.u8.set(packed.subarray(0, n * 8), q + 8);
      for (const d of [-1, 0, 5, 19, 30, 64]) {
        const count = k.exports.hammingScanBytewise(q, q + 8, n, d);
        const got = Array.from(k.view(Uint32Array, k.exports.hammingResults(), count));
        const want2 = distances.slice(0, n).flatMap((x, i) => (x <= d ? [i] : []));
        assert.equal(got, want2, `${flavor} n ${n} d ${d}`);
      }
    }
  }
  for (const t of builds) t.free();
});

test('alignedSimilarity equals brute force on random sequences', () => {
  const r = rng(77);
  for (let n = 0; n < 150; n++) {
    const unit = r() < 0.5 ? 4 : 8;
    const na = Math.floor(r() * 60);
    const a = randomBytes(r, na * unit);
    let b: Uint8Array;
    if (r() < 0.6 && na > 0) {
      // a shifted, trimmed, slightly noisy copy
      const shift = Math.floor(r() * 20);
      const rest = a.slice(shift * unit);
      b = flipBits(r, rest, Math.min(Math.floor(r() * 20), rest.length * 8));
    } else {
      b = randomBytes(r, Math.floor(r() * 60) * unit);
    }
    const maxShift = Math.floor(r() * 25);
    const minOverlap = 1 + Math.floor(r() * 40);
    assert.is(alignedSimilarity(a, b, unit, maxShift, minOverlap), bruteAligned(a, b, unit, maxShift, minOverlap), `case ${n}`);
  }
  // the section 3 parameters on longer sequences
  const audio = randomBytes(r, 900 * 4);
  const trimmed = flipBits(r, audio.slice(37 * 4, 700 * 4), 300);
  const rule = SEQUENCE_ALIGNMENT.AudioChromaprint;
  const sim = alignedSimilarity(audio, trimmed, 4, rule.maxShift, rule.minOverlap);
  assert.is(sim, bruteAligned(audio, trimmed, 4, rule.maxShift, rule.minOverlap));
  assert.ok(sim >= 98);
  assert.is(fingerprintSimilarity(
    { hash_type: 'AudioChromaprint', hash_value: Array.from(audio) },
    { hash_type: 'AudioChromaprint', hash_value: Array.from(trimmed) },
  ), sim);
  assert.is(fingerprintSimilarity({ hash_type: 'ImagePHash', hash_value: [0, 0, 0, 0, 0, 0, 0, 0] }, { hash_type: 'ImagePHash', hash_value: [255, 0, 0, 0, 0, 0, 0, 0] }), 87);
  assert.is(fingerprintSimilarity({ hash_type: 'ImagePHash', hash_value: [1] }, { hash_type: 'VideoPHash', hash_value: [1] }), null);
  assert.throws(() => alignedSimilarity(new Uint8Array(6), new Uint8Array(8), 4, 1, 1), RangeError);
});

test('memory stays flat over 1,000,000 calls of each function', () => {
  const core = loadKernel('core');
  const r = rng(5);
  const a = randomBytes(r, 8);
  const b = randomBytes(r, 8);
  const small = packed.subarray(0, 64 * 8);
  const seqA = randomBytes(r, 40 * 4);
  const seqB = randomBytes(r, 40 * 4);
  const table = new HashTable({ capacity: 64 });
  table.addPacked(small);
  const calls: [string, () => unknown][] = [
    ['hammingDistance', () => hammingDistance(a, b)],
    ['hammingSimilarity', () => hammingSimilarity(a, b)],
    ['scanHashes', () => scanHashes(query, small, 60)],
    ['topKHashes', () => topKHashes(query, small, 5)],
    ['HashTable.scan', () => table.scan(query, 60)],
    ['HashTable.topK', () => table.topK(query, 5)],
    ['alignedSimilarity', () => alignedSimilarity(seqA, seqB, 4, 8, 4)],
  ];
  for (const [, f] of calls) f();
  for (const [name, f] of calls) {
    const before = core.exports.memory.buffer.byteLength;
    for (let i = 0; i < 1_000_000; i++) f();
    assert.is(core.exports.memory.buffer.byteLength, before, name);
  }
  table.free();
});

test.run();
