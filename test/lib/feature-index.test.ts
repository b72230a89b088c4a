// The local-features retrieval index (issue 32): its answers against a plain JS
// reference that follows the kernel's rule (three cells per descriptor from the two
// nearest codewords of each half; postings within the embedding distance, 14 bits by
// default, of the 64 embedded bits: each half's bits at its codeword's 32 places in
// ascending order; an image's votes the number of its first 64 features found in a
// channel, its score those weighed by their cells' rarity; mirrored descriptors = halves
// swapped), on seeded random descriptors; noisy and mirrored copies found first; ids,
// inputs and the codebook's places checked; addSet equal to add; memory flat. Run for both WebAssembly builds (npm test runs lib/ again as scalar).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FeatureIndex, FEATURE_CODEBOOK_BYTES, FEATURE_INDEX_MAX_ID } from '../../src/lib/feature-index.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { descriptorsOf, FEATURE_BYTES, type FeatureSet } from '../../src/lib/features.js';

function random(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bytes = (r: () => number, n: number) => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));

/** `d` (n x 32 bytes) with `flips` bits of each descriptor flipped at seeded places. */
function noisy(d: Uint8Array, flips: number, r: () => number): Uint8Array {
  const out = d.slice();
  for (let i = 0; i < d.length / 32; i++) for (let k = 0; k < flips; k++) out[i * 32 + Math.floor(r() * 32)] ^= 1 << Math.floor(r() * 8);
  return out;
}

/** Each descriptor's halves swapped: the features kernel's mirrored descriptor. */
function mirrored(d: Uint8Array): Uint8Array {
  const out = new Uint8Array(d.length);
  for (let i = 0; i < d.length; i += 32) {
    out.set(d.subarray(i + 16, i + 32), i);
    out.set(d.subarray(i, i + 16), i + 16);
  }
  return out;
}

const pop = (x: number) => {
  let c = 0;
  for (let v = x >>> 0; v; v &= v - 1) c++;
  return c;
};

function halfDistance(book: Uint8Array, w: number, d: Uint8Array, o: number): number {
  let s = 0;
  for (let i = 0; i < 16; i++) s += pop(book[w * 16 + i] ^ d[o + i]);
  return s;
}

/** The two nearest codewords of the half at `o` (lowest index on ties), as the kernel finds them. */
function nearestTwo(book: Uint8Array, d: Uint8Array, o: number): [number, number] {
  let a = 0, da = 129, b = 0, db = 130;
  for (let w = 0; w < 256; w++) {
    const x = halfDistance(book, w, d, o);
    if (x < da) { b = a; db = da; a = w; da = x; } else if (x < db) { b = w; db = x; }
  }
  return [a, b];
}

/** The bits of the half at `o` at codeword `w`'s 32 embedding places (the codebook's bytes after its codewords) in ascending order of place, the lowest place's the lowest bit. */
function embed(book: Uint8Array, w: number, d: Uint8Array, o: number): number {
  const places = [...book.subarray(256 * 16 + w * 32, 256 * 16 + w * 32 + 32)].sort((x, y) => x - y);
  let v = 0;
  places.forEach((at, k) => { v |= ((d[o + (at >> 3)] >> (at & 7)) & 1) << k; });
  return v >>> 0;
}

/** A cell's weight: 4 log2(images / postings) in quarter steps, at least 1 (the integer log2 of images x 256 / postings and the two bits below its top one). */
function weight(images: number, postings: number): number {
  const r = Math.floor((images * 256) / postings);
  if (r === 0) return 1;
  let l = 0;
  while (2 ** (l + 1) <= r) l++;
  const frac = l >= 2 ? Math.floor(r / 2 ** (l - 2)) & 3 : (r * 2 ** (2 - l)) & 3;
  return Math.max(1, 4 * l + frac - 32);
}

/** The last reference query's work: postings in the cells probed, and those within maxHe bits. */
const work = { scanned: 0, passed: 0 };

