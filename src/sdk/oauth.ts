// OAuth 2.0 authorization code flow with PKCE for apps (RFC 6749 4.1, RFC 7636 S256,
// spec 4.16, decisions.md 7), on fetch and WebCrypto so it runs in Node and browsers.
// An app: createPkce() and randomState(), keep both; send the user to
// authorizationUrl(); on the redirect back, authorizationCode() checks `state` (and
// `iss`) and gives the code; exchangeCode() turns it into tokens.
import { base64urlnopad } from '@scure/base';
import { requestJson } from './client.js';
import { ProvenantError } from './errors.js';
import type { TokenResponse, UserInfo } from '../api/index.js';

/** Spec 2.8: the token response, and userinfo (fields present as the granted scopes allow): inferred from provenant/api. */
export type { TokenResponse, UserInfo } from '../api/index.js';

export interface Pkce {
  /** Kept by the app until the code exchange (RFC 7636 4.1: 43 characters of base64url). */
  codeVerifier: string;
  /** BASE64URL(SHA-256(verifier)) (RFC 7636 4.2, S256). */
  codeChallenge: string;
}

/** Where the app's OAuth calls go: the service's base URL (the issuer), the app's client_id. */
export interface OAuthApp {
  baseUrl: string;
  clientId: string;
  fetch?: typeof fetch;
}

function randomBase64url(bytes: number): string {
  return base64urlnopad.encode(globalThis.crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The S256 challenge of a verifier (RFC 7636 4.2). */
export async function codeChallengeOf(codeVerifier: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return base64urlnopad.encode(new Uint8Array(digest));
}

/** A fresh verifier (32 random bytes, RFC 7636 7.1) and its S256 challenge. */
export async function createPkce(): Promise<Pkce> {
  const codeVerifier = randomBase64url(32);
  return { codeVerifier, codeChallenge: await codeChallengeOf(codeVerifier) };
}

/** An unguessable `state` (RFC 6749 10.12: CSRF protection), kept by the app until the redirect. */
export function randomState(): string {
  return randomBase64url(16);
}

const base = (app: OAuthApp): string => app.baseUrl.replace(/\/+$/, '');

/** The URL of the authorize endpoint with every parameter spec 4.16 requires (S256 only). */
export function authorizationUrl(app: OAuthApp, params: { redirectUri: string; scope: string | string[]; state: string; codeChallenge: string }): string {
  const url = new URL(`${base(app)}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: params.redirectUri,
    scope: Array.isArray(params.scope) ? params.scope.join(' ') : params.scope,
    state: params.state,
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
}

/**
 * The code from the redirect back to the app: its `state` must be the one sent (else
 * `invalid_state`), its `iss`, when present, the service (RFC 9207, else
 * `invalid_issuer`); an `error` parameter rejects with that OAuth error code.
 */
export function authorizationCode(app: OAuthApp, redirectedTo: string | URL, expectedState: string): string {
  const params = new URL(redirectedTo).searchParams;
  if (params.get('state') !== expectedState) throw new ProvenantError(400, 'invalid_state', 'the redirect carries another state: not the answer to this request');
  const iss = params.get('iss');
  if (iss !== null && iss.replace(/\/+$/, '') !== base(app)) throw new ProvenantError(400, 'invalid_issuer', `the redirect names issuer ${iss}, not ${base(app)}`);
  const error = params.get('error');
  if (error !== null) throw new ProvenantError(400, error, params.get('error_description') ?? error);
  const code = params.get('code');
  if (code === null || code === '') throw new ProvenantError(400, 'invalid_request', 'the redirect carries no code');
  return code;
}

function postJson<T>(app: OAuthApp, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<T> {
  const fetchImpl = app.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return requestJson<T>(fetchImpl, `${base(app)}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Spec 4.16: the code and the PKCE verifier for tokens. */
export function exchangeCode(app: OAuthApp, params: { code: string; redirectUri: string; codeVerifier: string }): Promise<TokenResponse> {
  return postJson(app, '/oauth/token', {
    grant_type: 'authorization_code',
    code: params.code,
    redirect_uri: params.redirectUri,
    client_id: app.clientId,
    code_verifier: params.codeVerifier,
  });
}

/** decisions.md 7: a new access token for a refresh token (which is not rotated); `scope` may only narrow. */
export function refreshAccessToken(app: OAuthApp, refreshToken: string, scope?: string | string[]): Promise<TokenResponse> {
  const body: Record<string, unknown> = { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId };
  if (scope !== undefined) body.scope = Array.isArray(scope) ? scope.join(' ') : scope;
  return postJson(app, '/oauth/token', body);
}

/** Spec 4.16: revokes a refresh token (an access token or an invalid one still answers 200). */
export async function revokeToken(app: OAuthApp, token: string, tokenTypeHint: 'refresh_token' | 'access_token' = 'refresh_token'): Promise<void> {
  await postJson(app, '/oauth/revoke', { token, token_type_hint: tokenTypeHint, client_id: app.clientId });
}

/** Spec 4.16: who the access token belongs to (also how a client validates one). */
export function userInfo(app: Pick<OAuthApp, 'baseUrl' | 'fetch'>, accessToken: string): Promise<UserInfo> {
  const fetchImpl = app.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return requestJson<UserInfo>(fetchImpl, `${base(app as OAuthApp)}/oauth/userinfo`, {
    method: 'GET',
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
}
