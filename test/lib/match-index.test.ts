// The match index against a brute-force scan written from decisions.md section 3
// (candidates share a band at the same position; similarity per type; threshold keeps
// nulls; order similarity desc with null last, then signed_at desc; at most limit).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MatchIndex, type IndexedFingerprint, type Match, type MatchQuery } from '../../src/lib/match-index.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { rng } from '../helpers/random.js';
import { bruteAligned, bruteDistance, bruteSimilarity as bruteSimilarityOf } from '../helpers/brute.js';

// ---- brute force ----

const LAYOUT: Record<string, number> = { ImagePHash: 1, AudioChromaprint: 4, VideoPHash: 4 };

function validBands(bands: unknown, bandBytes: number): bands is number[][] {
  return Array.isArray(bands) && bands.length === 8
    && bands.every((b) => Array.isArray(b) && b.length === bandBytes && b.every((v) => Number.isInteger(v) && v >= 0 && v <= 255));
}

function bruteSimilarity(type: string, q: number[], s: number[]): number | null {
  if (q.length === 0 || s.length === 0) return null;
  if (type === 'ImagePHash') return q.length === 8 && s.length === 8 ? bruteSimilarityOf(bruteDistance(q, s), 64) : null;
  const unit = type === 'AudioChromaprint' ? 4 : 8;
  if (q.length % unit || s.length % unit) return null;
  return type === 'AudioChromaprint' ? bruteAligned(q, s, unit, 120, 32) : bruteAligned(q, s, unit, 30, 4);
}

interface Stored { fp: IndexedFingerprint; signedAt: number }

function bruteQuery(stored: Map<number, Stored>, q: MatchQuery, threshold: number | null, limit: number): Match[] {
  const bandBytes = LAYOUT[q.hash_type];
  if (!bandBytes || !validBands(q.bands, bandBytes)) return [];
  const rows: { id: number; similarity: number | null; signedAt: number }[] = [];
  for (const [id, { fp, signedAt }] of stored) {
    if (fp.hash_type !== q.hash_type || !validBands(fp.bands, bandBytes)) continue;
    const shares = q.bands.some((band, p) => (fp.bands as number[][])[p].every((v, j) => v === band[j]));
    if (!shares) continue;
    const qv = q.hash_value ? Array.from(q.hash_value) : [];
    const sv = fp.hash_value ? Array.from(fp.hash_value) : [];
    const s = qv.length ? bruteSimilarity(q.hash_type, qv, sv) : null;
    if (s !== null && threshold !== null && s < threshold) continue;
    rows.push({ id, similarity: s, signedAt });
  }
  rows.sort((a, b) => (b.similarity ?? -1) - (a.similarity ?? -1) || b.signedAt - a.signedAt || a.id - b.id);
  return rows.slice(0, limit).map(({ id, similarity }) => ({ id, similarity }));
}

/** The same as bruteQuery(stored, q, threshold, limit), cut from one unfiltered, unlimited answer. */
function cut(all: Match[], threshold: number | null, limit: number): Match[] {
  return all.filter((m) => m.similarity === null || threshold === null || m.similarity >= threshold).slice(0, limit);
}

// ---- data ----

function flip(rand: () => number, bytes: number[], n: number): number[] {
  const out = bytes.slice();
  for (let i = 0; i < n; i++) {
    const b = Math.floor(rand() * out.length * 8);
    out[b >> 3] ^= 1 << (b & 7);
  }
  return out;
}

/** Exactly `n` distinct bits flipped. */
function flipExactly(rand: () => number, bytes: number[], n: number): number[] {
  const out = bytes.slice();
  const chosen = new Set<number>();
  while (chosen.size < n) chosen.add(Math.floor(rand() * out.length * 8));
  for (const b of chosen) out[b >> 3] ^= 1 << (b & 7);
  return out;
}

const randomHash = (rand: () => number) => Array.from({ length: 8 }, () => Math.floor(rand() * 256));

function imageFp(hash: number[]): IndexedFingerprint & MatchQuery {
  return { hash_type: 'ImagePHash', hash_value: hash, bands: hash.map((b) => [b]) };
}

