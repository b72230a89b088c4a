// GET /openapi.json: an OpenAPI 3.1 description of every endpoint the server registers
// (test/public/openapi.test.ts holds it to the routers' own lists). Request bodies come
// from the features' zod schemas where they have them (auth, developer, the public
// surfaces), converted by z.toJSONSchema; the answers, and the requests the sign-it
// feature checks by hand, are described here in zod once, after the spec's sections.
import { z } from 'zod';
import { challengeBody, loginBody, passwordChangeBody, patchMeBody, registerBody, signedChallengeBody } from '../auth/schema.js';
import { CONTACT_PURPOSES } from '../domain/contact.js';
import { createAppBody } from '../developer/schema.js';
import { createWebhookBody, updateWebhookBody } from '../webhooks/schema.js';
import { ERRORS } from '../errors.js';
import { SCOPE_WORDS } from '../domain/oauth.js';
import { ASSETS } from './assets.js';
import { BADGE_FORMATS, BADGE_STYLES, BADGE_THEMES, contactBody } from './schema.js';

type Schema = Record<string, unknown>;

/** JSON Schema (2020-12, OpenAPI 3.1's dialect) of a zod schema, as a request or an answer. */
const json = (schema: z.ZodType, io: 'input' | 'output' = 'output'): Schema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;
  return rest;
};

// ---------------------------------------------------------------- shapes (spec 2)

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const ms = z.number().int().describe('Unix milliseconds');
const nullable = <T extends z.ZodType>(t: T) => t.nullable();
const contentRights = z
  .object({
    license: z.union([z.string(), z.object({ Custom: z.string() })]).nullable(),
    commercial_licensing: z.string().nullable(),
    ai_training: z.string().nullable(),
    contact_preference: z.string().nullable(),
  })
  .partial()
  .describe('spec 2.2, response form (capitalized values)');
const perceptualHash = z.object({ hash_type: z.enum(['ImagePHash', 'AudioChromaprint', 'VideoPHash']), hash_value: z.array(z.number().int()), bands: z.array(z.array(z.number().int())) });
const integrityReport = z.object({
  checks_performed: z.array(z.string()),
  issues_found: z.array(z.object({ check: z.string(), severity: z.enum(['Info', 'Warning', 'Critical']), description: z.string(), offset: z.number().int().optional(), length: z.number().int().optional() })),
  checked_at: ms,
});
const recordFields = {
  file_hash: hex64,
  action_hash: hex64,
  signer: z.string().describe('agent key, uhCAk...'),
  signed_at: ms,
  intent: z.enum(['Authorship', 'Approval', 'Witness', 'Receipt', 'Agreement']),
  ai_generation: nullable(z.enum(['None', 'Assisted', 'Generated'])),
  content_rights: nullable(contentRights),
  integrity_report: nullable(integrityReport),
  perceptual_hash: nullable(perceptualHash),
  comment: nullable(z.string().max(280)),
  supersedes: nullable(hex64),
  superseded_by: nullable(hex64),
  expires_at: z.unknown(),
  tags: z.unknown(),
};
const signature = z.object({
  ...recordFields,
  signer_did: z.string(),
  signer_display_name: nullable(z.string()),
  signer_username: nullable(z.string()),
  signer_profile_picture: nullable(z.string()),
  revoked: z.boolean(),
  revoked_at: nullable(ms),
  revocation_reason: nullable(z.string()),
  contactable: z.boolean(),
}).describe('spec 2.1');
const reduced = z.object({
  file_hash: hex64, signer: z.string(), signed_at: ms, intent: z.string(), ai_generation: nullable(z.string()),
  content_rights: nullable(contentRights), similarity: nullable(z.number().int().min(0).max(100)), match_type: z.literal('perceptual'),
}).describe('spec 2.3');
const ownSignature = z.object({
  ...recordFields, signature: z.string(), revoked: z.boolean(), revoked_at: nullable(ms), revoked_reason: nullable(z.string()), thumbnail: nullable(z.string()),
}).describe('spec 2.4');
const quotaState = z.object({
  allowed: z.boolean(), scope: z.enum(['community', 'org']), tier: z.string(), used: z.number(), limit: nullable(z.number()), resets_at: nullable(z.string()),
  upgrade_tier: z.string().optional(), overage_signs: z.number().optional(), overage_cents_per_100: z.number().optional(),
  sponsor: z.object({ app_name: z.string(), exhausted: z.boolean() }).optional(),
}).describe('spec 2.5');
const rightsValues = contentRights.required();
const fingerprint = nullable(perceptualHash);
const user = z.object({
  id: z.string(), email: nullable(z.string()), email_verified: z.boolean(), username: nullable(z.string()), display_name: nullable(z.string()), profile_picture: nullable(z.string()),
  public_fields: z.array(z.string()), contact_opt_in: z.boolean(), tier: z.string(), agent_pub_key: nullable(z.string()), did: nullable(z.string()),
  agents: z.array(z.object({ agent_pub_key: z.string(), did: nullable(z.string()), primary: z.boolean(), linked_at: z.string() })),
  server_cell: z.boolean(), personal_org_id: nullable(z.string()), created_at: z.string(),
});
const app = z.object({ client_id: z.string(), name: z.string(), org_id: nullable(z.string()), redirect_uris: z.array(z.string()), scopes: z.array(z.string()), active: z.boolean(), created_at: z.string() });
const success = z.object({ success: z.literal(true) });
const signRequest = z.object({
  file_hash: z.string(), intent: z.string().optional(), ai_generation: z.enum(['none', 'assisted', 'generated']).optional(),
  content_rights: z.object({ license: z.union([z.string(), z.object({ custom: z.string() })]), commercial_licensing: z.string(), ai_training: z.string(), contact_preference: z.string() }).partial().optional(),
  comment: z.string().max(280).optional(), supersedes: z.string().optional(), perceptual_hash: perceptualHash.optional(), integrity_report: integrityReport.optional(),
  expires_at: z.unknown().optional(), tags: z.unknown().optional(),
}).describe('spec 4.7; request form (snake_case tokens)');
const signedRecord = z.object({ ...recordFields, signature: z.string(), client_id: z.string().optional() }).omit({ action_hash: true, superseded_by: true });
const errorBody = z.object({ error: z.enum(Object.keys(ERRORS) as [keyof typeof ERRORS]), message: z.string() }).catchall(z.unknown());

