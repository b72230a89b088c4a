// What examining a file finds, as one value (STYLE.md "Where the next fingerprints go"):
// every fingerprint a kind of file has, from one decode where the kind allows. The
// pool's task makes it once per upload (workers/fingerprint.ts, adding the file's
// Content Credentials read beside it), the vault once per file it signs, and matching
// takes it whole, so a new kind of fingerprint is a field here and a source in the
// matcher, not another argument threaded through every layer.
import { readFile } from 'node:fs/promises';
import { detectType, type MediaKind } from '../lib/detect.js';
import { imageBands } from '../lib/bands.js';
import type { Fingerprint } from '../lib/types.js';
import type { ContentCredentials } from '../lib/content-credentials.js';
import { pdqFingerprint, vpdqFingerprint, type PdqFingerprint, type VpdqFingerprint } from '../lib/pdq.js';
import { deadlineOrDefault } from './deadline.js';
import { decodeFailure, FingerprintError, readFailure, type FingerprintErrorCode } from './errors.js';
import { fingerprintFile, readHead, type FingerprintOptions } from './fingerprint.js';
import { decodeImageHashes } from './image.js';
import { videoPdqFrames } from './video.js';

export interface Examination {
  /** What the content is (src/lib/detect.ts); null: not a type this library fingerprints. */
  kind: MediaKind | null;
  /** The spec's perceptual fingerprint (ImagePHash, AudioChromaprint, VideoPHash); null when there is none. */
  fingerprint: Fingerprint | null;
  /** PDQ for an image, vPDQ for a video (issue 28); null otherwise. */
  pdq_hash: PdqFingerprint | VpdqFingerprint | null;
  /** An image's eight dihedral PDQ hashes (hex, PDQ_DIHEDRAL order: [0] is pdq_hash's), for rotated and mirrored copies. */
  pdq_dihedral?: string[];
  /** The file's Content Credentials, when they were read (the pool's examine). */
  content_credentials?: ContentCredentials;
  /**
   * Set when the file is of a supported kind but no fingerprint could be made (the
   * decoders refused it, or their deadline passed): why, as FingerprintError says it.
   * The fingerprints are null then; credentials may still have been read.
   */
  failure?: { code: FingerprintErrorCode; message: string };
}

/** An Examination of nothing this library fingerprints. */
export const NOTHING_FOUND: Readonly<Examination> = Object.freeze({ kind: null, fingerprint: null, pdq_hash: null });

/**
 * Every fingerprint of a file path or of a file's bytes: for an image all of them from
 * one decode (in the sandbox when one is given); for a video VideoPHash and the vPDQ of
 * the frames it samples (a second ffmpeg run); for audio its AudioChromaprint. Rejects
 * with a FingerprintError as fingerprintFile does (the pool's task turns that into
 * `failure`).
 */
export async function examineFile(pathOrBuffer: string | Uint8Array, opts: FingerprintOptions = {}): Promise<Examination> {
  const path = typeof pathOrBuffer === 'string' ? pathOrBuffer : null;
  const deadline = deadlineOrDefault(opts.deadline);
  let format = 'media';
  try {
    const type = detectType(path === null ? (pathOrBuffer as Uint8Array) : await readHead(path));
    if (type === null) return { ...NOTHING_FOUND };
    format = type.format;
    if (type.kind === 'audio') return { kind: 'audio', fingerprint: await fingerprintFile(pathOrBuffer, { ...opts, deadline }), pdq_hash: null };
    if (type.kind === 'video') {
      const fingerprint = await fingerprintFile(pathOrBuffer, { ...opts, deadline });
      const memoryLimitMb = opts.decoderMemoryMb !== undefined ? opts.decoderMemoryMb : opts.sandbox?.memoryLimitMb;
      return { kind: 'video', fingerprint, pdq_hash: vpdqFingerprint(await videoPdqFrames(pathOrBuffer, type.format, { deadline, memoryLimitMb })) };
    }
    const bytes = path === null ? (pathOrBuffer as Uint8Array) : new Uint8Array(await readFile(path));
    const hashes = opts.sandbox !== undefined
      ? await opts.sandbox.imageHashes(bytes, type.format, opts.image, deadline)
      : await decodeImageHashes(bytes, type.format, opts.image);
    const hash_value = Array.from(hashes.imagePHash);
    return {
      kind: 'image',
      fingerprint: { hash_type: 'ImagePHash', hash_value, bands: imageBands(hash_value) },
      pdq_hash: pdqFingerprint(hashes.pdq),
      pdq_dihedral: hashes.pdqDihedral,
    };
  } catch (e) {
    if (e instanceof FingerprintError) throw e;
    const fromFileSystem = path !== null && typeof (e as NodeJS.ErrnoException).syscall === 'string';
    throw fromFileSystem ? readFailure(path, e) : decodeFailure(format, e);
  }
}

/** A file's perceptual fingerprint and its PDQ (issue 28): what a record carries as perceptual_hash and pdq_hash. */
export type PerceptualHashes = Pick<Examination, 'fingerprint' | 'pdq_hash' | 'pdq_dihedral'>;

/** examineFile's fingerprint, PDQ and dihedral PDQ hashes alone. Rejects as examineFile does. */
export async function perceptualHashes(pathOrBuffer: string | Uint8Array, opts: FingerprintOptions = {}): Promise<PerceptualHashes> {
  const { fingerprint, pdq_hash, pdq_dihedral } = await examineFile(pathOrBuffer, opts);
  return pdq_dihedral === undefined ? { fingerprint, pdq_hash } : { fingerprint, pdq_hash, pdq_dihedral };
}
