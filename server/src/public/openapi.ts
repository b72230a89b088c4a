// GET /openapi.json: an OpenAPI 3.1 description of every endpoint the server registers
// (test/public/openapi.test.ts holds it to the routers' own lists), generated from the
// zod schemas by z.toJSONSchema: answers (and the requests the SDK sends) from the
// library's provenant/api (src/api/), the requests the features validate from their
// schema.ts, rate limits from rate-limits.ts. Answers are closed objects
// (additionalProperties: false), so the contract test (test/helpers/contract.ts) fails
// on a field a response carries that is not described here.
// A new endpoint: its shapes in src/api/ (or its feature's schema.ts), one add() below.
import { z } from 'zod';
import * as api from 'provenant/api';
import { challengeBody, loginBody, passwordChangeBody, patchMeBody, registerBody, signedChallengeBody } from '../auth/schema.js';
import { CONTACT_PURPOSES } from '../domain/contact.js';
import { createAppBody } from '../developer/schema.js';
import { createWebhookBody, updateWebhookBody } from '../webhooks/schema.js';
import { ERRORS } from '../errors.js';
import { describeLimit, type RateLimitName } from '../rate-limits.js';
import { SCOPE_WORDS } from '../domain/oauth.js';
import { ASSETS } from './assets.js';
import { BADGE_FORMATS, BADGE_STYLES, BADGE_THEMES, contactBody } from './schema.js';

type Schema = Record<string, unknown>;

/** JSON Schema (2020-12, OpenAPI 3.1's dialect) of a zod schema, as a request or an answer. */
const json = (schema: z.ZodType, io: 'input' | 'output' = 'output'): Schema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;
  return rest;
};

// ---------------------------------------------------------------- shapes (provenant/api)

// Every answer (and the requests the SDK sends) is defined once in the library's
// provenant/api (src/api/); the requests the features validate with zod come from their
// schema.ts. Nothing below redefines a shape: it says which operation answers which.
const { hex64, success } = api;
const errorBody = z.object({ error: z.enum(Object.keys(ERRORS) as [keyof typeof ERRORS]), message: z.string() }).catchall(z.unknown());
/** The SDK's codes (provenant/api SERVICE_ERROR_CODES) are the error table's: this fails to compile, naming the code, when one list has a code the other lacks. */
export const ERROR_CODES_AGREE: [Exclude<keyof typeof ERRORS, api.ServiceErrorCode> | Exclude<api.ServiceErrorCode, keyof typeof ERRORS>] extends [never] ? true : never = true;

// ---------------------------------------------------------------- operations

