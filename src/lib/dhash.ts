// ImagePHash (decisions.md section 3): the difference hash of an image's 9 x 8 grey
// thumbnail. The resize and the bits run in the core kernel (assembly/dhash.ts).
import { loadKernel, type BaseExports } from './wasm-core.js';
import { imageBands } from './bands.js';
import type { Fingerprint } from './types.js';

interface DhashExports extends BaseExports {
  dhashResize(src: number, width: number, height: number, channels: number): number;
  dhashFromPixels(src: number, width: number, height: number, channels: number): number;
  dhashFromGrey72(grey: number): number;
}

const core = () => loadKernel<DhashExports>('core');

export type PixelChannels = 1 | 3 | 4;

/** Throws unless `pixels` holds exactly width x height 8-bit pixels of 1, 3 or 4 channels. */
export function checkPixels(pixels: Uint8Array, width: number, height: number, channels: number): void {
  if (!(pixels instanceof Uint8Array)) throw new TypeError('pixels must be a Uint8Array');
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`image size must be positive integers, not ${width} x ${height}`);
  }
  if (channels !== 1 && channels !== 3 && channels !== 4) {
    throw new RangeError(`channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not ${channels}`);
  }
  if (pixels.length !== width * height * channels) {
    throw new RangeError(`expected ${width * height * channels} bytes for ${width} x ${height} x ${channels}, got ${pixels.length}`);
  }
}

/** Steps 1 to 3: the 9 x 8 grey thumbnail (72 bytes, row-major) of 8-bit grey, RGB or RGBA pixels. */
export function resizeTo9x8(pixels: Uint8Array, width: number, height: number, channels: PixelChannels): Uint8Array {
  checkPixels(pixels, width, height, channels);
  const k = core();
  const src = k.writeScratch(pixels);
  return k.read(k.exports.dhashResize(src, width, height, channels), 72);
}

/** The 8 raw ImagePHash bytes of 8-bit grey, RGB or RGBA pixels (RGBA composited over white). */
export function imageHashFromPixels(pixels: Uint8Array, width: number, height: number, channels: PixelChannels): Uint8Array {
  checkPixels(pixels, width, height, channels);
  const k = core();
  const src = k.writeScratch(pixels);
  return k.read(k.exports.dhashFromPixels(src, width, height, channels), 8);
}

/** The ImagePHash fingerprint (hash_value 8 bytes, bands 8 x 1 byte) of decoded pixels. */
export function imagePHashFromPixels(pixels: Uint8Array, width: number, height: number, channels: PixelChannels): Fingerprint {
  return imageFingerprint(imageHashFromPixels(pixels, width, height, channels));
}

/** Step 4 alone: the ImagePHash of 72 grey values (9 x 8, row-major), as verify-fuzzy's `pixels`. */
export function imageHashFromGrey72(pixels: ArrayLike<number>): Uint8Array {
  if (pixels == null || typeof pixels.length !== 'number' || pixels.length !== 72) {
    throw new RangeError('pixels must be exactly 72 grey values (9 x 8, row-major)');
  }
  const grey = new Uint8Array(72);
  for (let i = 0; i < 72; i++) {
    const v = pixels[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) {
      throw new RangeError(`pixels[${i}] must be an integer 0..255`);
    }
    grey[i] = v;
  }
  const k = core();
  return k.read(k.exports.dhashFromGrey72(k.writeScratch(grey)), 8);
}

/** The ImagePHash fingerprint of 72 grey values (9 x 8, row-major); RangeError unless exactly 72 integers 0..255. */
export function imagePHashFromGrey72(pixels: ArrayLike<number>): Fingerprint {
  return imageFingerprint(imageHashFromGrey72(pixels));
}

function imageFingerprint(hash: Uint8Array): Fingerprint {
  return { hash_type: 'ImagePHash', hash_value: Array.from(hash), bands: imageBands(hash) };
}
