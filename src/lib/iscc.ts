// ISCC codes (ISO 24138:2024, International Standard Content Code), version 0, as the
// reference iscc-core 1.3.0 computes them, bit for bit (test/lib/iscc.test.ts runs its
// conformance vectors): the Content-Codes of images (from 32 x 32 grey pixels), audio
// (from Chromaprint words), video (from MPEG-7 frame signatures), text and mixed
// content; the Data-Code, the Instance-Code and the composite ISCC-CODE.
//
// The hot parts run in the iscc kernel module (assembly/iscc/): the Image-Code's DCT,
// the Text-Code's n-gram hashes and minhash, the Data-Code's chunking, xxh32 and
// minhash, BLAKE3. The simhash of the Audio-Code (32 bits per word), the WTA hash of the
// Video-Code (256 comparisons of a 380-value sum) and the codec stay here.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';
import { createBlake3, type Blake3Hasher } from './blake3.js';
import { encodeUnit, decodeIscc, IsccError, MT, ST_CC, base32Decode } from './iscc-codec.js';
import { toHex } from './sha256.js';

export {
  IsccError, MT, ST_CC, ST_ISCC, ISCC_MAIN_TYPES, ISCC_CONTENT_TYPES, ISCC_CODE_TYPES,
  decodeIscc, encodeUnit, isccToBytes, isccFromBytes, isccDecompose, isccCode, isccDistance, isccTypeName,
  encodeHeader, decodeHeader, base32Encode, base32Decode,
} from './iscc-codec.js';
export type { IsccUnit, IsccMainType, IsccContentType, IsccCodeOptions } from './iscc-codec.js';

interface IsccExports extends BaseExports {
  xxh32Digest(ptr: number, len: number): number;
  dataInit(ctx: number): void;
  dataUpdate(ctx: number, ptr: number, len: number): void;
  dataFinal(ctx: number, out: number): void;
  dataContextSize(): number;
  textHash(ptr: number, len: number, out: number): void;
  imageTrimBox(src: number, width: number, height: number, channels: number): number;
  imageGrey32(src: number, width: number, height: number, channels: number, x0: number, y0: number, x1: number, y1: number): number;
  imageNormalize(src: number, width: number, height: number, channels: number): number;
  imageHash(grey: number, out: number): void;
}

function kernel(): Kernel<IsccExports> {
  return loadKernel<IsccExports>('iscc');
}

/** Checks `bits` against what a unit of this kind allows: a multiple of 32 from 32 (or 64) to 256. */
function checkBits(bits: number, kind: string, multiple = 32, min = 32): void {
  if (!Number.isInteger(bits) || bits < min || bits > 256 || bits % multiple !== 0) {
    throw new IsccError(`${kind}: bits must be a multiple of ${multiple} from ${min} to 256, not ${bits}`);
  }
}

// ---- Image -------------------------------------------------------------------------

/**
 * The Image-Code of the 1024 grey pixels (32 x 32, row-major, 0-255) of a normalised
 * image (iscc-core gen_image_code_v0). The file pipeline's normalisation is
 * isccImagePixels (below) or src/media/iscc.ts.
 */
export function imageCode(grey1024: ArrayLike<number>, bits = 64): { iscc: string } {
  checkBits(bits, 'imageCode');
  if (grey1024 == null || grey1024.length !== 1024) throw new IsccError('imageCode: 1024 grey pixel values (32 x 32) are needed');
  const k = kernel();
  const ptr = k.exports.scratch(1024 + 32);
  const u8 = k.u8;
  for (let i = 0; i < 1024; i++) {
    const v = grey1024[i];
    if (!Number.isInteger(v) || v < 0 || v > 255) throw new IsccError(`imageCode: pixel ${i} is ${v}, not an integer 0-255`);
    u8[ptr + i] = v;
  }
  k.exports.imageHash(ptr, ptr + 1024);
  return { iscc: encodeUnit(MT.CONTENT, ST_CC.IMAGE, 0, bits, k.read(ptr + 1024, 32)) };
}

