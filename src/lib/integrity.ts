// Byte-level integrity kernels (build/integrity.*.wasm): structure walks, the
// signature scan, entropy, LSB statistics and the Unicode scan. Each wrapper
// passes bytes in, calls one kernel entry and decodes the static output block
// (assembly/integrity/output.ts) into plain records. No decoding, no I/O.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';
import type { ContentCredentials } from './content-credentials.js';

/** The six checks of decisions.md 4, in the order reports list them. */
export type IntegrityCheck =
  | 'PostEofData' | 'AppendedFileDetection' | 'MetadataInspection' | 'EntropyAnalysis' | 'LsbAnalysis' | 'UnicodeSteg';
export type IntegritySeverity = 'Info' | 'Warning' | 'Critical';

export interface IntegrityIssue {
  check: IntegrityCheck;
  severity: IntegritySeverity;
  /** At most 200 characters. */
  description: string;
  offset?: number;
  length?: number;
}

/** Spec 2.1 `integrity_report`. */
export interface IntegrityReport {
  checks_performed: IntegrityCheck[];
  issues_found: IntegrityIssue[];
  /** Unix milliseconds. */
  checked_at: number;
  /** The file's embedded Content Credentials (C2PA), issue 21; absent from reports made before them. */
  content_credentials?: ContentCredentials;
}

/** Record codes of assembly/integrity/codes.ts. */
export const IntegrityCode = {
  PNG_BAD_SIGNATURE: 1, PNG_TRUNCATED: 2, PNG_CRC_MISMATCH: 3, PNG_CHUNK: 4, PNG_IHDR: 5,
  JPEG_BAD_SIGNATURE: 10, JPEG_TRUNCATED: 11, JPEG_BAD_MARKER: 12, JPEG_SEGMENT: 13, JPEG_FIRST_EOI: 14, JPEG_MPF_IMAGE: 15,
  GIF_BAD_SIGNATURE: 20, GIF_TRUNCATED: 21, GIF_BAD_BLOCK: 22, GIF_EXTENSION: 23,
  PDF_NO_EOF: 30, PDF_NAME: 31,
  ZIP_EOCD: 40, ZIP_NO_EOCD: 41,
  SIGNATURE: 50,
  EXIF_GPS: 60, EXIF_THUMBNAIL: 61, EXIF_BAD: 62, EXIF_TAG: 63,
  CONTAINER_END: 70, CONTAINER_BAD: 71, ID3_FRAME: 72, FLAC_BLOCK: 73,
  TEXT_ZERO_WIDTH: 80, TEXT_TAG: 81, TEXT_VARIATION: 82, TEXT_BIDI: 83, TEXT_CONFUSABLE: 84, TEXT_TRAILING_WS: 85, TEXT_INVALID: 86,
} as const;

export const PdfName = { JavaScript: 1, JS: 2, Launch: 3, EmbeddedFile: 4, OpenAction: 5, AA: 6, ObjStm: 7 } as const;

/** Kinds of file signature the scan recognises. */
export type SignatureKind = 'png' | 'jpeg' | 'gif' | 'zip' | 'pdf' | 'rar' | '7z' | 'gzip' | 'elf' | 'pe';
const SIGNATURE_KINDS: SignatureKind[] = ['png', 'jpeg', 'gif', 'zip', 'pdf', 'rar', '7z', 'gzip', 'elf', 'pe'];

export interface KernelRecord {
  code: number;
  aux: number;
  offset: number;
  length: number;
  value: number;
  value2: number;
}

export interface WalkResult {
  /** Offset just past the structure's end, or -1 when the walk could not reach it. */
  end: number;
  records: KernelRecord[];
}