/** The reference: the kernel's rule in plain JS over the images as added. */
function reference(book: Uint8Array, images: Map<number, Uint8Array>, q: Uint8Array, opts: { maxHe: number; minVotes: number; limit: number; mirror: boolean; probes?: 1 | 3 }) {
  const cells = new Map<number, { id: number; feature: number; order: number; lo: number; hi: number }[]>();
  let order = 0;
  for (const [id, d] of images) {
    for (let i = 0; i < Math.min(d.length, 64 * 32); i += 32) {
      const a = nearestTwo(book, d, i)[0];
      const b = nearestTwo(book, d, i + 16)[0];
      const cell = (a << 8) | b;
      if (!cells.has(cell)) cells.set(cell, []);
      cells.get(cell)!.push({ id, feature: i / 32, order, lo: embed(book, a, d, i), hi: embed(book, b, d, i + 16) });
    }
    order++;
  }
  work.scanned = 0;
  work.passed = 0;
  const found = new Map<number, { order: number; direct: Set<number>; mirrored: Set<number>; directScore: number; mirroredScore: number }>();
  for (let i = 0; i < q.length; i += 32) {
    const [a1, a2] = nearestTwo(book, q, i);
    const [b1, b2] = nearestTwo(book, q, i + 16);
    // a probe of cell (x, y) compares the first half's bits at x's places and the second's at y's
    const e = (w: number, o: number) => embed(book, w, q, i + o);
    const probes: [number, number, number, 'direct' | 'mirrored'][] = [
      [(a1 << 8) | b1, e(a1, 0), e(b1, 16), 'direct'], [(a1 << 8) | b2, e(a1, 0), e(b2, 16), 'direct'], [(a2 << 8) | b1, e(a2, 0), e(b1, 16), 'direct'],
    ].slice(0, opts.probes ?? 3) as [number, number, number, 'direct'][];
    // the mirrored descriptor is the halves swapped: its first half is the second
    if (opts.mirror) probes.push(...([[(b1 << 8) | a1, e(b1, 16), e(a1, 0), 'mirrored'], [(b1 << 8) | a2, e(b1, 16), e(a2, 0), 'mirrored'], [(b2 << 8) | a1, e(b2, 16), e(a1, 0), 'mirrored']] as [number, number, number, 'mirrored'][]).slice(0, opts.probes ?? 3));
    for (const [cell, l, h, ch] of probes) scan(cell, l, h, ch);
  }
  function scan(cell: number, l: number, h: number, ch: 'direct' | 'mirrored') {
    for (const p of cells.get(cell) ?? []) {
      work.scanned++;
      if (pop(p.lo ^ l) + pop(p.hi ^ h) > opts.maxHe) continue;
      work.passed++;
      const v = found.get(p.id) ?? { order: p.order, direct: new Set<number>(), mirrored: new Set<number>(), directScore: 0, mirroredScore: 0 };
      if (!v[ch].has(p.feature)) {
        v[ch].add(p.feature);
        v[`${ch}Score`] += weight(images.size, cells.get(cell)!.length);
      }
      found.set(p.id, v);
    }
  }
  return [...found].map(([id, v]) => {
    const mirrored = v.mirroredScore > v.directScore;
    return { id, votes: (mirrored ? v.mirrored : v.direct).size, mirrored, score: mirrored ? v.mirroredScore : v.directScore, order: v.order };
  })
    .filter((c) => c.votes >= opts.minVotes)
    .sort((x, y) => y.score - x.score || x.order - y.order)
    .slice(0, opts.limit)
    .map(({ id, votes, mirrored, score }) => ({ id, votes, mirrored, score }));
}

