// The app-level middleware, in the order createApp mounts them: request id, access
// log + metrics, the error renderer (one place turns every failure into
// `{error, message, ...extra}`, decisions.md 9).
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { ApiError, DomainError, ERRORS, type ErrorCode } from './errors.js';
import type { Logger } from './log.js';
import { StoreUnavailableError } from './store/index.js';
import type { Metrics } from './metrics.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a sane incoming X-Request-Id, or makes one; sets ctx.state.requestId. */
export function requestId() {
  return async function requestIdMiddleware(ctx: Context, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const id = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/** The route template a request matched (low cardinality), or `unmatched`. */
export function routeLabel(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (ctx.path === '/healthz' || ctx.path === '/metrics') return ctx.path;
  return 'unmatched';
}

/** One JSON log line per request and the request counter + latency histogram. */
export function accessLog(log: Logger, metrics: Metrics) {
  const requests = metrics.counter('provenant_http_requests_total', 'HTTP requests by route and status.', ['method', 'route', 'status']);
  const latency = metrics.histogram('provenant_http_request_duration_seconds', 'HTTP request latency by route and status.', [
    'method',
    'route',
    'status',
  ]);
  return async function accessLogMiddleware(ctx: Context, next: Next): Promise<void> {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const labels = { method: ctx.method, route: routeLabel(ctx), status: ctx.status };
      requests.inc(labels);
      latency.observe(labels, seconds);
      log.info('request', {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(seconds * 1e6) / 1e3,
        request_id: ctx.state.requestId,
      });
    }
  };
}

function fromHttpError(err: { status: number; message: string; expose?: boolean; headers?: Record<string, string> }): ApiError {
  const byStatus: Record<number, ErrorCode> = {
    400: 'invalid_request',
    401: 'invalid_token',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    429: 'rate_limited',
    501: 'method_not_allowed',
  };
  const code = byStatus[err.status];
  if (!code) return new ApiError('internal_error');
  const message = err.expose && err.message ? err.message : ERRORS[code][1];
  return new ApiError(code, message, {}, err.headers ?? {});
}

function isClientHttpError(err: Error): err is Error & { status: number; expose?: boolean; headers?: Record<string, string> } {
  const status = (err as unknown as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 && (status < 500 || status === 501);
}

/** A one-line message naming the first invalid field of a zod failure. */
export function zodMessage(err: ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'The request is malformed.';
  const field = issue.path.length ? issue.path.join('.') : 'body';
  return `${field}: ${issue.message}`;
}

/**
 * Renders ApiError (status, body, headers) and DomainError (its code's status), maps
 * Koa/HTTP errors, zod failures and an unavailable database (503) to the table's codes, turns unknown errors into a
 * logged 500 internal_error, and unrouted requests into 404 not_found.
 */
export function renderErrors(log: Logger) {
  return async function renderErrorsMiddleware(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw new ApiError('not_found', `No route for ${ctx.method} ${ctx.path}.`);
    } catch (err) {
      let apiErr: ApiError;
      if (err instanceof DomainError) apiErr = ApiError.of(err);
      else if (err instanceof ZodError) apiErr = new ApiError('invalid_request', zodMessage(err));
      else if (err instanceof StoreUnavailableError) {
        // the database is away (a node keeps running and recovers when it returns)
        log.warn('database unavailable', { request_id: ctx.state.requestId, method: ctx.method, path: ctx.path, error: err.message });
        apiErr = new ApiError('service_unavailable', undefined, {}, { 'Retry-After': '5' });
      }
      else if (err instanceof Error && isClientHttpError(err)) {
        apiErr = fromHttpError(err);
      } else {
        log.error('unhandled error', {
          request_id: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          error: err instanceof Error ? err.message : String(err),
          stack: err instanceof Error ? err.stack : undefined,
        });
        apiErr = new ApiError('internal_error');
      }
      ctx.status = apiErr.status;
      ctx.set(apiErr.headers);
      ctx.body = apiErr.body;
    }
  };
}
