import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { createHmacSha256, hmacSha256, hmacSha256Hex } from '../../src/lib/hmac.js';
import { createSha256, sha256Hex } from '../../src/lib/sha256.js';
import { loadKernel } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const reference = (key: Uint8Array | string, data: Uint8Array | string): string =>
  createHmac('sha256', key).update(data).digest('hex');

// RFC 4231 section 4, HMAC-SHA-256 results; case 5 is truncated to 128 bits.
const RFC4231: Array<{ name: string; key: string; data: string; mac: string; truncate?: number }> = [
  {
    name: 'case 1',
    key: '0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b',
    data: '4869205468657265',
    mac: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  },
  {
    name: 'case 2',
    key: '4a656665',
    data: '7768617420646f2079612077616e7420666f72206e6f7468696e673f',
    mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  },
  {
    name: 'case 3',
    key: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    data: 'dd'.repeat(50),
    mac: '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe',
  },
  {
    name: 'case 4',
    key: '0102030405060708090a0b0c0d0e0f10111213141516171819',
    data: 'cd'.repeat(50),
    mac: '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b',
  },
  {
    name: 'case 5 (truncated to 128 bits)',
    key: '0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c',
    data: '546573742057697468205472756e636174696f6e',
    mac: 'a3b6167473100ee06e0c796c2955552b',
    truncate: 16,
  },
  {
    name: 'case 6 (131-byte key)',
    key: 'aa'.repeat(131),
    data:
      '54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374',
    mac: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  },
  {
    name: 'case 7 (131-byte key, 152-byte data)',
    key: 'aa'.repeat(131),
    data:
      '5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b65792061' +
      '6e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e65656473207' +
      '46f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f72697' +
      '4686d2e',
    mac: '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
  },
];

test('RFC 4231 test cases 1-7: one-shot, hex, keyed object, streamed byte by byte', () => {
  for (const { name, key, data, mac, truncate = 32 } of RFC4231) {
    const k = unhex(key);
    const d = unhex(data);
    assert.is(hex(hmacSha256(k, d).subarray(0, truncate)), mac, name);
    assert.is(hmacSha256Hex(k, d).slice(0, truncate * 2), mac, name);
    const keyed = createHmacSha256(k);
    assert.is(hex(keyed.mac(d).subarray(0, truncate)), mac, name);
    for (let i = 0; i < d.length; i++) keyed.update(d.subarray(i, i + 1));
    assert.is(hex(keyed.digest().subarray(0, truncate)), mac, `${name}, streamed`);
  }
});

test('random keys of length 0..200 and messages of length 0..3000 match node:crypto', () => {
  const next = rng(11);
  for (let keyLen = 0; keyLen <= 200; keyLen++) {
    const key = randomBytes(next, keyLen);
    const data = randomBytes(next, (next() * 3000) | 0);
    const want = reference(key, data);
    assert.is(hex(hmacSha256(key, data)), want, `key length ${keyLen}`);
    assert.is(createHmacSha256(key).update(data).digestHex(), want, `keyed, key length ${keyLen}`);
  }
});

test('every split around block edges of the keyed stream equals the one-shot MAC', () => {
  const next = rng(12);
  const key = randomBytes(next, 40);
  const keyed = createHmacSha256(key);
  for (const n of [55, 56, 63, 64, 65, 127, 128, 129]) {
    const data = randomBytes(next, n);
    const want = reference(key, data);
    for (let cut = 0; cut <= n; cut++) {
      assert.is(keyed.update(data.subarray(0, cut)).update(data.subarray(cut)).digestHex(), want, `length ${n} split at ${cut}`);
    }
  }
});

test('the one-shot key cache never serves a stale key', () => {
  const data = unhex('00112233');
  const keys = ['', 'k', 'key', 'kez', 'key\u0000', 'a'.repeat(64), 'a'.repeat(65), 'b'.repeat(65), 'a'.repeat(300), 'b'.repeat(300)];
  for (let round = 0; round < 3; round++) {
    for (const key of keys) {
      assert.is(hex(hmacSha256(key, data)), reference(key, data), `key ${JSON.stringify(key.slice(0, 8))} (${key.length})`);
    }
  }
  // same bytes as a string and as an array
  assert.is(hmacSha256Hex('Jefe', 'what do ya want for nothing?'), RFC4231[1].mac);
});

test('keyed objects are independent when interleaved, and reusable after digest', () => {
  const next = rng(13);
  const keys = [0, 10, 64, 100].map((n) => randomBytes(next, n));
  const objects = keys.map((k) => createHmacSha256(k));
  const data = randomBytes(next, 700);
  for (let off = 0; off < 700; off += 50) objects.forEach((o) => o.update(data.subarray(off, off + 50)));
  objects.forEach((o, i) => assert.is(hex(o.digest()), reference(keys[i], data)));
  objects.forEach((o, i) => assert.is(o.update('second').digestHex(), reference(keys[i], 'second')));
  objects.forEach((o, i) => assert.is(hex(o.mac(data)), reference(keys[i], data)));
  // SHA-256 hashers and one-shot HMACs in between do not disturb a keyed stream
  const h = createSha256().update('x');
  objects[0].update('abc');
  hmacSha256('other key', 'other data');
  objects[0].update('def');
  assert.is(objects[0].digestHex(), reference(keys[0], 'abcdef'));
  assert.is(h.digestHex(), sha256Hex('x'));
});

test('long messages stream through the slice', () => {
  const next = rng(14);
  const key = randomBytes(next, 33);
  const data = randomBytes(next, 300_000);
  assert.is(hex(hmacSha256(key, data)), reference(key, data));
  assert.is(hex(createHmacSha256(key).mac(data)), reference(key, data));
  const text = 'ü😀'.repeat(30_000);
  assert.is(hmacSha256Hex(key, text), reference(key, text));
});

test('memory stays flat over 1,000,000 HMACs (one-shot and keyed)', () => {
  const memory = loadKernel('core').exports.memory;
  const key = unhex(RFC4231[0].key);
  const data = unhex(RFC4231[0].data);
  const keyed = createHmacSha256(key);
  hmacSha256(key, data);
  const before = memory.buffer.byteLength;
  let a: Uint8Array = new Uint8Array(0);
  let b: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < 1_000_000; i++) a = hmacSha256(key, data);
  for (let i = 0; i < 1_000_000; i++) b = keyed.mac(data);
  assert.is(memory.buffer.byteLength, before);
  assert.is(hex(a), RFC4231[0].mac);
  assert.is(hex(b), RFC4231[0].mac);
});

test.run();