/** Pixels as the ISCC image pipeline takes them: grey (1), RGB (3) or RGBA (4) channels, 8 bits, row-major. */
export type IsccPixelChannels = 1 | 3 | 4;

/** Longest side the image pipeline accepts (its coefficient tables grow with the side). */
export const ISCC_MAX_IMAGE_SIDE = 1 << 20;

/**
 * The ISCC SDK's image normalisation (iscc-sdk image_normalize) of decoded pixels whose
 * EXIF orientation is already applied: transparency over white, the uniform border
 * trimmed (by the top-left pixel's colour, no tolerance), grey as Pillow's "L", and
 * 32 x 32 as Pillow's resize(BICUBIC) computes it (assembly/iscc/image.ts).
 * Returns the 1024 grey pixels and the box kept.
 */
export function isccImagePixels(pixels: Uint8Array, width: number, height: number, channels: IsccPixelChannels): {
  grey: Uint8Array;
  box: [number, number, number, number];
} {
  if (!(pixels instanceof Uint8Array)) throw new IsccError('isccImagePixels: pixels must be a Uint8Array');
  if (![1, 3, 4].includes(channels)) throw new IsccError(`isccImagePixels: ${channels} channels; 1, 3 or 4 are supported`);
  for (const [name, v] of [['width', width], ['height', height]] as const) {
    if (!Number.isInteger(v) || v < 1 || v > ISCC_MAX_IMAGE_SIDE) throw new IsccError(`isccImagePixels: ${name} ${v} is not 1..${ISCC_MAX_IMAGE_SIDE}`);
  }
  if (pixels.length !== width * height * channels) {
    throw new IsccError(`isccImagePixels: ${pixels.length} bytes for ${width} x ${height} x ${channels}`);
  }
  const k = kernel();
  const src = k.writeScratch(pixels);
  const boxPtr = k.exports.imageTrimBox(src, width, height, channels);
  const b = k.view(Int32Array, boxPtr, 4);
  const box: [number, number, number, number] = [b[0], b[1], b[2], b[3]];
  const grey = k.read(k.exports.imageGrey32(src, width, height, channels, box[0], box[1], box[2], box[3]), 1024);
  return { grey, box };
}

/** The Image-Code of decoded pixels (EXIF orientation applied): isccImagePixels then imageCode. */
export function isccImageCodeFromPixels(pixels: Uint8Array, width: number, height: number, channels: IsccPixelChannels, bits = 64): { iscc: string } {
  checkBits(bits, 'imageCode');
  return imageCode(isccImagePixels(pixels, width, height, channels).grey, bits);
}

// ---- Audio -------------------------------------------------------------------------

/** Simhash of 32-bit values: bit i is set when at least half the values have it. */
function simhash32(words: Int32Array, from: number, to: number): number {
  const n = to - from;
  if (n === 0) return 0;
  let out = 0;
  for (let bit = 31; bit >= 0; bit--) {
    let count = 0;
    for (let i = from; i < to; i++) count += (words[i] >>> bit) & 1;
    if (2 * count >= n) out |= 1 << bit;
  }
  return out >>> 0;
}

/** more_itertools.divide: `parts` consecutive pieces, the first (n mod parts) one longer. */
function divide(n: number, parts: number): Array<[number, number]> {
  const q = Math.floor(n / parts);
  const r = n % parts;
  const out: Array<[number, number]> = [];
  let at = 0;
  for (let i = 0; i < parts; i++) {
    const len = q + (i < r ? 1 : 0);
    out.push([at, at + len]);
    at += len;
  }
  return out;
}

/**
 * The Audio-Code of a Chromaprint fingerprint (iscc-core gen_audio_code_v0): its words
 * as fpcalc -raw -signed prints them (signed 32-bit; unsigned words are read as the
 * same bits). 32 bits: simhash of all words; then of each quarter (in order), then of
 * each third of the sorted words, up to `bits`.
 */
