// Every error the API returns, once, with its status and default message
// (spec section 7, decisions.md section 9). The domain throws DomainError, HTTP handlers
// ApiError; one middleware renders either as `{error, message, ...extra}`.

export const ERRORS = {
  // spec 7
  missing_hash: [400, 'The hash query parameter is required.'],
  invalid_hash: [400, 'A hash must be exactly 64 hexadecimal characters.'],
  no_file: [400, 'The request body is empty; send the file bytes.'],
  missing_bands: [400, 'Send bands (or pixels) to match against.'],
  invalid_agent_pub_key: [400, 'agent_pub_key must be an agent key (uhCAk...) or plain base64.'],
  invalid_id: [400, 'The id must be an agent key or a DID.'],
  missing_fields: [400, 'A required field is missing.'],
  invalid_comment: [400, 'comment must be at most 280 characters.'],
  invalid_supersedes: [400, 'supersedes must be a 64-character hex action hash.'],
  invalid_url: [400, 'The webhook URL must be https on a public hostname.'],
  invalid_request: [400, 'The request is malformed.'],
  invalid_scope: [400, 'A requested scope is not enabled for this app.'],
  invalid_token: [401, 'The access token is missing, invalid or expired.'],
  // OAuth 2.0 (RFC 6749 4.1.2.1, 5.2; decisions.md 7): bodies {error, error_description}
  invalid_client: [400, 'The client_id is unknown or its app is disabled.'],
  invalid_grant: [400, 'The authorization code or refresh token is invalid, expired, used or not this client\'s.'],
  unsupported_grant_type: [400, 'grant_type must be authorization_code or refresh_token.'],
  unsupported_response_type: [400, 'response_type must be code.'],
  access_denied: [403, 'The user denied the request.'],
  quota_exceeded: [402, 'The signing quota for this period is used up.'],
  tier_required: [402, 'Webhooks need a paid developer tier.'],
  limit_reached: [402, 'The organization has reached its webhook limit for its tier.'],
  app_required: [403, 'Name an app with app_id, or use a token that carries one.'],
  forbidden: [403, 'You do not own this resource.'],
  agent_not_found: [404, 'No user has this agent key.'],
  signing_failed: [500, 'Signing failed: this identity has no server-hosted cell.'],
  revocation_failed: [500, 'The revocation was refused.'],
  // ours (decisions.md 5, 9, 10)
  invalid_credentials: [401, 'The e-mail/username or password is wrong.'],
  email_taken: [409, 'An account with this e-mail exists.'],
  username_taken: [409, 'An account with this username exists.'],
  agent_taken: [409, 'This agent key belongs to another account.'],
  agent_unlinked: [403, 'This device key was unlinked from its account; it can no longer sign in or publish.'],
  agent_required: [409, 'This device key cannot be unlinked.'],
  invalid_challenge: [400, 'The challenge is unknown, used or expired.'],
  invalid_signature: [400, 'The signature does not verify.'],
  invalid_verification_token: [400, 'The e-mail verification link is unknown, used or expired.'],
  insufficient_scope: [403, 'The access token lacks the scope this endpoint needs.'],
  not_found: [404, 'Not found.'],
  // issue 27: the entry has an index but no signed checkpoint covers it yet (about a second)
  log_pending: [404, 'The record is in the transparency log but no checkpoint covers it yet; try again in a second.'],
  method_not_allowed: [405, 'Method not allowed.'],
  request_timeout: [408, 'The request body arrived too slowly.'],
  payload_too_large: [413, 'The body is larger than the limit.'],
  unsupported_media_type: [415, 'Send a JSON body (Content-Type: application/json).'],
  rate_limited: [429, 'Too many requests; try again later.'],
  busy: [503, 'The fingerprinting queue is full; try again shortly.'],
  service_unavailable: [503, 'The database is unavailable; try again shortly.'],
  fingerprint_timeout: [504, 'Fingerprinting did not finish within 60 seconds.'],
  internal_error: [500, 'Something went wrong on our side.'],
  // issue 33: the C2PA Soft Binding Resolution API (/c2pa/v1) and the manifest repository
  invalid_parameter: [400, 'A query parameter is missing or malformed.'],
  unsupported_algorithm: [400, 'This service does not resolve that soft binding algorithm (GET /c2pa/v1/services/supportedAlgorithms lists those it does).'],
  unsupported_asset_type: [415, 'This service cannot fingerprint that type of asset.'],
  invalid_manifest: [400, 'The body is not a C2PA manifest store this repository can store.'],
  invalid_manifest_id: [400, 'A manifest id is a C2PA manifest label: urn:c2pa:UUID[:generator[:version_reason]] or urn:uuid:UUID.'],
  record_not_found: [404, 'This server stores no record matching the manifest\'s provenant.record assertion.'],
  manifest_signer_mismatch: [403, 'The manifest store is not signed by the key that signed the record it carries.'],
  manifest_exists: [409, 'Another manifest store is stored under this manifest id.'],
  manifest_limit: [409, 'This record has as many manifest stores as one record may have.'],
  query_too_long: [414, 'The query is too long; send it with POST /c2pa/v1/matches/byBinding.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * A refusal by the domain (server/src/domain): a code of the table, a message and extra
 * body fields, nothing of HTTP. The error renderer answers it with the code's status.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    /** Extra top-level body fields (e.g. the quota_exceeded fields of spec 4.7). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message ?? ERRORS[code][1]);
  }
}

/** An error as HTTP answers it: the code's status (unless an endpoint's contract gives another) and extra headers. */
export class ApiError extends DomainError {
  constructor(
    code: ErrorCode,
    message?: string,
    extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
    readonly status: number = ERRORS[code][0],
  ) {
    super(code, message, extra);
  }

  /** `err` as answered over HTTP, with `status` where the endpoint's contract differs from the table. */
  static of(err: DomainError, status?: number): ApiError {
    return err instanceof ApiError && status === undefined ? err : new ApiError(err.code, err.message, err.extra, {}, status);
  }

  get body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.extra };
  }
}