// ---------------------------------------------------------------- operations

interface Op {
  summary: string;
  tag: string;
  /** 'session': a JWT session token; 'sign' / 'verify': a session or an OAuth token with that scope; 'metrics': PROVENANT_METRICS_TOKEN. */
  auth?: 'session' | 'sign' | 'verify' | 'metrics';
  query?: Record<string, { schema: Schema; required?: boolean; description?: string }>;
  path?: Record<string, string>;
  body?: { schema: Schema; type?: string };
  /** status -> [description, JSON schema, content type (default application/json)]. */
  responses: Record<string, [string, Schema?, string?]>;
  /** Spec 8's per-IP limit, in words. */
  limit?: string;
}

const OPS: Record<string, Record<string, Op>> = {};
function add(method: string, path: string, op: Op): void {
  (OPS[path] ??= {})[method] = op;
}

const S = '/api/v1/sign-it';
const hashQuery = { hash: { schema: json(hex64), required: true, description: 'SHA-256 of the file, 64 hex characters' } };
const bytes = { schema: { type: 'string', contentMediaType: 'application/octet-stream' }, type: 'application/octet-stream' };

add('get', '/healthz', { tag: 'ops', summary: 'Health of every part of the server (200, or 503 naming the failing one)', responses: { 200: ['every part ok', { type: 'object' }], 503: ['a part failed', { type: 'object' }] } });
add('get', '/metrics', { tag: 'ops', auth: 'metrics', summary: 'Prometheus metrics (404 unless PROVENANT_METRICS_TOKEN is set)', responses: { 200: ['metrics', { type: 'string' }, 'text/plain'] } });