/** A random codebook: 256 halves, then 32 distinct places (0-127) for each (the trained one does better; any works for the rule). */
function codebookFrom(r: () => number): Uint8Array {
  const book = bytes(r, FEATURE_CODEBOOK_BYTES);
  for (let w = 0; w < 256; w++) {
    // 32 distinct places in a seeded order (the kernel takes them in ascending order)
    const all = Array.from({ length: 128 }, (_, b) => b);
    for (let k = 0; k < 32; k++) {
      const j = k + Math.floor(r() * (128 - k));
      [all[k], all[j]] = [all[j], all[k]];
      book[256 * 16 + w * 32 + k] = all[k];
    }
  }
  return book;
}

test('answers exactly what the reference rule gives, direct and mirrored, on random descriptors with noisy copies', () => {
  const r = random(11);
  const book = codebookFrom(r);
  const index = new FeatureIndex(book);
  const images = new Map<number, Uint8Array>();
  for (let id = 0; id < 150; id++) {
    const d = bytes(r, 32 * 48);
    images.set(id * 7 + 3, d);
    assert.ok(index.add(id * 7 + 3, d));
  }
  assert.is(index.size(), 150);
  assert.is(index.postings(), 150 * 48);
  const opts = { maxHe: 18, minVotes: 3, limit: 10, mirror: true };
  // a copy of image 52's descriptors with 10 bits flipped in each, among strangers
  const copy = new Uint8Array([...noisy(images.get(52 * 7 + 3)!, 10, r), ...bytes(r, 32 * 100)]);
  const got = index.query(copy, { maxEmbeddingDistance: 18, minVotes: 3, limit: 10 });
  assert.equal(got, reference(book, images, copy, opts));
  assert.equal(index.lastQueryWork(), work, 'the postings scanned and passed');
  assert.ok(work.passed > 0 && work.scanned > work.passed);
  assert.is(got[0].id, 52 * 7 + 3);
  assert.is(got[0].mirrored, false);
  // its mirror: found through the mirrored channel
  const flipped = mirrored(copy);
  const m = index.query(flipped, { maxEmbeddingDistance: 18, minVotes: 3, limit: 10 });
  assert.equal(m, reference(book, images, flipped, opts));
  assert.is(m[0].id, 52 * 7 + 3);
  assert.is(m[0].mirrored, true);
  // without the mirrored channel the mirror finds it no more than a stranger would
  const direct = index.query(flipped, { mirror: false, maxEmbeddingDistance: 18, minVotes: 3, limit: 10 });
  assert.equal(direct, reference(book, images, flipped, { ...opts, mirror: false }));
  assert.not.ok(direct.some((c) => c.id === 52 * 7 + 3 && c.votes > 3));
  // strangers alone find nothing at a sensible vote count
  assert.equal(index.query(bytes(r, 32 * 200), { minVotes: 4 }), []);
  index.free();
});

test('many images, thresholds and limits: equal to the reference for each setting', () => {
  const r = random(5);
  const book = codebookFrom(r);
  const index = new FeatureIndex(book);
  const images = new Map<number, Uint8Array>();
  for (let id = 0; id < 400; id++) {
    // images sharing some descriptors, so that votes tie and limits cut
    const d = id % 3 === 0 && id > 0 ? new Uint8Array([...images.get(id - 3)!.subarray(0, 32 * 10), ...bytes(r, 32 * 20)]) : bytes(r, 32 * 30);
    images.set(id, d);
    index.add(id, d);
  }
  const query = new Uint8Array([...noisy(images.get(99)!, 6, r), ...noisy(images.get(200)!.subarray(0, 32 * 12), 4, r)]);
  for (const [maxHe, minVotes, limit, mirror, probes] of [[18, 1, 100, true, 3], [10, 2, 5, true, 3], [24, 1, 3, false, 3], [0, 1, 50, true, 3], [18, 1, 100, true, 1], [24, 1, 100, false, 1]] as const) {
    const got = index.query(query, { maxEmbeddingDistance: maxHe, minVotes, limit, mirror, probes });
    assert.equal(got, reference(book, images, query, { maxHe, minVotes, limit, mirror, probes }), `maxHe ${maxHe} minVotes ${minVotes} limit ${limit} mirror ${mirror} probes ${probes}`);
    assert.equal(index.lastQueryWork(), work, 'the postings scanned and passed');
  }
  index.free();
});

