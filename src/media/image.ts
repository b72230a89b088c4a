// Image decoding for ImagePHash (decisions.md 3, step 1): any supported image to
// 8-bit sRGB pixels (EXIF orientation applied, first frame only, 16-bit scaled to 8,
// CMYK and palettes converted), alpha left for the kernel to composite over white.
// sharp (libvips) decodes PNG, JPEG, GIF, TIFF and WebP; BMP goes to our own reader.
import { extractFeatures, RECORD_FEATURES_MAX, type FeatureSet } from '../lib/features.js';
import sharp from 'sharp';
import type { MediaFormat } from '../lib/detect.js';
import { imageHashFromPixels } from '../lib/dhash.js';
import { imageHashesFromPixels, type PdqHash } from '../lib/pdq.js';
import { isccImageCodeFromPixels } from '../lib/iscc.js';
import '../lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import { decodeBmp } from './bmp.js';

/** Largest image accepted, in pixels (width x height as declared by the file). */
export const MAX_IMAGE_PIXELS = 100_000_000;

/**
 * Shrink-on-load (opt-in, `shrinkOnLoad: true`): a large JPEG or WebP is decoded
 * straight to (9 x 8) * SHRINK_MIN_CELL pixels (libjpeg's 1/2, 1/4, 1/8 DCT scaling,
 * then libvips' triangle ("linear") reduction; libwebp's scaled decode), only when the
 * picture is at least 3 times that size on both axes. bench/shrink-on-load.ts: on the
 * dev corpus it changed the hash of about 29 % of large JPEGs (6 % by 2 bits or more)
 * and saved about 25 % of the time, so it is off by default: decisions.md 3 wants the
 * same bits from every implementation (docs/media.md).
 */
export const SHRINK_MIN_CELL = 32;

export interface DecodedPixels {
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  data: Uint8Array;
}

export interface ImageDecodeOptions {
  /** Pixel cap (default MAX_IMAGE_PIXELS). */
  maxPixels?: number;
  /** Decode large JPEG/WebP at reduced size (default false: the hash may differ from a full decode). */
  shrinkOnLoad?: boolean;
  /** Override SHRINK_MIN_CELL (for the bench). */
  shrinkMinCell?: number;
  /** sharp's fastShrinkOnLoad: false leaves at least 2x for libvips' reduction (default false). */
  fastShrinkOnLoad?: boolean;
  /**
   * Leave an embedded ICC profile unapplied (default false: pixels are converted to sRGB
   * with it). The ISCC image pipeline decodes as Pillow does, which ignores profiles.
   */
  ignoreIcc?: boolean;
}

export class ImageDecodeError extends Error {
  override name = 'ImageDecodeError';
}

const SHARP_FORMATS: ReadonlySet<MediaFormat> = new Set(['png', 'jpeg', 'gif', 'tiff', 'webp']);


