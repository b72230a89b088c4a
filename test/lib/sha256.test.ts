import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { createSha256, sha256, sha256Hex, SLICE } from '../../src/lib/sha256.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const reference = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');

// FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values", SHA-256).
const NIST: Array<[string, string]> = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
  [
    'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
    'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
  ],
];
const MILLION_A = 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0';

test('NIST vectors, as strings and as bytes', () => {
  for (const [msg, want] of NIST) {
    assert.is(sha256Hex(msg), want, JSON.stringify(msg));
    assert.is(hex(sha256(new TextEncoder().encode(msg))), want);
    assert.is(createSha256().update(msg).digestHex(), want);
  }
});

test('NIST one million "a": one-shot bytes, one-shot string, and streamed in 1000 chunks', () => {
  const bytes = new Uint8Array(1_000_000).fill(0x61);
  assert.is(hex(sha256(bytes)), MILLION_A);
  assert.is(sha256Hex('a'.repeat(1_000_000)), MILLION_A);
  const h = createSha256();
  for (let i = 0; i < 1000; i++) h.update(bytes.subarray(i * 1000, (i + 1) * 1000));
  assert.is(h.digestHex(), MILLION_A);
});

test('random inputs of length 0..5000 match node:crypto', () => {
  const next = rng(1);
  for (let n = 0; n <= 5000; n += 1 + ((next() * 7) | 0)) {
    const data = randomBytes(next, n);
    assert.is(hex(sha256(data)), reference(data), `length ${n}`);
  }
});

test('every split of messages around the 55/56/63/64/65-byte edges equals the one-shot digest', () => {
  const next = rng(2);
  for (const n of [55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 191, 192, 193]) {
    const data = randomBytes(next, n);
    const want = reference(data);
    assert.is(sha256Hex(data), want);
    for (let cut = 0; cut <= n; cut++) {
      const h = createSha256().update(data.subarray(0, cut)).update(data.subarray(cut));
      assert.is(h.digestHex(), want, `length ${n} split at ${cut}`);
    }
  }
});

test('random chunkings of random messages match node:crypto', () => {
  const next = rng(3);
  for (let round = 0; round < 300; round++) {
    const n = (next() * 3000) | 0;
    const data = randomBytes(next, n);
    const h = createSha256();
    for (let off = 0; off < n; ) {
      const len = Math.min(n - off, (next() * 130) | 0);
      h.update(data.subarray(off, off + len));
      off += len;
    }
    assert.is(hex(h.digest()), reference(data), `round ${round}, length ${n}`);
  }
});

test('inputs longer than the kernel slice are streamed through it (bytes and strings)', () => {
  const next = rng(4);
  for (const n of [SLICE - 1, SLICE, SLICE + 1, 3 * SLICE + 17]) {
    const data = randomBytes(next, n);
    assert.is(sha256Hex(data), reference(data), `length ${n}`);
    assert.is(createSha256().update(data).update(data.subarray(0, 5)).digestHex(), reference(Buffer.concat([data, data.subarray(0, 5)])));
  }
  // multi-byte UTF-8 and surrogate pairs, long enough to be encoded in several slices
  const text = 'añ€😀b'.repeat(40_000);
  assert.is(sha256Hex(text), reference(text));
  assert.is(createSha256().update(text).update('tail😀').digestHex(), reference(text + 'tail😀'));
});

test('strings are hashed as UTF-8 (lone surrogates as U+FFFD, like node:crypto)', () => {
  for (const s of ['é', '日本語', '😀', 'x\u0000y', '\ud800', 'a\udc00b']) {
    assert.is(sha256Hex(s), reference(s), JSON.stringify(s));
  }
});

test('interleaved hashers keep their own state', () => {
  const next = rng(5);
  const inputs = [0, 1, 2, 3, 4].map((i) => randomBytes(next, 500 + i * 123));
  const hashers = inputs.map(() => createSha256());
  for (let off = 0; off < 1000; off += 37) {
    hashers.forEach((h, i) => h.update(inputs[i].subarray(off, off + 37)));
  }
  hashers.forEach((h, i) => assert.is(h.digestHex(), reference(inputs[i])));
});

test('a hasher starts over after digest, and one-shot calls do not disturb a hasher in progress', () => {
  const h = createSha256();
  h.update('abc');
  assert.is(sha256Hex('unrelated'), reference('unrelated'));
  assert.is(sha256Hex(new Uint8Array(200_000)), reference(new Uint8Array(200_000)));
  h.update('def');
  assert.is(h.digestHex(), reference('abcdef'));
  assert.is(h.digestHex(), reference(''));
  assert.is(hex(h.update('x').digest()), reference('x'));
});

test('digests are fresh arrays that later calls do not overwrite', () => {
  const a = sha256('a');
  const b = sha256('b');
  assert.is(hex(a), reference('a'));
  assert.is(hex(b), reference('b'));
  assert.is(a.length, 32);
});

test('memory stays flat over 1,000,000 digests of 64 bytes', () => {
  const memory = loadKernel('core').exports.memory;
  const data = randomBytes(rng(6), 64);
  const want = reference(data);
  sha256(data);
  const before = memory.buffer.byteLength;
  let last: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < 1_000_000; i++) last = sha256(data);
  assert.is(memory.buffer.byteLength, before);
  assert.is(hex(last), want);
});

test('a 50 MiB input needs no more than a slice of wasm memory', () => {
  const memory = loadKernel('core').exports.memory;
  const data = new Uint8Array(50 << 20);
  for (let i = 0; i < data.length; i += 4096) data[i] = i >>> 12;
  sha256('warm');
  const before = memory.buffer.byteLength;
  assert.is(sha256Hex(data), reference(data));
  const h = createSha256();
  for (let off = 0; off < data.length; off += 1 << 20) h.update(data.subarray(off, off + (1 << 20)));
  assert.is(h.digestHex(), reference(data));
  assert.ok(memory.buffer.byteLength - before < 1 << 20, `grew by ${memory.buffer.byteLength - before} bytes`);
});

test.run();