add('post', '/api/v1/auth/register', { tag: 'accounts', summary: 'Create an account (decisions.md 5)', body: { schema: json(registerBody, 'input') }, limit: '30/min', responses: { 201: ['the session', json(z.object({ token: z.string(), user }))] } });
add('post', '/api/v1/auth/login', { tag: 'accounts', summary: 'Sign in with e-mail or username and password', body: { schema: json(loginBody, 'input') }, limit: '30/min per address and 30/min per account, shared with the OAuth sign-in form', responses: { 200: ['the session', json(z.object({ token: z.string(), user }))] } });
add('get', '/api/v1/auth/me', { tag: 'accounts', auth: 'session', summary: 'The signed-in account', responses: { 200: ['the account', json(z.object({ user }))] } });
add('patch', '/api/v1/auth/me', { tag: 'accounts', auth: 'session', summary: 'Change profile fields, public_fields and contact_opt_in', body: { schema: json(patchMeBody, 'input') }, responses: { 200: ['the account', json(z.object({ user }))] } });
add('post', '/api/v1/auth/vault/challenge', { tag: 'accounts', summary: 'A sign-in challenge for a vault key', body: { schema: json(challengeBody, 'input') }, limit: '60/min', responses: { 200: ['the challenge', json(z.object({ challenge: z.string(), expires_at: z.string() }))] } });
add('post', '/api/v1/auth/vault/token', { tag: 'accounts', summary: 'Sign in with a signed challenge (a new key gets a device-hosted account)', body: { schema: json(signedChallengeBody, 'input') }, limit: '60/min', responses: { 200: ['the session', json(z.object({ token: z.string(), user }))] } });
add('post', '/api/v1/auth/agents', { tag: 'accounts', auth: 'session', summary: 'Link another device key with a challenge it signed', body: { schema: json(signedChallengeBody, 'input') }, responses: { 200: ['the account', json(z.object({ user }))] } });
add('get', '/api/v1/auth/agents', { tag: 'accounts', auth: 'session', summary: 'The account\'s linked device keys, primary first', responses: { 200: ['the keys', json(z.object({ agents: user.shape.agents }))] } });
add('delete', '/api/v1/auth/agents/{agent_pub_key}', { tag: 'accounts', auth: 'session', summary: 'Unlink a device key: it can no longer sign in or publish; its records stay; never the only key (409 agent_required)', path: { agent_pub_key: 'the key (uhCAk... or base64)' }, responses: { 200: ['the keys left', json(z.object({ agents: user.shape.agents }))] } });
add('post', '/api/v1/auth/sessions/revoke', { tag: 'accounts', auth: 'session', summary: 'Sign out everywhere: every session token issued until now ends (this one too)', responses: { 200: ['signed out', json(z.object({ success: z.literal(true), sessions_valid_after: z.string() }))] } });
add('post', '/api/v1/auth/password', { tag: 'accounts', auth: 'session', summary: 'Change the password: every session issued before ends; the answer is a fresh session', body: { schema: json(passwordChangeBody, 'input') }, limit: '30/min (login\'s window)', responses: { 200: ['the new session', json(z.object({ token: z.string(), user }))] } });
add('post', '/api/v1/auth/email/verification', { tag: 'accounts', auth: 'session', summary: 'Mail a new verification link to the account\'s address (one goes out on registration); session tokens only', limit: '3/hour per user',
  responses: { 202: ['a link is being sent', json(z.object({ email: z.string(), email_verified: z.literal(false), verification_sent: z.literal(true) }))], 200: ['verified already: nothing sent', json(z.object({ email: z.string(), email_verified: z.literal(true), verification_sent: z.literal(false) }))], 400: ['invalid_request: the account has no e-mail address', json(errorBody)] } });
add('get', '/api/v1/auth/email/verify', { tag: 'accounts', summary: 'The link a verification mail carries: a page whose button confirms the address (opening it verifies nothing)', limit: '30/min',
  query: { token: { schema: { type: 'string' }, required: true, description: 'the token of the link, 43 base64url characters' } },
  responses: { 200: ['a page: the confirm button (a form with the token and a CSRF token)', { type: 'string' }, 'text/html'], 400: ['a page: invalid_verification_token (not a token this server sends)', { type: 'string' }, 'text/html'] } });
add('post', '/api/v1/auth/email/verify', { tag: 'accounts', summary: 'The confirm button of the link\'s page: marks the address verified (single use, 24 hours, bound to the address it was sent to)', limit: '30/min',
  body: { schema: json(z.object({ token: z.string(), csrf_token: z.string() })), type: 'application/x-www-form-urlencoded' },
  responses: { 200: ['a page: the address is verified', { type: 'string' }, 'text/html'], 400: ['a page: invalid_verification_token (unknown, used, expired, or sent to an address the account no longer has)', { type: 'string' }, 'text/html'], 403: ['a page: the form did not come from the link\'s page in this browser (CSRF)', { type: 'string' }, 'text/html'] } });