interface Op {
  summary: string;
  tag: string;
  /** 'session': a JWT session token; 'sign' / 'verify': a session or an OAuth token with that scope; 'metrics': PROVENANT_METRICS_TOKEN. */
  auth?: 'session' | 'sign' | 'verify' | 'metrics';
  /** Its errors' body: the error table's `{error, message, ...}` (default), or OAuth's `{error, error_description, ...}` (spec 7). */
  errors?: 'oauth';
  query?: Record<string, { schema: Schema; required?: boolean; description?: string }>;
  path?: Record<string, string>;
  body?: { schema: Schema; type?: string };
  /** status -> [description, JSON schema, content type (default application/json)]. */
  responses: Record<string, [string, Schema?, string?]>;
  /** Its rate limits (server/src/rate-limits.ts). */
  limit?: RateLimitName | RateLimitName[];
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

add('post', '/api/v1/auth/register', { tag: 'accounts', summary: 'Create an account (decisions.md 5)', body: { schema: json(registerBody, 'input') }, limit: 'auth:register', responses: { 201: ['the session', json(api.sessionAnswer)] } });
add('post', '/api/v1/auth/login', { tag: 'accounts', summary: 'Sign in with e-mail or username and password', body: { schema: json(loginBody, 'input') }, limit: ['auth:password:address', 'auth:password:account', 'auth:password:account-address', 'auth:password:device'], responses: { 200: ['the session', json(api.sessionAnswer)] } });
add('get', '/api/v1/auth/me', { tag: 'accounts', auth: 'session', summary: 'The signed-in account', responses: { 200: ['the account', json(api.userAnswer)] } });
add('patch', '/api/v1/auth/me', { tag: 'accounts', auth: 'session', summary: 'Change profile fields, public_fields and contact_opt_in', body: { schema: json(patchMeBody, 'input') }, responses: { 200: ['the account', json(api.userAnswer)] } });
add('post', '/api/v1/auth/vault/challenge', { tag: 'accounts', summary: 'A sign-in challenge for a vault key', body: { schema: json(challengeBody, 'input') }, limit: 'auth:vault', responses: { 200: ['the challenge', json(api.challengeAnswer)] } });
add('post', '/api/v1/auth/vault/token', { tag: 'accounts', summary: 'Sign in with a signed challenge (a new key gets a device-hosted account)', body: { schema: json(signedChallengeBody, 'input') }, limit: 'auth:vault', responses: { 200: ['the session', json(api.sessionAnswer)], 201: ['the session of a new device-hosted account (a key seen for the first time)', json(api.sessionAnswer)] } });
add('post', '/api/v1/auth/agents', { tag: 'accounts', auth: 'session', summary: 'Link another device key with a challenge it signed', body: { schema: json(signedChallengeBody, 'input') }, responses: { 201: ['the account, the key linked', json(api.userAnswer)] } });
add('get', '/api/v1/auth/agents', { tag: 'accounts', auth: 'session', summary: 'The account\'s linked device keys, primary first', responses: { 200: ['the keys', json(api.agentsAnswer)] } });
add('delete', '/api/v1/auth/agents/{agent_pub_key}', { tag: 'accounts', auth: 'session', summary: 'Unlink a device key: it can no longer sign in or publish; its records stay; never the only key (409 agent_required)', path: { agent_pub_key: 'the key (uhCAk... or base64)' }, responses: { 200: ['the keys left', json(api.agentsAnswer)] } });
add('post', '/api/v1/auth/sessions/revoke', { tag: 'accounts', auth: 'session', summary: 'Sign out everywhere: every session token issued until now ends (this one too)', responses: { 200: ['signed out', json(api.sessionsRevokedAnswer)] } });
add('post', '/api/v1/auth/password', { tag: 'accounts', auth: 'session', summary: 'Change the password: every session issued before ends; the answer is a fresh session', body: { schema: json(passwordChangeBody, 'input') }, limit: 'auth:password:address', responses: { 200: ['the new session', json(api.sessionAnswer)] } });
add('post', '/api/v1/auth/email/verification', { tag: 'accounts', auth: 'session', summary: 'Mail a new verification link to the account\'s address (one goes out on registration); session tokens only', limit: 'auth:email-verification',
  responses: { 202: ['a link is being sent', json(api.verificationSentAnswer)], 200: ['verified already: nothing sent', json(api.alreadyVerifiedAnswer)], 400: ['invalid_request: the account has no e-mail address', json(errorBody)] } });
add('get', '/api/v1/auth/email/verify', { tag: 'accounts', summary: 'The link a verification mail carries: a page whose button confirms the address (opening it verifies nothing)', limit: 'auth:email-verify',
  query: { token: { schema: { type: 'string' }, required: true, description: 'the token of the link, 43 base64url characters' } },
  responses: { 200: ['a page: the confirm button (a form with the token and a CSRF token)', { type: 'string' }, 'text/html'], 400: ['a page: invalid_verification_token (not a token this server sends)', { type: 'string' }, 'text/html'] } });
add('post', '/api/v1/auth/email/verify', { tag: 'accounts', summary: 'The confirm button of the link\'s page: marks the address verified (single use, 24 hours, bound to the address it was sent to)', limit: 'auth:email-verify',
  body: { schema: json(z.object({ token: z.string(), csrf_token: z.string() })), type: 'application/x-www-form-urlencoded' },
  responses: { 200: ['a page: the address is verified', { type: 'string' }, 'text/html'], 400: ['a page: invalid_verification_token (unknown, used, expired, or sent to an address the account no longer has)', { type: 'string' }, 'text/html'], 403: ['a page: the form did not come from the link\'s page in this browser (CSRF)', { type: 'string' }, 'text/html'] } });

add('post', '/api/v1/developer/apps', { tag: 'developer', auth: 'session', summary: 'Register an app (its client_id)', body: { schema: json(createAppBody, 'input') }, responses: { 201: ['the app', json(api.app)] } });
add('get', '/api/v1/developer/apps', { tag: 'developer', auth: 'session', summary: "The caller's apps", responses: { 200: ['the apps', json(api.appsAnswer)] } });
add('post', '/api/v1/developer/apps/{id}/token', { tag: 'developer', auth: 'session', path: { id: 'the app id' }, summary: 'A developer session token carrying the app', responses: { 200: ['the token', json(api.appTokenAnswer)] } });

// OAuth 2.0 + PKCE (spec 2.8, 4.16; decisions.md 7): token, userinfo and revoke errors are {error, error_description}
const oauthError = json(api.oauthError);
const oauthParam = (description: string, required = true) => ({ schema: { type: 'string' }, required, description });
const authorizeQuery = {
  response_type: oauthParam('code'), client_id: oauthParam('the app\'s client_id'), redirect_uri: oauthParam('one of the app\'s registered URIs, exactly'),
  scope: oauthParam('space-separated (spec 2.8)'), state: oauthParam('returned as sent', false), code_challenge: oauthParam('BASE64URL(SHA-256(code_verifier))'), code_challenge_method: oauthParam('S256'),
};
const form = 'application/x-www-form-urlencoded';
const authorizeAnswers: Op['responses'] = {
  200: ['the sign-in or consent page', { type: 'string' }, 'text/html'],
  302: ['back to redirect_uri with code, state and iss; or error, error_description, state and iss'],
  303: ['after a form: back to redirect_uri (or to this endpoint after sign-in)'],
  400: ['unknown client_id or unregistered redirect_uri: a page, never a redirect', { type: 'string' }, 'text/html'],
};
add('get', '/oauth/authorize', { tag: 'oauth', summary: 'Start an authorization: sign-in and consent pages, then a redirect (spec 4.16, decisions.md 7)', query: authorizeQuery, limit: 'oauth:authorize', responses: authorizeAnswers });
add('post', '/oauth/authorize', { tag: 'oauth', summary: 'The sign-in and consent forms of the authorize pages (CSRF-protected)', query: authorizeQuery, limit: 'oauth:authorize',
  body: { schema: json(z.union([z.object({ csrf_token: z.string(), email_or_username: z.string(), password: z.string() }), z.object({ csrf_token: z.string(), decision: z.enum(['approve', 'deny']) })])), type: form },
  responses: { ...authorizeAnswers, 401: ['the sign-in page again: wrong credentials', { type: 'string' }, 'text/html'], 403: ['a form without its CSRF token', { type: 'string' }, 'text/html'] } });
add('post', '/oauth/token', { tag: 'oauth', errors: 'oauth', summary: 'Exchange a code (PKCE) or a refresh token for tokens; JSON or a form', limit: 'oauth:token', body: { schema: json(api.tokenRequest, 'input') },
  responses: { 200: ['the tokens (Cache-Control: no-store)', json(api.tokenResponse)], 400: ['invalid_request, invalid_client, invalid_grant, invalid_scope, unsupported_grant_type', oauthError] } });
add('get', '/oauth/userinfo', { tag: 'oauth', errors: 'oauth', summary: 'Who the access token belongs to, fields by scope (spec 2.8)', limit: 'oauth:userinfo',
  responses: { 200: ['userinfo', json(api.userInfo)], 401: ['no or an invalid token (WWW-Authenticate: Bearer)', oauthError] } });
add('post', '/oauth/revoke', { tag: 'oauth', errors: 'oauth', summary: 'Revoke a refresh token and its access tokens; 200 whatever the token was', limit: 'oauth:revoke', body: { schema: json(api.tokenRevokeRequest, 'input') },
  responses: { 200: ['done (or nothing to do)', { type: 'object' }], 400: ['invalid_request, invalid_client', oauthError] } });
add('get', '/.well-known/oauth-authorization-server', { tag: 'oauth', summary: 'Authorization server metadata (RFC 8414)', responses: { 200: ['the metadata', { type: 'object' }] } });
add('get', '/api/v1/account/apps', { tag: 'accounts', auth: 'session', summary: 'The apps holding access to your account',
  responses: { 200: ['the apps', json(z.object({ apps: z.array(z.object({ client_id: z.string(), name: z.string(), scopes: z.array(z.string()), email_shared: z.boolean(), authorized_at: z.string(), updated_at: z.string() })) }))] } });
add('delete', '/api/v1/account/apps/{client_id}', { tag: 'accounts', auth: 'session', path: { client_id: 'the app' }, summary: "Revoke an app's access: its tokens end and the shared e-mail copy is deleted", responses: { 200: ['revoked', json(success)] } });

add('get', `${S}/verify`, { tag: 'sign-it', summary: 'Signatures of a file by its SHA-256 (spec 4.1)', query: hashQuery, limit: 'sign-it:verify', responses: { 200: ['the signatures', json(api.verifyAnswer)] } });
// the transparency log (issue 27, docs/transparency-log.md): c2sp.org tlog-tiles, tlog-proof
add('get', `${S}/proof`, { tag: 'transparency-log', summary: 'The record\'s c2sp.org/tlog-proof@v1 bundle against the latest checkpoint (404 log_pending until one covers it)', query: { action_hash: { schema: json(hex64), required: true, description: 'the record\'s action hash' } }, responses: { 200: ['the proof bundle', { type: 'string' }, 'text/plain'], 404: ['not_found, or log_pending (Retry-After: 1)', json(errorBody)] } });
add('get', '/log/checkpoint', { tag: 'transparency-log', summary: 'The latest signed checkpoint (c2sp.org/tlog-checkpoint) with every witness cosignature it got', responses: { 200: ['the checkpoint note', { type: 'string' }, 'text/plain'] } });
add('get', '/log/key', { tag: 'transparency-log', summary: 'The log\'s verifier key, <origin>+<key id>+<base64> (c2sp.org/signed-note)', responses: { 200: ['the verifier key and a newline', { type: 'string' }, 'text/plain'] } });
add('get', '/log/tile/*tile', { tag: 'transparency-log', summary: 'A tile of c2sp.org/tlog-tiles: <L>/<N>[.p/<W>] (width x 32 bytes of hashes) or entries/<N>[.p/<W>] (uint16 length-prefixed entries, each the RFC 8785 JSON of one stored event); full tiles are immutable', responses: { 200: ['the tile', bytes.schema, bytes.type], 404: ['not a tile path, or not at the latest checkpoint', json(errorBody)] } });
add('post', `${S}/verify-file`, { tag: 'sign-it', summary: 'Perceptual matches of an uploaded file, at most 50 MB (spec 4.2), and its Content Credentials (issue 21)', body: bytes, limit: 'sign-it:verify-file', responses: { 200: ['matches at 60 or above', json(api.verifyFileAnswer)] } });
add('post', `${S}/verify-fuzzy`, { tag: 'sign-it', summary: 'Perceptual matches by bands, hash_value or 72 grey pixels (spec 4.3)', limit: 'sign-it:verify-fuzzy',
  body: { schema: json(api.fuzzyQuery, 'input') },
  responses: { 200: ['matches at 70 or above', json(api.matchAnswer)] } });
add('post', `${S}/fingerprint`, { tag: 'sign-it', auth: 'sign', summary: "An uploaded file's fingerprint (spec 4.11)", body: bytes, responses: { 200: ['the fingerprint or null', json(api.fingerprintAnswer)] } });
add('post', `${S}/sign`, { tag: 'sign-it', auth: 'sign', summary: 'Sign with the server-hosted cell (deprecated, spec 4.7)', body: { schema: json(api.signRequest, 'input') },
  responses: { 200: ['signed', json(api.signAnswer)], 402: ['over quota', json(errorBody)] } });
add('post', `${S}/sign-batch`, { tag: 'sign-it', auth: 'sign', summary: 'Sign up to 100 files (deprecated, spec 4.8)',
  body: { schema: json(api.signBatchRequest, 'input') },
  responses: { 200: ['per file', json(api.signBatchAnswer)] } });
add('post', `${S}/revoke`, { tag: 'sign-it', auth: 'sign', summary: 'Revoke a signature of the server-hosted cell (spec 4.10)', body: { schema: json(api.revokeRequest, 'input') }, responses: { 200: ['revoked', json(success)] } });
add('post', `${S}/set-thumbnail`, { tag: 'sign-it', auth: 'sign', summary: "Set a signature's thumbnail (spec 4.12)", body: { schema: json(api.thumbnailRequest, 'input') }, responses: { 200: ['set', json(success)] } });
add('get', `${S}/my-signatures`, { tag: 'sign-it', auth: 'verify', summary: "The caller's signatures (spec 4.9)", responses: { 200: ['the signatures', json(api.mySignaturesAnswer)] } });
add('get', `${S}/quota`, { tag: 'sign-it', auth: 'verify', summary: "The caller's quota (spec 4.4)", responses: { 200: ['the quota state', json(api.quotaState)] } });
add('get', `${S}/quota/by-agent`, { tag: 'sign-it', summary: "An agent's quota (spec 4.5)", limit: 'sign-it:quota-by-agent',
  query: { agent_pub_key: { schema: { type: 'string' }, required: true }, client_id: { schema: { type: 'string' } } }, responses: { 200: ['the quota state', json(api.quotaState)] } });
add('post', `${S}/quota/sync-by-agent`, { tag: 'sign-it', summary: 'Recount a vault key\'s quota (decisions.md 2)', limit: 'sign-it:quota-sync',
  body: { schema: json(api.quotaSyncRequest, 'input') }, responses: { 200: ['the quota state', json(api.quotaState)] } });
add('post', `${S}/publish`, { tag: 'sign-it', summary: 'Publish a record a vault signed (decisions.md 2)', body: { schema: json(api.publishRequest, 'input') }, responses: { 200: ['stored', json(api.publishAnswer)], 403: ['over quota', json(errorBody)] } });
add('post', `${S}/publish-revocation`, { tag: 'sign-it', summary: 'Publish a revocation a vault signed (decisions.md 2)',
  body: { schema: json(api.publishRevocationRequest, 'input') }, responses: { 200: ['stored', json(api.publishAnswer)] } });

// issue 33: the C2PA Soft Binding Resolution API (C2PA 2.2's OpenAPI document, its paths under /c2pa/v1) and the repository's intake
const C = '/c2pa/v1';
const c2paStore = { type: 'string', contentMediaType: 'application/c2pa' };
const maxResultsQuery = { maxResults: { schema: { type: 'integer', minimum: 1, default: 10 }, description: 'manifest ids at most (above 100: 100)' } };
const badParameter: [string, Schema] = ['invalid_parameter (the body\'s `field` names which) or unsupported_algorithm', json(errorBody)];
add('get', `${C}/services/supportedAlgorithms`, { tag: 'c2pa', summary: 'The soft binding algorithms resolved here (c2pa.softBindingAlgList): io.iscc.v0', limit: 'c2pa:supported-algorithms', responses: { 200: ['the algorithms', json(api.softBindingAlgList)] } });
add('get', `${C}/matches/byBinding`, { tag: 'c2pa', summary: 'Manifest ids by a soft binding: for io.iscc.v0, records whose ISCC Content-Code is within 8 bits of the value (base64 of the code\'s text or binary form)', limit: 'c2pa:by-binding',
  query: { alg: { schema: { type: 'string' }, required: true }, value: { schema: { type: 'string' }, required: true, description: 'base64' }, ...maxResultsQuery },
  responses: { 200: ['the matches', json(api.softBindingQueryResult)], 400: badParameter, 414: ['query_too_long: use POST', json(errorBody)] } });
add('post', `${C}/matches/byBinding`, { tag: 'c2pa', summary: 'Manifest ids by a soft binding given in the body (c2pa.softBindingQuery)', limit: 'c2pa:by-binding', query: maxResultsQuery,
  body: { schema: json(api.softBindingQuery, 'input') }, responses: { 200: ['the matches', json(api.softBindingQueryResult)], 400: badParameter } });
add('post', `${C}/matches/byContent`, { tag: 'c2pa', summary: 'Manifest ids of an uploaded asset (at most 50 MB), matched as verify-file matches it (with alg io.iscc.v0: by its ISCC Content-Code only)', limit: 'c2pa:by-content', body: bytes,
  query: { alg: { schema: { type: 'string' } }, ...maxResultsQuery, hintAlg: { schema: { type: 'string' } }, hintValue: { schema: { type: 'string' }, description: 'base64, with hintAlg' } },
  responses: { 200: ['the matches', json(api.softBindingQueryResult)], 400: badParameter, 415: ['unsupported_asset_type: a type (or a file) that cannot be fingerprinted', json(errorBody)] } });
add('get', `${C}/manifests/{manifestId}`, { tag: 'c2pa', summary: 'A stored manifest store (application/c2pa), or with returnActiveManifest=true a store of its active manifest alone', limit: 'c2pa:manifests', path: { manifestId: 'the active manifest\'s label (urn:c2pa:UUID...)' },
  query: { returnActiveManifest: { schema: { type: 'boolean', default: false } } },
  responses: { 200: ['the store', c2paStore, 'application/c2pa'], 400: ['invalid_manifest_id or invalid_parameter', json(errorBody)], 404: ['not_found', json(errorBody)] } });
add('post', `${S}/manifests`, { tag: 'c2pa', summary: 'Store a detached manifest store (application/c2pa, at most 1 MiB) for the record its provenant.record assertion names; signed by that record\'s signer, read by the reference reader', limit: 'sign-it:manifests',
  body: { schema: c2paStore, type: 'application/c2pa' },
  responses: { 201: ['stored', json(api.manifestPublishAnswer)], 200: ['stored before, these very bytes', json(api.manifestPublishAnswer)], 400: ['invalid_manifest', json(errorBody)], 403: ['manifest_signer_mismatch', json(errorBody)], 404: ['record_not_found', json(errorBody)], 409: ['manifest_exists or manifest_limit', json(errorBody)] } });

const html = { type: 'string', contentMediaType: 'text/html' };
add('get', `${S}/creator/{id}`, { tag: 'public', summary: "A creator's profile, stats and signatures (spec 4.6); a page with Accept: text/html", path: { id: 'agent key or DID' }, limit: 'sign-it:creator',
  responses: { 200: ['the profile', json(api.creatorAnswer)], '200 (text/html)': ['the page', html, 'text/html'] } });
add('get', '/c/{id}', { tag: 'public', summary: "A creator's page", path: { id: 'agent key or DID' }, limit: 'sign-it:creator', responses: { 200: ['the page', html, 'text/html'] } });
add('get', `${S}/content-rights`, { tag: 'public', summary: 'Rights declared for a file, the most restrictive value per field (decisions.md 9)', query: hashQuery, limit: 'sign-it:content-rights',
  responses: { 200: ['the rights (Cache-Control: public, max-age=300)', json(api.contentRightsAnswer)] } });
add('get', `${S}/badge`, { tag: 'public', summary: 'A badge for a file: SVG or JSON (decisions.md 9)', limit: 'sign-it:badge',
  query: { ...hashQuery, format: { schema: { enum: [...BADGE_FORMATS], default: 'svg' } }, style: { schema: { enum: [...BADGE_STYLES], default: 'badge' } }, theme: { schema: { enum: [...BADGE_THEMES], default: 'light' } } },
  responses: { 200: ['the badge', json(api.badgeAnswer)], '200 (image/svg+xml)': ['the SVG', { type: 'string' }, 'image/svg+xml'] } });
add('post', `${S}/contact`, { tag: 'public', summary: `Message a signer through the blind relay (spec 4.13); purposes: ${CONTACT_PURPOSES.join(', ')}`, body: { schema: json(contactBody, 'input') }, limit: 'sign-it:contact',
  responses: { 200: ['always this answer, for every request', json(api.contactAnswer)] } });
const W = '/api/v1/webhooks';
const appIdQuery = { app_id: { schema: { type: 'string', format: 'uuid' }, description: 'the app; optional with a token that carries one' } };
const webhookRefusals = { 400: ['invalid_url or invalid_request', json(errorBody)] as [string, Schema], 403: ['app_required or forbidden', json(errorBody)] as [string, Schema] };
add('get', `${W}/events`, { tag: 'webhooks', summary: 'The event catalog (spec 6)', responses: { 200: ['every event type', json(api.webhookEventsAnswer)] } });
add('post', W, { tag: 'webhooks', auth: 'session', summary: 'Register a webhook: https on a public host; the secret is shown only here (spec 4.15)', query: appIdQuery, body: { schema: json(createWebhookBody, 'input') }, limit: 'webhooks:create',
  responses: { 201: ['created', json(api.createdWebhookAnswer)], ...webhookRefusals, 402: ['tier_required or limit_reached', json(errorBody)] } });
add('get', W, { tag: 'webhooks', auth: 'session', summary: "The app's webhooks (spec 4.15)", query: appIdQuery, responses: { 200: ['the webhooks', json(api.webhooksAnswer)], 403: webhookRefusals[403] } });
add('put', `${W}/{id}`, { tag: 'webhooks', auth: 'session', path: { id: 'the webhook id' }, summary: 'Change url, events, filters or active; {active: true} re-enables (spec 3.2)', query: appIdQuery, body: { schema: json(updateWebhookBody, 'input') }, responses: { 200: ['the webhook', json(api.webhookAnswer)], ...webhookRefusals } });
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
  responses.default = op.errors === 'oauth'
    ? { description: 'An error: {error, error_description, ...} (spec 7)', content: { 'application/json': { schema: oauthError } } }
    : { description: 'An error: {error, message, ...} from the error table (spec 7, decisions.md 9)', content: { 'application/json': { schema: json(errorBody) } } };
  return {
    tags: [op.tag],
    summary: op.summary,
    ...(op.limit ? { description: `Rate limit: ${[op.limit].flat().map(describeLimit).join(' and ')} (429 rate_limited beyond, except POST /contact).` } : {}),
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
