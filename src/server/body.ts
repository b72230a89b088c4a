// Request bodies. `parseBody` (app-level) reads JSON (and, for OAuth clients,
// x-www-form-urlencoded) bodies up to a limit into `ctx.request.body`; upload routes
// listed in `rawPaths` are left unread so they can stream with `readRawBody`.
import type { Context, Next } from 'koa';
import { ApiError } from './errors.js';

declare module 'koa' {
  interface Request {
    /** The parsed JSON (or form) body; undefined when there was none or it was not parsed. */
    body?: unknown;
  }
}

export const JSON_LIMIT_BYTES = 1024 * 1024;

/** After a 413, bytes the client may still send (already in flight) before the connection is cut. */
export const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * After refusing a body (413, 503): discard what the client still sends so that it can
 * read the answer (closing at once would reset the connection under its in-flight
 * bytes and lose it), but cut the connection after LINGER_BYTES more. Nothing is buffered.
 */
export function discardBody(ctx: Context): void {
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

function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `The body is larger than ${limit} bytes.`, { limit });
}

/**
 * Reads the whole request body, failing with 413 payload_too_large as soon as the
 * declared length or the bytes received exceed `limitBytes` (nothing more is buffered).
 * The chunks are joined at the end; with `intoDeclared` and a Content-Length they are
 * instead copied as they arrive into one buffer of the declared size: no second copy
 * at the end (for a 50 MB upload, a 50 MB copy on the event loop and twice the memory
 * meanwhile), at the price of reserving the declared size up front, so only for
 * callers that bound how many bodies are read at once (the upload routes).
 */
export async function readRawBody(ctx: Context, limitBytes: number, intoDeclared = false): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    discardBody(ctx);
    throw tooLarge(limitBytes);
  }
  // allocUnsafe: every byte handed back is one received (the rest is cut off below)
  const whole = intoDeclared && Number.isSafeInteger(declared) && declared >= 0 ? Buffer.allocUnsafe(declared) : null;
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const req = ctx.req;
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limitBytes) {
        cleanup();
        chunks.length = 0;
        discardBody(ctx);
        reject(tooLarge(limitBytes));
        return;
      }
      if (whole === null) chunks.push(chunk);
      else if (size + chunk.length <= whole.length) chunk.copy(whole, size);
      else {
        // more than declared: node's parser never passes that on; refused all the same
        cleanup();
        discardBody(ctx);
        reject(new ApiError('invalid_request', 'The body is longer than its Content-Length.'));
        return;
      }
      size += chunk.length;
    };
    const onEnd = () => {
      cleanup();
      resolve(whole === null ? Buffer.concat(chunks, size) : whole.subarray(0, size));
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

function formBody(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

export interface BodyOptions {
  limitBytes?: number;
  /** Exact paths whose bodies are raw uploads: never read here. */
  rawPaths?: readonly string[];
}

/** JSON for `application/json`, `*+json`, `text/plain` or no content type; forms for urlencoded. */
export function parseBody(options: BodyOptions = {}) {
  const limit = options.limitBytes ?? JSON_LIMIT_BYTES;
  const raw = new Set(options.rawPaths ?? []);
  return async function parseBodyMiddleware(ctx: Context, next: Next): Promise<void> {
    if (raw.has(ctx.path) || !ctx.request.length && !ctx.get('transfer-encoding')) return next();
    const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
    const isForm = type === 'application/x-www-form-urlencoded';
    const isJson = type === '' || type === 'application/json' || type.endsWith('+json') || type === 'text/plain';
    if (!isForm && !isJson) return next();
    const text = (await readRawBody(ctx, limit)).toString('utf8');
    if (isForm) ctx.request.body = formBody(text);
    else if (text.trim() !== '') {
      try {
        ctx.request.body = JSON.parse(text);
      } catch {
        throw new ApiError('invalid_request', 'The body is not valid JSON.');
      }
    }
    return next();
  };
}
