// What kind of file this is, from content only (decisions.md 4): the media types
// of detectType, PDF, ZIP, text-like (valid UTF-8 or UTF-16, no NUL, at least 95 %
// printable), or another binary. The kind decides which checks run.
import { detectType, type MediaFormat } from '../../lib/detect.js';
import { scanText, type IntegrityCheck, type KernelBytes, type TextEncoding, type TextScan } from '../../lib/integrity.js';

export type ContentFamily = 'image' | 'audio' | 'video' | 'pdf' | 'text' | 'binary';

export interface ContentClass {
  family: ContentFamily;
  format: MediaFormat | 'pdf' | 'zip' | 'text' | 'binary';
  encoding?: TextEncoding;
  /** The full text scan, when the file is text-like. */
  text?: TextScan;
}

export const PRINTABLE_MIN = 0.95;

function isPdf(b: Uint8Array): boolean {
  // "%PDF-" within the first 1024 bytes (readers tolerate leading junk)
  const end = Math.min(b.length, 1024) - 5;
  for (let i = 0; i <= end; i++) {
    if (b[i] === 0x25 && b[i + 1] === 0x50 && b[i + 2] === 0x44 && b[i + 3] === 0x46 && b[i + 4] === 0x2d) return true;
  }
  return false;
}

function isZip(b: Uint8Array): boolean {
  return b.length >= 22 && b[0] === 0x50 && b[1] === 0x4b && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6));
}

/** UTF-16 byte order from a BOM, or from where the zero bytes of ASCII text fall. */
function utf16Order(b: Uint8Array): TextEncoding | null {
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b.length < 4 || b.length % 2 !== 0) return null;
  const n = Math.min(b.length, 4096) >> 1;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i++) {
    if (b[2 * i] === 0) evenZero++;
    if (b[2 * i + 1] === 0) oddZero++;
  }
  if (oddZero > 0.3 * n && evenZero < 0.05 * n) return 'utf-16le';
  if (evenZero > 0.3 * n && oddZero < 0.05 * n) return 'utf-16be';
  return null;
}

function textLike(scan: TextScan): boolean {
  return scan.valid && scan.nul === 0 && scan.codePoints > 0 && scan.printable / scan.codePoints >= PRINTABLE_MIN;
}

/** The class of `bytes` (already loaded into kernel memory as `input`). */
export function classifyContent(bytes: Uint8Array, input: KernelBytes): ContentClass {
  const media = detectType(bytes);
  if (media) return { family: media.kind, format: media.format };
  if (isPdf(bytes)) return { family: 'pdf', format: 'pdf' };
  if (isZip(bytes)) return { family: 'binary', format: 'zip' };
  if (bytes.length > 0) {
    const bom16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
    if (!bom16) {
      const utf8 = scanText(input, 'utf-8', true);
      if (textLike(utf8)) return { family: 'text', format: 'text', encoding: 'utf-8', text: utf8 };
    }
    const order = utf16Order(bytes);
    if (order) {
      const utf16 = scanText(input, order, true);
      if (textLike(utf16)) return { family: 'text', format: 'text', encoding: order, text: utf16 };
    }
  }
  return { family: 'binary', format: 'binary' };
}

/** The checks decisions.md 4 runs for a class, in the order of spec 2.1. */
export function checksFor(cls: ContentClass): IntegrityCheck[] {
  switch (cls.family) {
    case 'image': {
      const lsb = cls.format === 'png' || cls.format === 'bmp' || cls.format === 'tiff';
      return ['PostEofData', ...(lsb ? (['LsbAnalysis'] as const) : []), 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection'];
    }
    case 'audio':
    case 'video':
    case 'pdf':
      return ['PostEofData', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection'];
    case 'text':
      return ['EntropyAnalysis', 'AppendedFileDetection', 'UnicodeSteg'];
    default:
      // A ZIP is an "other binary", but PostEofData names its end (the end of
      // central directory and its comment), so what follows it is reported too.
      if (cls.format === 'zip') return ['PostEofData', 'EntropyAnalysis', 'AppendedFileDetection'];
      return ['EntropyAnalysis', 'AppendedFileDetection'];
  }
}
