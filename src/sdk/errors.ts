// Errors of the client SDK, typed by the service's error codes (spec 7, decisions.md 9)
// so an app can switch on `code` instead of parsing messages.

/** Error codes the service answers (spec 7 plus decisions.md 9); a newer server may send others. */
export type ServiceErrorCode =
  | 'missing_hash' | 'invalid_hash' | 'no_file' | 'missing_bands' | 'invalid_agent_pub_key' | 'invalid_id'
  | 'missing_fields' | 'invalid_comment' | 'invalid_supersedes' | 'invalid_url' | 'invalid_request' | 'invalid_scope'
  | 'invalid_token' | 'quota_exceeded' | 'tier_required' | 'limit_reached' | 'app_required' | 'forbidden'
  | 'agent_not_found' | 'signing_failed' | 'revocation_failed' | 'invalid_credentials' | 'email_taken'
  | 'username_taken' | 'agent_taken' | 'agent_unlinked' | 'agent_required' | 'invalid_challenge' | 'invalid_signature' | 'insufficient_scope'
  | 'not_found' | 'rate_limited' | 'busy' | 'fingerprint_timeout' | 'payload_too_large' | 'internal_error'
  // OAuth (RFC 6749 5.2, 4.1.2.1)
  | 'invalid_grant' | 'invalid_client' | 'unauthorized_client' | 'unsupported_grant_type' | 'access_denied'
  | 'server_error' | 'temporarily_unavailable' | 'unsupported_response_type';

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