function seqFp(rand: () => number, type: 'AudioChromaprint' | 'VideoPHash', value: number[], vocab: number): IndexedFingerprint & MatchQuery {
  // bands from a small vocabulary so that unrelated sequences collide sometimes
  const bands = Array.from({ length: 8 }, () => {
    const v = Math.floor(rand() * vocab);
    return [0, 0, v >> 8, v & 255];
  });
  return { hash_type: type, hash_value: value, bands };
}

// ---- tests ----

test('planted near-duplicates among random hashes: found up to distance 7, all results as brute force', () => {
  const rand = rng(5);
  const index = new MatchIndex();
  const stored = new Map<number, Stored>();
  const put = (id: number, fp: IndexedFingerprint, signedAt: number) => {
    assert.ok(index.add(id, fp, signedAt));
    stored.set(id, { fp, signedAt });
  };
  for (let id = 0; id < 15_000; id++) put(id, imageFp(randomHash(rand)), 1_600_000_000_000 + id);
  // 30 originals, each with one copy at every distance 0..19
  const originals = Array.from({ length: 30 }, () => randomHash(rand));
  let id = 100_000;
  const planted: { id: number; original: number; distance: number }[] = [];
  for (let o = 0; o < originals.length; o++) {
    for (let d = 0; d <= 19; d++) {
      put(id, imageFp(flipExactly(rand, originals[o], d)), 1_700_000_000_000 + id);
      planted.push({ id, original: o, distance: d });
      id++;
    }
  }
  const found = new Map<number, number>(); // planted id -> similarity, from its own original's query
  for (let o = 0; o < originals.length; o++) {
    const q = imageFp(originals[o]);
    const all = bruteQuery(stored, q, null, Infinity);
    for (const threshold of [null, 60, 70, 90]) {
      for (const limit of [100, 5]) {
        assert.equal(index.query(q, { threshold, limit }), cut(all, threshold, limit), `original ${o} threshold ${threshold} limit ${limit}`);
      }
    }
    const mine = new Set(planted.filter((p) => p.original === o).map((p) => p.id));
    for (const m of index.query(q, { threshold: 70 })) if (mine.has(m.id)) found.set(m.id, m.similarity ?? -1);
  }
  for (const p of planted) {
    const want = Math.floor((100 * (64 - p.distance)) / 64);
    if (p.distance <= 7) assert.is(found.get(p.id), want, `planted copy at distance ${p.distance}`);
    else if (found.has(p.id)) assert.is(found.get(p.id), want);
  }
  index.free();
});

test('image queries equal a brute-force scan (mixed data, ties, removals, replacements)', () => {
  const rand = rng(11);
  const index = new MatchIndex();
  const stored = new Map<number, Stored>();
  const bases = Array.from({ length: 20 }, () => randomHash(rand));
  const put = (id: number, fp: IndexedFingerprint, signedAt: number) => {
    index.add(id, fp, signedAt);
    stored.set(id, { fp, signedAt });
  };
  for (let id = 1; id <= 6000; id++) {
    const r = rand();
    const base = bases[Math.floor(rand() * bases.length)];
    const signedAt = 1_700_000_000_000 + Math.floor(rand() * 50) * 1000; // many ties
    let fp: IndexedFingerprint;
    if (r < 0.5) fp = imageFp(flip(rand, base, Math.floor(rand() * 30)));
    else if (r < 0.9) fp = imageFp(randomHash(rand));
    else if (r < 0.95) fp = { hash_type: 'ImagePHash', bands: base.map((b) => [b]) }; // no hash_value
    else fp = { hash_type: 'ImagePHash', hash_value: base, bands: [[1, 2]] }; // wrong layout: never a candidate
    put(id, fp, signedAt);
  }
  for (let i = 0; i < 800; i++) {
    const id = 1 + Math.floor(rand() * 6000);
    if (rand() < 0.5) assert.is(index.remove(id), stored.delete(id));
    else put(id, imageFp(flip(rand, bases[0], Math.floor(rand() * 20))), 1_700_000_000_000 + i);
  }
  assert.is(index.size(), stored.size);
  let nonEmpty = 0;
  for (let n = 0; n < 60; n++) {
    const base = bases[n % bases.length];
    const qhash = flip(rand, base, Math.floor(rand() * 10));
    const q: MatchQuery = n % 5 === 4 ? { hash_type: 'ImagePHash', bands: qhash.map((b) => [b]) } : imageFp(qhash);
    const all = bruteQuery(stored, q, null, Infinity);
    for (const threshold of [60, 70, 90, null]) {
      for (const limit of [100, 7]) {
        const got = index.query(q, { threshold, limit });
        assert.equal(got, cut(all, threshold, limit), `query ${n} threshold ${threshold} limit ${limit}`);
        if (got.length > 0) nonEmpty++;
      }
    }
  }
  assert.ok(nonEmpty > 100);
  const q = imageFp(bases[0]);
  assert.equal(index.query(q), bruteQuery(stored, q, null, 100)); // defaults: threshold null, limit 100
  // layouts that match nothing
  assert.equal(index.query({ hash_type: 'ImagePHash', bands: bases[0].slice(0, 7).map((b) => [b]) }), []);
  assert.equal(index.query({ hash_type: 'ImagePHash', bands: bases[0].map((b) => [0, 0, 0, b]) }), []);
  assert.equal(index.query({ hash_type: 'VideoPHash', bands: bases[0].map((b) => [b]) }), []);
  assert.equal(index.query({ hash_type: 'Nope', bands: [] }), []);
  index.dispose();
});

