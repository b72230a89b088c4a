// The ISCC Content-Code index against a brute-force scan written from isccDistance's rule:
// random 64-bit codes of every content type with near-duplicates planted at distances
// 0 to 20, queried at distances 0, 8, 12 and 64 with limits; codes of other types never
// answered; 256-bit queries compared by their first 64 bits; replacements and removals (the last code moving into the freed
// slot); codes with fewer than 16 or more than 48 bits set (flat pictures, silent clips)
// left out; refusals; both WebAssembly builds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IsccIndex, type IsccMatch } from '../../src/lib/iscc-index.js';
import { decodeIscc, encodeUnit, isccDistance, IsccError, MT, ST_CC } from '../../src/lib/iscc-codec.js';
import '../../src/lib/wasm.js';
import { rng, randomBytes } from '../helpers/random.js';

const FLAVORS = ['simd', 'scalar'] as const;
const TYPES = [ST_CC.TEXT, ST_CC.IMAGE, ST_CC.AUDIO, ST_CC.VIDEO, ST_CC.MIXED];

const code = (subType: number, body: Uint8Array, bits = 64) => encodeUnit(MT.CONTENT, subType, 0, bits, body);

/** `body` with `d` distinct bits of its first 64 flipped. */
function flipped(next: () => number, body: Uint8Array, d: number): Uint8Array {
  const out = body.slice();
  const bits = new Set<number>();
  while (bits.size < d) bits.add(Math.floor(next() * 64));
  for (const b of bits) out[b >> 3] ^= 0x80 >> (b & 7);
  return out;
}

/** Bits set among a code's first 64 body bits. */
function setBits(c: string): number {
  let n = 0;
  for (const b of decodeIscc(c).body.subarray(0, 8)) for (let v = b; v; v &= v - 1) n++;
  return n;
}

/** Random bytes whose first 64 bits have 16 to 48 set (a code with content, as a picture's has 32). */
function contentBytes(next: () => number, n: number): Uint8Array {
  for (;;) {
    const b = randomBytes(next, n);
    const c = code(ST_CC.IMAGE, b.subarray(0, 8));
    if (setBits(c) >= 16 && setBits(c) <= 48) return b;
  }
}

function brute(stored: Map<number, string>, query: string, maxDistance: number, limit: number): IsccMatch[] {
  const out: IsccMatch[] = [];
  if (setBits(query) < 16 || setBits(query) > 48) return out;
  for (const [id, c] of stored) {
    if (setBits(c) < 16 || setBits(c) > 48) continue;
    let d: number;
    try {
      d = isccDistance(query, c);
    } catch {
      continue; // another type
    }
    if (d <= maxDistance) out.push({ id, distance: d });
  }
  out.sort((a, b) => a.distance - b.distance || a.id - b.id);
  return out.slice(0, limit);
}

