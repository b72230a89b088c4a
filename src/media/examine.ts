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
import { isccOfFile, type IsccFileOptions } from './iscc.js';
import type { FeatureSet } from '../lib/features.js';

export interface Examination {
  /** What the content is (src/lib/detect.ts); null: not a type this library fingerprints. */
  kind: MediaKind | null;
  /** The spec's perceptual fingerprint (ImagePHash, AudioChromaprint, VideoPHash); null when there is none. */
  fingerprint: Fingerprint | null;
  /** PDQ for an image, vPDQ for a video (issue 28); null otherwise. */
  pdq_hash: PdqFingerprint | VpdqFingerprint | null;
  /** An image's eight dihedral PDQ hashes (hex, PDQ_DIHEDRAL order: [0] is pdq_hash's), for rotated and mirrored copies. */
  pdq_dihedral?: string[];
  /**
   * The file's ISCC (issue 33, ISO 24138): `code` the ISCC-CODE (64-bit units: the
   * Content-Code where the kind has one, then the Data- and Instance-Code; ISCC-SUM for
   * other files), `content` its Content-Code alone (null when there is none). Null when
   * the file could not be read for it.
   */
  iscc: ExaminedIscc | null;
  /**
   * An image's local features (issue 32) from the same decode, spread over the picture,
   * strongest first: as a query asks with them (QUERY_FEATURES_MAX, and a framed or
   * screen-shown picture's own: extractFeatures' `inner`), or with `recordFeatures` as a
   * record keeps them (RECORD_FEATURES_MAX); null for an image with too few (flat
   * graphics, icons) and other kinds.
   */
  features?: FeatureSet | null;
  /** The file's Content Credentials, when they were read (the pool's examine). */
  content_credentials?: ContentCredentials;
  /**
   * Set when the file is of a supported kind but no fingerprint could be made (the
   * decoders refused it, or their deadline passed): why, as FingerprintError says it.
   * The fingerprints are null then; credentials may still have been read.
   */
  failure?: { code: FingerprintErrorCode; message: string };
}

export interface ExaminedIscc {
  code: string;
  content: string | null;
}

export interface ExamineOptions extends FingerprintOptions {
  /** The Image-Code as the ISCC SDK makes it (a second decode for an image with a colour profile; the vault's choice: ImageHashOptions). */
  isccExact?: boolean;
  /** An image's features as a record keeps them (the vault's choice: ImageHashOptions). */
  recordFeatures?: boolean;
}

/**
 * Every fingerprint of a file path or of a file's bytes: for an image all of them from
 * one decode (in the sandbox when one is given); for a video VideoPHash and the vPDQ of
 * the frames it samples (a second ffmpeg run); for audio its AudioChromaprint. Rejects
 * with a FingerprintError as fingerprintFile does (the pool's task turns that into
 * `failure`).
 */
export async function examineFile(pathOrBuffer: string | Uint8Array, opts: ExamineOptions = {}): Promise<Examination> {
  const path = typeof pathOrBuffer === 'string' ? pathOrBuffer : null;
  const deadline = deadlineOrDefault(opts.deadline);
  const memoryLimitMb = opts.decoderMemoryMb !== undefined ? opts.decoderMemoryMb : opts.sandbox?.memoryLimitMb;
  const iscc = (imageCode?: string) => isccOf(pathOrBuffer, { deadline, memoryLimitMb, imageCode });
  let format = 'media';
  try {
    const type = detectType(path === null ? (pathOrBuffer as Uint8Array) : await readHead(path));
    // ISCC has codes for text, and for any other file its Data- and Instance-Code
    if (type === null) return { kind: null, fingerprint: null, pdq_hash: null, iscc: await iscc() };
    format = type.format;
    if (type.kind === 'audio') {
      const [fingerprint, code] = await Promise.all([fingerprintFile(pathOrBuffer, { ...opts, deadline }), iscc()]);
      return { kind: 'audio', fingerprint, pdq_hash: null, iscc: code };
    }
    if (type.kind === 'video') {
      const [fingerprint, frames, code] = await Promise.all([
        fingerprintFile(pathOrBuffer, { ...opts, deadline }),
        videoPdqFrames(pathOrBuffer, type.format, { deadline, memoryLimitMb }),
        iscc(),
      ]);
      return { kind: 'video', fingerprint, pdq_hash: vpdqFingerprint(frames), iscc: code };
    }
    const bytes = path === null ? (pathOrBuffer as Uint8Array) : new Uint8Array(await readFile(path));
    const image = { ...opts.image, isccExact: opts.isccExact, recordFeatures: opts.recordFeatures };
    const hashes = opts.sandbox !== undefined
      ? await opts.sandbox.imageHashes(bytes, type.format, image, deadline)
      : await decodeImageHashes(bytes, type.format, image);
    const hash_value = Array.from(hashes.imagePHash);
    return {
      kind: 'image',
      fingerprint: { hash_type: 'ImagePHash', hash_value, bands: imageBands(hash_value) },
      pdq_hash: pdqFingerprint(hashes.pdq),
      pdq_dihedral: hashes.pdqDihedral,
      features: hashes.features,
      iscc: await isccOf(bytes, { deadline, imageCode: hashes.isccImage }),
    };
  } catch (e) {
    if (e instanceof FingerprintError) throw e;
    const fromFileSystem = path !== null && typeof (e as NodeJS.ErrnoException).syscall === 'string';
    throw fromFileSystem ? readFailure(path, e) : decodeFailure(format, e);
  }
}

/** The file's ISCC at 64 bits (isccOfFile, given the Image-Code made from the examination's decode). */
async function isccOf(input: string | Uint8Array, options: IsccFileOptions): Promise<ExaminedIscc> {
  const found = await isccOfFile(input, options);
  return { code: found.iscc, content: found.content?.code ?? null };
}

/** A file's perceptual fingerprint and its PDQ (issue 28): what a record carries as perceptual_hash and pdq_hash. */
export type PerceptualHashes = Pick<Examination, 'fingerprint' | 'pdq_hash' | 'pdq_dihedral'>;

/** examineFile's fingerprint, PDQ and dihedral PDQ hashes alone. Rejects as examineFile does. */
export async function perceptualHashes(pathOrBuffer: string | Uint8Array, opts: FingerprintOptions = {}): Promise<PerceptualHashes> {
  const { fingerprint, pdq_hash, pdq_dihedral } = await examineFile(pathOrBuffer, opts);
  return pdq_dihedral === undefined ? { fingerprint, pdq_hash } : { fingerprint, pdq_hash, pdq_dihedral };
}
