// The ISCC of a file as the ISCC SDK (iscc-sdk 0.9.5, code_iscc) makes it, without the
// Meta-Code: a Content-Code for the kinds it knows, the Data-Code and Instance-Code of
// its bytes (one pass), and the ISCC-CODE of those. Per kind:
//   image  decoded by src/media/image.ts (EXIF orientation applied, ICC profiles left
//          unapplied as Pillow leaves them), then the SDK's normalisation as Pillow
//          computes it (src/lib/iscc.ts isccImagePixels; docs/iscc.md says how close);
//   audio  Chromaprint words of the whole file (the SDK runs fpcalc -length 0: no 120 s
//          cut), from our kernel over ffmpeg's 11025 Hz mono;
//   video  MPEG-7 frame signatures from ffmpeg's signature filter at 5 frames a second,
//          binary output parsed as the SDK's mp7.py reads it;
//   text   a plain UTF-8 text file, cleaned (text_clean) and collapsed as the reference.
// A file of another type gets the ISCC-SUM of its Data- and Instance-Code (the SDK's
// fallback mode). Decoding failures reject with FingerprintError, as fingerprintFile's.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { detectType, type MediaFormat } from '../lib/detect.js';
import { ChromaprintStream } from '../lib/chromaprint.js';
import {
  audioCode, createDataHasher, createInstanceHasher, isccCode, isccImageCodeFromPixels, textClean, textCode,
  videoCode, decodeIscc, encodeUnit, IsccError, MT, MP7_SIGNATURE_SIZE,
} from '../lib/iscc.js';
import '../lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import { deadlineOrDefault } from './deadline.js';
import { decodeFailure, readFailure } from './errors.js';
import { runFfmpeg } from './ffmpeg.js';
import { streamWithFfmpeg } from './ffmpeg-audio.js';
import { checkAudioStreams } from './audio-params.js';
import { decodeImagePixels } from './image.js';
import type { AudioFormat } from './audio-format.js';

export type IsccContentKind = 'image' | 'audio' | 'video' | 'text';

export interface IsccFileOptions {
  /** Bits of each unit (64 by default; 64..256, a multiple of 32; the Video-Code's of 64). */
  bits?: number;
  /** 128-bit Data and Instance bodies when there is no Content-Code (SubType WIDE). */
  wide?: boolean;
  /** When decoding stops (epoch ms; default FINGERPRINT_TIMEOUT_MS from the start, deadline.ts). */
  deadline?: number;
  /** ffmpeg's memory limit in MB (default DECODER_DEFAULT_MEMORY_MB, memory-limit.ts; null: none). */
  memoryLimitMb?: number | null;
  /** Seconds of audio fingerprinted at most (default ISCC_AUDIO_MAX_SECONDS). */
  audioMaxSeconds?: number;
  /**
   * An image's Image-Code when the caller made it already, from its own decode of the
   * same bytes (src/media/examine.ts: the decoder sandbox's one decode); not decoded again then.
   */
  imageCode?: string;
}

/** What isccOfFile found. */
export interface IsccFileResult {
  /** The ISCC-CODE: the Content-Code's kind's, or ISCC-SUM (Data and Instance only). */
  iscc: string;
  /** Its units, each as its own canonical string at `bits`. */
  units: string[];
  /** The Content-Code, or null for a type without one. */
  content: { kind: IsccContentKind; code: string; characters?: number; frames?: number; words?: number } | null;
  data: string;
  instance: string;
  /** BLAKE3 multihash of the bytes (hex, 1e20 + digest). */
  datahash: string;
  filesize: number;
  /** The detected format, 'text', or null. */
  format: MediaFormat | 'text' | null;
}

/** Audio fingerprinted at most, in seconds: the SDK takes the whole file; a bound keeps hostile input finite. */
export const ISCC_AUDIO_MAX_SECONDS = 3 * 3600;
/** Largest text file given a Text-Code (it is normalised as one string). */
export const ISCC_MAX_TEXT_BYTES = 64 << 20;
/** The SDK's video_fps: frames per second given to the signature filter. */
export const ISCC_VIDEO_FPS = 5;
/** Largest signature file read (about 90 bytes a frame: over 80 hours at 5 fps). */
const MAX_SIGNATURE_BYTES = 128 << 20;

const READ_CHUNK = 1 << 20;
const VIDEO_DEMUXER: Partial<Record<MediaFormat, string>> = { mp4: 'mov', mkv: 'matroska', webm: 'matroska', avi: 'avi' };
const AUDIO_FORMATS: ReadonlySet<string> = new Set(['mp3', 'wav', 'flac', 'ogg-vorbis', 'ogg-opus']);

/**
 * The ISCC of a file (a path or its bytes). Rejects with FingerprintError (not_found,
 * unreadable, decode_failed, timeout) and with IsccError for bad options.
 */