test('bands-only queries and hash-less entries give similarity null, kept by any threshold', () => {
  const index = new MatchIndex();
  const h = [10, 20, 30, 40, 50, 60, 70, 80];
  index.add(1, imageFp(h), 1000);
  index.add(2, { hash_type: 'ImagePHash', bands: h.map((b) => [b]) }, 2000); // stored without hash_value
  index.add(3, imageFp([10, 0, 0, 0, 0, 0, 0, 0]), 3000);
  index.add(4, imageFp([0, 1, 2, 3, 4, 5, 6, 7]), 4000); // shares no band
  assert.equal(index.query({ hash_type: 'ImagePHash', bands: h.map((b) => [b]) }, { threshold: 70 }), [
    { id: 3, similarity: null },
    { id: 2, similarity: null },
    { id: 1, similarity: null },
  ]);
  const withHash = index.query(imageFp(h), { threshold: 70 });
  assert.equal(withHash, [{ id: 1, similarity: 100 }, { id: 2, similarity: null }]);
  index.free();
});

test('audio and video queries equal a brute-force scan (alignment per section 3)', () => {
  const rand = rng(12);
  const index = new MatchIndex();
  const stored = new Map<number, Stored>();
  const types = ['AudioChromaprint', 'VideoPHash'] as const;
  const bases = types.map((t) => Array.from({ length: 6 }, () => {
    const units = t === 'AudioChromaprint' ? 40 + Math.floor(rand() * 200) : 2 + Math.floor(rand() * 40);
    return Array.from({ length: units * (t === 'AudioChromaprint' ? 4 : 8) }, () => Math.floor(rand() * 256));
  }));
  for (let id = 1; id <= 900; id++) {
    const ti = id % 2;
    const unit = ti === 0 ? 4 : 8;
    const base = bases[ti][Math.floor(rand() * 6)];
    let value: number[];
    const r = rand();
    if (r < 0.6) {
      const trim = Math.floor(rand() * Math.min(30, base.length / unit - 1));
      value = flip(rand, base.slice(trim * unit), Math.floor(rand() * base.length));
    } else if (r < 0.95) value = Array.from({ length: (1 + Math.floor(rand() * 100)) * unit }, () => Math.floor(rand() * 256));
    else value = [];
    // a first generation, every id replaced below (frees the sequence blocks)
    index.add(id, seqFp(rand, types[ti], value, 40), Math.floor(rand() * 20));
  }
  const rand2 = rng(99);
  for (let id = 1; id <= 900; id++) {
    const ti = id % 2;
    const value = Array.from({ length: (ti === 0 ? 40 : 3) * (ti === 0 ? 4 : 8) }, () => Math.floor(rand2() * 256));
    const fp = seqFp(rand2, types[ti], rand2() < 0.5 ? value : flip(rand2, bases[ti][id % 6], 50), 40);
    const signedAt = Math.floor(rand2() * 20);
    index.add(id, fp, signedAt);
    stored.set(id, { fp, signedAt });
  }
  for (let i = 0; i < 100; i++) {
    const id = 1 + Math.floor(rand2() * 900);
    index.remove(id);
    stored.delete(id);
  }
  assert.is(index.size('AudioChromaprint') + index.size('VideoPHash'), stored.size);
  let compared = 0;
  for (let n = 0; n < 40; n++) {
    const ti = n % 2;
    const unit = ti === 0 ? 4 : 8;
    const trim = Math.floor(rand2() * 5);
    const qfp = seqFp(rand2, types[ti], flip(rand2, bases[ti][n % 6].slice(trim * unit), 40), 40);
    const q: MatchQuery = n % 4 === 3 ? { hash_type: qfp.hash_type, bands: qfp.bands } : qfp;
    const all = bruteQuery(stored, q, null, Infinity);
    for (const threshold of [60, 70, null]) {
      const got = index.query(q, { threshold, limit: 100 });
      assert.equal(got, cut(all, threshold, 100), `${types[ti]} query ${n} threshold ${threshold}`);
      compared += got.length;
    }
  }
  assert.ok(compared > 50, `${compared} results compared`);
  // an image query never sees sequences, and the other way round
  assert.equal(index.query(imageFp([0, 0, 0, 0, 0, 0, 0, 0])), []);
  index.dispose();
});

