// PDQ, Meta's 256-bit perceptual image hash (ThreatExchange), bit for bit as its
// reference computes it, and its eight dihedral variants; the kernel is
// assembly/pdq/ in the core module (docs/pdq.md). Hashes are 32 bytes in the order of
// Meta's hex text (16-bit words, word 15 first), so `pdqHex` gives exactly the string
// Meta's tools print and read.
import { loadKernel, type BaseExports, type WasmFlavor } from './wasm-core.js';
import { checkPixels, type PixelChannels } from './dhash.js';

interface PdqExports extends BaseExports {
  pdqFromPixels(src: number, width: number, height: number, channels: number): number;
  pdqDihedralFromPixels(src: number, width: number, height: number, channels: number): number;
  dhashFromPixels(src: number, width: number, height: number, channels: number): number;
}

export const PDQ_BYTES = 32;

/** A PDQ hash: 32 bytes (Meta's hex order), its 64-character hex, and the quality score 0-100. */
export interface PdqHash {
  hash: Uint8Array;
  hex: string;
  quality: number;
}

/** The dihedral transforms, in the order of pdqDihedral's hashes (Meta's order). */
export const PDQ_DIHEDRAL = ['original', 'rotate90', 'rotate180', 'rotate270', 'flipX', 'flipY', 'flipPlus1', 'flipMinus1'] as const;
export type PdqDihedralName = (typeof PDQ_DIHEDRAL)[number];

/** The eight dihedral PDQ hashes of one image (from one DCT) and its quality. */
export interface PdqDihedral {
  /** Indexed as PDQ_DIHEDRAL: [0] is the image's own hash, [5] (flipY) that of its mirror image. */
  hashes: Uint8Array[];
  quality: number;
}

function resultOf(k: ReturnType<typeof loadKernel<PdqExports>>, ptr: number, at: number): PdqHash {
  const hash = k.read(ptr + at * PDQ_BYTES, PDQ_BYTES);
  const quality = k.view(Int32Array, ptr + 8 * PDQ_BYTES, 1)[0];
  return { hash, hex: pdqHex(hash), quality };
}

/**
 * The PDQ hash of 8-bit pixels, row-major: grey (1), RGB (3) or RGBA (4, composited
 * over white first as libvips' flatten does). Images under 5 pixels on a side give
 * hash 0 and quality 0. `flavor` picks a WebAssembly build (tests, benches).
 */
export function pdqHash(pixels: Uint8Array, width: number, height: number, channels: PixelChannels = 3, flavor?: WasmFlavor): PdqHash {
  checkPixels(pixels, width, height, channels);
  const k = loadKernel<PdqExports>('core', flavor);
  const src = k.writeScratch(pixels);
  return resultOf(k, k.exports.pdqFromPixels(src, width, height, channels), 0);
}

/** The eight dihedral PDQ hashes (PDQ_DIHEDRAL order) of the pixels, from one pass over them. */
export function pdqDihedral(pixels: Uint8Array, width: number, height: number, channels: PixelChannels = 3, flavor?: WasmFlavor): PdqDihedral {
  checkPixels(pixels, width, height, channels);
  const k = loadKernel<PdqExports>('core', flavor);
  const src = k.writeScratch(pixels);
  const ptr = k.exports.pdqDihedralFromPixels(src, width, height, channels);
  const all = k.read(ptr, 8 * PDQ_BYTES);
  const quality = k.view(Int32Array, ptr + 8 * PDQ_BYTES, 1)[0];
  return { hashes: PDQ_DIHEDRAL.map((_, i) => all.slice(i * PDQ_BYTES, (i + 1) * PDQ_BYTES)), quality };
}

/**
 * ImagePHash (decisions.md 3) and PDQ of the same pixels, copied into the kernel once:
 * what the image fingerprint path computes from its one decode. `pdqDihedral` is the
 * eight dihedral hashes' hex (PDQ_DIHEDRAL order, [0] = pdq's own) from the same DCT,
 * for a query that tries rotations and mirrors (issue 28's verify-file).
 */
