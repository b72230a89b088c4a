// Byte hand-overs across threads and processes pass exactly the caller's bytes: the
// pool (to its worker thread), the decoder sandbox (to its process) and the match index
// thread, given small Buffers that live in Node's shared 8 KiB pool (Buffer.from,
// Buffer.allocUnsafe under 4 KiB: a view of a pool slab that also holds other
// requests' bytes) and views at an offset. Each answer equals the library's answer for
// a fresh copy of the same bytes. Runs the compiled workers of dist/.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { decodeImageForHash } from '../../src/media/image.js';
import { DecoderSandbox } from '../../src/media/sandbox.js';
import { createFingerprintPool } from '../../src/pool/index.js';
import { IndexThread } from '../../src/pool/match-index-thread.js';

/** A fresh copy: its own ArrayBuffer, exactly these bytes. */
const fresh = (bytes: Uint8Array) => new Uint8Array(bytes);

/** Small images (under 4 KiB, so that Buffer.from puts them in the shared pool). */
async function smallImages(): Promise<Uint8Array[]> {
  const grey9x8 = await sharp({ create: { width: 9, height: 8, channels: 3, background: '#808080' } }).png().toBuffer();
  const noise = (w: number, h: number) => sharp(randomBytes(w * h * 3), { raw: { width: w, height: h, channels: 3 } });
  const images = [grey9x8, await noise(32, 32).png().toBuffer(), await noise(24, 16).jpeg().toBuffer(), await noise(16, 16).png().toBuffer()];
  for (const b of images) assert.ok(b.length < 4096, `${b.length} bytes`);
  return images.map(fresh);
}

/** The same bytes as a pooled Buffer.from, a pooled allocUnsafe, and views at an offset of each. */
function pooledForms(bytes: Uint8Array): [string, Uint8Array][] {
  const from = Buffer.from(bytes);
  const unsafe = Buffer.allocUnsafe(bytes.length);
  unsafe.set(bytes);
  const wider = Buffer.allocUnsafe(bytes.length + 50).fill(0xa5);
  wider.set(bytes, 37);
  const wrapped = new Uint8Array(wider.buffer, wider.byteOffset + 37, bytes.length);
  assert.ok(from.buffer.byteLength > from.length && unsafe.buffer.byteLength > unsafe.length, 'the forms share a pool slab');
  return [['Buffer.from', from], ['Buffer.allocUnsafe', unsafe], ['subarray', wider.subarray(37, 37 + bytes.length)], ['Uint8Array view', wrapped]];
}

test('pool.fingerprint of pooled and offset Buffers equals the fingerprint of a fresh copy (9x8 grey PNG included)', async () => {
  const pool = createFingerprintPool({ workers: 1 });
  try {
    const images = await smallImages();
    const junk = Buffer.allocUnsafe(100);
    junk.set(randomBytes(100));
    for (const [i, image] of images.entries()) {
      const expected = await fingerprintFile(fresh(image));
      assert.ok(expected, `image ${i} has a fingerprint`);
      for (const [form, bytes] of pooledForms(image)) {
        assert.equal(await pool.fingerprint(bytes), expected, `image ${i} as ${form}`);
        assert.equal(fresh(bytes), image, `image ${i} as ${form}: the caller's bytes are left as they were`);
      }
    }
    assert.is(await pool.fingerprint(junk), null, '100 random bytes from the pool');
  } finally {
    await pool.close();
  }
});

test("the decoder sandbox hashes exactly a view's bytes", async () => {
  const sandbox = new DecoderSandbox();
  try {
    for (const [i, image] of (await smallImages()).entries()) {
      const format = image[0] === 0x89 ? 'png' : 'jpeg';
      const expected = await decodeImageForHash(fresh(image), format);
      for (const [form, bytes] of pooledForms(image)) assert.equal(await sandbox.imageHash(bytes, format), expected, `image ${i} as ${form}`);
    }
  } finally {
    await sandbox.close();
  }
});

test("the match index thread gets exactly a query's hash_value view", async () => {
  const thread = new IndexThread(() => {});
  try {
    const hash = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0];
    await thread.add([1], [{ hash_type: 'ImagePHash', hash_value: hash, bands: hash.map((b) => [b]) }], [1]);
    const pooled = Buffer.allocUnsafe(40).fill(0xff);
    pooled.set(hash, 13);
    const view = pooled.subarray(13, 21);
    const matches = await thread.query({ bands: hash.map((b) => [b]), hash_value: view }, ['ImagePHash'], 0, 10);
    assert.equal(matches.map((m) => [m.id, m.similarity]), [[1, 100]]);
  } finally {
    await thread.close();
  }
});

test.run();
