// Every `error` code the service answers (spec 7, decisions.md 9, and OAuth's of
// RFC 6749 the server uses), for the SDK's ProvenantError.code. The server's error table
// (server/src/errors.ts ERRORS: status and message) holds exactly these codes:
// GET /openapi.json's error body is built from it and server/src/public/openapi.ts fails
// to compile when the two lists differ; test/public/contract.test.ts checks it too.
export const SERVICE_ERROR_CODES = [
  'missing_hash', 'invalid_hash', 'no_file', 'missing_bands', 'invalid_agent_pub_key', 'invalid_id', 'missing_fields',
  'invalid_comment', 'invalid_supersedes', 'invalid_url', 'invalid_request', 'invalid_scope', 'invalid_token',
  'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'unsupported_response_type', 'access_denied',
  'quota_exceeded', 'tier_required', 'limit_reached', 'app_required', 'forbidden', 'agent_not_found', 'signing_failed',
  'revocation_failed', 'invalid_credentials', 'email_taken', 'username_taken', 'agent_taken', 'agent_unlinked',
  'agent_required', 'invalid_challenge', 'invalid_signature', 'invalid_verification_token', 'insufficient_scope',
  'not_found', 'log_pending', 'method_not_allowed', 'request_timeout', 'payload_too_large', 'unsupported_media_type',
  'rate_limited', 'busy', 'service_unavailable', 'fingerprint_timeout', 'internal_error',
  'invalid_parameter', 'unsupported_algorithm', 'unsupported_asset_type', 'invalid_manifest', 'invalid_manifest_id',
  'record_not_found', 'manifest_signer_mismatch', 'manifest_exists', 'manifest_limit', 'query_too_long',
] as const;

export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];