/** Decodes `bytes` (of the detected `format`) to pixels ready for the dHash kernel. */
export async function decodeImagePixels(bytes: Uint8Array, format: MediaFormat, options: ImageDecodeOptions = {}): Promise<DecodedPixels> {
  const maxPixels = options.maxPixels ?? MAX_IMAGE_PIXELS;
  if (format === 'bmp') {
    const bmp = decodeBmp(bytes, { maxPixels });
    return bmp;
  }
  if (!SHARP_FORMATS.has(format)) throw new ImageDecodeError(`not an image format: ${format}`);

  // sharp refuses a picture over limitInputPixels from its header, before decoding.
  const input = { limitInputPixels: maxPixels, pages: 1, page: 0, autoOrient: true, failOn: 'warning' as const, ignoreIcc: options.ignoreIcc === true };
  // Always sRGB out (grey, CMYK, palettes, 16-bit all become 8-bit RGB[A]): the luma of
  // step 2 is then taken from R, G, B exactly as the decision states.
  let pipeline = sharp(bytes, input).toColourspace('srgb');

  if ((format === 'jpeg' || format === 'webp') && options.shrinkOnLoad === true) {
    const meta = await sharp(bytes, input).metadata();
    // meta.width/height are as stored; autoOrient swaps them for orientations 5-8.
    const swap = (meta.orientation ?? 1) >= 5;
    const w = swap ? meta.height : meta.width;
    const h = swap ? meta.width : meta.height;
    const cell = options.shrinkMinCell ?? SHRINK_MIN_CELL;
    const [tw, th] = [9 * cell, 8 * cell];
    if (w >= 3 * tw && h >= 3 * th) pipeline = pipeline.resize(tw, th, { fit: 'fill', fastShrinkOnLoad: options.fastShrinkOnLoad ?? false, kernel: 'linear' });
  }

  const { data, info } = await pipeline.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  const channels = info.channels;
  if (channels !== 3 && channels !== 4) throw new ImageDecodeError(`unexpected ${channels}-channel output`);
  return { width: info.width, height: info.height, channels, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** The 8-byte ImagePHash of an image file's bytes. Throws when it cannot be decoded. */
export async function decodeImageForHash(bytes: Uint8Array, format: MediaFormat, options: ImageDecodeOptions = {}): Promise<Uint8Array> {
  const px = await decodeImagePixels(bytes, format, options);
  return imageHashFromPixels(px.data, px.width, px.height, px.channels);
}

/** ImagePHash and PDQ of one image, from one decode. */
export interface ImageHashes {
  /** The 8 ImagePHash bytes. */
  imagePHash: Uint8Array;
  /** PDQ (src/lib/pdq.ts) of the same full-resolution pixels. */
  pdq: PdqHash;
  /** The eight dihedral PDQ hashes' hex from the same DCT (PDQ_DIHEDRAL order). */
  pdqDihedral: string[];
  /** The ISCC Image-Code (64 bits, `ISCC:EEA...`; issue 33) of the same pixels, or as the SDK decodes them with `isccExact`. */
  isccImage: string;
  /**
   * The local features (issue 32; src/lib/features.ts) of the same pixels as a query asks
   * with them: up to QUERY_FEATURES_MAX, with a framed or screen-shown picture's own
   * (extractFeatures' `inner`); null when too few.
   */
  features: FeatureSet | null;
}

export interface ImageHashOptions extends ImageDecodeOptions {
  /**
   * The Image-Code exactly as the ISCC SDK makes it (Pillow leaves an embedded colour
   * profile unapplied): an image with a profile is decoded a second time without it for
   * the Image-Code alone. Off, the Image-Code comes from the same pixels as the other
   * hashes (a profile's conversion moves a few grey values by a step or two: docs/iscc.md).
   */
  isccExact?: boolean;
  /**
   * The features as a record keeps them (the first RECORD_FEATURES_MAX of the whole
   * image's QUERY_FEATURES_MAX, without describing those a record drops): the vault's
   * choice. Off, as a query asks with them (the inner picture's too).
   */
  recordFeatures?: boolean;
}

/**
 * ImagePHash and PDQ of an image file's bytes from one full-resolution decode (PDQ is
 * defined over every pixel, so shrink-on-load is not applied here). Throws when it
 * cannot be decoded.
 */
export async function decodeImageHashes(bytes: Uint8Array, format: MediaFormat, options: ImageHashOptions = {}): Promise<ImageHashes> {
  const { isccExact, recordFeatures, ...decode } = options;
  const px = await decodeImagePixels(bytes, format, { ...decode, shrinkOnLoad: false });
  const hashes = imageHashesFromPixels(px.data, px.width, px.height, px.channels);
  const asTheSdk = isccExact === true && format !== 'bmp' && (await sharp(bytes, { pages: 1 }).metadata()).hasProfile === true
    ? await decodeImagePixels(bytes, format, { ...decode, shrinkOnLoad: false, ignoreIcc: true })
    : px;
  const features = extractFeatures({ data: px.data, width: px.width, height: px.height, channels: px.channels }, recordFeatures === true ? { keep: RECORD_FEATURES_MAX } : { inner: true });
  return { ...hashes, isccImage: isccImageCodeFromPixels(asTheSdk.data, asTheSdk.width, asTheSdk.height, asTheSdk.channels).iscc, features };
}