test('a re-encoded audio copy matches its original through a shared band', () => {
  const rand = rng(21);
  const index = new MatchIndex();
  const words = Array.from({ length: 300 * 4 }, () => Math.floor(rand() * 256));
  const bands = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20], [21, 22, 23, 24], [25, 26, 27, 28], [29, 30, 31, 32]];
  index.add(7, { hash_type: 'AudioChromaprint', hash_value: words, bands }, 5);
  const copyBands = bands.map((b, i) => (i === 5 ? b : [0, 0, 0, i]));
  const copy = flip(rand, words.slice(40), 300); // 40 words trimmed, noise
  const got = index.query({ hash_type: 'AudioChromaprint', hash_value: copy, bands: copyBands }, { threshold: 60 });
  assert.is(got.length, 1);
  assert.is(got[0].id, 7);
  assert.is(got[0].similarity, bruteSimilarity('AudioChromaprint', copy, words));
  assert.equal(index.query({ hash_type: 'AudioChromaprint', hash_value: copy, bands: bands.map((_, i) => [9, 9, 9, i]) }), []);
  index.free();
});

test('remove takes an entry out of every bucket; ids can come back', () => {
  const index = new MatchIndex();
  const h = [1, 2, 3, 4, 5, 6, 7, 8];
  for (let id = 0; id < 3000; id++) index.add(id, imageFp(h), id); // one long bucket chain per position
  assert.is(index.query(imageFp(h), { limit: 5000 }).length, 3000);
  for (let id = 0; id < 3000; id += 2) assert.ok(index.remove(id));
  assert.not.ok(index.remove(0));
  assert.not.ok(index.has(0));
  assert.ok(index.has(1));
  const left = index.query(imageFp(h), { limit: 5000 });
  assert.is(left.length, 1500);
  assert.ok(left.every((m) => m.id % 2 === 1));
  assert.is(left[0].id, 2999); // newest first among equal similarity
  index.add(0, imageFp(h), 1e13);
  assert.equal(index.query(imageFp(h), { limit: 1 }), [{ id: 0, similarity: 100 }]);
  index.free();
});

