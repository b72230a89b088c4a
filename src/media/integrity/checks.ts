// The six integrity checks of decisions.md 4, one function each, over a file whose
// bytes are loaded in kernel memory and whose structure has been walked.
import { inflateSync } from 'node:zlib';
import {
  IntegrityCode as C, PdfName, KernelBytes, scanSignatures, walkPng, jpegExtent, walkGif, zipEnd, pdfEnd, pdfScanNames,
  entropyOf, entropyProfile, longestBase64Run, lsbStatistics, mp4Location, ENTROPY_WINDOW,
  type IntegrityIssue, type IntegrityCheck, type IntegritySeverity, type SignatureKind, type SignatureHit, type LsbChannelStats,
} from '../../lib/integrity.js';
import type { ContentClass } from './classify.js';
import type { Segment, Structure } from './structure.js';

export interface FileContext {
  bytes: Uint8Array;
  input: KernelBytes;
  cls: ContentClass;
  structure: Structure;
}

/** Thresholds, tuned on the dev corpus (docs/integrity.md) for at most 2 % flagged clean files. */
export const THRESHOLDS = {
  /** Metadata of one kind above this many bytes is oversized. */
  oversizedMetadata: 64 * 1024,
  /** A run of base64 characters at least this long in text metadata looks like an encoded payload. */
  base64Run: 256,
  /** Bits per byte above which data after the end looks encrypted or compressed. */
  trailingEntropy: 7.2,
  /** Bits per byte above which a text metadata payload is not text. */
  textMetadataEntropy: 6.5,
  /** Sample pair analysis estimate (weakest channel, smaller of both directions) at or above which LSB replacement is reported. */
  spaWarning: 0.09,
  /** ... and at or above which it is mentioned as weak evidence. */
  spaInfo: 0.05,
  /** Channels with fewer distinct values are graphics, where SPA is biased: no SPA verdict. */
  spaMinDistinct: 16,
  /** Chi-square p-value that every channel must reach for the pairs-of-values verdict... */
  chiSquareP: 0.01,
  /** ... together with at least this SPA estimate where SPA is defined. */
  spaConfirm: 0.06,
  /** Zero-width characters without an explaining context from which a text is flagged. */
  zeroWidth: 3,
  /** Lines ending in mixed tabs and spaces (or 8+ blanks) from which a text is flagged. */
  trailingLines: 3,
} as const;

const MAX_DESCRIPTION = 200;

function issue(check: IntegrityCheck, severity: IntegritySeverity, description: string, offset?: number, length?: number): IntegrityIssue {
  const flat = description.replace(/\s+/g, ' ').trim();
  const d = flat.length > MAX_DESCRIPTION ? `${flat.slice(0, MAX_DESCRIPTION - 1)}\u2026` : flat;
  const out: IntegrityIssue = { check, severity, description: d };
  if (offset !== undefined && offset >= 0) out.offset = offset;
  if (length !== undefined && length > 0) out.length = length;
  return out;
}

const FORMAT_END: Record<string, string> = {
  png: 'the PNG IEND chunk', jpeg: 'the last JPEG EOI', gif: 'the GIF trailer', pdf: 'the last %%EOF', zip: 'the ZIP end of central directory',
  bmp: 'the BMP file size', tiff: 'the last TIFF directory or strip', webp: 'the RIFF size', wav: 'the RIFF size', avi: 'the RIFF size',
  'ogg-vorbis': 'the last Ogg page', 'ogg-opus': 'the last Ogg page', mp4: 'the last top-level MP4 box',
};

const KIND_NAME: Record<SignatureKind, string> = {
  png: 'PNG image', jpeg: 'JPEG image', gif: 'GIF image', zip: 'ZIP archive', pdf: 'PDF document', rar: 'RAR archive',
  '7z': '7z archive', gzip: 'GZIP stream', elf: 'ELF executable', pe: 'Windows PE executable',
};
const isExecutable = (k: SignatureKind) => k === 'elf' || k === 'pe';
const isImage = (k: SignatureKind) => k === 'png' || k === 'jpeg' || k === 'gif';

