// Hostile and failing media for the decoding tests and the malformed-media flood bench.
import * as assert from 'uvu/assert';
import { FingerprintError } from '../../src/media/errors.js';

/**
 * A 1-bit BMP of width x height (stripes), 1/24 of its RGB size on disk; `rows` rows of
 * pixel data present (fewer than `height`: truncated).
 */
export function bmp1(width: number, height: number, rows = height): Uint8Array {
  const stride = Math.floor((width + 31) / 32) * 4;
  const offset = 14 + 40 + 8;
  const out = Buffer.alloc(offset + stride * rows);
  out.write('BM', 0);
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(offset, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(1, 28);
  out.writeUInt32LE(2, 46);
  out.writeUInt32LE(0xffffff, 58); // palette: black, white
  for (let i = offset; i < out.length; i++) out[i] = (i * 7) & 0xff;
  return new Uint8Array(out);
}

/** Resolves once `pending` rejects with FingerprintError decode_failed. */
export async function decodeFailed(pending: Promise<unknown>, name: string): Promise<void> {
  try {
    await pending;
    assert.unreachable(`${name}: should fail`);
  } catch (e) {
    assert.instance(e, FingerprintError, name);
    assert.is((e as FingerprintError).code, 'decode_failed', name);
  }
}
