// The 256-bit PDQ index against a brute-force scan: random hashes with near-duplicates
// planted at every distance from 0 to 40 (and adversarial ones whose differing bits are
// spread evenly over the 16 chunks, the pigeonhole's worst case), queried with one hash
// and with eight, at thresholds 0, 15, 16 and 31; one at a time and in bulk, with
// removals, replaced ids and repacking; both WebAssembly builds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PdqIndex, type PdqMatch } from '../../src/lib/pdq-index.js';
import { pdqHex } from '../../src/lib/pdq.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { rng, randomBytes } from '../helpers/random.js';

const FLAVORS = ['simd', 'scalar'] as const;

function bits(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v >>>= 1) n += v & 1;
  return n;
}

function bruteDistance(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < 32; i++) d += bits(a[i] ^ b[i]);
  return d;
}

function brute(stored: Map<number, Uint8Array>, queries: Uint8Array[], t: number): PdqMatch[] {
  const out: PdqMatch[] = [];
  for (const [id, h] of stored) {
    let best = 257;
    let variant = -1;
    queries.forEach((q, i) => {
      const d = bruteDistance(q, h);
      if (d < best) {
        best = d;
        variant = i;
      }
    });
    if (best <= t) out.push({ id, distance: best, variant });
  }
  return out.sort((a, b) => a.distance - b.distance || a.id - b.id);
}

/** `base` with `d` distinct random bits flipped. */
function flip(next: () => number, base: Uint8Array, d: number): Uint8Array {
  const out = base.slice();
  const chosen = new Set<number>();
  while (chosen.size < d) chosen.add((next() * 256) | 0);
  for (const b of chosen) out[b >> 3] ^= 1 << (b & 7);
  return out;
}

/** `base` with `d` bits flipped, spread over the 16 two-byte chunks as evenly as possible. */
function flipSpread(next: () => number, base: Uint8Array, d: number): Uint8Array {
  const out = base.slice();
  const perChunk = Array.from({ length: 16 }, (_, c) => Math.floor(d / 16) + (c < d % 16 ? 1 : 0));
  // shuffle which chunks get the extra bit
  for (let i = 15; i > 0; i--) {
    const j = (next() * (i + 1)) | 0;
    [perChunk[i], perChunk[j]] = [perChunk[j], perChunk[i]];
  }
  perChunk.forEach((k, c) => {
    const chosen = new Set<number>();
    while (chosen.size < k) chosen.add((next() * 16) | 0);
    for (const b of chosen) out[2 * c + (b >> 3)] ^= 1 << (b & 7);
  });
  return out;
}

function check(index: PdqIndex, stored: Map<number, Uint8Array>, queries: Uint8Array[], t: number, label: string): number {
  const got = index.query(queries, t);
  const want = brute(stored, queries, t);
  // the variant is the first query hash at the smallest distance in both
  assert.equal(got, want, label);
  return got.length;
}