export function imageHashesFromPixels(pixels: Uint8Array, width: number, height: number, channels: PixelChannels, flavor?: WasmFlavor): { imagePHash: Uint8Array; pdq: PdqHash; pdqDihedral: string[] } {
  checkPixels(pixels, width, height, channels);
  const k = loadKernel<PdqExports>('core', flavor);
  const src = k.writeScratch(pixels);
  // both kernels only read the scratch block and allocate elsewhere
  const imagePHash = k.read(k.exports.dhashFromPixels(src, width, height, channels), 8);
  const ptr = k.exports.pdqDihedralFromPixels(src, width, height, channels);
  const pdq = resultOf(k, ptr, 0);
  const all = k.read(ptr, 8 * PDQ_BYTES);
  const pdqDihedral = PDQ_DIHEDRAL.map((_, i) => pdqHex(all.subarray(i * PDQ_BYTES, (i + 1) * PDQ_BYTES)));
  return { imagePHash, pdq, pdqDihedral };
}

/** Meta's hex text of a 32-byte PDQ hash (64 lowercase hex digits). */
export function pdqHex(hash: Uint8Array): string {
  if (!(hash instanceof Uint8Array) || hash.length !== PDQ_BYTES) throw new RangeError('a PDQ hash is 32 bytes');
  let s = '';
  for (const b of hash) s += b.toString(16).padStart(2, '0');
  return s;
}

/** The 32 bytes of a PDQ hash from Meta's hex text (64 hex digits, either case). */
export function pdqFromHex(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hex)) throw new RangeError('a PDQ hash is 64 hex digits');
  const out = new Uint8Array(PDQ_BYTES);
  for (let i = 0; i < PDQ_BYTES; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, i) => {
  let n = 0;
  for (let v = i; v !== 0; v &= v - 1) n++;
  return n;
});

/** The Hamming distance (0-256) of two PDQ hashes, as bytes or hex. */
export function pdqDistance(a: Uint8Array | string, b: Uint8Array | string): number {
  const x = typeof a === 'string' ? pdqFromHex(a) : a;
  const y = typeof b === 'string' ? pdqFromHex(b) : b;
  if (x.length !== PDQ_BYTES || y.length !== PDQ_BYTES) throw new RangeError('a PDQ hash is 32 bytes');
  let d = 0;
  for (let i = 0; i < PDQ_BYTES; i++) d += POPCOUNT[x[i] ^ y[i]];
  return d;
}

/** Bit k of a PDQ hash as Meta numbers it (k = 16 i + j for DCT coefficient (i, j)). */
export function pdqBit(hash: Uint8Array, k: number): number {
  const word = k >> 4;
  const b = k & 15;
  return (hash[2 * (15 - word) + (b < 8 ? 1 : 0)] >> (b & 7)) & 1;
}

// ---- As records carry them (issue 28) and as Meta's tools exchange them ----------

/** An image's PDQ as a record carries it. */
export interface PdqFingerprint {
  hash_type: 'PDQ';
  /** 64 hex digits, Meta's text. */
  hash_value: string;
  quality: number;
}

/** One frame of a vPDQ: its time in seconds, its PDQ hash (64 hex digits) and quality. */
export interface VpdqFrame {
  timestamp: number;
  hash_value: string;
  quality: number;
}

/** A video's vPDQ as a record carries it: one PDQ per frame VideoPHash samples, in time order. */
export interface VpdqFingerprint {
  hash_type: 'vPDQ';
  frames: VpdqFrame[];
}

export function pdqFingerprint(h: PdqHash): PdqFingerprint {
  return { hash_type: 'PDQ', hash_value: h.hex, quality: h.quality };
}

export function vpdqFingerprint(frames: { timestamp: number; pdq: PdqHash }[]): VpdqFingerprint {
  return { hash_type: 'vPDQ', frames: frames.map((f) => ({ timestamp: f.timestamp, hash_value: f.pdq.hex, quality: f.pdq.quality })) };
}

/**
 * The exchange text of Meta's tools: `hash,quality` for a PDQ (pdq-photo-hasher's
 * order), and for a vPDQ one `frame,quality,hash,timestamp` line per frame (vpdq's
 * output: the frame's index among the sampled frames, the timestamp in seconds as a
 * plain decimal with three decimals). A timestamp that has no such form (negative, not
 * finite, or 1e21 and above, which toFixed writes with an exponent) throws a RangeError.
 */
export function pdqExchangeLines(fp: PdqFingerprint | VpdqFingerprint): string[] {
  if (fp.hash_type === 'PDQ') return [`${fp.hash_value},${fp.quality}`];
  return fp.frames.map((f, i) => {
    if (!(f.timestamp >= 0 && f.timestamp < 1e21)) throw new RangeError(`frame ${i}'s timestamp ${f.timestamp} has no plain decimal form`);
    return `${i},${f.quality},${f.hash_value},${f.timestamp.toFixed(3)}`;
  });
}
