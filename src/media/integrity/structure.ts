// The structure of a file as the integrity checks need it: where the format says
// the file ends, which regions it explains (MPF images, EXIF thumbnails), and its
// metadata segments. One walk per format, all in the integrity kernel.
import {
  IntegrityCode as C, KernelBytes, walkPng, walkJpeg, jpegExtent, walkGif, pdfEnd, zipEnd, walkTiff, containerEnd, walkId3, walkFlac,
  type IntegrityIssue, type KernelRecord,
} from '../../lib/integrity.js';
import type { ContentClass } from './classify.js';

export type SegmentKind =
  | 'exif' | 'xmp' | 'xmp-extension' | 'icc' | 'mpf' | 'iptc' | 'jumbf' | 'comment' | 'text-chunk' | 'unknown'
  | 'picture' | 'id3-text' | 'id3-object' | 'vorbis-comment' | 'application' | 'tiff-tag';

/** A metadata-bearing region of the file. */
export interface Segment {
  kind: SegmentKind;
  /** What the format calls it: "APP1", "tEXt Comment", "TXXX", ... */
  name: string;
  offset: number;
  length: number;
  /** The payload is compressed by the format (zTXt, compressed iTXt): inspect after inflating. */
  compressed?: boolean;
}

export interface Range {
  offset: number;
  length: number;
  why: string;
}

export interface Structure {
  /** Offset past the format's end; null when the format gives none or the walk broke. */
  end: number | null;
  /** Structural findings (truncation, bad CRC), reported under PostEofData. */
  issues: IntegrityIssue[];
  segments: Segment[];
  /** Regions inside or after the host that the format itself explains. */
  explained: Range[];
  /** PNG colour type (3 = palette), when known. */
  pngColourType?: number;
  /** EXIF/TIFF records (GPS and notable tags), with offsets made absolute. */
  tiffRecords: KernelRecord[];
}

const fourcc = (n: number): string =>
  String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255).replace(/[^\x20-\x7e]/g, '?');

function structural(description: string, offset?: number, severity: 'Info' | 'Warning' = 'Info'): IntegrityIssue {
  return { check: 'PostEofData', severity, description, ...(offset !== undefined ? { offset } : {}) };
}

