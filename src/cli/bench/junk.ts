// Files whose name claims a media type that their content does not hold (issue 34, item
// 6): a `photo.jpg` that is a saved web page, an empty file, a truncated JPEG the decoder
// refuses. The bench finds originals by content, never by name (corpus.ts), so without
// this such a file was only counted among the "other files", and a user whose folder
// holds a corrupt photo was not told which one. The name is read here only to say what a
// file claims to be; what it is comes from its bytes.
import { extname } from 'node:path';
import type { MediaKind } from '../../lib/detect.js';

export interface Junk {
  path: string;
  /** The media type the name's extension claims. */
  claimed: MediaKind;
  /** Why it is not one, in a few words: "empty file", "no image inside: the content is text", "decoder refused: ...". */
  reason: string;
}

/** Extensions of the formats the library reads (src/lib/detect.ts), and their usual aliases. */
const CLAIMS: Record<string, MediaKind> = {
  jpg: 'image', jpeg: 'image', jpe: 'image', jfif: 'image', png: 'image', gif: 'image', bmp: 'image', dib: 'image', tif: 'image', tiff: 'image', webp: 'image',
  wav: 'audio', wave: 'audio', mp3: 'audio', flac: 'audio', ogg: 'audio', oga: 'audio', opus: 'audio', m4a: 'audio',
  mp4: 'video', m4v: 'video', mov: 'video', mkv: 'video', webm: 'video', avi: 'video',
};

/** The media type a file's name claims, or null when its extension is not one of a type the library reads. */
export function claimedKind(path: string): MediaKind | null {
  return CLAIMS[extname(path).slice(1).toLowerCase()] ?? null;
}

/** Well-known formats that are not media, by their first bytes. */
const NOT_MEDIA: [string, string][] = [
  ['%PDF-', 'a PDF document'],
  ['PK\x03\x04', 'a ZIP archive'],
  ['\x1f\x8b', 'gzip data'],
];

const starts = (b: Uint8Array, magic: string) => b.length >= magic.length && [...magic].every((c, i) => b[i] === c.charCodeAt(0));

/** UTF-8 (a sequence cut at the end of the head allowed) without control characters other than tab, line feed, form feed and carriage return. */
function isText(head: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return false;
  }
  return !/[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(text);
}

function whatIsInside(head: Uint8Array, size: number): string {
  for (const [magic, what] of NOT_MEDIA) if (starts(head, magic)) return what;
  if (head.every((b) => b === 0)) return `${size} zero bytes`;
  if (isText(head)) {
    const start = new TextDecoder().decode(head.subarray(0, 512)).replace(/^\ufeff/, '').trimStart().toLowerCase();
    return start.startsWith('<!doctype html') || start.startsWith('<html') ? 'an HTML page' : 'text';
  }
  if (size < 12) return `only ${size} bytes`; // less than any format's signature (detect.ts)
  const first = [...head.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return `unrecognised bytes (${first} ...)`;
}

/** Why a file of `size` bytes whose name claims `claimed` and whose first bytes are `head` holds no media the library reads. */
export function notMediaReason(claimed: MediaKind, head: Uint8Array, size: number): string {
  if (size === 0) return 'empty file';
  return `no ${claimed} inside: the content is ${whatIsInside(head, size)}`;
}

/** The reason of a file the decoder refused. */
export const decoderRefused = (message: string): string => `decoder refused: ${message}`;