add('post', '/api/v1/developer/apps', { tag: 'developer', auth: 'session', summary: 'Register an app (its client_id)', body: { schema: json(createAppBody, 'input') }, responses: { 200: ['the app', json(app)] } });
add('get', '/api/v1/developer/apps', { tag: 'developer', auth: 'session', summary: "The caller's apps", responses: { 200: ['the apps', json(z.object({ apps: z.array(app) }))] } });
add('post', '/api/v1/developer/apps/{id}/token', { tag: 'developer', auth: 'session', path: { id: 'the app id' }, summary: 'A developer session token carrying the app', responses: { 200: ['the token', json(z.object({ token: z.string(), app_id: z.string(), expires_in: z.number().int() }))] } });

// OAuth 2.0 + PKCE (spec 2.8, 4.16; decisions.md 7): token, userinfo and revoke errors are {error, error_description}
const oauthError = json(z.object({ error: z.string(), error_description: z.string() }).catchall(z.unknown()).describe('spec 7: OAuth error body'));
const tokenResponse = json(z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int(), refresh_token: z.string(), scope: z.string() }).describe('spec 2.8'));
const oauthParam = (description: string, required = true) => ({ schema: { type: 'string' }, required, description });
const authorizeQuery = {
  response_type: oauthParam('code'), client_id: oauthParam('the app\'s client_id'), redirect_uri: oauthParam('one of the app\'s registered URIs, exactly'),
  scope: oauthParam('space-separated (spec 2.8)'), state: oauthParam('returned as sent', false), code_challenge: oauthParam('BASE64URL(SHA-256(code_verifier))'), code_challenge_method: oauthParam('S256'),
};
const form = 'application/x-www-form-urlencoded';
const tokenRequest = z.union([
  z.object({ grant_type: z.literal('authorization_code'), code: z.string(), redirect_uri: z.string(), client_id: z.string(), code_verifier: z.string().min(43).max(128) }),
  z.object({ grant_type: z.literal('refresh_token'), refresh_token: z.string(), client_id: z.string(), scope: z.string().optional() }),
]);
const revokeRequest = z.object({ token: z.string(), token_type_hint: z.enum(['refresh_token', 'access_token']).optional(), client_id: z.string() });
const authorizeAnswers: Op['responses'] = {
  200: ['the sign-in or consent page', { type: 'string' }, 'text/html'],
  302: ['back to redirect_uri with code, state and iss; or error, error_description, state and iss'],
  303: ['after a form: back to redirect_uri (or to this endpoint after sign-in)'],
  400: ['unknown client_id or unregistered redirect_uri: a page, never a redirect', { type: 'string' }, 'text/html'],
};
add('get', '/oauth/authorize', { tag: 'oauth', summary: 'Start an authorization: sign-in and consent pages, then a redirect (spec 4.16, decisions.md 7)', query: authorizeQuery, limit: '100/min', responses: authorizeAnswers });
add('post', '/oauth/authorize', { tag: 'oauth', summary: 'The sign-in and consent forms of the authorize pages (CSRF-protected)', query: authorizeQuery, limit: '100/min',
  body: { schema: json(z.union([z.object({ csrf_token: z.string(), email_or_username: z.string(), password: z.string() }), z.object({ csrf_token: z.string(), decision: z.enum(['approve', 'deny']) })])), type: form },
  responses: { ...authorizeAnswers, 401: ['the sign-in page again: wrong credentials', { type: 'string' }, 'text/html'], 403: ['a form without its CSRF token', { type: 'string' }, 'text/html'] } });
add('post', '/oauth/token', { tag: 'oauth', summary: 'Exchange a code (PKCE) or a refresh token for tokens; JSON or a form (50/min per client)', body: { schema: json(tokenRequest) },
  responses: { 200: ['the tokens (Cache-Control: no-store)', tokenResponse], 400: ['invalid_request, invalid_client, invalid_grant, invalid_scope, unsupported_grant_type', oauthError] } });
