// The checks of the OAuth endpoints, one small function per rule, run in order by the
// handlers (routes.ts), so that a reader finds each rule by its name (STYLE.md habit 6).
// A rule reads the request's parameters, throws the error the RFC names, and fills in
// what it established on the request being built.
//
// /oauth/authorize (RFC 6749 4.1.1, 4.1.2.1; RFC 7636 4.4; RFC 9700 2.1, 4.1): first
// the client and its redirect URI, whose failures are shown on a page and never
// redirected (a redirect to an unchecked URI would make us an open redirector); then
// the rest, whose failures go back to the app's redirect URI.
import ipaddr from 'ipaddr.js';
import type { ServerDeps } from '../deps.js';
import { DomainError } from '../errors.js';
import { OAUTH_SCOPES, TOKEN_TYPE_HINTS, withOpenid, type TokenTypeHint } from '../domain/oauth.js';
import type { App } from '../store/index.js';

/** Query or body parameters as received: a string, several strings (repeated), or (JSON) any value. */
export type Params = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 7636 4.1: 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** RFC 7636 4.2: an S256 challenge is BASE64URL of 32 bytes: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by single spaces. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;

function invalidRequest(message: string): DomainError {
  return new DomainError('invalid_request', message);
}

/**
 * One parameter's value: undefined when absent (or empty, RFC 6749 3.1: "parameters
 * sent without a value MUST be treated as if they were omitted"); invalid_request when
 * sent more than once (3.1: "MUST NOT be included more than once") or not a string.
 */
export function single(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) throw invalidRequest(`${name}: sent more than once.`);
  if (typeof value !== 'string') throw invalidRequest(`${name}: must be a string.`);
  return value;
}

function required(params: Params, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw invalidRequest(`${name}: required.`);
  return value;
}

// ---------------------------------------------------------------- /oauth/authorize

/** The authorization request as the rules establish it. */
export interface AuthorizationDraft {
  params: Params;
  app?: App;
  redirectUri?: string;
  /** Null when the app sent none (recommended, not required: spec 4.16). */
  state?: string | null;
  scopes?: string[];
  codeChallenge?: string;
}

export type AuthorizationRequest = Required<AuthorizationDraft>;

type AuthorizeRule = (draft: AuthorizationDraft, deps: ServerDeps) => void | Promise<void>;

/** RFC 6749 4.1.2.1: client_id missing, repeated, unknown or of a disabled app: a page, no redirect. */
export async function clientIsKnown(draft: AuthorizationDraft, deps: ServerDeps): Promise<void> {
  const clientId = required(draft.params, 'client_id');
  const app = UUID.test(clientId) ? await deps.store.accounts.getApp(clientId) : null;
  if (!app || !app.active) throw new DomainError('invalid_client', 'client_id: no such app.');
  draft.app = app;
}

/** RFC 6749 3.1.2.3, RFC 9700 4.1.3: redirect_uri is one of the app's registered URIs, compared as exact strings. */
export function redirectUriIsRegistered(draft: AuthorizationDraft): void {
  const redirectUri = required(draft.params, 'redirect_uri');
  if (!draft.app!.redirectUris.includes(redirectUri)) throw invalidRequest('redirect_uri: not a redirect URI registered for this app (compared exactly).');
  draft.redirectUri = redirectUri;
}

/**
 * RFC 8252 7.3, 8.3 and RFC 9700 2.1, 4.1.1: a code may travel in clear only to the
 * user's own machine. Plain http is for loopback hosts (127.0.0.0/8, [::1],
 * localhost), any port; https for any host; a private-use scheme (RFC 8252 7.1: the
 * reverse of a domain the app controls, so it holds a dot: `com.example.app:/cb`) for
 * a native app. Never a fragment (RFC 6749 3.1.2). Null when allowed, else why not
 * and what to register instead.
 */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return 'must be an absolute URI';
  const url = new URL(uri);
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment (RFC 6749 3.1.2)';
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return null;
  if (scheme === 'http') {
    return isLoopbackHost(url.hostname)
      ? null
      : `http is allowed only for loopback hosts (http://127.0.0.1:PORT/..., RFC 8252 7.3); register https://${url.host}${url.pathname} instead`;
  }
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return null;
  return `"${scheme}:" is neither https, http on a loopback host, nor a private-use scheme of a native app (reverse domain name, e.g. com.example.app:/callback, RFC 8252 7.1)`;
}

