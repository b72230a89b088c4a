// Raw file uploads for verify-file and fingerprint (spec 4.2, 4.11, 8; decisions.md
// 10): at most 50 MB, enforced while streaming (413 before the limit is passed), a
// bounded number of uploads in flight (503 busy beyond it, so a flood of large
// uploads cannot exhaust memory), and decoding only in the worker pool (the event
// loop never decodes or hashes a file).
import type { Context } from 'koa';
import { createFingerprintPool, PoolError, type FingerprintPool } from '../../pool/index.js';
import type { Fingerprint } from '../../lib/types.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';

/** Spec 8: 50 MB per upload (MiB: 52,428,800 bytes). */
export const UPLOAD_LIMIT_BYTES = 50 * 1024 * 1024;
/** Spec 8: the fingerprinter's deadline. */
export const FINGERPRINT_TIMEOUT_MS = 60_000;

/** A counter of uploads in flight, from the first body byte until the fingerprint is back. */
export class UploadGate {
  private active = 0;
  constructor(readonly max: number) {}

  get inFlight(): number {
    return this.active;
  }

  /** Takes a place, or throws 503 busy (the body is discarded unread; see lingerThenClose). */
  enter(ctx: Context): void {
    if (this.active >= this.max) {
      lingerThenClose(ctx);
      throw new ApiError('busy', 'Too many uploads are being fingerprinted; try again shortly.', {}, { 'Retry-After': '1' });
    }
    this.active++;
  }

  leave(): void {
    this.active--;
  }
}

const pools = new WeakMap<ServerDeps, FingerprintPool>();

function isPool(p: unknown): p is FingerprintPool {
  return typeof p === 'object' && p !== null && typeof (p as FingerprintPool).fingerprint === 'function';
}

/**
 * The server's fingerprint pool: `deps.pool` when the caller provided one, else one
 * made on first use (PROVENANT_WORKERS threads, 60 s deadline) and stored on
 * `deps.pool`, so that serve.ts closes it at shutdown.
 */
export function poolOf(deps: ServerDeps): FingerprintPool {
  if (isPool(deps.pool)) return deps.pool;
  let pool = pools.get(deps);
  if (!pool) {
    const workers = deps.config.workers;
    pool = createFingerprintPool({ workers, taskTimeoutMs: FINGERPRINT_TIMEOUT_MS, maxQueue: 4 * workers });
    pools.set(deps, pool);
    deps.pool = pool;
  }
  return pool;
}

/** After a 413, bytes the client may still send (already in flight) before the connection is cut. */
export const LINGER_BYTES = 16 * 1024 * 1024;

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `The body is larger than ${UPLOAD_LIMIT_BYTES} bytes.`, { limit: UPLOAD_LIMIT_BYTES });
}

/**
 * After refusing a body: discard what the client still sends so that it can read the
 * 413 (closing at once would reset the connection under its in-flight bytes and lose
 * the answer), but cut the connection after LINGER_BYTES more. Nothing is buffered.
 */
function lingerThenClose(ctx: Context): void {
  const socket = ctx.req.socket;
  let extra = 0;
  const onData = (chunk: Buffer) => {
    extra += chunk.length;
    if (extra > LINGER_BYTES) {
      cleanup();
      socket.destroy();
    }
  };
  const cleanup = () => {
    socket.off('data', onData);
    socket.off('close', cleanup);
    ctx.req.off('end', cleanup);
  };
  socket.on('data', onData);
  socket.once('close', cleanup);
  ctx.req.once('end', cleanup);
  ctx.req.resume();
}

/**
 * Reads the raw body, up to 50 MB: 413 payload_too_large before reading when
 * Content-Length says more, and as soon as the bytes received pass the limit while
 * streaming (chunked bodies); nothing beyond the limit is kept.
 */
export function readUpload(ctx: Context): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > UPLOAD_LIMIT_BYTES) {
    lingerThenClose(ctx);
    return Promise.reject(tooLarge());
  }
  const req = ctx.req;
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > UPLOAD_LIMIT_BYTES) {
        cleanup();
        chunks.length = 0;
        lingerThenClose(ctx);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAborted = () => {
      cleanup();
      reject(new ApiError('invalid_request', 'The request body was aborted.'));
    };
    function cleanup() {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/**
 * The fingerprint of uploaded bytes, computed in the pool: null when the type is not
 * supported or the file cannot be decoded (a decoder that throws or crashes its worker
 * counts as unreadable). A full queue is 503 busy; the 60 s deadline is 504.
 */
export async function fingerprintUpload(deps: ServerDeps, bytes: Uint8Array): Promise<Fingerprint | null> {
  try {
    return await poolOf(deps).fingerprint(bytes);
  } catch (err) {
    if (err instanceof PoolError) {
      if (err.code === 'busy' || err.code === 'closed') throw new ApiError('busy', undefined, {}, { 'Retry-After': '1' });
      if (err.code === 'timeout') throw new ApiError('fingerprint_timeout');
      deps.log.warn('fingerprint task failed', { error: err.message });
      return null;
    }
    throw err;
  }
}
