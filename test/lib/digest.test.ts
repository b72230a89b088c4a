import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createHmac } from 'node:crypto';
import {
  FILE_SHA256_WASM_MAX_BYTES, HMAC_SHA256_WASM_MAX_BYTES, createFileHasher, fileSha256, fileSha256Hex,
  hmacSha256ForService, hmacSha256HexForService,
} from '../../src/lib/digest.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

function bytes(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = seed | 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x;
  }
  return b;
}

test('fileSha256 matches node:crypto on both sides of the crossover', () => {
  const edge = FILE_SHA256_WASM_MAX_BYTES;
  for (const n of [0, 1, 64, edge - 1, edge, edge + 1, 2 * edge, 100_000]) {
    const data = bytes(n, n + 1);
    assert.is(hex(fileSha256(data)), sha(data), `length ${n}`);
    assert.is(fileSha256Hex(data), sha(data), `hex, length ${n}`);
  }
});

test('createFileHasher gives the same digest for any chunking across the switch to node:crypto', () => {
  const edge = FILE_SHA256_WASM_MAX_BYTES;
  const hasher = createFileHasher();
  for (const n of [0, 10, edge - 1, edge, edge + 1, 3 * edge + 5]) {
    const data = bytes(n, 7 * n + 3);
    for (const chunk of [1, 7, 64, edge, edge + 1, n + 1]) {
      for (let off = 0; off < n; off += chunk) hasher.update(data.subarray(off, off + chunk));
      assert.is(hasher.digestHex(), sha(data), `length ${n} in chunks of ${chunk}`);
    }
  }
  // chunks the caller reuses after update() do not change the digest
  const buf = new Uint8Array(10).fill(1);
  const h = createFileHasher().update(buf);
  buf.fill(2);
  h.update(buf);
  assert.is(hex(h.digest()), sha(new Uint8Array([...new Uint8Array(10).fill(1), ...new Uint8Array(10).fill(2)])));
});

test('hmacSha256ForService matches node:crypto on both sides of the crossover, bytes and strings', () => {
  const edge = HMAC_SHA256_WASM_MAX_BYTES;
  const key = 'whsec_' + 'k'.repeat(58);
  for (const n of [0, 100, edge - 1, edge, edge + 1, 50_000]) {
    const data = bytes(n, n + 11);
    const want = createHmac('sha256', key).update(data).digest('hex');
    assert.is(hex(hmacSha256ForService(key, data)), want, `length ${n}`);
    assert.is(hmacSha256HexForService(key, data), want, `hex, length ${n}`);
  }
  for (const body of ['{"a":1}', 'é'.repeat(edge / 2), 'é'.repeat(edge / 2 + 1), '😀'.repeat(edge)]) {
    const want = createHmac('sha256', key).update(body).digest('hex');
    assert.is(hmacSha256HexForService(key, body), want, `string of ${body.length} units`);
  }
});

test.run();