interface IntegrityExports extends BaseExports {
  outputPtr(): number;
  outputCount(): number;
  outputDropped(): number;
  statsPtr(): number;
  walkPng(ptr: number, len: number, verifyCrc: number): number;
  walkJpeg(ptr: number, len: number): number;
  jpegExtent(ptr: number, len: number): number;
  walkGif(ptr: number, len: number): number;
  pdfEnd(ptr: number, len: number): number;
  pdfScanNames(ptr: number, len: number): number;
  zipEnd(ptr: number, len: number): number;
  scanSignatures(ptr: number, len: number, from: number, to: number): number;
  walkTiff(ptr: number, len: number): number;
  riffEnd(ptr: number, len: number): number;
  bmpEnd(ptr: number, len: number): number;
  oggEnd(ptr: number, len: number): number;
  isoBmffEnd(ptr: number, len: number): number;
  mp4Location(ptr: number, len: number): number;
  walkId3(ptr: number, len: number): number;
  walkFlac(ptr: number, len: number): number;
  entropyWindows(ptr: number, len: number, out: number): number;
  entropyOf(ptr: number, len: number): number;
  longestBase64Run(ptr: number, len: number): number;
  lsbChannel(ptr: number, width: number, height: number, channels: number, channel: number): number;
  chiSquareSurvival(df: number, x: number): number;
  scanText(ptr: number, len: number, enc: number, stopOnInvalid: number): number;
  crc32(ptr: number, len: number): number;
}

let cached: Kernel<IntegrityExports> | null = null;
function kernel(): Kernel<IntegrityExports> {
  return (cached ??= loadKernel<IntegrityExports>('integrity'));
}

/**
 * Bytes copied once into kernel memory, for running many checks over one file
 * without copying it again. Release it when done; `at` makes a sub-range view.
 */
export class KernelBytes {
  private constructor(readonly ptr: number, readonly length: number, private readonly owner: KernelBytes | null) {}

  static load(bytes: Uint8Array): KernelBytes {
    const k = kernel();
    const ptr = k.exports.alloc(bytes.length);
    k.u8.set(bytes, ptr);
    return new KernelBytes(ptr, bytes.length, null);
  }

  /** The bytes from `offset` to the end (or `offset + length`), sharing the same memory. */
  at(offset: number, length = this.length - offset): KernelBytes {
    const o = Math.max(0, Math.min(offset, this.length));
    const n = Math.max(0, Math.min(length, this.length - o));
    return new KernelBytes(this.ptr + o, n, this.owner ?? this);
  }

  release(): void {
    if (this.owner === null) kernel().exports.release(this.ptr);
  }
}

export type KernelInput = Uint8Array | KernelBytes;

function place(input: KernelInput): { ptr: number; len: number } {
  if (input instanceof KernelBytes) return { ptr: input.ptr, len: input.length };
  return { ptr: kernel().writeScratch(input), len: input.length };
}

function readRecords(): KernelRecord[] {
  const k = kernel();
  const n = k.exports.outputCount();
  if (n === 0) return [];
  const dv = k.view(DataView, k.exports.outputPtr(), n * 32);
  const out: KernelRecord[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * 32;
    out[i] = {
      code: dv.getInt32(o, true), aux: dv.getInt32(o + 4, true),
      offset: dv.getUint32(o + 8, true), length: dv.getUint32(o + 12, true),
      value: dv.getFloat64(o + 16, true), value2: dv.getFloat64(o + 24, true),
    };
  }
  return out;
}

function stats(count: number): Float64Array {
  const k = kernel();
  return k.view(Float64Array, k.exports.statsPtr(), 64).slice(0, count);
}

function walk(fn: (ptr: number, len: number) => number, input: KernelInput): WalkResult {
  const { ptr, len } = place(input);
  const end = fn(ptr, len);
  return { end, records: readRecords() };
}

/** PNG chunk walk with CRC-32 checks, to IEND. */
export function walkPng(input: KernelInput, verifyCrc = true): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkPng(p, n, verifyCrc ? 1 : 0), input);
}

/** JPEG marker walk to the last EOI that MPF explains; APPn/COM segments reported. */
export function walkJpeg(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkJpeg(p, n), input);
}

/** The end of one JPEG (no MPF, no records), or -1. */
export function jpegExtent(input: KernelInput): number {
  const e = kernel().exports;
  return walk((p, n) => e.jpegExtent(p, n), input).end;
}

/** GIF block walk to the trailer; comment and application extensions reported. */
export function walkGif(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkGif(p, n), input);
}