test('10,000 images and crowded cells (nearly every posting within the embedding distance): equal to the reference', () => {
  const r = random(17);
  const book = codebookFrom(r);
  const index = new FeatureIndex(book);
  const images = new Map<number, Uint8Array>();
  // 10,000 images of 4 features each, all near one of 40 common descriptors: a few crowded cells
  const common = bytes(r, 32 * 40);
  for (let id = 0; id < 10_000; id++) {
    const d = new Uint8Array(32 * 4);
    for (let k = 0; k < 4; k++) {
      const c = Math.floor(r() * 40);
      d.set(noisy(common.subarray(32 * c, 32 * c + 32), 2, r), 32 * k);
    }
    images.set(id, d);
    index.add(id, d);
  }
  const query = new Uint8Array([...noisy(common, 1, r), ...noisy(common, 1, r)]);
  for (const maxHe of [64, 18, 6]) {
    const got = index.query(query, { maxEmbeddingDistance: maxHe, minVotes: 1, limit: 50, maxList: 1e9 });
    assert.equal(got, reference(book, images, query, { maxHe, minVotes: 1, limit: 50, mirror: true }), `maxHe ${maxHe}`);
    assert.equal(index.lastQueryWork(), work);
    if (maxHe === 64) assert.ok(work.passed > 40_000, `crowded: ${work.passed} finds`);
  }
  index.free();
});

test('an id is added once (records are immutable); ids, descriptors and the codebook are checked', () => {
  const r = random(3);
  const index = new FeatureIndex(codebookFrom(r));
  const d = bytes(r, 64);
  assert.ok(index.add(FEATURE_INDEX_MAX_ID, d));
  assert.not.ok(index.add(FEATURE_INDEX_MAX_ID, bytes(r, 64)), 'the second add of an id is refused');
  assert.is(index.postings(), 2);
  assert.ok(index.has(FEATURE_INDEX_MAX_ID));
  assert.not.ok(index.has(5));
  assert.not.ok(index.has(-1));
  assert.is(index.query(d, { minVotes: 1 })[0].id, FEATURE_INDEX_MAX_ID);
  for (const id of [-1, 1.5, FEATURE_INDEX_MAX_ID + 1, Number.NaN]) assert.throws(() => index.add(id, d), /feature index id/);
  assert.throws(() => index.add(1, new Uint8Array(33)), /n x 32/);
  assert.throws(() => index.query(new Uint8Array(31)), /n x 32/);
  assert.throws(() => new FeatureIndex(new Uint8Array(10)), /codebook/);
  const badPlace = codebookFrom(r);
  badPlace[FEATURE_CODEBOOK_BYTES - 1] = 128;
  assert.throws(() => new FeatureIndex(badPlace), /32 distinct bits 0-127/);
  const twice = codebookFrom(r);
  twice[FEATURE_CODEBOOK_BYTES - 1] = twice[FEATURE_CODEBOOK_BYTES - 2];
  assert.throws(() => new FeatureIndex(twice), /32 distinct bits 0-127/);
  assert.equal(index.query(new Uint8Array(0)), []);
  index.free();
  assert.throws(() => index.size(), /freed/);
});