export async function isccOfFile(input: string | Uint8Array, options: IsccFileOptions = {}): Promise<IsccFileResult> {
  const bits = options.bits ?? 64;
  if (!Number.isInteger(bits) || bits < 64 || bits > 256 || bits % 64 !== 0) throw new IsccError(`isccOfFile: bits must be 64, 128, 192 or 256, not ${bits}`);
  const deadline = deadlineOrDefault(options.deadline);
  const opts = { ...options, deadline };
  const head = typeof input === 'string' ? await readHead(input) : input.subarray(0, 64);
  const type = detectType(head);
  const wholeBytes = typeof input !== 'string' || type === null || type.kind === 'image';
  const bytes = typeof input !== 'string' ? input : wholeBytes ? await readWhole(input) : null;

  const sum = bytes !== null ? sumOfBytes(bytes) : sumOfPath(input as string);
  let content: IsccFileResult['content'] = null;
  let format: IsccFileResult['format'] = type?.format ?? null;
  try {
    if (type?.kind === 'image') content = options.imageCode !== undefined ? { kind: 'image', code: options.imageCode } : await imageContent(bytes!, type.format, bits);
    else if (type?.kind === 'audio') content = await audioContent(input, type.format as AudioFormat, bits, opts);
    else if (type?.kind === 'video') content = await videoContent(input, type.format, bits, opts);
    else if (type === null && bytes !== null) {
      const text = textOf(bytes);
      if (text !== null) {
        const code = textCode(textClean(text), bits);
        content = { kind: 'text', code: code.iscc, characters: code.characters };
        format = 'text';
      }
    }
  } catch (e) {
    await sum.catch(() => {}); // the read of the bytes ends either way
    throw decodeFailure(type?.format ?? 'text', e);
  }
  const { data: data256, instance: instance256 } = await sum;
  // wide: 128-bit Data and Instance bodies (the SDK's ISCC-SUM in wide mode)
  const wide = options.wide === true && content === null;
  const unitBits = wide ? Math.max(bits, 128) : bits;
  const data = encodeUnit(MT.DATA, 0, 0, unitBits, decodeIscc(data256).body);
  const instance = encodeUnit(MT.INSTANCE, 0, 0, unitBits, decodeIscc(instance256.iscc).body);
  const units = [...(content ? [content.code] : []), data, instance];
  const composite = isccCode(units, { wide });
  return { iscc: composite.iscc, units, content, data, instance, datahash: instance256.datahash, filesize: instance256.filesize, format };
}