/** Offset past the last %%EOF and its whitespace, or -1. */
export function pdfEnd(input: KernelInput): number {
  const e = kernel().exports;
  return walk((p, n) => e.pdfEnd(p, n), input).end;
}

/** PDF name tokens that matter (PdfName kinds), #xx escapes decoded. */
export function pdfScanNames(input: KernelInput): KernelRecord[] {
  const e = kernel().exports;
  return walk((p, n) => e.pdfScanNames(p, n), input).records;
}

/** Offset past the ZIP end-of-central-directory record and comment, or -1. */
export function zipEnd(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.zipEnd(p, n), input);
}

export interface SignatureHit {
  kind: SignatureKind;
  offset: number;
}

/** Validated file signatures starting in [from, to). */
export function scanSignatures(input: KernelInput, from = 0, to = input.length): SignatureHit[] {
  const e = kernel().exports;
  const { records } = walk((p, n) => e.scanSignatures(p, n, Math.max(0, from), Math.max(0, to)), input);
  return records.map((r) => ({ kind: SIGNATURE_KINDS[r.aux - 1], offset: r.offset }));
}

/** TIFF/EXIF IFD walk: GPS, thumbnail, notable tags; `end` = the structure's extent. */
export function walkTiff(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkTiff(p, n), input);
}

export type ContainerKind = 'riff' | 'bmp' | 'ogg' | 'isobmff';
/** Where a RIFF, BMP, Ogg or ISO BMFF structure ends, or -1. */
export function containerEnd(kind: ContainerKind, input: KernelInput): WalkResult {
  const e = kernel().exports;
  const fn = { riff: e.riffEnd, bmp: e.bmpEnd, ogg: e.oggEnd, isobmff: e.isoBmffEnd }[kind];
  return walk((p, n) => fn(p, n), input);
}

/** Offset of a QuickTime location atom (\xA9xyz), or -1. */
export function mp4Location(input: KernelInput): number {
  const e = kernel().exports;
  return walk((p, n) => e.mp4Location(p, n), input).end;
}

/** ID3v2 frames (ID3_FRAME records); `end` = the tag's size (0 when absent). */
export function walkId3(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkId3(p, n), input);
}

/** FLAC metadata blocks (FLAC_BLOCK records); `end` = where audio frames start. */
export function walkFlac(input: KernelInput): WalkResult {
  const e = kernel().exports;
  return walk((p, n) => e.walkFlac(p, n), input);
}

export interface EntropyProfile {
  /** Bits per byte over the whole input. */
  overall: number;
  /** Bits per byte of each 4 KiB window (the last may be shorter). */
  windows: Float32Array;
}

export const ENTROPY_WINDOW = 4096;

/** Shannon entropy overall and per 4 KiB window. */
export function entropyProfile(input: KernelInput): EntropyProfile {
  const k = kernel();
  const { ptr, len } = place(input);
  const count = Math.ceil(len / ENTROPY_WINDOW);
  const out = k.exports.alloc(count * 4);
  try {
    const overall = k.exports.entropyWindows(ptr, len, out);
    return { overall, windows: k.view(Float32Array, out, count).slice() };
  } finally {
    k.exports.release(out);
  }
}

/** Shannon entropy of the input in bits per byte. */
export function entropyOf(input: KernelInput): number {
  const e = kernel().exports;
  const { ptr, len } = place(input);
  return e.entropyOf(ptr, len);
}

/** The longest run of base64 characters (line breaks allowed inside) and where it starts. */
export function longestBase64Run(input: KernelInput): { length: number; start: number } {
  const e = kernel().exports;
  const { ptr, len } = place(input);
  const length = e.longestBase64Run(ptr, len);
  return { length, start: stats(3)[2] };
}