function bytesText(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

/** The bytes after the host's end, when the format gives one. */
function trailing(ctx: FileContext): { offset: number; length: number; padding: boolean } | null {
  const end = ctx.structure.end;
  if (end === null || end >= ctx.bytes.length) return null;
  let padding = true;
  for (let i = end; i < ctx.bytes.length; i++) {
    const b = ctx.bytes[i];
    if (b !== 0 && b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) {
      padding = false;
      break;
    }
  }
  return { offset: end, length: ctx.bytes.length - end, padding };
}

// ---- PostEofData -----------------------------------------------------------

export function postEofData(ctx: FileContext): IntegrityIssue[] {
  const out = [...ctx.structure.issues];
  const t = trailing(ctx);
  if (t) {
    const where = FORMAT_END[ctx.cls.format] ?? 'the end of the format';
    if (t.padding) out.push(issue('PostEofData', 'Info', `${bytesText(t.length)} of zero or whitespace padding after ${where}`, t.offset, t.length));
    else out.push(issue('PostEofData', 'Warning', `${bytesText(t.length)} of data after ${where}`, t.offset, t.length));
  }
  return out;
}

// ---- AppendedFileDetection -------------------------------------------------

/** Where an embedded file found at `offset` ends (its own format's end), or the end of the input. */
function extentOf(ctx: FileContext, hit: SignatureHit): number {
  const rest = ctx.input.at(hit.offset);
  let end = -1;
  switch (hit.kind) {
    case 'png': end = walkPng(rest, false).end; break;
    case 'jpeg': end = jpegExtent(rest); break;
    case 'gif': end = walkGif(rest).end; break;
    case 'zip': end = zipEnd(rest).end; break;
    case 'pdf': end = pdfEnd(rest); break;
  }
  return end > 0 ? hit.offset + end : ctx.bytes.length;
}

const TEXT_SEGMENTS = new Set<Segment['kind']>(['comment', 'text-chunk', 'xmp', 'xmp-extension', 'id3-text', 'vorbis-comment']);

function segmentAt(ctx: FileContext, offset: number): Segment | undefined {
  return ctx.structure.segments.find((s) => offset >= s.offset && offset < s.offset + s.length);
}

function explainedAt(ctx: FileContext, offset: number): boolean {
  return ctx.structure.explained.some((r) => offset >= r.offset && offset < r.offset + r.length);
}

export function appendedFiles(ctx: FileContext): IntegrityIssue[] {
  const { cls, bytes } = ctx;
  const out: IntegrityIssue[] = [];
  const len = bytes.length;
  const hits = scanSignatures(ctx.input, 1, len);
  if (hits.length === 0) return out;
  const known = cls.family === 'image' || cls.family === 'audio' || cls.family === 'video' || cls.family === 'pdf';
  const hostEnd = ctx.structure.end ?? (cls.format === 'zip' ? len : known ? len : 0);
  let coveredUntil = 0; // the end of the last reported appended file
  const reported = new Set<string>();
  for (const hit of hits) {
    const name = KIND_NAME[hit.kind];
    if (hit.offset >= hostEnd && (known || cls.format === 'zip')) {
      if (hit.offset < coveredUntil && !isExecutable(hit.kind)) continue; // a member of an appended file
      if (explainedAt(ctx, hit.offset)) continue;
      const end = extentOf(ctx, hit);
      coveredUntil = Math.max(coveredUntil, end);
      const severity = isExecutable(hit.kind) ? 'Critical' : 'Warning';
      out.push(issue('AppendedFileDetection', severity, `${name} appended after the end of the ${formatName(cls)} at offset ${hit.offset} (${bytesText(end - hit.offset)})`, hit.offset, end - hit.offset));
      continue;
    }
    if (cls.format === 'zip') continue; // members of the archive itself
    if (cls.family === 'text') {
      if (!reported.has(hit.kind)) out.push(issue('AppendedFileDetection', 'Info', `text contains a ${name} signature at offset ${hit.offset}`, hit.offset));
      reported.add(hit.kind);
      continue;
    }
    if (!known) {
      // an unknown binary: no end to be appended after, but an executable inside is worth a look
      if (reported.has(hit.kind)) continue;
      reported.add(hit.kind);
      out.push(issue('AppendedFileDetection', isExecutable(hit.kind) ? 'Warning' : 'Info', `${name} signature inside the file at offset ${hit.offset}`, hit.offset));
      continue;
    }
    // inside a media or PDF host, before its end
    if (explainedAt(ctx, hit.offset)) continue;
    const seg = segmentAt(ctx, hit.offset);
    if (isImage(hit.kind)) {
      // previews and cover art live in EXIF, MPF, Photoshop, JUMBF, APIC and PICTURE blocks; not in text
      const suspicious = seg !== undefined && (TEXT_SEGMENTS.has(seg.kind) || (cls.format === 'png' && seg.kind === 'unknown'));
      if (!suspicious) continue;
    }
    if (hit.offset < coveredUntil && !isExecutable(hit.kind)) continue;
    const end = Math.min(extentOf(ctx, hit), seg ? seg.offset + seg.length : len);
    coveredUntil = Math.max(coveredUntil, end);
    const where = seg ? `in ${seg.name}` : `inside the ${formatName(cls)} data`;
    out.push(issue('AppendedFileDetection', isExecutable(hit.kind) ? 'Critical' : 'Warning', `${name} hidden ${where} at offset ${hit.offset}`, hit.offset, end - hit.offset));
  }
  return out;
}

function formatName(cls: ContentClass): string {
  return cls.format === 'binary' ? 'file' : cls.format.toUpperCase().replace('OGG-VORBIS', 'Ogg').replace('OGG-OPUS', 'Ogg');
}

// ---- MetadataInspection ----------------------------------------------------

function latin1(bytes: Uint8Array, offset: number, length: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + offset, Math.max(0, Math.min(length, bytes.length - offset))).toString('latin1');
}