async function readHead(path: string): Promise<Uint8Array> {
  try {
    const file = await open(path, 'r');
    try {
      const head = new Uint8Array(64);
      const { bytesRead } = await file.read(head, 0, 64, 0);
      return head.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (e) {
    throw readFailure(path, e);
  }
}

async function readWhole(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    throw readFailure(path, e);
  }
}

interface Sum {
  data: string;
  instance: ReturnType<ReturnType<typeof createInstanceHasher>['code']>;
}

/** Data- and Instance-Code (256 bits) of bytes. */
async function sumOfBytes(bytes: Uint8Array): Promise<Sum> {
  const d = createDataHasher();
  const i = createInstanceHasher();
  for (let at = 0; at < bytes.length; at += READ_CHUNK) {
    const piece = bytes.subarray(at, at + READ_CHUNK);
    d.update(piece);
    i.update(piece);
  }
  return { data: d.code(256).iscc, instance: i.code(256) };
}

/** Data- and Instance-Code (256 bits) of a file read in pieces (any size, memory flat). */
async function sumOfPath(path: string): Promise<Sum> {
  const d = createDataHasher();
  const i = createInstanceHasher();
  try {
    for await (const piece of createReadStream(path, { highWaterMark: READ_CHUNK })) {
      d.update(piece as Buffer);
      i.update(piece as Buffer);
    }
  } catch (e) {
    throw readFailure(path, e);
  }
  return { data: d.code(256).iscc, instance: i.code(256) };
}

// ---- image ------------------------------------------------------------------------

async function imageContent(bytes: Uint8Array, format: MediaFormat, bits: number): Promise<IsccFileResult['content']> {
  const px = await decodeImagePixels(bytes, format, { ignoreIcc: true });
  return { kind: 'image', code: isccImageCodeFromPixels(px.data, px.width, px.height, px.channels, bits).iscc };
}

// ---- audio ------------------------------------------------------------------------

async function audioContent(input: string | Uint8Array, format: AudioFormat, bits: number, options: IsccFileOptions): Promise<IsccFileResult['content']> {
  if (!AUDIO_FORMATS.has(format)) throw new Error(`not an audio format: ${format}`);
  await checkAudioStreams(input, format);
  const stream = new ChromaprintStream();
  const maxSeconds = options.audioMaxSeconds ?? ISCC_AUDIO_MAX_SECONDS;
  const count = await streamWithFfmpeg(input, format, { maxSeconds, deadline: options.deadline, memoryLimitMb: options.memoryLimitMb }, (s) => stream.push(s));
  if (count === 0) throw new Error(`ffmpeg decoded no ${format} samples`);
  const words = stream.finish();
  return { kind: 'audio', code: audioCode(words, bits).iscc, words: words.length };
}

// ---- video ------------------------------------------------------------------------

/** A temp path safe inside an ffmpeg filter argument (no ':', ',', quotes or escapes). */
function filterSafe(path: string): boolean {
  return /^[A-Za-z0-9/_.-]+$/.test(path);
}

async function videoContent(input: string | Uint8Array, format: MediaFormat, bits: number, options: IsccFileOptions): Promise<IsccFileResult['content']> {
  const demuxer = VIDEO_DEMUXER[format];
  if (demuxer === undefined) throw new Error(`not a video format: ${format}`);
  const base = filterSafe(tmpdir()) ? tmpdir() : '/tmp';
  const dir = await mkdtemp(join(base, 'provenant-mp7-'));
  const sigPath = resolve(dir, 'signature.bin');
  try {
    await runFfmpeg({
      input,
      demuxer,
      outputArgs: ['-map', '0:v:0', '-an', '-sn', '-dn', '-vf', `fps=fps=${ISCC_VIDEO_FPS},signature=format=binary:filename=${sigPath}`, '-f', 'null', '-'],
      deadline: options.deadline,
      memoryLimitMb: options.memoryLimitMb,
      maxFramePixels: 40_000_000,
      maxOutputBytes: 1 << 20,
    });
    const size = (await stat(sigPath)).size;
    if (size > MAX_SIGNATURE_BYTES) throw new Error(`the MPEG-7 signature is ${size} bytes, over ${MAX_SIGNATURE_BYTES}`);
    const frames = parseMp7Signature(new Uint8Array(await readFile(sigPath)));
    if (frames.count === 0) throw new Error('ffmpeg gave no frame signature');
    return { kind: 'video', code: videoCode(frames.values, bits).iscc, frames: frames.count };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The frame signatures of ffmpeg's binary MPEG-7 video signature (vf_signature.c's
 * binary export, read as iscc-sdk mp7.py reads it): 380 values 0-2 per frame, five per
 * byte (base 3, most significant first), in one Uint8Array of frames x 380.
 */
export function parseMp7Signature(bytes: Uint8Array): { count: number; values: Uint8Array; confidences: Uint8Array } {
  let pos = 0; // in bits
  const total = bytes.length * 8;
  const take = (n: number): number => {
    if (pos + n > total) throw new Error('the MPEG-7 signature is truncated');
    let v = 0;
    for (let i = 0; i < n; i++, pos++) v = v * 2 + ((bytes[pos >> 3] >> (7 - (pos & 7))) & 1);
    return v;
  };
  const skip = (n: number): void => {
    if (pos + n > total) throw new Error('the MPEG-7 signature is truncated');
    pos += n;
  };
  skip(129);
  const frames = take(32);
  take(16); // media time unit
  skip(1 + 32 + 32);
  const segments = take(32);
  // every frame takes 1 + 32 + 8 + 40 + 76 * 8 bits: a count the bytes cannot hold is refused before allocating
  if (frames * 689 > total || segments * (4 * 32 + 1 + 5 * 243) > total) throw new Error('the MPEG-7 signature declares more than it holds');
  skip(segments * (4 * 32 + 1 + 5 * 243));
  skip(1);
  const values = new Uint8Array(frames * MP7_SIGNATURE_SIZE);
  const confidences = new Uint8Array(frames);
  for (let f = 0; f < frames; f++) {
    skip(1);
    take(32); // media time
    confidences[f] = take(8);
    skip(40);
    let at = f * MP7_SIGNATURE_SIZE;
    for (let b = 0; b < MP7_SIGNATURE_SIZE / 5; b++) {
      let v = take(8);
      if (v >= 243) throw new Error('the MPEG-7 signature has a value byte over 242');
      for (let t = 4; t >= 0; t--) {
        values[at + t] = v % 3;
        v = Math.floor(v / 3);
      }
      at += 5;
    }
  }
  return { count: frames, values, confidences };
}

// ---- text -------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The text of a file that is plain UTF-8 text, or null: valid UTF-8 without NUL and
 * without C0 controls other than tab, newlines, form feed and escape.
 */
function textOf(bytes: Uint8Array): string | null {
  if (bytes.length === 0 || bytes.length > ISCC_MAX_TEXT_BYTES) return null;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) return null;
  }
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}