test('bad ids, hash types and options are refused; unindexable fingerprints are held but never match', () => {
  const index = new MatchIndex();
  assert.throws(() => index.add(NaN, imageFp([1, 2, 3, 4, 5, 6, 7, 8])), RangeError);
  assert.throws(() => index.add(-1, imageFp([1, 2, 3, 4, 5, 6, 7, 8])), RangeError);
  assert.throws(() => index.add(2 ** 32, imageFp([1, 2, 3, 4, 5, 6, 7, 8])), RangeError);
  assert.throws(() => index.add(1, { hash_type: 'Other', bands: [] }), RangeError);
  assert.throws(() => index.add(1, { hash_type: 'toString', bands: [] }), RangeError);
  assert.throws(() => index.add(1, imageFp([1, 2, 3, 4, 5, 6, 7, 8]), Infinity), RangeError);
  assert.throws(() => index.query(imageFp([1, 2, 3, 4, 5, 6, 7, 8]), { limit: -1 }), RangeError);
  assert.is(index.add(1, { hash_type: 'ImagePHash', hash_value: [1], bands: [[1]] }), false);
  assert.ok(index.has(1));
  assert.is(index.add(2, imageFp([1, 2, 3, 4, 5, 6, 7, 8])), true);
  // 12 bits differ: floor(100 * 52 / 64)
  assert.equal(index.query(imageFp([1, 0, 0, 0, 0, 0, 0, 0]), { threshold: 0 }), [{ id: 2, similarity: 81 }]);
  assert.ok(index.remove(1));
  assert.not.ok(index.remove(1));
  index.dispose();
  assert.throws(() => index.size(), /freed/);
});

test('bulk image loads equal single adds; at most 64 bytes per stored image fingerprint', () => {
  const rand = rng(8);
  const n = 200_000;
  const ids = new Uint32Array(n);
  const hashes = new Uint8Array(n * 8);
  const at = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    ids[i] = i * 3 + 1;
    at[i] = 1_600_000_000_000 + i;
    for (let j = 0; j < 8; j++) hashes[i * 8 + j] = Math.floor(rand() * 256);
  }
  const bulk = new MatchIndex();
  bulk.addImageHashes(ids, hashes, at);
  assert.is(bulk.size('ImagePHash'), n);
  const single = new MatchIndex();
  for (let i = 0; i < 5000; i++) single.add(ids[i], imageFp(Array.from(hashes.subarray(i * 8, i * 8 + 8))), at[i]);
  for (let i = 0; i < 20; i++) {
    const q = imageFp(Array.from(hashes.subarray(i * 8, i * 8 + 8)));
    const got = bulk.query(q, { threshold: 60, limit: 100_000 });
    assert.is(got[0].id, ids[i]);
    assert.is(got[0].similarity, 100);
    assert.equal(single.query(q, { threshold: 60, limit: 100_000 }), got.filter((m) => m.id <= ids[4999]));
  }
  const perEntry = bulk.bytesPerEntry();
  assert.ok(perEntry > 32 && perEntry <= 64, `${perEntry} bytes per entry`);
  bulk.free();
  single.free();
});

test('memory stays flat under add/remove churn and repeated queries', () => {
  const kernel = loadKernel('matchindex');
  const index = new MatchIndex();
  const rand = rng(3);
  const live: number[] = [];
  let next = 0;
  for (; next < 20_000; next++) {
    index.add(next, imageFp(randomHash(rand)), next);
    live.push(next);
  }
  const audio = seqFp(rand, 'AudioChromaprint', Array.from({ length: 400 }, () => Math.floor(rand() * 256)), 5);
  const q = imageFp([1, 2, 3, 4, 5, 6, 7, 8]);
  // warm up: one full churn cycle reaches the steady state of chunks and slots
  const churn = (rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      const k = Math.floor(rand() * live.length);
      index.remove(live[k]);
      live[k] = next;
      index.add(next++, imageFp(randomHash(rand)), next);
      index.add(5_000_000, audio, i); // replace: frees and re-allocates the sequence block
      if (i % 10 === 0) {
        index.query(q, { threshold: 60 });
        index.query(audio, { threshold: 70 });
      }
    }
  };
  churn(30_000);
  const before = kernel.exports.memory.buffer.byteLength;
  const bytesBefore = index.bytes();
  churn(100_000);
  assert.is(kernel.exports.memory.buffer.byteLength, before);
  assert.ok(index.bytes() <= bytesBefore * 1.02, `${index.bytes()} vs ${bytesBefore}`);
  assert.is(index.size(), 20_001);
  index.free();
});

test.run();
