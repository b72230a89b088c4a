import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { createBLAKE3 } from 'hash-wasm';
import { blake3, createBlake3, BLAKE3_SLICE } from '../../src/lib/blake3.js';
import { loadKernel, wasmFlavor } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const hashWasm = await createBLAKE3();
/** Two independent implementations, which must agree with each other first. */
function reference(data: Uint8Array): string {
  const noble = hex(nobleBlake3(data));
  hashWasm.init();
  hashWasm.update(data);
  assert.is(hashWasm.digest('hex'), noble, `the references disagree at length ${data.length}`);
  return noble;
}

// The official BLAKE3 test vectors (BLAKE3-team/BLAKE3 test_vectors/test_vectors.json):
// input byte i is i mod 251, at these lengths, which cross the block (64) and chunk (1024)
// boundaries and the tree's levels.
const VECTOR_LENGTHS = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025, 2048, 2049, 3072, 3073, 4096, 4097,
  5120, 5121, 6144, 6145, 7168, 7169, 8192, 8193, 16384, 31744, 102400,
];
const vectorInput = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i % 251);

test(`the ${wasmFlavor} build is the one loaded`, () => {
  assert.ok(loadKernel('iscc', wasmFlavor));
});

test('the empty input: the published digest', () => {
  // BLAKE3's README and test_vectors.json, input length 0
  assert.is(hex(blake3(new Uint8Array(0))), 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
});

test('the official vectors\' inputs: one-shot and streamed equal @noble/hashes and hash-wasm', () => {
  for (const n of VECTOR_LENGTHS) {
    const data = vectorInput(n);
    const want = reference(data);
    assert.is(hex(blake3(data)), want, `one-shot, length ${n}`);
    assert.is(hex(createBlake3().update(data).digest()), want, `one update, length ${n}`);
  }
});

test('every split around block and chunk edges equals the one-shot digest', () => {
  const next = rng(3);
  for (const n of [63, 64, 65, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 5121]) {
    const data = randomBytes(next, n);
    const want = reference(data);
    for (let cut = 0; cut <= n; cut += n > 1100 ? 31 : 1) {
      const h = createBlake3().update(data.subarray(0, cut)).update(data.subarray(cut));
      assert.is(hex(h.digest()), want, `length ${n} split at ${cut}`);
    }
  }
});

test('random inputs and random chunkings up to 70 KiB; beyond one kernel slice', () => {
  const next = rng(4);
  for (let round = 0; round < 60; round++) {
    const n = (next() * 70_000) | 0;
    const data = randomBytes(next, n);
    const want = reference(data);
    assert.is(hex(blake3(data)), want, `one-shot, length ${n}`);
    const h = createBlake3();
    for (let at = 0; at < n;) {
      const len = 1 + ((next() * 9000) | 0);
      h.update(data.subarray(at, at + len));
      at += len;
    }
    assert.is(hex(h.digest()), want, `chunked, length ${n}`);
  }
  for (const n of [BLAKE3_SLICE - 1, BLAKE3_SLICE, BLAKE3_SLICE + 1, 3 * BLAKE3_SLICE + 4097]) {
    const data = randomBytes(next, n);
    assert.is(hex(blake3(data)), reference(data), `length ${n}`);
  }
});

test('interleaved hashers keep their own state; a hasher starts over after digest', () => {
  const next = rng(5);
  const a = randomBytes(next, 5000);
  const b = randomBytes(next, 3000);
  const ha = createBlake3();
  const hb = createBlake3();
  for (let i = 0; i < 10; i++) {
    ha.update(a.subarray(i * 500, (i + 1) * 500));
    hb.update(b.subarray(i * 300, (i + 1) * 300));
    blake3(b); // the one-shot path between them
  }
  assert.is(hex(ha.digest()), reference(a));
  assert.is(hex(hb.digest()), reference(b));
  assert.is(hex(ha.update(b).digest()), reference(b));
});

test('memory stays flat over many calls', () => {
  const k = loadKernel('iscc');
  const data = randomBytes(rng(6), 9000);
  blake3(data);
  createBlake3().update(data).digest();
  const before = k.exports.memory.buffer.byteLength;
  for (let i = 0; i < 20_000; i++) {
    blake3(data.subarray(0, i % 9000));
    if (i % 100 === 0) createBlake3().update(data).digest();
  }
  assert.is(k.exports.memory.buffer.byteLength, before);
});

test('input that is not bytes is refused with a clear error', () => {
  assert.throws(() => blake3('abc' as unknown as Uint8Array), /Uint8Array/);
  assert.throws(() => createBlake3().update([1, 2] as unknown as Uint8Array), /Uint8Array/);
});

test.run();