add('get', '/oauth/userinfo', { tag: 'oauth', summary: 'Who the access token belongs to, fields by scope (spec 2.8; 500/min per token)',
  responses: { 200: ['userinfo', json(z.object({ sub: z.string(), name: nullable(z.string()), preferred_username: nullable(z.string()), did: nullable(z.string()), agent_pub_key: nullable(z.string()), profile_picture: nullable(z.string()), has_custom_picture: z.boolean(), email: z.string(), email_verified: z.boolean(), scope: z.string() }).partial().required({ sub: true, scope: true }))], 401: ['no or an invalid token (WWW-Authenticate: Bearer)', oauthError] } });
add('post', '/oauth/revoke', { tag: 'oauth', summary: 'Revoke a refresh token and its access tokens; 200 whatever the token was (50/min per client)', body: { schema: json(revokeRequest) },
  responses: { 200: ['done (or nothing to do)', { type: 'object' }], 400: ['invalid_request, invalid_client', oauthError] } });
add('get', '/.well-known/oauth-authorization-server', { tag: 'oauth', summary: 'Authorization server metadata (RFC 8414)', responses: { 200: ['the metadata', { type: 'object' }] } });
add('get', '/api/v1/account/apps', { tag: 'accounts', auth: 'session', summary: 'The apps holding access to your account',
  responses: { 200: ['the apps', json(z.object({ apps: z.array(z.object({ client_id: z.string(), name: z.string(), scopes: z.array(z.string()), email_shared: z.boolean(), authorized_at: z.string(), updated_at: z.string() })) }))] } });
add('delete', '/api/v1/account/apps/{client_id}', { tag: 'accounts', auth: 'session', path: { client_id: 'the app' }, summary: "Revoke an app's access: its tokens end and the shared e-mail copy is deleted", responses: { 200: ['revoked', json(success)] } });

const verifyAnswer = json(z.object({ signatures: z.array(signature), count: z.number().int() }));
const reducedAnswer = json(z.object({ signatures: z.array(reduced), count: z.number().int(), match_type: z.literal('none').optional() }));
add('get', `${S}/verify`, { tag: 'sign-it', summary: 'Signatures of a file by its SHA-256 (spec 4.1)', query: hashQuery, limit: '30/min', responses: { 200: ['the signatures', verifyAnswer] } });
// issue 21: the file's Content Credentials (C2PA), a record a vault embedded in them, and conflicts (src/lib/content-credentials.ts)
const contentCredentials = z.union([
  z.object({ present: z.literal(false) }),
  z.object({ present: z.null(), message: z.string() }),
  z.object({
    present: z.literal(true),
    validation_state: z.enum(['valid', 'untrusted_signer', 'invalid', 'unknown_algorithm', 'remote']),
    validation_codes: z.array(z.string()).describe('failure codes as C2PA names them'),
    manifests: nullable(z.number().int()), remote_url: nullable(z.string()).describe('a remote manifest: reported, never fetched'),
    claim_generator: nullable(z.string()), signer: nullable(z.object({ issuer: nullable(z.string()), common_name: nullable(z.string()), algorithm: nullable(z.string()) })),
    signed_at: nullable(z.string()),
    actions: z.array(z.object({ action: z.string(), digital_source_type: nullable(z.string()), ai_generated: z.boolean() })),
    created: z.boolean(), edited: z.boolean(), ai_generated: z.boolean(),
    ingredients: z.object({ count: z.number().int(), titles: z.array(z.string()) }),
    provenant_record: nullable(z.object({ record: z.object({}).passthrough(), signature: z.string(), action_hash: z.string(), service: z.string() })),
    message: nullable(z.string()),
  }),
]);
const embeddedRecord = z.object({
  found_by: z.literal('content_credentials'), action_hash: z.string(), service: z.string(),
  signature_valid: z.boolean(), action_hash_matches: z.boolean(), stored: z.boolean(), record: z.object({}).passthrough(),
});
const conflict = z.object({ file_hash: hex64, ai_generation: z.string(), content_credentials: z.string(), message: z.string() });
const verifyFileAnswer = json(z.object({
  signatures: z.array(reduced), count: z.number().int(), match_type: z.literal('none').optional(),
  content_credentials: contentCredentials, embedded_record: nullable(embeddedRecord), conflicts: z.array(conflict),
}));
add('post', `${S}/verify-file`, { tag: 'sign-it', summary: 'Perceptual matches of an uploaded file, at most 50 MB (spec 4.2), and its Content Credentials (issue 21)', body: bytes, limit: '30/min', responses: { 200: ['matches at 60 or above', verifyFileAnswer] } });
add('post', `${S}/verify-fuzzy`, { tag: 'sign-it', summary: 'Perceptual matches by bands, hash_value or 72 grey pixels (spec 4.3)', limit: '30/min',
  body: { schema: json(z.object({ bands: z.array(z.array(z.number().int())).optional(), hash_value: z.array(z.number().int()).optional(), pixels: z.array(z.number().int()).length(72).optional() })) },
  responses: { 200: ['matches at 70 or above', reducedAnswer] } });
