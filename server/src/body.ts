// Request bodies. `jsonBody()`, mounted by the routes that take JSON (and, for OAuth
// clients, x-www-form-urlencoded), reads the body up to a limit into
// `ctx.request.body`; upload routes instead stream theirs with `readRawBody`. Each
// body is read by the route that wants it, so no list of paths has to agree with the
// router on how a path is spelt.
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

/** How fast a body must arrive: like Apache's mod_reqtimeout MinRate. */
export interface BodyPace {
  /** Time allowed before the rate counts (ms). */
  graceMs: number;
  /** Bytes per second: each `minRate` bytes received extend the deadline by one second. */
  minRate: number;
}

export interface RawBodyOptions {
  /**
   * Copy the chunks as they arrive into one buffer of the declared Content-Length: no
   * second copy at the end (for a 50 MB upload, a 50 MB copy on the event loop and
   * twice the memory meanwhile), at the price of reserving the declared size up front,
   * so only for callers that bound how many bodies are read at once (the upload routes).
   */
  intoDeclared?: boolean;
  /** Fail with 408 request_timeout (and close the connection) when the body falls behind. */
  pace?: BodyPace;
}

/**
 * Reads the whole request body, failing with 413 payload_too_large as soon as the
 * declared length or the bytes received exceed `limitBytes` (nothing more is buffered).
 * Settles on every way the body can end: its end, an error, the client going away
 * (the request closes before its end), the pace falling behind; and at once when the
 * body was already read, rather than waiting for an end that has passed.
 */
export async function readRawBody(ctx: Context, limitBytes: number, options: RawBodyOptions = {}): Promise<Buffer> {
  const req = ctx.req;
  // a second reader (a bug of ours) would wait forever for an 'end' already emitted
  if (req.readableDidRead || req.readableEnded) throw new Error('The request body was already read.');
  if (req.destroyed) throw new ApiError('invalid_request', 'The request body was aborted.');
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    discardBody(ctx);
    throw tooLarge(limitBytes);
  }
  // allocUnsafe: every byte handed back is one received (the rest is cut off below)
  const whole = options.intoDeclared && Number.isSafeInteger(declared) && declared >= 0 ? Buffer.allocUnsafe(declared) : null;
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const fail = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limitBytes) {
        chunks.length = 0;
        discardBody(ctx);
        fail(tooLarge(limitBytes));
        return;
      }
      if (whole === null) chunks.push(chunk);
      else if (size + chunk.length <= whole.length) chunk.copy(whole, size);
      else {
        // more than declared: node's parser never passes that on; refused all the same
        discardBody(ctx);
        fail(new ApiError('invalid_request', 'The body is longer than its Content-Length.'));
        return;
      }
      size += chunk.length;
    };
    const onEnd = () => {
      cleanup();
      resolve(whole === null ? Buffer.concat(chunks, size) : whole.subarray(0, size));
    };
    // 'close' before 'end': the client went away (or node cut the request off)
    const onClose = () => fail(new ApiError('invalid_request', 'The request body was aborted.'));
    const pace = options.pace;
    const started = Date.now();
    let paceTimer: NodeJS.Timeout | undefined;
    const checkPace = () => {
      const left = started + pace!.graceMs + (size / pace!.minRate) * 1000 - Date.now();
      if (left > 0) paceTimer = setTimeout(checkPace, left);
      else {
        // RFC 9110 15.5.9: close the connection; what the client still sends is not read
        const message = `The body arrived slower than ${pace!.minRate} bytes per second.`;
        fail(new ApiError('request_timeout', message, { min_rate: pace!.minRate }, { Connection: 'close' }));
      }
    };
    if (pace) paceTimer = setTimeout(checkPace, pace.graceMs);
    function cleanup() {
      clearTimeout(paceTimer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', fail);
      req.off('close', onClose);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', fail);
    req.on('close', onClose);
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
}

/**
 * Middleware for routes that take a body: JSON for `application/json`, `*+json`,
 * `text/plain` or no content type, a form for x-www-form-urlencoded, into
 * `ctx.request.body`. 413 over the limit (1 MB), 400 for invalid JSON.
 */
export function jsonBody(options: BodyOptions = {}) {
  const limit = options.limitBytes ?? JSON_LIMIT_BYTES;
  return async function jsonBodyMiddleware(ctx: Context, next: Next): Promise<void> {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) return next();
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