/** The text payload of a PNG text chunk (inflated when compressed), or null. */
function pngTextPayload(bytes: Uint8Array, seg: Segment): Uint8Array | null {
  const data = bytes.subarray(seg.offset, seg.offset + seg.length);
  const nul = data.indexOf(0);
  if (nul < 0) return null;
  const type = seg.name.slice(0, 4);
  let body: Uint8Array;
  let compressed = false;
  if (type === 'tEXt') body = data.subarray(nul + 1);
  else if (type === 'zTXt') {
    body = data.subarray(nul + 2);
    compressed = true;
  } else {
    compressed = data[nul + 1] === 1;
    let p = nul + 3;
    const langEnd = data.indexOf(0, p);
    if (langEnd < 0) return null;
    const transEnd = data.indexOf(0, langEnd + 1);
    if (transEnd < 0) return null;
    p = transEnd + 1;
    body = data.subarray(p);
  }
  if (!compressed) return body;
  try {
    return new Uint8Array(inflateSync(body, { maxOutputLength: 16 << 20 }));
  } catch {
    return null;
  }
}

function base64Finding(payload: Uint8Array, name: string, offset: number, out: IntegrityIssue[]): void {
  if (payload.length < THRESHOLDS.base64Run) return;
  const run = longestBase64Run(payload);
  if (run.length < THRESHOLDS.base64Run) return;
  const text = Buffer.from(payload.subarray(run.start, run.start + run.length)).toString('latin1').replace(/[\r\n]/g, '');
  if (/^[0-9a-fA-F]*$/.test(text)) return; // hex dumps (ImageMagick raw profiles) are not base64
  if (!/[A-Z]/.test(text) || !/[a-z]/.test(text) || !/[0-9]/.test(text)) return;
  const h = entropyOf(payload.subarray(run.start, run.start + run.length));
  if (h < 5.0) return;
  out.push(issue('MetadataInspection', 'Warning', `base64-looking payload of ${run.length} characters in ${name}`, offset, run.length));
}