add('post', `${S}/fingerprint`, { tag: 'sign-it', auth: 'sign', summary: "An uploaded file's fingerprint (spec 4.11)", body: bytes, responses: { 200: ['the fingerprint or null', json(z.object({ fingerprint }))] } });
add('post', `${S}/sign`, { tag: 'sign-it', auth: 'sign', summary: 'Sign with the server-hosted cell (deprecated, spec 4.7)', body: { schema: json(signRequest) },
  responses: { 200: ['signed', json(z.object({ success: z.literal(true), file_hash: hex64, agent_pub_key: z.string(), signed_at: ms, action_hash: hex64 }))], 402: ['over quota', json(errorBody)] } });
add('post', `${S}/sign-batch`, { tag: 'sign-it', auth: 'sign', summary: 'Sign up to 100 files (deprecated, spec 4.8)',
  body: { schema: json(z.object({ files: z.array(signRequest).max(100), shared_metadata: signRequest.partial().optional() })) },
  responses: { 200: ['per file', json(z.object({ results: z.array(z.object({ file_hash: nullable(z.string()), action_hash: nullable(z.string()), success: z.boolean(), error: z.string().optional() })), signed: z.number().int(), failed: z.number().int() }))] } });
add('post', `${S}/revoke`, { tag: 'sign-it', auth: 'sign', summary: 'Revoke a signature of the server-hosted cell (spec 4.10)', body: { schema: json(z.object({ action_hash: z.string(), reason: z.string().max(280).optional() })) }, responses: { 200: ['revoked', json(success)] } });
add('post', `${S}/set-thumbnail`, { tag: 'sign-it', auth: 'sign', summary: "Set a signature's thumbnail (spec 4.12)", body: { schema: json(z.object({ action_hash: z.string(), thumbnail: z.string().max(15_000) })) }, responses: { 200: ['set', json(success)] } });
add('get', `${S}/my-signatures`, { tag: 'sign-it', auth: 'verify', summary: "The caller's signatures (spec 4.9)", responses: { 200: ['the signatures', json(z.object({ signatures: z.array(ownSignature) }))] } });
add('get', `${S}/quota`, { tag: 'sign-it', auth: 'verify', summary: "The caller's quota (spec 4.4)", responses: { 200: ['the quota state', json(quotaState)] } });
add('get', `${S}/quota/by-agent`, { tag: 'sign-it', summary: "An agent's quota (spec 4.5)", limit: '60/min',
  query: { agent_pub_key: { schema: { type: 'string' }, required: true }, client_id: { schema: { type: 'string' } } }, responses: { 200: ['the quota state', json(quotaState)] } });
add('post', `${S}/quota/sync-by-agent`, { tag: 'sign-it', summary: 'Recount a vault key\'s quota (decisions.md 2)', limit: '60/min',
  body: { schema: json(z.object({ agent_pub_key: z.string(), count: z.number().int(), timestamp: z.number().int(), signature: z.string(), client_id: z.string().optional() })) }, responses: { 200: ['the quota state', json(quotaState)] } });
add('post', `${S}/publish`, { tag: 'sign-it', summary: 'Publish a record a vault signed (decisions.md 2)', body: { schema: json(signedRecord) }, responses: { 200: ['stored', json(z.object({ success: z.literal(true), action_hash: hex64 }))], 403: ['over quota', json(errorBody)] } });
add('post', `${S}/publish-revocation`, { tag: 'sign-it', summary: 'Publish a revocation a vault signed (decisions.md 2)',
  body: { schema: json(z.object({ action_hash: hex64, reason: nullable(z.string()), revoked_at: ms, signer: z.string(), signature: z.string() })) }, responses: { 200: ['stored', json(z.object({ success: z.literal(true), action_hash: hex64 }))] } });

