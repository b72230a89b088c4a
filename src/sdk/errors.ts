// Errors of the client SDK, typed by the service's error codes (spec 7, decisions.md 9)
// so an app can switch on `code` instead of parsing messages.

import type { ServiceErrorCode } from '../api/errors.js';

/** Error codes the service answers (spec 7 plus decisions.md 9: provenant/api's list, the server's error table); a newer server may send others. */
export type { ServiceErrorCode };

/**
 * A failed call to the service: `status` is the HTTP status (0 when the service could
 * not be reached: `code` is then `unreachable`), `code` the body's `error`, `body` the
 * whole parsed answer (a quota_exceeded carries the quota fields there).
 */
export class ProvenantError extends Error {
  override readonly name = 'ProvenantError';
  readonly status: number;
  readonly code: ServiceErrorCode | 'unreachable' | 'invalid_answer' | (string & {});
  readonly body: Record<string, unknown> | null;
  constructor(status: number, code: ProvenantError['code'], message: string, body: Record<string, unknown> | null = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The error of a non-2xx answer: `{error, message}` (sign-it) or `{error, error_description}` (OAuth). */
export function errorOfAnswer(status: number, body: unknown): ProvenantError {
  const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  const code = typeof b?.error === 'string' ? b.error : status === 429 ? 'rate_limited' : `http_${status}`;
  const message = typeof b?.message === 'string' ? b.message : typeof b?.error_description === 'string' ? b.error_description : `HTTP ${status}`;
  return new ProvenantError(status, code, message, b);
}