/** localhost, 127.0.0.0/8 or ::1 (URL gives IPv6 hosts in brackets). */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

/**
 * RFC 9700 2.1, 4.1.1: an app registered before the redirect URI rules with a URI they
 * refuse (plain http to a host that is not loopback) gets no code there: a page, no
 * redirect, naming the fix.
 */
export function redirectUriIsAllowed(draft: AuthorizationDraft): void {
  const problem = redirectUriProblem(draft.redirectUri!);
  if (problem !== null) {
    throw invalidRequest(`redirect_uri: ${problem}. The app's developer must register an allowed redirect URI; no code is sent to this one.`);
  }
}

/** state goes back as sent, so it must be one value; an app may send none. */
export function stateIsSingle(draft: AuthorizationDraft): void {
  draft.state = null; // a repeated state cannot be echoed: its error goes back without one
  draft.state = single(draft.params, 'state') ?? null;
}

/** RFC 6749 4.1.1: response_type=code, the only flow served (no implicit flow, RFC 9700 2.1.2). */
export function responseTypeIsCode(draft: AuthorizationDraft): void {
  const responseType = required(draft.params, 'response_type');
  if (responseType !== 'code') throw new DomainError('unsupported_response_type', `response_type: "${responseType}" is not supported; use code.`);
}

/** Spec 4.16: scope is required, space-separated scope tokens (RFC 6749 3.3). */
export function scopeIsGiven(draft: AuthorizationDraft): void {
  draft.scopes = scopesOf(required(draft.params, 'scope'));
}

/** Spec 2.8, 7: every scope is one of the service's and enabled for this app; openid is added. */
export function scopesAreEnabled(draft: AuthorizationDraft): void {
  draft.scopes = enabledScopes(draft.app!, draft.scopes!);
}

/** RFC 7636 4.4.1, spec 5 rule 1: PKCE is mandatory; the challenge is an S256 value. */
export function codeChallengeIsGiven(draft: AuthorizationDraft): void {
  const challenge = single(draft.params, 'code_challenge');
  if (challenge === undefined) throw invalidRequest('code_challenge: required (PKCE, S256).');
  if (!S256_CHALLENGE.test(challenge)) throw invalidRequest('code_challenge: must be BASE64URL(SHA-256(code_verifier)), 43 characters.');
  draft.codeChallenge = challenge;
}

/** Spec 4.16, RFC 9700 2.1.1: code_challenge_method=S256, the only one (no plain). */
export function challengeMethodIsS256(draft: AuthorizationDraft): void {
  const method = single(draft.params, 'code_challenge_method');
  if (method !== 'S256') throw invalidRequest(`code_challenge_method: must be S256${method === undefined ? '' : `, not "${method}"`}.`);
}

/** Failures shown on a page (never redirected). */
export const CLIENT_RULES: readonly AuthorizeRule[] = [clientIsKnown, redirectUriIsRegistered, redirectUriIsAllowed];
/** Failures redirected to the app with error, error_description, state and iss. */
export const REQUEST_RULES: readonly AuthorizeRule[] = [stateIsSingle, responseTypeIsCode, scopeIsGiven, scopesAreEnabled, codeChallengeIsGiven, challengeMethodIsS256];

/** Space-separated scope tokens (RFC 6749 3.3); invalid_request when malformed. */
export function scopesOf(scope: string): string[] {
  if (!SCOPE.test(scope)) throw invalidRequest('scope: space-separated scope names.');
  return [...new Set(scope.split(' '))];
}