const GPS_XMP = /(?:exif:GPSLatitude|exif:GPSLongitude)\s*(?:=\s*["']|>)\s*[0-9]/;

function gpsFindings(ctx: FileContext, out: IntegrityIssue[]): void {
  for (const rec of ctx.structure.tiffRecords) {
    if (rec.code !== C.EXIF_GPS) continue;
    const lat = rec.value, lon = rec.value2;
    if ((Number.isFinite(lat) || Number.isFinite(lon)) && !(lat === 0 && lon === 0)) {
      const pos = `${Number.isFinite(lat) ? lat.toFixed(5) : '?'}, ${Number.isFinite(lon) ? lon.toFixed(5) : '?'}`;
      out.push(issue('MetadataInspection', 'Warning', `GPS position in EXIF (${pos}): reveals where the file was made`, rec.offset));
    } else out.push(issue('MetadataInspection', 'Info', 'EXIF GPS directory without a usable position', rec.offset));
  }
}

const EXPLAINED_SIZE = new Set<Segment['kind']>(['icc', 'mpf', 'picture', 'exif', 'jumbf']);

export function metadataInspection(ctx: FileContext): IntegrityIssue[] {
  const { bytes, structure, cls } = ctx;
  const out: IntegrityIssue[] = [];
  gpsFindings(ctx, out);
  const totals = new Map<string, { bytes: number; offset: number; kind: Segment['kind'] }>();
  for (const seg of structure.segments) {
    const key = seg.kind === 'xmp-extension' ? 'xmp' : seg.kind;
    const t = totals.get(key) ?? { bytes: 0, offset: seg.offset, kind: seg.kind };
    t.bytes += seg.length;
    totals.set(key, t);
    let payload: Uint8Array | null = bytes.subarray(seg.offset, seg.offset + seg.length);
    if (seg.kind === 'text-chunk' || (seg.kind === 'xmp' && seg.name.startsWith('iTXt'))) payload = pngTextPayload(bytes, seg);
    if (payload === null) continue;
    if (TEXT_SEGMENTS.has(seg.kind) || seg.kind === 'tiff-tag') {
      const text = latin1(payload, 0, payload.length);
      const exifGps = out.some((i) => i.severity === 'Warning' && i.description.startsWith('GPS position'));
      if (!exifGps && (seg.kind === 'xmp' || seg.kind === 'xmp-extension' || (seg.kind === 'tiff-tag' && seg.name === 'XMP')) && GPS_XMP.test(text)) {
        out.push(issue('MetadataInspection', 'Warning', `GPS position in XMP (${seg.name}): reveals where the file was made`, seg.offset, seg.length));
      }
      if (seg.kind === 'xmp' && /xmpGImg:image/.test(text)) continue; // Adobe's base64 JPEG thumbnail
      if (seg.kind === 'tiff-tag' && (seg.name === 'ICC profile' || seg.name === 'MakerNote' || seg.name === 'Photoshop' || seg.name === 'IPTC')) continue;
      base64Finding(payload, seg.name, seg.offset, out);
      if (payload.length > THRESHOLDS.oversizedMetadata && seg.kind !== 'xmp' && seg.kind !== 'xmp-extension') {
        out.push(issue('MetadataInspection', 'Warning', `oversized ${seg.name}: ${bytesText(payload.length)}`, seg.offset, seg.length));
      }
    } else if (seg.kind === 'unknown' || seg.kind === 'application' || seg.kind === 'id3-object') {
      if (seg.length > THRESHOLDS.oversizedMetadata) out.push(issue('MetadataInspection', 'Warning', `oversized ${seg.name}: ${bytesText(seg.length)} of unrecognised data`, seg.offset, seg.length));
    }
  }
  const xmp = totals.get('xmp');
  if (xmp && xmp.bytes > THRESHOLDS.oversizedMetadata) out.push(issue('MetadataInspection', 'Warning', `oversized XMP metadata: ${bytesText(xmp.bytes)}`, xmp.offset, xmp.bytes));
  if (cls.format === 'mp4') {
    const at = mp4Location(ctx.input);
    if (at >= 0) out.push(issue('MetadataInspection', 'Warning', 'GPS position in the QuickTime location atom (\u00a9xyz)', at));
  }
  if (cls.format === 'pdf') out.push(...pdfActiveContent(ctx));
  if (totals.size > 0) {
    const list = [...totals.entries()].filter(([k]) => !EXPLAINED_SIZE.has(k as Segment['kind']) || k === 'exif' || k === 'icc')
      .map(([k, t]) => `${KIND_LABEL[t.kind] ?? k} ${bytesText(t.bytes)}`);
    if (list.length > 0) out.push(issue('MetadataInspection', 'Info', `metadata present: ${list.join(', ')}`));
  }
  return out;
}

const KIND_LABEL: Partial<Record<Segment['kind'], string>> = {
  exif: 'EXIF', xmp: 'XMP', 'xmp-extension': 'XMP', icc: 'ICC profile', iptc: 'IPTC/Photoshop', jumbf: 'JUMBF/C2PA', comment: 'comment',
  'text-chunk': 'text chunks', unknown: 'unrecognised segments', picture: 'pictures', 'id3-text': 'ID3/INFO text', 'id3-object': 'ID3 objects',
  'vorbis-comment': 'Vorbis comments', application: 'application blocks', 'tiff-tag': 'TIFF tags',
};

/** Object streams (PDF 1.5) hide dictionaries in Flate-compressed streams: inflate and scan them too. */
function* objectStreams(bytes: Uint8Array): Generator<Uint8Array> {
  const text = latin1(bytes, 0, bytes.length);
  const re = /\/Type\s*\/ObjStm/g;
  let m: RegExpExecArray | null;
  let count = 0;
  while ((m = re.exec(text)) !== null && count < 256) {
    const s = text.indexOf('stream', m.index);
    if (s < 0) break;
    let start = s + 6;
    if (text[start] === '\r') start++;
    if (text[start] === '\n') start++;
    const e = text.indexOf('endstream', start);
    if (e < 0) break;
    count++;
    try {
      yield new Uint8Array(inflateSync(bytes.subarray(start, e), { maxOutputLength: 32 << 20 }));
    } catch {
      // not Flate, or damaged: nothing to scan
    }
  }
}

function pdfActiveContent(ctx: FileContext): IntegrityIssue[] {
  const out: IntegrityIssue[] = [];
  const seen = new Set<number>();
  const take = (records: ReturnType<typeof pdfScanNames>, inObjStm: boolean) => {
    for (const r of records) {
      if (seen.has(r.aux)) continue;
      const where = inObjStm ? ' (inside a compressed object stream)' : ` at offset ${r.offset}`;
      const offset = inObjStm ? undefined : r.offset;
      if (r.aux === PdfName.JavaScript || r.aux === PdfName.JS) {
        if (seen.has(PdfName.JavaScript) || seen.has(PdfName.JS)) continue;
        out.push(issue('MetadataInspection', 'Critical', `PDF contains JavaScript (/${r.aux === PdfName.JS ? 'JS' : 'JavaScript'}${where})`, offset));
      } else if (r.aux === PdfName.Launch) out.push(issue('MetadataInspection', 'Warning', `PDF has a /Launch action that can start programs${where}`, offset));
      else if (r.aux === PdfName.EmbeddedFile) out.push(issue('MetadataInspection', 'Info', `PDF embeds files (/EmbeddedFile${where})`, offset));
      else continue;
      seen.add(r.aux);
    }
  };
  const records = pdfScanNames(ctx.input);
  take(records, false);
  if (records.some((r) => r.aux === PdfName.ObjStm)) {
    for (const stream of objectStreams(ctx.bytes)) take(pdfScanNames(stream), true);
  }
  return out;
}

// ---- EntropyAnalysis -------------------------------------------------------

export function entropyAnalysis(ctx: FileContext): IntegrityIssue[] {
  const out: IntegrityIssue[] = [];
  const { bytes, cls } = ctx;
  const profile = entropyProfile(ctx.input);
  const t = trailing(ctx);
  if (t && !t.padding && t.length >= 256) {
    const h = entropyOf(ctx.input.at(t.offset, t.length));
    if (h >= THRESHOLDS.trailingEntropy) {
      out.push(issue('EntropyAnalysis', 'Warning', `data after the end has ${h.toFixed(2)} bits/byte: encrypted or compressed payload`, t.offset, t.length));
    }
  }
  for (const seg of ctx.structure.segments) {
    if (!TEXT_SEGMENTS.has(seg.kind) || seg.length < 1024) continue;
    if (seg.kind === 'text-chunk' && seg.name.startsWith('zTXt')) continue;
    if (seg.kind === 'id3-text' || seg.kind === 'vorbis-comment') continue; // UTF-16 and binary framing
    const h = entropyOf(ctx.input.at(seg.offset, seg.length));
    if (h >= THRESHOLDS.textMetadataEntropy) {
      out.push(issue('EntropyAnalysis', 'Warning', `${seg.name} holds ${bytesText(seg.length)} at ${h.toFixed(2)} bits/byte, too random for text`, seg.offset, seg.length));
    }
  }
  if (cls.family === 'text') {
    // base64 stays near 6 bits per character; more in text is unusual
    let high = 0, first = -1;
    profile.windows.forEach((h, i) => {
      if (h > 6.2 && (i + 1) * ENTROPY_WINDOW <= bytes.length) {
        high++;
        if (first < 0) first = i * ENTROPY_WINDOW;
      }
    });
    if (high > 0) out.push(issue('EntropyAnalysis', 'Info', `${high} window(s) of 4 KiB above 6.2 bits/byte (encoded data in the text?)`, first, high * ENTROPY_WINDOW));
  }
  if (cls.family === 'binary' && bytes.length > 0) {
    out.push(issue('EntropyAnalysis', 'Info', `overall entropy ${profile.overall.toFixed(2)} bits/byte over ${profile.windows.length} windows of 4 KiB`));
  }
  return out;
}

// ---- LsbAnalysis -----------------------------------------------------------

export interface DecodedImage {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

const CHANNEL_NAMES = ['R', 'G', 'B'];

/** LSB findings from decoded pixels (`image` null when they could not be decoded). */
export function lsbAnalysis(ctx: FileContext, image: DecodedImage | null, why?: string): { issues: IntegrityIssue[]; stats: LsbChannelStats[] } {
  if (ctx.structure.pngColourType === 3) {
    return { issues: [issue('LsbAnalysis', 'Info', 'palette PNG: pixel LSB statistics do not apply to palette indices')], stats: [] };
  }
  if (image === null) return { issues: [issue('LsbAnalysis', 'Info', `pixels could not be decoded${why ? `: ${why}` : ''}`)], stats: [] };
  if (image.width < 2 || image.width * image.height < 4096) {
    return { issues: [issue('LsbAnalysis', 'Info', `image too small (${image.width}x${image.height}) for LSB statistics`)], stats: [] };
  }
  const stats = lsbStatistics(image.data, image.width, image.height, image.channels);
  const name = (c: number) => (stats.length === 1 ? 'grey' : CHANNEL_NAMES[c] ?? `#${c}`);
  // SPA is trusted only where every colour channel gives an estimate from a
  // continuous-tone histogram, in both directions: each channel counts with the
  // smaller of its horizontal and vertical estimates, and the weakest channel decides
  // (LSB replacement tools embed everywhere; graphics bias one direction or channel).
  const estimate = (s: LsbChannelStats) => Math.min(s.spaEstimate, s.spaVertical);
  const finite = stats.filter((s) => Number.isFinite(estimate(s)));
  const tonal = finite.filter((s) => s.distinctValues >= THRESHOLDS.spaMinDistinct);
  const weakest = tonal.length === stats.length ? tonal.reduce((a, b) => (estimate(b) < estimate(a) ? b : a)) : null;
  const spa = weakest ? estimate(weakest) : NaN;
  const describe = (s: LsbChannelStats) => `${Math.round(Math.max(0, Math.min(1, estimate(s))) * 100)} % (${name(s.channel)})`;
  if (weakest && spa >= THRESHOLDS.spaWarning) {
    return { issues: [issue('LsbAnalysis', 'Warning', `LSB replacement likely: sample pair analysis estimates at least ${describe(weakest)} of samples carry embedded bits`)], stats };
  }
  // the pairs-of-values test: every channel's pairs as equal as embedding makes them,
  // confirmed by SPA where it has an estimate (noisy photos pass the test alone)
  const pairsEqual = stats.every((s) => Number.isFinite(s.pValue) && s.pValue >= THRESHOLDS.chiSquareP);
  const lowest = finite.length > 0 ? finite.reduce((a, b) => (estimate(b) < estimate(a) ? b : a)) : null;
  if (pairsEqual && (finite.length < stats.length || (lowest !== null && estimate(lowest) >= THRESHOLDS.spaConfirm))) {
    const ps = stats.map((s) => `${s.pValue.toFixed(2)} (${name(s.channel)})`).join(', ');
    const est = lowest ? `; SPA ${describe(lowest)}` : '';
    return { issues: [issue('LsbAnalysis', 'Warning', `LSB replacement likely: chi-square pairs-of-values test p=${ps}${est}`)], stats };
  }
  if (weakest && spa >= THRESHOLDS.spaInfo) {
    return { issues: [issue('LsbAnalysis', 'Info', `weak LSB evidence: sample pair analysis estimate ${describe(weakest)}`)], stats };
  }
  return { issues: [], stats };
}

// ---- UnicodeSteg -----------------------------------------------------------

function cp(n: number): string {
  return `U+${n.toString(16).toUpperCase().padStart(4, '0')}`;
}

export function unicodeSteg(ctx: FileContext): IntegrityIssue[] {
  const scan = ctx.cls.text;
  if (!scan) return [];
  const out: IntegrityIssue[] = [];
  const recs = (code: number, unexplained = true) => scan.records.filter((r) => r.code === code && (!unexplained || r.value === 0));
  const firstOf = (code: number) => recs(code)[0];
  if (scan.tags > 0) {
    const r = firstOf(C.TEXT_TAG);
    out.push(issue('UnicodeSteg', 'Warning', `${scan.tags} invisible Unicode tag character(s) (U+E0000-E007F), which can carry hidden ASCII`, r?.offset));
  }
  if (scan.zeroWidth > 0) {
    const r = firstOf(C.TEXT_ZERO_WIDTH);
    const kinds = [...new Set(recs(C.TEXT_ZERO_WIDTH).map((x) => cp(x.aux)))].slice(0, 4).join(', ');
    const severity = scan.zeroWidth >= THRESHOLDS.zeroWidth ? 'Warning' : 'Info';
    out.push(issue('UnicodeSteg', severity, `${scan.zeroWidth} zero-width character(s) outside emoji or joining scripts (${kinds})`, r?.offset));
  }
  if (scan.variationSelectors > 0) {
    const r = firstOf(C.TEXT_VARIATION);
    const severity = scan.variationSelectors >= 2 ? 'Warning' : 'Info';
    out.push(issue('UnicodeSteg', severity, `${scan.variationSelectors} variation selector(s) where no variant exists (runs or after plain letters)`, r?.offset));
  }
  const bidi = recs(C.TEXT_BIDI, false);
  if (scan.bidiOverrides > 0 || scan.bidiUnbalanced > 0) {
    const r = bidi.find((x) => x.aux === 0x202d || x.aux === 0x202e) ?? bidi[0];
    out.push(issue('UnicodeSteg', 'Warning', `bidirectional controls reorder the displayed text (${scan.bidiOverrides} override(s), ${scan.bidiUnbalanced} unbalanced)`, r?.offset));
  } else if (scan.bidiOpen > 0 && scan.rtlLetters === 0) {
    out.push(issue('UnicodeSteg', 'Warning', `${scan.bidiOpen} bidirectional embedding/isolate control(s) in text without right-to-left letters`, bidi[0]?.offset));
  } else if (scan.bidiMarks + scan.bidiOpen > 0 && scan.rtlLetters === 0) {
    out.push(issue('UnicodeSteg', 'Info', `${scan.bidiMarks} direction mark(s) in text without right-to-left letters`, bidi[0]?.offset));
  }
  if (scan.confusableWords > 0) {
    const words = recs(C.TEXT_CONFUSABLE, false);
    const sample = words.slice(0, 3).map((w) => `"${wordText(ctx, w.offset, w.length)}"`).join(', ');
    out.push(issue('UnicodeSteg', 'Warning', `${scan.confusableWords} word(s) mix Latin with Cyrillic or Greek look-alike letters: ${sample}`, words[0]?.offset, words[0]?.length));
  }
  if (scan.suspiciousTrailingLines > 0) {
    const r = recs(C.TEXT_TRAILING_WS, false)[0];
    const severity = scan.suspiciousTrailingLines >= THRESHOLDS.trailingLines ? 'Warning' : 'Info';
    out.push(issue('UnicodeSteg', severity, `${scan.suspiciousTrailingLines} of ${scan.lines} lines end in mixed tabs and spaces or long blank runs (whitespace encoding?)`, r?.offset));
  }
  return out;
}

function wordText(ctx: FileContext, offset: number, length: number): string {
  const enc = ctx.cls.encoding ?? 'utf-8';
  const slice = ctx.bytes.subarray(offset, offset + Math.min(length, 64));
  return new TextDecoder(enc).decode(slice).replace(/[\u200b-\u200f\u2060-\u2064\ufeff]/g, '').slice(0, 24);
}