export function audioCode(chromaprintWords: ArrayLike<number>, bits = 64): { iscc: string } {
  checkBits(bits, 'audioCode');
  if (chromaprintWords == null || typeof chromaprintWords.length !== 'number') throw new IsccError('audioCode: Chromaprint words are needed');
  const words = new Int32Array(chromaprintWords.length);
  for (let i = 0; i < words.length; i++) {
    const w = chromaprintWords[i];
    if (!Number.isInteger(w) || w < -0x80000000 || w > 0xffffffff) throw new IsccError(`audioCode: word ${i} (${w}) is not a 32-bit integer`);
    words[i] = w | 0;
  }
  const digest = new Uint8Array(32);
  const view = new DataView(digest.buffer);
  if (words.length > 0) {
    const parts = [simhash32(words, 0, words.length)];
    for (const [a, b] of divide(words.length, 4)) parts.push(simhash32(words, a, b));
    const sorted = words.slice().sort();
    for (const [a, b] of divide(sorted.length, 3)) parts.push(simhash32(sorted, a, b));
    parts.forEach((p, i) => view.setUint32(4 * i, p));
  }
  return { iscc: encodeUnit(MT.CONTENT, ST_CC.AUDIO, 0, bits, digest) };
}

// ---- Video -------------------------------------------------------------------------

/** Values per MPEG-7 frame signature (each 0, 1 or 2). */
export const MP7_SIGNATURE_SIZE = 380;

/**
 * The comparisons of the Video-Code's WTA hash (iscc-core wtahash.py
 * WTA_VIDEO_ID_PERMUTATIONS, fixed by the standard): bit i is 1 when the sum at the
 * second index is above the sum at the first.
 */
const WTA_PAIRS = new Uint16Array([
  292, 16, 219, 247, 295, 7, 105, 236, 251, 142, 334, 82, 17, 266, 250, 167, 38, 127, 184, 22, 215, 71, 308, 181, 195, 215, 145, 345, 134, 233, 89, 351,
  155, 338, 185, 68, 233, 122, 225, 314, 192, 22, 298, 2, 120, 68, 99, 155, 274, 187, 122, 160, 341, 281, 230, 223, 240, 33, 334, 299, 166, 256, 80, 114,
  211, 122, 18, 16, 254, 154, 310, 336, 36, 273, 41, 76, 196, 290, 191, 307, 76, 57, 49, 226, 85, 97, 178, 221, 212, 228, 125, 348, 140, 73, 316, 267,
  91, 61, 136, 233, 154, 84, 338, 332, 89, 90, 245, 177, 167, 222, 114, 2, 278, 364, 22, 169, 163, 124, 40, 134, 229, 207, 298, 81, 199, 253, 344, 123,
  376, 268, 139, 266, 247, 308, 255, 32, 85, 250, 345, 236, 205, 69, 215, 277, 299, 178, 275, 198, 250, 359, 84, 286, 225, 50, 212, 18, 1, 224, 274, 33,
  25, 179, 47, 77, 55, 311, 232, 248, 71, 234, 223, 256, 228, 175, 371, 132, 357, 234, 216, 168, 332, 266, 267, 78, 378, 121, 165, 316, 16, 351, 100, 329,
  301, 294, 321, 245, 12, 59, 151, 222, 126, 367, 148, 45, 23, 305, 281, 54, 146, 83, 343, 244, 72, 184, 304, 205, 98, 179, 93, 40, 302, 99, 218, 106,
  49, 350, 157, 237, 355, 267, 369, 216, 229, 340, 284, 106, 136, 305, 186, 59, 3, 107, 217, 312, 209, 195, 333, 102, 35, 216, 45, 28, 178, 130, 184, 233,
  217, 99, 321, 144, 238, 355, 150, 259, 255, 259, 134, 207, 226, 327, 174, 178, 371, 141, 247, 228, 244, 300, 245, 42, 353, 276, 368, 187, 369, 207, 86, 308,
  212, 368, 288, 33, 304, 375, 156, 8, 302, 167, 333, 164, 37, 379, 203, 312, 191, 144, 310, 95, 123, 86, 157, 48, 284, 27, 112, 291, 37, 215, 98, 291,
  292, 224, 303, 8, 200, 103, 173, 294, 97, 267, 288, 167, 24, 336, 354, 296, 25, 18, 289, 187, 203, 166, 307, 326, 87, 80, 60, 310, 176, 84, 15, 370,
  274, 261, 178, 45, 203, 224, 295, 178, 30, 74, 227, 361, 241, 312, 231, 369, 226, 309, 89, 181, 216, 175, 286, 262, 234, 198, 99, 49, 221, 328, 78, 21,
  95, 327, 324, 97, 291, 219, 184, 286, 192, 25, 309, 26, 84, 159, 114, 25, 296, 90, 51, 325, 289, 184, 95, 154, 21, 202, 306, 219, 39, 176, 99, 251,
  83, 86, 207, 239, 168, 19, 88, 90, 297, 361, 215, 78, 262, 328, 356, 200, 48, 203, 60, 120, 54, 216, 369, 327, 159, 370, 148, 273, 332, 50, 176, 267,
  317, 243, 311, 125, 272, 148, 6, 340, 80, 346, 197, 355, 117, 49, 261, 326, 242, 51, 295, 204, 298, 111, 147, 181, 35, 96, 318, 285, 271, 13, 38, 204,
  16, 8, 334, 220, 173, 91, 372, 24, 183, 166, 320, 243, 87, 9, 105, 65, 148, 103, 197, 314, 279, 299, 304, 214, 282, 15, 64, 2, 63, 14, 28, 351,
]);