for (const flavor of FLAVORS) {
  test(`${flavor}: exact recall and no false results against brute force, planted at every distance 0-40`, () => {
    const next = rng(281);
    const index = new PdqIndex({ flavor });
    const stored = new Map<number, Uint8Array>();
    const queries: Uint8Array[][] = [];
    let id = 1;
    for (let i = 0; i < 3000; i++) {
      const h = randomBytes(next, 32);
      stored.set(id, h);
      index.add(id++, h);
    }
    for (let qn = 0; qn < 12; qn++) {
      const q = randomBytes(next, 32);
      const variants = [q, ...Array.from({ length: 7 }, () => randomBytes(next, 32))];
      queries.push(variants);
      for (let d = 0; d <= 40; d++) {
        for (const v of [0, qn % 8]) {
          for (const h of [flip(next, variants[v], d), flipSpread(next, variants[v], d)]) {
            stored.set(id, h);
            index.add(id++, h);
          }
        }
      }
    }
    let found = 0;
    for (const [qn, variants] of queries.entries()) {
      for (const t of [0, 15, 16, 31]) {
        found += check(index, stored, [variants[0]], t, `one hash, query ${qn}, t ${t}`);
        found += check(index, stored, variants, t, `eight hashes, query ${qn}, t ${t}`);
      }
    }
    assert.ok(found > 12 * 4 * 60, `planted matches found (${found})`);
    // the adversarial 31 is found, the spread 32 is not
    const q = queries[0][0];
    const at31 = flipSpread(next, q, 31);
    const at32 = flipSpread(next, q, 32);
    index.add(900001, at31);
    index.add(900002, at32);
    const ids = index.query(q, 31).map((m) => m.id);
    assert.ok(ids.includes(900001));
    assert.not.ok(ids.includes(900002));
    assert.is(index.size(), stored.size + 2);
    index.free();
  });

  test(`${flavor}: removals, replaced ids, bulk adds with repeated ids, repacking`, () => {
    const next = rng(2801);
    const index = new PdqIndex({ flavor });
    const stored = new Map<number, Uint8Array>();
    const bases = Array.from({ length: 6 }, () => randomBytes(next, 32));
    const near = (): Uint8Array => flip(next, bases[(next() * 6) | 0], (next() * 36) | 0);
    // bulk, with an id given twice (the last hash wins)
    const ids: number[] = [];
    const hashes = new Uint8Array(4000 * 32);
    for (let i = 0; i < 4000; i++) {
      const id = i === 3999 ? 17 : 10 + i;
      const h = i % 5 === 0 ? near() : randomBytes(next, 32);
      ids.push(id);
      hashes.set(h, i * 32);
      stored.set(id, h);
    }
    index.addMany(ids, hashes);
    assert.is(index.size(), stored.size);
    assert.equal(index.get(17), stored.get(17));
    for (const b of bases) check(index, stored, [b], 31, 'after the bulk add');
    // one at a time: new, replaced and removed entries (the added ones leave the packed region)
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 1500; i++) {
        const id = (next() * 8000) | 0;
        const r = next();
        if (r < 0.3) {
          assert.is(index.remove(id), stored.delete(id), `remove ${id}`);
        } else {
          const h = r < 0.6 ? near() : randomBytes(next, 32);
          index.add(id, h);
          stored.set(id, h);
        }
      }
      assert.is(index.size(), stored.size);
      for (const b of bases) for (const t of [15, 31]) check(index, stored, [b], t, `round ${round}, t ${t}`);
      if (round === 1) index.compact();
    }
    // a second bulk add on a non-empty index, replacing some ids
    const more = new Uint8Array(1000 * 32);
    const moreIds: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const id = 5000 + 3 * i;
      const h = near();
      moreIds.push(id);
      more.set(h, i * 32);
      stored.set(id, h);
    }
    index.addMany(moreIds, more);
    assert.is(index.size(), stored.size);
    for (const b of bases) check(index, stored, [b, ...bases.slice(0, 3)], 31, 'after the second bulk add');
    for (const [id, h] of stored) assert.equal(index.get(id), h);
    index.free();
  });

  test(`${flavor}: one-at-a-time adds repack themselves and memory stays flat under churn`, () => {
    const next = rng(28001);
    const index = new PdqIndex({ flavor });
    const stored = new Map<number, Uint8Array>();
    for (let i = 0; i < 40000; i++) {
      const h = randomBytes(next, 32);
      index.add(i, h);
      stored.set(i, h);
    }
    const probe = [...stored.values()].slice(0, 5).map((h) => flip(next, h, 20));
    for (const p of probe) check(index, stored, [p], 31, 'after 40000 single adds');
    const kernel = loadKernel('matchindex', flavor);
    let high = 0;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 20000; i++) {
        const id = (next() * 40000) | 0;
        const h = randomBytes(next, 32);
        index.add(id, h);
        stored.set(id, h);
      }
      if (round === 2) high = kernel.exports.memory.buffer.byteLength;
    }
    assert.is(kernel.exports.memory.buffer.byteLength, high, 'memory grew under churn');
    for (const p of probe) check(index, stored, [p], 31, 'after churn');
    index.free();
  });
}

test('the index refuses what it cannot answer exactly, and takes hex', () => {
  const index = new PdqIndex();
  const h = randomBytes(rng(5), 32);
  index.add(1, pdqHex(h));
  assert.equal(index.query(pdqHex(h)), [{ id: 1, distance: 0, variant: 0 }]);
  assert.throws(() => index.query(h, 32), RangeError);
  assert.throws(() => index.query([h, h, h, h, h, h, h, h, h]), RangeError);
  assert.throws(() => index.query([]), RangeError);
  assert.throws(() => index.add(2, 'zz'), RangeError);
  assert.throws(() => index.add(-1, h), RangeError);
  assert.throws(() => index.add(3, h.subarray(0, 31)), RangeError);
  assert.is(index.remove(2), false);
  assert.is(index.has(1), true);
  assert.is(index.remove(1), true);
  assert.equal(index.query(h), []);
  index.free();
  assert.throws(() => index.size(), /freed/);
});

test.run();
