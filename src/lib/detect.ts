// File type detection from content only (magic bytes), never from a name or a
// Content-Type header. Only the first bytes are read, so a caller may pass a
// prefix of the file (4 KiB is enough for every format here).

export type MediaKind = 'image' | 'audio' | 'video';
export type MediaFormat =
  | 'png' | 'jpeg' | 'bmp' | 'tiff' | 'gif' | 'webp'
  | 'mp3' | 'wav' | 'flac' | 'ogg-vorbis' | 'ogg-opus'
  | 'mp4' | 'mkv' | 'webm' | 'avi';

export interface DetectedType {
  kind: MediaKind;
  format: MediaFormat;
}

const KIND: Record<MediaFormat, MediaKind> = {
  png: 'image', jpeg: 'image', bmp: 'image', tiff: 'image', gif: 'image', webp: 'image',
  mp3: 'audio', wav: 'audio', flac: 'audio', 'ogg-vorbis': 'audio', 'ogg-opus': 'audio',
  mp4: 'video', mkv: 'video', webm: 'video', avi: 'video',
};

function ascii(b: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > b.length) return false;
  for (let i = 0; i < text.length; i++) if (b[offset + i] !== text.charCodeAt(i)) return false;
  return true;
}

function u32le(b: Uint8Array, o: number): number {
  return (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
}

function indexOfAscii(b: Uint8Array, text: string, from: number, to: number): number {
  const end = Math.min(to, b.length) - text.length;
  for (let i = from; i <= end; i++) if (ascii(b, i, text)) return i;
  return -1;
}

function isBmp(b: Uint8Array): boolean {
  if (!ascii(b, 0, 'BM') || b.length < 26) return false;
  const dib = u32le(b, 14);
  const dataOffset = u32le(b, 10);
  return [12, 16, 40, 52, 56, 64, 108, 124].includes(dib) && dataOffset >= 14 + dib;
}

/** An MPEG audio layer III frame header at `o` (MPEG 1, 2 or 2.5). */
function isMp3FrameHeader(b: Uint8Array, o: number): boolean {
  if (o + 4 > b.length || b[o] !== 0xff || (b[o + 1] & 0xe0) !== 0xe0) return false;
  const version = (b[o + 1] >> 3) & 3; // 1 is reserved
  const layer = (b[o + 1] >> 1) & 3; // 1 = layer III
  const bitrate = b[o + 2] >> 4;
  const rate = (b[o + 2] >> 2) & 3;
  return version !== 1 && layer === 1 && bitrate !== 0 && bitrate !== 15 && rate !== 3;
}

function detectIsoBmff(b: Uint8Array): MediaFormat | null {
  const box = String.fromCharCode(...b.subarray(4, 8));
  if (box === 'ftyp') return 'mp4'; // MP4, MOV (qt), 3GP, M4V
  if (['moov', 'mdat', 'wide', 'free', 'skip', 'pnot'].includes(box) && u32le(b, 0) !== 0) return 'mp4';
  return null;
}

function detectMatroska(b: Uint8Array): MediaFormat | null {
  if (!(b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3)) return null;
  // DocType element (0x4282) inside the EBML header names the flavour.
  const at = indexOfAscii(b, 'webm', 4, 64);
  return at >= 0 ? 'webm' : 'mkv';
}

function detectOgg(b: Uint8Array): MediaFormat | null {
  if (!ascii(b, 0, 'OggS') || b.length < 28) return null;
  const segments = b[26];
  const start = 27 + segments;
  if (ascii(b, start, '\x01vorbis')) return 'ogg-vorbis';
  if (ascii(b, start, 'OpusHead')) return 'ogg-opus';
  return null;
}

/** The media type of `bytes` from its content, or null when it is not a supported format. */
export function detectType(bytes: Uint8Array): DetectedType | null {
  const format = detectFormat(bytes);
  return format === null ? null : { kind: KIND[format], format };
}

function detectFormat(b: Uint8Array): MediaFormat | null {
  if (b.length < 12) return null;
  if (b[0] === 0x89 && ascii(b, 1, 'PNG\r\n\x1a\n')) return 'png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'gif';
  if (ascii(b, 0, 'II*\0') || ascii(b, 0, 'MM\0*')) return 'tiff';
  if (isBmp(b)) return 'bmp';
  if (ascii(b, 0, 'RIFF')) {
    if (ascii(b, 8, 'WEBP')) return 'webp';
    if (ascii(b, 8, 'WAVE')) return 'wav';
    if (ascii(b, 8, 'AVI ')) return 'avi';
    return null;
  }
  if (ascii(b, 0, 'fLaC')) return 'flac';
  const ogg = detectOgg(b);
  if (ogg) return ogg;
  if (ascii(b, 0, 'ID3') && b[3] <= 4) return 'mp3';
  if (isMp3FrameHeader(b, 0)) return 'mp3';
  const mkv = detectMatroska(b);
  if (mkv) return mkv;
  return detectIsoBmff(b);
}