/**
 * The Video-Code of MPEG-7 frame signatures (iscc-core gen_video_code_v0): each frame
 * 380 values (0-2) as ffmpeg's signature filter gives them; duplicate frames count
 * once; the WTA hash of the column sums. Frames as arrays, or one Uint8Array of
 * frames x 380 values.
 */
export function videoCode(frameSignatures: ArrayLike<number>[] | Uint8Array, bits = 64): { iscc: string } {
  checkBits(bits, 'videoCode', 64, 64);
  const frames: ArrayLike<number>[] = [];
  if (frameSignatures instanceof Uint8Array) {
    if (frameSignatures.length % MP7_SIGNATURE_SIZE !== 0) throw new IsccError(`videoCode: a whole number of ${MP7_SIGNATURE_SIZE}-value frames is needed`);
    for (let at = 0; at < frameSignatures.length; at += MP7_SIGNATURE_SIZE) frames.push(frameSignatures.subarray(at, at + MP7_SIGNATURE_SIZE));
  } else if (Array.isArray(frameSignatures)) {
    frames.push(...frameSignatures);
  } else {
    throw new IsccError('videoCode: frame signatures are needed');
  }
  if (frames.length === 0) throw new IsccError('videoCode: no frame signatures');
  const sums = new Float64Array(MP7_SIGNATURE_SIZE);
  // duplicates count once (the reference sums a set of frames): frames bucketed by a
  // 64-bit hash of their values, equal ones found by comparing within a bucket
  const seen = new Map<string, ArrayLike<number>[]>();
  for (const [f, frame] of frames.entries()) {
    if (frame == null || frame.length !== MP7_SIGNATURE_SIZE) throw new IsccError(`videoCode: frame ${f} has ${frame?.length} values, not ${MP7_SIGNATURE_SIZE}`);
    let h1 = 0x811c9dc5, h2 = 0x9e3779b9;
    for (let i = 0; i < MP7_SIGNATURE_SIZE; i++) {
      const v = frame[i];
      if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new IsccError(`videoCode: frame ${f} value ${i} is ${v}`);
      h1 = Math.imul(h1 ^ v, 0x01000193);
      h2 = Math.imul(h2 ^ v, 0x85ebca6b) ^ (h2 >>> 13);
    }
    const key = `${h1 >>> 0}:${h2 >>> 0}`;
    const bucket = seen.get(key);
    if (bucket?.some((other) => sameFrame(other, frame))) continue;
    if (bucket) bucket.push(frame);
    else seen.set(key, [frame]);
    for (let i = 0; i < MP7_SIGNATURE_SIZE; i++) sums[i] += frame[i];
  }
  const digest = new Uint8Array(32);
  for (let i = 0; i < 256; i++) {
    if (sums[WTA_PAIRS[2 * i + 1]] > sums[WTA_PAIRS[2 * i]]) digest[i >> 3] |= 0x80 >> (i & 7);
  }
  return { iscc: encodeUnit(MT.CONTENT, ST_CC.VIDEO, 0, bits, digest) };
}