test('an image holds its first 64 features: the rest are not indexed, and a feature found by many query descriptors counts once', () => {
  const r = random(21);
  const book = codebookFrom(r);
  const index = new FeatureIndex(book);
  const images = new Map<number, Uint8Array>();
  for (let id = 0; id < 40; id++) {
    const d = bytes(r, 32 * 100);
    images.set(id, d);
    index.add(id, d);
  }
  assert.is(index.postings(), 40 * 64);
  const d = images.get(17)!;
  // its features 64-99 alone: not held, so not found
  assert.not.ok(index.query(d.subarray(64 * 32), { minVotes: 1 }).some((c) => c.id === 17));
  // feature 5 asked 30 times over (with noise) is one feature found
  const same = new Uint8Array(Array.from({ length: 30 }, () => [...noisy(d.subarray(5 * 32, 6 * 32), 3, r)]).flat());
  const got = index.query(same, { minVotes: 1, mirror: false });
  assert.equal(got, reference(book, images, same, { maxHe: 14, minVotes: 1, limit: 20, mirror: false }));
  assert.is(got.find((c) => c.id === 17)?.votes, 1);
  // the whole image: all 64 held features, in the reference's order
  const whole = index.query(d, { minVotes: 1 });
  assert.equal(whole, reference(book, images, d, { maxHe: 14, minVotes: 1, limit: 20, mirror: true }));
  assert.is(whole[0].id, 17);
  assert.is(whole[0].votes, 64);
  assert.is(whole[0].mirrored, false);
  index.free();
});

test('addSet reads a feature set in place: the same index as add(descriptorsOf(set)), its first 64 features', () => {
  const r = random(31);
  const book = codebookFrom(r);
  const packed = new FeatureIndex(book);
  const inPlace = new FeatureIndex(book);
  const sets: FeatureSet[] = [];
  for (let id = 0; id < 60; id++) {
    const count = id === 0 ? 3 : 20 + (id % 5) * 20; // 3 to 100 features
    const bytes = new Uint8Array(count * FEATURE_BYTES);
    for (let f = 0; f < count; f++) bytes.set(Uint8Array.from({ length: FEATURE_BYTES }, (_, k) => (k < 8 ? k : Math.floor(r() * 256))), f * FEATURE_BYTES);
    const set: FeatureSet = { version: 1, width: 640, height: 480, count, bytes };
    sets.push(set);
    assert.ok(packed.add(id, descriptorsOf(set)));
    assert.ok(inPlace.addSet(id, set));
  }
  assert.not.ok(inPlace.addSet(5, sets[5]), 'an id is added once');
  assert.is(inPlace.postings(), packed.postings());
  for (const id of [0, 7, 33]) {
    const q = noisy(descriptorsOf(sets[id], 100), 4, r);
    assert.equal(inPlace.query(q, { minVotes: 1 }), packed.query(q, { minVotes: 1 }));
  }
  assert.throws(() => inPlace.addSet(99, { ...sets[1], bytes: sets[1].bytes.subarray(0, 40) }), /count x 40/);
  packed.free();
  inPlace.free();
});

test('a cell weighs 4 log2(images / postings), in quarter steps, at least 1', () => {
  const index = new FeatureIndex(codebookFrom(random(2)));
  const r = random(4);
  for (let id = 0; id < 1000; id++) index.add(id, bytes(r, 32));
  for (const postings of [1, 2, 3, 7, 10, 64, 100, 333, 999, 1000, 1001, 5000, 1e6]) {
    const w = index.cellWeight(postings);
    const exact = 4 * Math.log2(1000 / postings);
    assert.is(w, weight(1000, postings), `postings ${postings}`);
    assert.ok(exact < 1 ? w === 1 : w <= exact + 1e-9 && w > exact - 1.5, `postings ${postings}: ${w} against ${exact}`);
  }
  index.free();
});

test('memory stays flat over many queries, and a freed index gives its memory back', () => {
  const r = random(8);
  const book = codebookFrom(r);
  const kernel = loadKernel('matchindex');
  const index = new FeatureIndex(book);
  for (let id = 0; id < 2000; id++) index.add(id, bytes(r, 32 * 40));
  const q = bytes(r, 32 * 500);
  index.query(q, { minVotes: 1, limit: 100 });
  const before = kernel.exports.memory.buffer.byteLength;
  for (let i = 0; i < 200; i++) index.query(q, { minVotes: 1, limit: 100 });
  assert.is(kernel.exports.memory.buffer.byteLength, before);
  assert.ok(index.bytes() > 2000 * 40 * 12, `holds its postings: ${index.bytes()} bytes`);
  index.free();
});

test.run();