const creatorAnswer = json(z.object({
  creator: z.object({ agent_key: z.string(), did: z.string(), member_since: nullable(ms), contactable: z.boolean() }),
  stats: z.object({ total: z.number().int(), active: z.number().int(), revoked: z.number().int(), by_intent: z.record(z.string(), z.number().int()), by_license: z.record(z.string(), z.number().int()) }),
  signatures: z.array(signature),
}).describe('spec 2.6'));
const html = { type: 'string', contentMediaType: 'text/html' };
add('get', `${S}/creator/{id}`, { tag: 'public', summary: "A creator's profile, stats and signatures (spec 4.6); a page with Accept: text/html", path: { id: 'agent key or DID' }, limit: '30/min',
  responses: { 200: ['the profile', creatorAnswer], '200 (text/html)': ['the page', html, 'text/html'] } });
add('get', '/c/{id}', { tag: 'public', summary: "A creator's page", path: { id: 'agent key or DID' }, limit: '30/min', responses: { 200: ['the page', html, 'text/html'] } });
add('get', `${S}/content-rights`, { tag: 'public', summary: 'Rights declared for a file, the most restrictive value per field (decisions.md 9)', query: hashQuery, limit: '60/min',
  responses: { 200: ['the rights (Cache-Control: public, max-age=300)', json(z.object({ file_hash: hex64, signed: z.boolean(), signer_count: z.number().int(), rights: nullable(rightsValues), signers: z.array(z.object({ signer: z.string(), signed_at: ms }).extend(rightsValues.shape)) }))] } });
add('get', `${S}/badge`, { tag: 'public', summary: 'A badge for a file: SVG or JSON (decisions.md 9)', limit: '60/min',
  query: { ...hashQuery, format: { schema: { enum: [...BADGE_FORMATS], default: 'svg' } }, style: { schema: { enum: [...BADGE_STYLES], default: 'badge' } }, theme: { schema: { enum: [...BADGE_THEMES], default: 'light' } } },
  responses: { 200: ['the badge', json(z.object({ file_hash: hex64, signed: z.boolean(), signer_count: z.number().int(), latest: nullable(z.object({ signer: z.string(), signer_did: nullable(z.string()), signer_display_name: nullable(z.string()), signed_at: ms, intent: z.string(), ai_generation: nullable(z.string()) })) }))], '200 (image/svg+xml)': ['the SVG', { type: 'string' }, 'image/svg+xml'] } });
add('post', `${S}/contact`, { tag: 'public', summary: `Message a signer through the blind relay (spec 4.13); purposes: ${CONTACT_PURPOSES.join(', ')}`, body: { schema: json(contactBody, 'input') }, limit: '3/hour',
  responses: { 200: ['always this answer, for every request', json(z.object({ success: z.literal(true), message: z.string() }))] } });
const W = '/api/v1/webhooks';
const appIdQuery = { app_id: { schema: { type: 'string', format: 'uuid' }, description: 'the app; optional with a token that carries one' } };
const webhookFilters = z.object({ file_hash: hex64.optional() });
const listedWebhook = z.object({ id: z.string(), url: z.string(), events: z.array(z.string()), filters: webhookFilters, active: z.boolean(), failure_count: z.number().int(), last_triggered_at: nullable(z.string()), created_at: z.string() }).describe('spec 2.7, listing shape');
const webhookRefusals = { 400: ['invalid_url or invalid_request', json(errorBody)] as [string, Schema], 403: ['app_required or forbidden', json(errorBody)] as [string, Schema] };
add('get', `${W}/events`, { tag: 'webhooks', summary: 'The event catalog (spec 6)', responses: { 200: ['every event type', json(z.object({ events: z.array(z.object({ type: z.string(), description: z.string(), fires: z.boolean(), fields: z.array(z.string()) })) }))] } });
add('post', W, { tag: 'webhooks', auth: 'session', summary: 'Register a webhook: https on a public host; the secret is shown only here (spec 4.15)', query: appIdQuery, body: { schema: json(createWebhookBody, 'input') }, limit: '30/min per developer',
  responses: { 201: ['created', json(z.object({ webhook: z.object({ id: z.string(), url: z.string(), events: z.array(z.string()), filters: webhookFilters, secret: z.string().regex(/^[0-9a-f]{64}$/), created_at: z.string() }), message: z.string() }))], ...webhookRefusals, 402: ['tier_required or limit_reached', json(errorBody)] } });