/** `scopes` with openid, or invalid_scope naming those unknown or not enabled for the app. */
export function enabledScopes(app: App, scopes: string[]): string[] {
  const unknown = scopes.filter((s) => !(OAUTH_SCOPES as string[]).includes(s));
  if (unknown.length > 0) throw new DomainError('invalid_scope', `scope: unknown ${unknown.join(' ')}.`);
  const all = withOpenid(scopes);
  const disabled = all.filter((s) => !app.scopes.includes(s) && s !== 'openid');
  if (disabled.length > 0) throw new DomainError('invalid_scope', `scope: not enabled for this app: ${disabled.join(' ')}.`);
  return all;
}

// ---------------------------------------------------------------- /oauth/token and /oauth/revoke

/** A token or revocation request as the rules establish it. */
export interface ClientDraft {
  params: Params;
  app?: App;
}

type ClientRule = (draft: ClientDraft, deps: ServerDeps) => void | Promise<void>;

/** RFC 6749 2.3, spec 5: a public client names itself with client_id (no secret; PKCE binds the code). */
export async function clientIdIsKnown(draft: ClientDraft, deps: ServerDeps): Promise<void> {
  const clientId = required(draft.params, 'client_id');
  const app = UUID.test(clientId) ? await deps.store.accounts.getApp(clientId) : null;
  if (!app || !app.active) throw new DomainError('invalid_client', 'client_id: no such app.');
  draft.app = app;
}

export interface TokenDraft extends ClientDraft {
  grantType?: 'authorization_code' | 'refresh_token';
}

/** RFC 6749 4.1.3, 6: grant_type is given and one of the two served. */
export function grantTypeIsSupported(draft: TokenDraft): void {
  const grantType = required(draft.params, 'grant_type');
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new DomainError('unsupported_grant_type', `grant_type: "${grantType}" is not supported; use authorization_code or refresh_token.`);
  }
  draft.grantType = grantType;
}

/** The token endpoint's checks before the grant's own (RFC 6749 5.2 order: request, client, grant). */
export const TOKEN_RULES: readonly ClientRule[] = [grantTypeIsSupported, clientIdIsKnown];

/** The authorization_code grant's parameters (RFC 6749 4.1.3, RFC 7636 4.5). */
export function codeGrantParams(params: Params): { code: string; redirectUri: string; codeVerifier: string } {
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const codeVerifier = required(params, 'code_verifier');
  if (!CODE_VERIFIER.test(codeVerifier)) throw invalidRequest('code_verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 4.1).');
  return { code, redirectUri, codeVerifier };
}

/** The refresh_token grant's parameters (RFC 6749 6): the token, and an optional narrower scope. */
export function refreshGrantParams(params: Params): { refreshToken: string; scopes: string[] | null } {
  const refreshToken = required(params, 'refresh_token');
  const scope = single(params, 'scope');
  return { refreshToken, scopes: scope === undefined ? null : scopesOf(scope) };
}

/** RFC 7009 2.1, spec 4.16: the token, and a hint that, when sent, names a token type (it is echoed in oauth.token.revoked). */
export function revocationParams(params: Params): { token: string; hint: TokenTypeHint | null } {
  const token = required(params, 'token');
  const hint = single(params, 'token_type_hint');
  if (hint !== undefined && !(TOKEN_TYPE_HINTS as readonly string[]).includes(hint)) throw invalidRequest(`token_type_hint: refresh_token or access_token, not "${hint}".`);
  return { token, hint: (hint as TokenTypeHint | undefined) ?? null };
}

/** The revocation endpoint's checks (RFC 7009 2.1: client authentication, here client_id). */
export const REVOKE_RULES: readonly ClientRule[] = [clientIdIsKnown];

/** Runs `rules` in order on `draft`: the first failure is thrown. */
export async function runRules<D>(rules: readonly ((draft: D, deps: ServerDeps) => void | Promise<void>)[], draft: D, deps: ServerDeps): Promise<D> {
  for (const rule of rules) await rule(draft, deps);
  return draft;
}
