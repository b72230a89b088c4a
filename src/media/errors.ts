// Why fingerprintFile gave no fingerprint (issue 15). null means one thing only: the
// file is not a supported media type. Everything else is thrown as a FingerprintError
// with a code, so that a typo, a broken install or a hostile file is seen at once:
//   not_found      the path does not exist
//   unreadable     the path exists but cannot be read (a directory, no permission, I/O)
//   decode_failed  a supported type the decoder refused or crashed on (truncated,
//                  corrupt, over a size cap, or no decoder: ffmpeg missing)
//   timeout        decoding ran past its deadline and was stopped
// The code is a plain string so that it survives a thread or process boundary, where
// an error loses its class (the pool carries it, src/pool/index.ts).
import { FfmpegError } from './ffmpeg.js';
import { SandboxError } from './sandbox.js';
import type { Fingerprint } from '../lib/types.js';

export const FINGERPRINT_ERROR_CODES = ['not_found', 'unreadable', 'decode_failed', 'timeout'] as const;
export type FingerprintErrorCode = (typeof FINGERPRINT_ERROR_CODES)[number];

export class FingerprintError extends Error {
  override name = 'FingerprintError';
  constructor(readonly code: FingerprintErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A failure to read `path` as a FingerprintError: not_found for a missing path, else unreadable. */
export function readFailure(path: string, err: unknown): FingerprintError {
  if (err instanceof FingerprintError) return err;
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  if (errno === 'ENOENT' || errno === 'ENOTDIR') return new FingerprintError('not_found', `no such file: ${path}`, { cause: err });
  const why = errno === 'EISDIR' ? 'it is a directory' : err instanceof Error ? err.message : String(err);
  return new FingerprintError('unreadable', `cannot read ${path}: ${why}`, { cause: err });
}

/** A decoder's failure on a file of `format` as a FingerprintError: timeout when a deadline stopped it, else decode_failed. */
export function decodeFailure(format: string, err: unknown): FingerprintError {
  if (err instanceof FingerprintError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if ((err instanceof SandboxError || err instanceof FfmpegError) && err.code === 'timeout') {
    return new FingerprintError('timeout', `decoding this ${format} file ran past its deadline: ${message}`, { cause: err });
  }
  return new FingerprintError('decode_failed', `cannot decode this ${format} file: ${message}`, { cause: err });
}

/**
 * A fingerprint or a FingerprintError as data, for crossing a thread boundary: Piscina
 * hands a task's error on as a plain Error, its class and code lost (workers/fingerprint.ts
 * answers this, src/pool/index.ts reads it).
 */
export type FingerprintOutcome = { fingerprint: Fingerprint | null } | { failure: FingerprintErrorCode; message: string };