function sameFrame(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  for (let i = 0; i < MP7_SIGNATURE_SIZE; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---- Text --------------------------------------------------------------------------

/**
 * iscc-core text_collapse: NFD, lower case, without whitespace and without control (C),
 * mark (M) and punctuation (P) characters, then NFKC. (Python's isspace and \s differ
 * only on characters of category C, which go either way.)
 */
export function textCollapse(text: string): string {
  return text.normalize('NFD').toLowerCase().replace(/[\s\p{C}\p{M}\p{P}]/gu, '').normalize('NFKC');
}

const NEWLINES = /^[\n\v\f\r\u0085\u2028\u2029]$/u;

/**
 * iscc-core text_clean, which the SDK applies to extracted text before the Text-Code:
 * NFKC; control characters removed except newlines; runs of blank lines down to one;
 * leading and trailing whitespace stripped.
 */
export function textClean(text: string): string {
  const kept = text.normalize('NFKC').replace(/\p{C}/gu, (ch) => (NEWLINES.test(ch) ? ch : ''));
  const lines = kept.split(/\r\n|[\n\v\f\r\u001c-\u001e\u0085\u2028\u2029]/u);
  const out: string[] = [];
  let blank = 0;
  for (const line of lines) {
    if (line.trim() === '') {
      if (blank < 1) {
        out.push('');
        blank++;
      }
    } else {
      out.push(line);
      blank = 0;
    }
  }
  return out.join('\n').trim();
}

const encoder = new TextEncoder();

/**
 * The Text-Code of plain text (iscc-core gen_text_code_v0), with `characters`, the
 * length of the collapsed text in code points.
 */
export function textCode(text: string, bits = 64): { iscc: string; characters: number } {
  checkBits(bits, 'textCode');
  if (typeof text !== 'string') throw new IsccError('textCode: text must be a string');
  const collapsed = textCollapse(text);
  let characters = 0;
  for (let i = 0; i < collapsed.length; i++) {
    const c = collapsed.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) characters++; // a low surrogate ends a pair already counted
  }
  const k = kernel();
  // UTF-8 is at most 3 bytes per UTF-16 unit
  const cap = collapsed.length * 3;
  const ptr = k.exports.scratch(cap + 32);
  const { written } = encoder.encodeInto(collapsed, k.u8.subarray(ptr, ptr + cap));
  k.exports.textHash(ptr, written, ptr + cap);
  return { iscc: encodeUnit(MT.CONTENT, ST_CC.TEXT, 0, bits, k.read(ptr + cap, 32)), characters };
}

// ---- Mixed -------------------------------------------------------------------------

/** Simhash of equal-length byte strings, bit by bit from each one's first byte's top bit. */
function simhashBytes(digests: Uint8Array[]): Uint8Array {
  const n = digests[0].length;
  const out = new Uint8Array(n);
  for (let bit = 0; bit < n * 8; bit++) {
    let count = 0;
    for (const d of digests) count += (d[bit >> 3] >> (7 - (bit & 7))) & 1;
    if (2 * count >= digests.length) out[bit >> 3] |= 0x80 >> (bit & 7);
  }
  return out;
}

/**
 * The Mixed-Code of two or more Content-Codes (iscc-core gen_mixed_code_v0): simhash
 * of each code's first header byte and its first bits / 8 - 1 body bytes.
 */
export function mixedCode(codes: readonly string[], bits = 64): { iscc: string; parts: string[] } {
  checkBits(bits, 'mixedCode');
  if (!Array.isArray(codes) || codes.length < 2) throw new IsccError('mixedCode: at least two Content-Codes are needed');
  const nbytes = bits / 8;
  const digests = codes.map((code) => {
    const unit = decodeIscc(code);
    if (unit.mainType !== MT.CONTENT) throw new IsccError(`mixedCode: ${code} is not a Content-Code`);
    if (unit.bits < bits) throw new IsccError(`mixedCode: ${code} is shorter than ${bits} bits`);
    const raw = base32Decode(code.replace(/^iscc:/i, '').replaceAll('-', ''));
    const d = new Uint8Array(nbytes);
    d[0] = raw[0];
    d.set(unit.body.subarray(0, nbytes - 1), 1);
    return d;
  });
  return { iscc: encodeUnit(MT.CONTENT, ST_CC.MIXED, 0, bits, simhashBytes(digests)), parts: [...codes] };
}

// ---- Data --------------------------------------------------------------------------

/** Bytes handed to the kernel per call. */
const DATA_SLICE = 256 * 1024;

interface DataIo {
  k: Kernel<IsccExports>;
  slot: number;
  input: number;
  out: number;
  ctxSize: number;
}
let dataIo: DataIo | undefined;
function data(): DataIo {
  if (dataIo !== undefined) return dataIo;
  const k = kernel();
  const ctxSize = k.exports.dataContextSize();
  const slot = k.exports.alloc(ctxSize + 32 + DATA_SLICE);
  dataIo = { k, slot, out: slot + ctxSize, input: slot + ctxSize + 32, ctxSize };
  return dataIo;
}

/** An incremental Data-Code: `update` with the bytes in any pieces, then `code`. */
export interface DataHasher {
  update(chunk: Uint8Array): this;
  /** The 256-bit Data-Hash (minhash of the chunks' features); the hasher then starts over. */
  digest(): Uint8Array;
  /** The Data-Code; the hasher then starts over. */
  code(bits?: number): { iscc: string };
}

let dataOwner: StreamingData | null = null;

class StreamingData implements DataHasher {
  private saved: Uint8Array | null = null;
  private readonly io = data();

  /** Takes the one kernel context, saving its holder's state in the holder (as SHA-256's hashers do). */
  private acquire(): void {
    if (dataOwner === this) return;
    const { k, slot, ctxSize } = this.io;
    if (dataOwner !== null) dataOwner.saved = k.read(slot, ctxSize);
    if (this.saved === null) k.exports.dataInit(slot);
    else k.u8.set(this.saved, slot);
    this.saved = null;
    dataOwner = this;
  }

  update(chunk: Uint8Array): this {
    if (!(chunk instanceof Uint8Array)) throw new IsccError('dataCode: input must be bytes (Uint8Array)');
    this.acquire();
    const { k, slot, input } = this.io;
    for (let off = 0; off < chunk.length; off += DATA_SLICE) {
      const len = Math.min(DATA_SLICE, chunk.length - off);
      k.u8.set(chunk.subarray(off, off + len), input);
      k.exports.dataUpdate(slot, input, len);
    }
    return this;
  }

  digest(): Uint8Array {
    this.acquire();
    const { k, slot, out } = this.io;
    k.exports.dataFinal(slot, out);
    dataOwner = null;
    return k.read(out, 32);
  }

  code(bits = 64): { iscc: string } {
    checkBits(bits, 'dataCode');
    return { iscc: encodeUnit(MT.DATA, 0, 0, bits, this.digest()) };
  }
}

/** A new incremental Data-Code; any number may be in use at once. */
export function createDataHasher(): DataHasher {
  return new StreamingData();
}

/** Bytes, or pieces of bytes in order (a file read in chunks). */
export type IsccByteInput = Uint8Array | Iterable<Uint8Array>;

function isAsyncIterable(x: unknown): x is AsyncIterable<Uint8Array> {
  return x != null && typeof (x as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function';
}

function feedAll(input: IsccByteInput, update: (b: Uint8Array) => void, kind: string): void {
  if (input instanceof Uint8Array) update(input);
  else if (input != null && typeof (input as Iterable<Uint8Array>)[Symbol.iterator] === 'function') for (const piece of input) update(piece);
  else throw new IsccError(`${kind}: bytes, or an iterable of byte pieces, are needed`);
}

/**
 * The Data-Code of bytes (iscc-core gen_data_code_v0): content-defined chunks (about
 * 1 KiB), their xxh32, the minhash. A stream (async iterable, e.g. a file's read
 * stream) gives a promise.
 */
export function dataCode(input: IsccByteInput, bits?: number): { iscc: string };
export function dataCode(input: AsyncIterable<Uint8Array>, bits?: number): Promise<{ iscc: string }>;
export function dataCode(input: IsccByteInput | AsyncIterable<Uint8Array>, bits = 64): { iscc: string } | Promise<{ iscc: string }> {
  checkBits(bits, 'dataCode');
  const h = createDataHasher();
  if (isAsyncIterable(input)) {
    return (async () => {
      for await (const piece of input) h.update(piece);
      return h.code(bits);
    })();
  }
  feedAll(input, (b) => h.update(b), 'dataCode');
  return h.code(bits);
}

// ---- Instance ----------------------------------------------------------------------

/** The Instance-Code with the file's BLAKE3 as a multihash (0x1e 0x20 + digest, hex) and its size. */
export interface InstanceCode {
  iscc: string;
  datahash: string;
  filesize: number;
}

/** An incremental Instance-Code: `update` with the bytes in any pieces, then `code`. */
export interface InstanceHasher {
  update(chunk: Uint8Array): this;
  /** The Instance-Code; the hasher then starts over. */
  code(bits?: number): InstanceCode;
}

class StreamingInstance implements InstanceHasher {
  private readonly hasher: Blake3Hasher = createBlake3();
  private size = 0;

  update(chunk: Uint8Array): this {
    if (!(chunk instanceof Uint8Array)) throw new IsccError('instanceCode: input must be bytes (Uint8Array)');
    this.hasher.update(chunk);
    this.size += chunk.length;
    return this;
  }

  code(bits = 64): InstanceCode {
    checkBits(bits, 'instanceCode');
    const digest = this.hasher.digest();
    const filesize = this.size;
    this.size = 0;
    return { iscc: encodeUnit(MT.INSTANCE, 0, 0, bits, digest), datahash: `1e20${toHex(digest)}`, filesize };
  }
}

/** A new incremental Instance-Code. */
export function createInstanceHasher(): InstanceHasher {
  return new StreamingInstance();
}

/** The Instance-Code of bytes (iscc-core gen_instance_code_v0); a stream gives a promise. */
export function instanceCode(input: IsccByteInput, bits?: number): InstanceCode;
export function instanceCode(input: AsyncIterable<Uint8Array>, bits?: number): Promise<InstanceCode>;
export function instanceCode(input: IsccByteInput | AsyncIterable<Uint8Array>, bits = 64): InstanceCode | Promise<InstanceCode> {
  checkBits(bits, 'instanceCode');
  const h = createInstanceHasher();
  if (isAsyncIterable(input)) {
    return (async () => {
      for await (const piece of input) h.update(piece);
      return h.code(bits);
    })();
  }
  feedAll(input, (b) => h.update(b), 'instanceCode');
  return h.code(bits);
}

/** xxh32 (seed 0) of bytes, the features' hash of the Data- and Text-Code. */
export function xxh32(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw new IsccError('xxh32: input must be a Uint8Array');
  const k = kernel();
  return k.exports.xxh32Digest(k.writeScratch(bytes), bytes.length) >>> 0;
}