export interface LsbChannelStats {
  channel: number;
  /** Westfeld-Pfitzmann chi-square over pairs of values, its degrees of freedom and p-value. */
  chiSquare: number;
  degreesOfFreedom: number;
  /** Probability that the pairs are as equal as LSB replacement makes them (near 1: embedding). */
  pValue: number;
  /** Sample pair analysis estimate of the embedded fraction from horizontal neighbours (NaN when undefined). */
  spaEstimate: number;
  /** The same estimate from vertical neighbours. */
  spaVertical: number;
  /** Distinct sample values in the channel. */
  distinctValues: number;
  samples: number;
  /** Share of horizontal neighbour pairs with equal values (flat, synthetic areas make SPA unreliable). */
  flatPairs: number;
}

/**
 * LSB statistics of each colour channel of interleaved 8-bit pixels (`channels`
 * samples per pixel; with 2 or 4 channels the last, alpha, is skipped).
 */
export function lsbStatistics(pixels: KernelInput, width: number, height: number, channels: number): LsbChannelStats[] {
  if (pixels.length < width * height * channels) throw new RangeError('lsbStatistics: pixel buffer shorter than width x height x channels');
  const e = kernel().exports;
  const { ptr } = place(pixels);
  const colour = channels === 2 || channels === 4 ? channels - 1 : channels;
  const out: LsbChannelStats[] = [];
  for (let c = 0; c < colour; c++) {
    e.lsbChannel(ptr, width, height, channels, c);
    const s = stats(9);
    out.push({
      channel: c, chiSquare: s[0], degreesOfFreedom: s[1], pValue: s[2], spaEstimate: s[3], spaVertical: s[8],
      distinctValues: s[5], samples: s[6], flatPairs: s[7],
    });
  }
  return out;
}

/** Survival function of the chi-square distribution (the p-value of `x` with `df` degrees of freedom). */
export function chiSquareSurvival(df: number, x: number): number {
  return kernel().exports.chiSquareSurvival(df, x);
}

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';
const ENCODINGS: Record<TextEncoding, number> = { 'utf-8': 0, 'utf-16le': 1, 'utf-16be': 2 };

export interface TextScan {
  /** The whole input decodes (and, when stopping early, no NUL was met). */
  valid: boolean;
  codePoints: number;
  firstInvalid: number;
  nul: number;
  /** Code points that are neither printable nor common whitespace. */
  control: number;
  printable: number;
  zeroWidth: number;
  zeroWidthExplained: number;
  tags: number;
  tagsExplained: number;
  variationSelectors: number;
  variationSelectorsExplained: number;
  bidiOverrides: number;
  bidiOpen: number;
  bidiClose: number;
  bidiMarks: number;
  bidiUnbalanced: number;
  rtlLetters: number;
  confusableWords: number;
  lines: number;
  trailingWhitespaceLines: number;
  suspiciousTrailingLines: number;
  trailingWhitespaceBytes: number;
  /** TEXT_* records (capped at 64 per kind). */
  records: KernelRecord[];
}

/** Decodes and scans text for invisible characters, bidi controls, look-alikes and trailing whitespace. */
export function scanText(input: KernelInput, encoding: TextEncoding = 'utf-8', stopOnInvalid = false): TextScan {
  const e = kernel().exports;
  const { ptr, len } = place(input);
  const ok = e.scanText(ptr, len, ENCODINGS[encoding], stopOnInvalid ? 1 : 0);
  const records = readRecords();
  const s = stats(23);
  return {
    valid: ok === 1, codePoints: s[1], firstInvalid: s[2], nul: s[3], control: s[4], printable: s[21],
    zeroWidth: s[5], zeroWidthExplained: s[6], tags: s[7], tagsExplained: s[8],
    variationSelectors: s[9], variationSelectorsExplained: s[10],
    bidiOverrides: s[11], bidiOpen: s[12], bidiClose: s[13], bidiMarks: s[14], rtlLetters: s[15],
    confusableWords: s[16], lines: s[17], trailingWhitespaceLines: s[18], suspiciousTrailingLines: s[19],
    bidiUnbalanced: s[20], trailingWhitespaceBytes: s[22], records,
  };
}

/** CRC-32 (PNG/ZIP polynomial). */
export function crc32(input: KernelInput): number {
  const e = kernel().exports;
  const { ptr, len } = place(input);
  return e.crc32(ptr, len) >>> 0;
}