add('get', W, { tag: 'webhooks', auth: 'session', summary: "The app's webhooks (spec 4.15)", query: appIdQuery, responses: { 200: ['the webhooks', json(z.object({ webhooks: z.array(listedWebhook) }))], 403: webhookRefusals[403] } });
add('put', `${W}/{id}`, { tag: 'webhooks', auth: 'session', path: { id: 'the webhook id' }, summary: 'Change url, events, filters or active; {active: true} re-enables (spec 3.2)', query: appIdQuery, body: { schema: json(updateWebhookBody, 'input') }, responses: { 200: ['the webhook', json(z.object({ webhook: listedWebhook }))], ...webhookRefusals } });
add('delete', `${W}/{id}`, { tag: 'webhooks', auth: 'session', path: { id: 'the webhook id' }, summary: 'Delete a webhook', responses: { 200: ['deleted', json(success)] } });
add('get', '/openapi.json', { tag: 'public', summary: 'This description (OpenAPI 3.1)', responses: { 200: ['the document', { type: 'object' }] } });
for (const [path, asset] of ASSETS) {
  add('get', path, { tag: 'pages', summary: path === '/' ? 'The verification page' : `A file of the verification page or the badge widget (${asset.type.split(';')[0]})`, responses: { 200: ['the file', { type: 'string' }, asset.type.split(';')[0]] } });
}

// ---------------------------------------------------------------- the document

const SECURITY: Record<NonNullable<Op['auth']>, Record<string, string[]>[]> = {
  session: [{ session: [] }],
  sign: [{ session: [] }, { oauth: ['sign'] }],
  verify: [{ session: [] }, { oauth: ['verify'] }],
  metrics: [{ metrics: [] }],
};

function operation(op: Op): Schema {
  const parameters = [
    ...Object.entries(op.path ?? {}).map(([name, description]) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } })),
    ...Object.entries(op.query ?? {}).map(([name, q]) => ({ name, in: 'query', required: q.required ?? false, ...(q.description ? { description: q.description } : {}), schema: q.schema })),
  ];
  const responses: Schema = {};
  for (const [key, [description, schema, type]] of Object.entries(op.responses)) {
    const status = key.split(' ')[0];
    const entry = (responses[status] ??= { description, content: {} }) as { description: string; content: Schema };
    if (entry.description !== description) entry.description += `; ${description}`;
    if (schema) entry.content[type ?? 'application/json'] = { schema };
  }
  responses.default = { description: 'An error: {error, message, ...} from the error table (spec 7, decisions.md 9)', content: { 'application/json': { schema: json(errorBody) } } };
  return {
    tags: [op.tag],
    summary: op.summary,
    ...(op.limit ? { description: `Rate limit: ${op.limit} per IP (429 rate_limited beyond, except POST /contact).` } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: { required: true, content: { [op.body.type ?? 'application/json']: { schema: op.body.schema } } } } : {}),
    responses,
    security: op.auth ? SECURITY[op.auth] : [],
  };
}

/** The OpenAPI 3.1 document of the server at `baseUrl`. */
export function openApiDocument(baseUrl: string): Schema {
  const paths: Schema = {};
  for (const [path, methods] of Object.entries(OPS)) {
    paths[path] = Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, operation(op)]));
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Provenant', version: '1', description: 'File provenance: verification by SHA-256 and perceptual fingerprint, signing, accounts, public profiles and the contact relay.' },
    servers: [{ url: baseUrl }],
    paths,
    components: {
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'JWT session token (decisions.md 5)' },
        oauth: { type: 'oauth2', flows: { authorizationCode: { authorizationUrl: `${baseUrl}/oauth/authorize`, tokenUrl: `${baseUrl}/oauth/token`, scopes: Object.fromEntries(Object.entries(SCOPE_WORDS)) } } },
        metrics: { type: 'http', scheme: 'bearer', description: 'PROVENANT_METRICS_TOKEN' },
      },
    },
  };
}

/** `METHOD /path` of every operation described (Koa's `:id` written as OpenAPI's `{id}`): the test compares it with the routers'. */
export function describedRoutes(): string[] {
  return Object.entries(OPS).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
}