function startsWith(bytes: Uint8Array, at: number, text: string): boolean {
  if (at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** EXIF/TIFF walk of a block at `base`: GPS and tag records made absolute, thumbnail explained. */
function inspectTiffBlock(input: KernelBytes, base: number, length: number, s: Structure, why: string): number {
  const r = walkTiff(input.at(base, length));
  for (const rec of r.records) {
    if (rec.code === C.EXIF_THUMBNAIL) s.explained.push({ offset: base + rec.offset, length: rec.length, why: `${why} thumbnail` });
    else s.tiffRecords.push({ ...rec, offset: base + rec.offset });
  }
  return r.end;
}

function pngStructure(bytes: Uint8Array, input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = walkPng(input, true);
  for (const rec of r.records) {
    if (rec.code === C.PNG_IHDR) s.pngColourType = rec.value;
    else if (rec.code === C.PNG_CRC_MISMATCH) {
      s.issues.push(structural(`PNG chunk ${fourcc(rec.aux)} fails its CRC-32 (edited without updating the checksum?)`, rec.offset, 'Warning'));
    } else if (rec.code === C.PNG_TRUNCATED) {
      s.issues.push(structural(`PNG chunk walk stopped at offset ${rec.offset}: truncated or corrupt before IEND`, rec.offset));
    } else if (rec.code === C.PNG_CHUNK) {
      const type = fourcc(rec.aux);
      if (type === 'tEXt' || type === 'zTXt' || type === 'iTXt') {
        let nul = rec.offset;
        while (nul < rec.offset + rec.length && bytes[nul] !== 0) nul++;
        const keyword = Buffer.from(bytes.subarray(rec.offset, Math.min(nul, rec.offset + 79))).toString('latin1');
        const compressed = type === 'zTXt' || (type === 'iTXt' && bytes[nul + 1] === 1);
        const kind: SegmentKind = keyword === 'XML:com.adobe.xmp' ? 'xmp' : 'text-chunk';
        s.segments.push({ kind, name: `${type} ${keyword}`, offset: rec.offset, length: rec.length, compressed });
      } else if (type === 'eXIf') {
        s.segments.push({ kind: 'exif', name: 'eXIf', offset: rec.offset, length: rec.length });
        inspectTiffBlock(input, rec.offset, rec.length, s, 'EXIF');
      } else if (type === 'iCCP') {
        s.segments.push({ kind: 'icc', name: 'iCCP', offset: rec.offset, length: rec.length, compressed: true });
      } else if (type === 'caBX') {
        s.segments.push({ kind: 'jumbf', name: 'caBX', offset: rec.offset, length: rec.length });
      } else if (!KNOWN_PNG_CHUNKS.has(type)) {
        s.segments.push({ kind: 'unknown', name: `chunk ${type}`, offset: rec.offset, length: rec.length });
      }
    }
  }
  if (r.end >= 0) s.end = r.end;
  return s;
}

// PNG 3rd edition and registered extensions: chunks whose content is pixel data or
// rendering hints, not free-form metadata.
const KNOWN_PNG_CHUNKS = new Set([
  'IHDR', 'PLTE', 'IDAT', 'IEND', 'tRNS', 'cHRM', 'gAMA', 'sBIT', 'sRGB', 'cICP', 'mDCV', 'cLLI', 'bKGD', 'hIST', 'pHYs',
  'sPLT', 'tIME', 'acTL', 'fcTL', 'fdAT', 'oFFs', 'pCAL', 'sCAL', 'gIFg', 'gIFx', 'sTER', 'dSIG', 'vpAg', 'orNT',
]);

const APP_IDS: [string, SegmentKind, string][] = [
  ['Exif\0', 'exif', 'EXIF'],
  ['http://ns.adobe.com/xap/1.0/\0', 'xmp', 'XMP'],
  ['http://ns.adobe.com/xmp/extension/\0', 'xmp-extension', 'extended XMP'],
  ['ICC_PROFILE\0', 'icc', 'ICC profile'],
  ['MPF\0', 'mpf', 'MPF'],
  ['Photoshop 3.0\0', 'iptc', 'Photoshop/IPTC'],
  ['JP', 'jumbf', 'JUMBF'],
];

function jpegStructure(bytes: Uint8Array, input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = walkJpeg(input);
  let firstEoi = -1;
  for (const rec of r.records) {
    switch (rec.code) {
      case C.JPEG_SEGMENT: {
        const marker = rec.aux;
        const name = marker === 0xfe ? 'COM' : `APP${marker - 0xe0}`;
        let kind: SegmentKind = marker === 0xfe ? 'comment' : 'unknown';
        let label = name;
        if (marker !== 0xfe) {
          for (const [id, k, l] of APP_IDS) {
            if (startsWith(bytes, rec.offset, id) && (k !== 'jumbf' || marker === 0xeb)) {
              kind = k;
              label = `${name} ${l}`;
              break;
            }
          }
          if (marker === 0xe0 && (startsWith(bytes, rec.offset, 'JFIF\0') || startsWith(bytes, rec.offset, 'JFXX\0'))) continue;
          if (marker === 0xee && startsWith(bytes, rec.offset, 'Adobe')) continue;
        }
        s.segments.push({ kind, name: label, offset: rec.offset, length: rec.length });
        if (kind === 'exif') inspectTiffBlock(input, rec.offset + 6, rec.length - 6, s, 'EXIF');
        break;
      }
      case C.JPEG_FIRST_EOI:
        firstEoi = rec.offset;
        break;
      case C.JPEG_MPF_IMAGE:
        if (rec.value === 1) s.explained.push({ offset: rec.offset, length: rec.length, why: 'MPF secondary image (preview or gain map)' });
        else s.issues.push(structural(`MPF names an image at offset ${rec.offset} that is not a complete JPEG`, rec.offset));
        break;
      case C.JPEG_TRUNCATED:
      case C.JPEG_BAD_MARKER:
      case C.JPEG_BAD_SIGNATURE:
        s.issues.push(structural(`JPEG marker walk stopped at offset ${rec.offset}: truncated or corrupt before EOI`, rec.offset));
        break;
    }
  }
  if (r.end >= 0) s.end = r.end;
  if (s.end !== null) explainXmpContainer(bytes, input, s);
  if (firstEoi >= 0 && s.end !== null && s.end > firstEoi && s.explained.some((e) => e.why.startsWith('MPF'))) {
    s.issues.push({ check: 'PostEofData', severity: 'Info', description: `${s.end - firstEoi} bytes after the primary image are MPF secondary images (explained by the format)`, offset: firstEoi, length: s.end - firstEoi });
  }
  return s;
}

/**
 * Items after the primary image that the XMP Container directory declares
 * (Android Motion Photos: an MP4; Ultra HDR / Adobe gain maps: a JPEG), walked and
 * explained one after another.
 */
function explainXmpContainer(bytes: Uint8Array, input: KernelBytes, s: Structure): void {
  const xmp = s.segments.filter((g) => g.kind === 'xmp' || g.kind === 'xmp-extension')
    .map((g) => Buffer.from(bytes.buffer, bytes.byteOffset + g.offset, g.length).toString('latin1')).join('');
  const motion = /Container:Directory|GCamera:MicroVideo|GCamera:MotionPhoto/.test(xmp) && /MotionPhoto|MicroVideo/.test(xmp);
  const gainMap = /Container:Directory/.test(xmp) && /GainMap/.test(xmp);
  if (!motion && !gainMap) return;
  for (let guard = 0; guard < 4 && s.end !== null && s.end < bytes.length; guard++) {
    const at = s.end;
    const rest = input.at(at);
    if (gainMap && bytes[at] === 0xff && bytes[at + 1] === 0xd8) {
      const e = jpegExtent(rest);
      if (e <= 0) return;
      s.explained.push({ offset: at, length: e, why: 'gain map image declared in the XMP Container directory' });
      s.issues.push(structural(`${e} bytes after the primary image are a gain map declared in XMP (explained by the format)`, at));
      s.end = at + e;
    } else if (motion && startsWith(bytes, at + 4, 'ftyp')) {
      const e = containerEnd('isobmff', rest).end;
      if (e <= 0) return;
      s.explained.push({ offset: at, length: e, why: 'Motion Photo video declared in XMP' });
      s.issues.push(structural(`${e} bytes after the image are a Motion Photo video declared in XMP (explained by the format)`, at));
      s.end = at + e;
    } else return;
  }
}

function gifStructure(bytes: Uint8Array, input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = walkGif(input);
  for (const rec of r.records) {
    if (rec.code === C.GIF_EXTENSION) {
      if (rec.aux === 0xfe) s.segments.push({ kind: 'comment', name: 'GIF comment', offset: rec.offset + 2, length: rec.length - 2 });
      else {
        const id = Buffer.from(bytes.subarray(rec.offset + 3, rec.offset + 14)).toString('latin1');
        if (id === 'NETSCAPE2.0' || id === 'ANIMEXTS1.0') continue;
        s.segments.push({ kind: id === 'XMP DataXMP' ? 'xmp' : 'application', name: `GIF application ${id.replace(/[^\x20-\x7e]/g, '?')}`, offset: rec.offset + 2, length: rec.length - 2 });
      }
    } else if (rec.code === C.GIF_TRUNCATED || rec.code === C.GIF_BAD_BLOCK || rec.code === C.GIF_BAD_SIGNATURE) {
      s.issues.push(structural(`GIF block walk stopped at offset ${rec.offset}: truncated or corrupt before the trailer`, rec.offset));
    }
  }
  if (r.end >= 0) s.end = r.end;
  return s;
}

function tiffStructure(input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const end = inspectTiffBlock(input, 0, input.length, s, 'TIFF');
  for (const rec of s.tiffRecords) {
    if (rec.code === C.EXIF_BAD) s.issues.push(structural(`TIFF directory or value at offset ${rec.offset} points outside the file`, rec.offset));
    if (rec.code === C.EXIF_TAG) s.segments.push({ kind: 'tiff-tag', name: tiffTagName(rec.aux), offset: rec.offset, length: rec.length });
  }
  if (end > 0) s.end = end;
  return s;
}

export function tiffTagName(tag: number): string {
  return ({ 700: 'XMP', 33723: 'IPTC', 34377: 'Photoshop', 34675: 'ICC profile', 0x9286: 'UserComment', 0x010e: 'ImageDescription', 0x927c: 'MakerNote' } as Record<number, string>)[tag] ?? `tag ${tag}`;
}

function containerStructure(input: KernelBytes, kind: 'riff' | 'bmp' | 'ogg' | 'isobmff', what: string): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = containerEnd(kind, input);
  if (r.end >= 0) s.end = r.end;
  for (const rec of r.records) {
    if (rec.code === C.CONTAINER_BAD) s.issues.push(structural(`${what} structure is truncated or inconsistent near offset ${rec.offset}`, rec.offset));
  }
  return s;
}

function riffStructure(bytes: Uint8Array, input: KernelBytes, what: string): Structure {
  const s = containerStructure(input, 'riff', what);
  // RIFF chunks: WebP EXIF/XMP, WAV LIST/id3
  const end = s.end ?? bytes.length;
  let pos = 12;
  while (pos + 8 <= end) {
    const id = Buffer.from(bytes.subarray(pos, pos + 4)).toString('latin1');
    const size = bytes[pos + 4] | (bytes[pos + 5] << 8) | (bytes[pos + 6] << 16) | (bytes[pos + 7] << 24);
    if (size < 0 || pos + 8 + size > end) break;
    if (id === 'EXIF') {
      const skip = startsWith(bytes, pos + 8, 'Exif\0\0') ? 6 : 0;
      s.segments.push({ kind: 'exif', name: 'EXIF chunk', offset: pos + 8, length: size });
      inspectTiffBlock(input, pos + 8 + skip, size - skip, s, 'EXIF');
    } else if (id === 'XMP ') s.segments.push({ kind: 'xmp', name: 'XMP chunk', offset: pos + 8, length: size });
    else if (id === 'LIST' && startsWith(bytes, pos + 8, 'INFO')) s.segments.push({ kind: 'id3-text', name: 'LIST INFO chunk', offset: pos + 8, length: size });
    else if (id === 'id3 ' || id === 'ID3 ') s.segments.push({ kind: 'id3-text', name: 'ID3 chunk', offset: pos + 8, length: size });
    pos += 8 + size + (size & 1);
  }
  return s;
}

function mp3Structure(input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = walkId3(input);
  for (const rec of r.records) {
    if (rec.code === C.ID3_FRAME) {
      const id = fourcc(rec.aux);
      const kind: SegmentKind = id === 'APIC' ? 'picture' : id === 'GEOB' || id === 'PRIV' ? 'id3-object' : 'id3-text';
      s.segments.push({ kind, name: `ID3 ${id}`, offset: rec.offset, length: rec.length });
    } else if (rec.code === C.CONTAINER_BAD) s.issues.push(structural(`ID3v2 tag is truncated or inconsistent near offset ${rec.offset}`, rec.offset));
  }
  return s;
}

function flacStructure(input: KernelBytes): Structure {
  const s: Structure = { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  const r = walkFlac(input);
  for (const rec of r.records) {
    if (rec.code === C.FLAC_BLOCK) {
      const kind: SegmentKind | null = rec.aux === 4 ? 'vorbis-comment' : rec.aux === 6 ? 'picture' : rec.aux === 2 ? 'application' : null;
      if (kind) s.segments.push({ kind, name: ['STREAMINFO', 'PADDING', 'APPLICATION', 'SEEKTABLE', 'VORBIS_COMMENT', 'CUESHEET', 'PICTURE'][rec.aux] ?? `block ${rec.aux}`, offset: rec.offset, length: rec.length });
    } else if (rec.code === C.CONTAINER_BAD) s.issues.push(structural(`FLAC metadata is truncated near offset ${rec.offset}`, rec.offset));
  }
  return s;
}

function pdfStructure(input: KernelBytes): Structure {
  const end = pdfEnd(input);
  const s: Structure = { end: end >= 0 ? end : null, issues: [], segments: [], explained: [], tiffRecords: [] };
  if (end < 0) s.issues.push(structural('PDF has no %%EOF marker: truncated or not a complete PDF'));
  return s;
}

function zipStructure(input: KernelBytes): Structure {
  const r = zipEnd(input);
  const s: Structure = { end: r.end >= 0 ? r.end : null, issues: [], segments: [], explained: [], tiffRecords: [] };
  return s;
}

/** Walks the file's structure for its class. */
export function fileStructure(cls: ContentClass, bytes: Uint8Array, input: KernelBytes): Structure {
  switch (cls.format) {
    case 'png': return pngStructure(bytes, input);
    case 'jpeg': return jpegStructure(bytes, input);
    case 'gif': return gifStructure(bytes, input);
    case 'tiff': return tiffStructure(input);
    case 'bmp': return containerStructure(input, 'bmp', 'BMP');
    case 'webp': return riffStructure(bytes, input, 'WebP');
    case 'wav': return riffStructure(bytes, input, 'WAV');
    case 'avi': return riffStructure(bytes, input, 'AVI');
    case 'ogg-vorbis': case 'ogg-opus': return containerStructure(input, 'ogg', 'Ogg');
    case 'mp4': return containerStructure(input, 'isobmff', 'MP4');
    case 'mp3': return mp3Structure(input);
    case 'flac': return flacStructure(input);
    case 'pdf': return pdfStructure(input);
    case 'zip': return zipStructure(input);
    default: return { end: null, issues: [], segments: [], explained: [], tiffRecords: [] };
  }
}
