// Raw file uploads for verify-file and fingerprint (spec 4.2, 4.11, 8; decisions.md
// 10): at most 50 MB, enforced while streaming (413 before the limit is passed), a
// bounded number of uploads in flight (503 busy beyond it, so a flood of large
// uploads cannot exhaust memory), and decoding only in the worker pool (the event
// loop never decodes or hashes a file).
import type { Context } from 'koa';
import { FingerprintError, PoolError, type Examination, type Fingerprint, type FingerprintPool } from 'provenant';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { ApiError } from '../errors.js';
import { discardBody, readRawBody } from '../body.js';

/** The parts reading and fingerprinting an upload takes (ServerDeps has them; named here so deps.ts, which lists UploadGate, is not imported back). */
type UploadDeps = { config: Config; log: Logger; pool: FingerprintPool };

/** Spec 8: 50 MB per upload (MiB: 52,428,800 bytes). */
export const UPLOAD_LIMIT_BYTES = 50 * 1024 * 1024;

/** A counter of uploads in flight, from the first body byte until the fingerprint is back. */
export class UploadGate {
  private active = 0;
  constructor(readonly max: number) {}

  get inFlight(): number {
    return this.active;
  }

  /**
   * Takes a place and returns its `leave`; throws 503 busy when none is free (the body
   * is discarded unread; see discardBody). The place is given back once, at the first
   * of `leave()` or the response closing: sent, or the connection gone (abort, error,
   * timeout) while the request still waits, e.g. on the pool.
   */
  enter(ctx: Context): () => void {
    if (this.active >= this.max) {
      discardBody(ctx);
      throw new ApiError('busy', 'Too many uploads are being fingerprinted; try again shortly.', {}, { 'Retry-After': '1' });
    }
    this.active++;
    const res = ctx.res;
    let held = true;
    const leave = () => {
      if (!held) return;
      held = false;
      this.active--;
      res.off('close', leave);
    };
    res.once('close', leave);
    return leave;
  }
}

/**
 * Reads the raw body, up to 50 MB: 413 payload_too_large before reading when
 * Content-Length says more, and as soon as the bytes received pass the limit while
 * streaming (chunked bodies); nothing beyond the limit is kept. With a Content-Length
 * the bytes go straight into one buffer of that size (the gate bounds how many are
 * read at once). A body that falls behind PROVENANT_UPLOAD_MIN_RATE after
 * PROVENANT_UPLOAD_GRACE_MS is 408 request_timeout, so a slow client cannot hold a
 * place at the gate.
 */
export function readUpload(deps: Pick<UploadDeps, 'config'>, ctx: Context): Promise<Buffer> {
  const pace = { graceMs: deps.config.uploadGraceMs, minRate: deps.config.uploadMinRate };
  return readRawBody(ctx, UPLOAD_LIMIT_BYTES, { intoDeclared: true, pace });
}

/**
 * The fingerprint of uploaded bytes, computed in the pool: null when the type is not
 * supported or the file cannot be decoded (spec 4.2, 4.11: a decoder that refuses the
 * bytes, crashes or runs out of memory counts as unreadable). A full queue is 503 busy;
 * the deadline (spec 8: 60 s) is 504 fingerprint_timeout.
 */
export async function fingerprintUpload(deps: Pick<UploadDeps, 'config' | 'log' | 'pool'>, bytes: Uint8Array): Promise<Fingerprint | null> {
  try {
    return await deps.pool.fingerprint(bytes);
  } catch (err) {
    return poolFailure(deps, err);
  }
}

/**
 * What verify-file needs of an upload: its Examination (every fingerprint its kind has)
 * with its Content Credentials (issue 21; unless `credentials` is false, as for the Soft
 * Binding Resolution API's byContent), from one pool task. A worker that failed
 * examined nothing: no fingerprints, nothing claimed about the credentials.
 */
export async function examineUpload(deps: Pick<UploadDeps, 'config' | 'log' | 'pool'>, bytes: Uint8Array, options: { credentials?: boolean } = {}): Promise<Examination> {
  const credentials = options.credentials !== false;
  try {
    // a decoder's refusal is in `failure` (no fingerprints); its deadline throws, as fingerprint()'s
    return await deps.pool.examine(bytes, { credentials });
  } catch (err) {
    poolFailure(deps, err);
    const failed: Examination = { kind: null, fingerprint: null, pdq_hash: null, iscc: null };
    return credentials ? { ...failed, content_credentials: { present: null, message: 'not read: the worker failed' } } : failed;
  }
}

/** A pool failure as an ApiError (busy, timeout), or null for a file that could not be fingerprinted. */
function poolFailure(deps: Pick<UploadDeps, 'config' | 'log'>, err: unknown): null {
  if (err instanceof PoolError && (err.code === 'busy' || err.code === 'closed')) throw new ApiError('busy', undefined, {}, { 'Retry-After': '1' });
  if ((err instanceof PoolError || err instanceof FingerprintError) && err.code === 'timeout') {
    throw new ApiError('fingerprint_timeout', `Fingerprinting did not finish within ${deps.config.fingerprintTimeoutMs / 1000} seconds.`);
  }
  if (err instanceof FingerprintError) return null;
  if (err instanceof PoolError) {
    deps.log.warn('fingerprint task failed', { error: err.message });
    return null;
  }
  throw err;
}