for (const flavor of FLAVORS) {
  test(`${flavor}: every answer equals a brute-force scan, over types, distances and limits`, () => {
    const next = rng(33);
    const index = new IsccIndex({ flavor });
    const stored = new Map<number, string>();
    const queries: string[] = [];
    let id = 1;
    for (let q = 0; q < 40; q++) {
      const type = TYPES[q % TYPES.length];
      const body = contentBytes(next, 32);
      queries.push(code(type, body, q % 3 === 0 ? 256 : 64));
      for (let d = 0; d <= 20; d += 2) {
        const c = code(type, flipped(next, body, d));
        stored.set(id, c);
        assert.is(index.add(id++, c), setBits(c) >= 16 && setBits(c) <= 48);
      }
      // the same body under the other types: never an answer
      for (const other of TYPES.filter((t) => t !== type)) {
        const c = code(other, body);
        stored.set(id, c);
        index.add(id++, c);
      }
    }
    for (let i = 0; i < 3000; i++) {
      const c = code(TYPES[i % TYPES.length], randomBytes(next, 8));
      stored.set(id, c);
      index.add(id++, c);
    }
    // random bytes: a few codes beyond the bounds, left out
    assert.is(index.size(), [...stored.values()].filter((c) => setBits(c) >= 16 && setBits(c) <= 48).length);
    for (const q of queries) {
      for (const [maxDistance, limit] of [[0, 100], [8, 100], [12, 3], [64, 10_000]] as const) {
        assert.equal(index.query(q, maxDistance, limit), brute(stored, q, maxDistance, limit), `${q} d<=${maxDistance}`);
      }
    }
    index.free();
  });

  test(`${flavor}: replacing and removing ids, the last code moving into the freed slot`, () => {
    const next = rng(34);
    const index = new IsccIndex({ flavor });
    const stored = new Map<number, string>();
    for (let id = 0; id < 2500; id++) {
      const c = code(ST_CC.IMAGE, contentBytes(next, 8));
      index.add(id, c);
      stored.set(id, c);
    }
    for (let round = 0; round < 3000; round++) {
      const id = Math.floor(next() * 2600);
      if (next() < 0.4) {
        assert.is(index.remove(id), stored.delete(id));
      } else {
        const c = code(next() < 0.5 ? ST_CC.IMAGE : ST_CC.AUDIO, contentBytes(next, 8));
        index.add(id, c);
        stored.set(id, c);
      }
    }
    assert.is(index.size(), stored.size);
    for (const c of [...stored.values()].slice(0, 50)) assert.equal(index.query(c, 10), brute(stored, c, 10, Infinity));
    for (const [id, c] of [...stored].slice(0, 50)) assert.ok(index.query(c, 0).some((m) => m.id === id), `${id} finds itself`);
    index.free();
  });
}

test('codes with too few or too many bits set are neither indexed nor matched; shorter codes and other units are refused', () => {
  const index = new IsccIndex();
  const zero = code(ST_CC.AUDIO, new Uint8Array(8));
  // a flat picture's Image-Code (ties at the median: one bit set), which 56 wallpapers of the dev corpus share
  const flat = code(ST_CC.IMAGE, Uint8Array.of(0x80, 0, 0, 0, 0, 0, 0, 0));
  for (const c of [zero, flat, code(ST_CC.IMAGE, new Uint8Array(8).fill(0xff)), code(ST_CC.IMAGE, Uint8Array.of(0xff, 0x7f, 0, 0, 0, 0, 0, 0))]) {
    assert.is(index.add(1, c), false, c);
    assert.equal(index.query(c, 64), []);
  }
  assert.is(index.size(), 0);
  const sixteen = code(ST_CC.IMAGE, Uint8Array.of(0xff, 0xff, 0, 0, 0, 0, 0, 0));
  const seventeen = code(ST_CC.IMAGE, Uint8Array.of(0xff, 0xff, 0x80, 0, 0, 0, 0, 0));
  const fortyEight = code(ST_CC.IMAGE, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0));
  assert.ok(index.add(2, sixteen) && index.add(3, fortyEight) && index.add(4, seventeen));
  assert.equal(index.query(sixteen, 1), [{ id: 2, distance: 0 }, { id: 4, distance: 1 }]);
  assert.is(index.add(5, code(ST_CC.IMAGE, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0))), false, '49 bits set');
  // a contentless code replacing a code takes the id out
  index.add(2, zero);
  assert.is(index.has(2), false);
  assert.throws(() => index.add(3, code(ST_CC.IMAGE, new Uint8Array(4).fill(7), 32)), (e: Error) => e instanceof IsccError && /shorter than the 64 bits/.test(e.message));
  assert.throws(() => index.add(3, encodeUnit(MT.DATA, 0, 0, 64, new Uint8Array(8).fill(9))), (e: Error) => e instanceof IsccError);
  assert.throws(() => index.add(-1, code(ST_CC.IMAGE, new Uint8Array(8).fill(9))), RangeError);
  assert.throws(() => index.query(code(ST_CC.IMAGE, new Uint8Array(8).fill(9)), 65), RangeError);
  assert.throws(() => index.add(3, 'ISCC:NOT-A-CODE'), (e: Error) => e instanceof IsccError);
  index.free();
  assert.throws(() => index.size() === 0 && index.add(4, zero), /freed/);
});

test.run();
