// The library's file-level API: any supported file (by content, src/lib/detect.ts) to
// its perceptual fingerprint, and the similarity of two fingerprints.
import { open, readFile } from 'node:fs/promises';
import { detectType } from '../lib/detect.js';
import { imageBands } from '../lib/bands.js';
import { fingerprintSimilarity } from '../lib/hamming.js';
import type { Fingerprint } from '../lib/types.js';
import { audioFingerprint, type AudioFormat } from './audio.js';
import { deadlineOrDefault } from './deadline.js';
import { decodeFailure, FingerprintError, readFailure } from './errors.js';
import { decodeImageForHash, type ImageDecodeOptions } from './image.js';
import type { DecoderSandbox } from './sandbox.js';
import { videoFingerprint } from './video.js';

export interface FingerprintOptions {
  /** When decoding gives up, epoch ms (default: FINGERPRINT_TIMEOUT_MS from now; deadline.ts): the sandbox's decode and ffmpeg stop by it. */
  deadline?: number;
  /** Image decoding options (pixel cap, shrink-on-load). */
  image?: ImageDecodeOptions;
  /**
   * Decode images (BMP included) in this separate process (the pool's workers pass
   * theirs): a decoder that crashes in native code or runs out of memory then fails
   * this file (decode_failed) instead of the process.
   */
  sandbox?: DecoderSandbox;
  /**
   * ffmpeg's memory limit in MB (memory-limit.ts); default the sandbox's when one is
   * given (PROVENANT_DECODER_MEMORY_MB on a server), else DECODER_DEFAULT_MEMORY_MB; null: none.
   */
  decoderMemoryMb?: number | null;
}

const DETECT_BYTES = 4096;

/** The first bytes of a file, enough for detectType. */
export async function readHead(path: string): Promise<Uint8Array> {
  const file = await open(path, 'r');
  try {
    const head = new Uint8Array(DETECT_BYTES);
    const { bytesRead } = await file.read(head, 0, DETECT_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The perceptual fingerprint (ImagePHash, AudioChromaprint or VideoPHash) of a file
 * path or of a file's bytes; null when it is not a supported media type (audio too
 * short for one Chromaprint word, about 2.7 s, counts as that). Rejects with a
 * FingerprintError (errors.ts) when the path is missing or unreadable, the decoder
 * fails, or decoding passes its deadline.
 */
export async function fingerprintFile(pathOrBuffer: string | Uint8Array, opts: FingerprintOptions = {}): Promise<Fingerprint | null> {
  const path = typeof pathOrBuffer === 'string' ? pathOrBuffer : null;
  const deadline = deadlineOrDefault(opts.deadline);
  let format = 'media';
  const memoryLimitMb = opts.decoderMemoryMb !== undefined ? opts.decoderMemoryMb : opts.sandbox?.memoryLimitMb;
  try {
    const type = detectType(path === null ? (pathOrBuffer as Uint8Array) : await readHead(path));
    if (type === null) return null;
    format = type.format;
    // ffmpeg reads a path itself (video bytes go to a temp file, audio bytes through its
    // stdin), and a WAV file, read in process, only as far as its first 120 s.
    if (type.kind === 'video') return await videoFingerprint(pathOrBuffer, type.format, { deadline, memoryLimitMb });
    if (type.kind === 'audio') return await audioFingerprint(pathOrBuffer, type.format as AudioFormat, { deadline, memoryLimitMb });
    const bytes = path === null ? (pathOrBuffer as Uint8Array) : new Uint8Array(await readFile(path));
    const hash = opts.sandbox !== undefined
      ? await opts.sandbox.imageHash(bytes, type.format, opts.image, deadline)
      : await decodeImageForHash(bytes, type.format, opts.image);
    const hash_value = Array.from(hash);
    return { hash_type: 'ImagePHash', hash_value, bands: imageBands(hash_value) };
  } catch (e) {
    // a system call's error is about reading the path (with bytes there is none to read)
    const fromFileSystem = path !== null && typeof (e as NodeJS.ErrnoException).syscall === 'string';
    throw fromFileSystem ? readFailure(path, e) : decodeFailure(format, e);
  }
}

/**
 * 0-100 similarity of two fingerprints (decisions.md 3): Hamming similarity of the 8
 * bytes for images; for audio the best alignment of 4-byte words within +-120 words
 * and at least 32 overlapping; for video of 8-byte frames within +-30 frames and at
 * least 4 overlapping. Null when the types differ or a hash is empty or malformed.
 */
export function similarity(a: Fingerprint, b: Fingerprint): number | null {
  try {
    return fingerprintSimilarity(a, b);
  } catch {
    return null;
  }
}
