// OAuth 2.0 + PKCE, what is not HTTP (spec 2.8, 3.4, 4.16; decisions.md 7; RFC 6749,
// RFC 7636, RFC 7009, RFC 9700): consent and codes, the code and refresh grants, token
// revocation, what an access token stands for, the user's authorized apps.
//
// Codes and tokens are 32 random bytes (base64url), handed out once and stored only
// as their SHA-256: a database reader learns nothing usable. A lookup by that hash is
// an index probe on a value the caller cannot steer toward a stored one (it would need
// a preimage), so it leaks nothing by its timing; the PKCE verifier, which is compared
// against a stored value, is compared in constant time. Access tokens are opaque
// (spec 2.8): `pvat_...`, refresh tokens `pvrt_...`, so that a token says what it is.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';
import type { App, OAuthAccess, OAuthGrant, OAuthGrantListing, OutboxEvent, User } from '../store/index.js';
import type { DomainDeps } from './deps.js';

/** Spec 3.4, 8. */
export const CODE_TTL_MS = 10 * 60_000;
export const ACCESS_TOKEN_TTL_SECONDS = 24 * 60 * 60;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60_000;

const ACCESS_TOKEN_PREFIX = 'pvat_';
const REFRESH_TOKEN_PREFIX = 'pvrt_';

/** Spec 2.8, in the words the consent page shows. */
export const SCOPE_WORDS = {
  openid: 'Know who you are (an account id)',
  display_name: 'See your display name',
  username: 'See your username',
  email: 'See your e-mail address',
  profile_picture: 'See your profile picture',
  did: 'See your DID',
  public_key: 'See your public signing key',
  holochain: 'See your public signing key and DID',
  sign: 'Create and manage signatures on your behalf (signing, revoking, thumbnails, fingerprints)',
  verify: 'See your signing quota and your own signatures',
} as const;

export type OAuthScope = keyof typeof SCOPE_WORDS;
export const OAUTH_SCOPES = Object.keys(SCOPE_WORDS) as OAuthScope[];

/** What a token endpoint answers (spec 2.8). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scopes: string[];
}

/** SHA-256 hex: the only form in which codes and tokens are stored. */
export function tokenHash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function randomToken(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** RFC 7636 4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** The verifier's S256 against the stored challenge, in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(s256(verifier));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** `openid` always, then the requested scopes once each, in the order asked (spec 2.8). */
export function withOpenid(scopes: readonly string[]): string[] {
  return [...new Set(['openid', ...scopes])];
}

/** Whether the grant already holds every scope asked for: then no consent (decisions.md 7). */
export function scopesGranted(grant: OAuthGrant | null, scopes: readonly string[]): boolean {
  return grant !== null && scopes.every((s) => grant.scopes.includes(s));
}

/** The address the `email` scope shares: only a verified one (spec 2.8); null when the account has none. */
export function shareableEmail(user: User): string | null {
  return user.emailVerified && user.email ? user.email : null;
}

/** What a code is issued for: the checked authorization request. */
export interface CodeRequest {
  app: App;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string;
}

function newCode(request: CodeRequest, now: number) {
  const code = randomToken();
  return {
    code,
    row: { hash: tokenHash(code), redirectUri: request.redirectUri, scopes: request.scopes, codeChallenge: request.codeChallenge, expiresAt: now + CODE_TTL_MS },
  };
}

/**
 * A code for scopes the user granted this app before: no consent, no event
 * (decisions.md 7). Null when the grant does not cover them (or went meanwhile).
 */
export async function codeForGrantedScopes(deps: DomainDeps, user: User, request: CodeRequest): Promise<string | null> {
  const grant = await deps.store.oauth.getGrant(user.id, request.app.id);
  if (!scopesGranted(grant, request.scopes)) return null;
  const now = Date.now();
  const { code, row } = newCode(request, now);
  return (await deps.store.oauth.createCode(grant!.id, row, now)) ? code : null;
}

/**
 * The user approved on the consent page: the grant takes the scopes (with `email`,
 * the verified address as it is now), `oauth.authorized` goes to the outbox with it
 * (spec 6: consent only), and a code is issued.
 */
export async function consent(deps: DomainDeps, user: User, request: CodeRequest): Promise<string> {
  const now = Date.now();
  const { code, row } = newCode(request, now);
  const event: OutboxEvent = { appId: request.app.id, type: 'oauth.authorized', payload: { user_id: user.id, scopes: request.scopes } };
  await deps.store.oauth.consent({
    grantId: randomUUID(),
    userId: user.id,
    appId: request.app.id,
    scopes: request.scopes,
    sharedEmail: request.scopes.includes('email') ? shareableEmail(user) : undefined,
    code: row,
    events: [event],
    now,
  });
  return code;
}

async function issueTokens(deps: DomainDeps, issue: (tokens: { access: { hash: string; expiresAt: number }; refresh: { hash: string; expiresAt: number } }, now: number) => Promise<string[]>): Promise<TokenSet> {
  const now = Date.now();
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX);
  const refreshToken = randomToken(REFRESH_TOKEN_PREFIX);
  const scopes = await issue(
    { access: { hash: tokenHash(accessToken), expiresAt: now + ACCESS_TOKEN_TTL_SECONDS * 1000 }, refresh: { hash: tokenHash(refreshToken), expiresAt: now + REFRESH_TOKEN_TTL_MS } },
    now,
  );
  return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, scopes };
}

/**
 * The authorization_code grant (RFC 6749 4.1.3, RFC 7636 4.6): the code must be known,
 * unused, this client's, for this redirect_uri, unexpired, and the verifier's S256 its
 * challenge. A used code fails and revokes every token issued from it (RFC 9700
 * 4.5); a refused one is used up all the same.
 */
export async function exchangeCode(deps: DomainDeps, input: { clientId: string; code: string; redirectUri: string; codeVerifier: string }): Promise<TokenSet> {
  return issueTokens(deps, async (tokens, now) => {
    const redemption = await deps.store.oauth.redeemCode(tokenHash(input.code), now, (code) => {
      if (code.appId !== input.clientId) return 'The code was issued to another client.';
      if (code.redirectUri !== input.redirectUri) return 'redirect_uri differs from the one of the authorization request.';
      if (code.expiresAt <= now) return 'The code has expired (codes live 10 minutes).';
      if (!verifierMatches(input.codeVerifier, code.codeChallenge)) return 'code_verifier does not match the code_challenge (S256).';
      return null;
    }, tokens);
    switch (redemption.outcome) {
      case 'issued':
        return redemption.code.scopes;
      case 'unknown':
        throw new DomainError('invalid_grant', 'The code is unknown.');
      case 'replayed':
        throw new DomainError('invalid_grant', 'The code was already used; every token issued from it is now revoked.');
      case 'refused':
        throw new DomainError('invalid_grant', redemption.problem);
    }
  });
}

/**
 * The refresh_token grant (RFC 6749 6): a new access token; the refresh token is not
 * rotated (spec 3.4) and is answered as sent; `scope` may only narrow.
 */
export async function refreshAccess(deps: DomainDeps, input: { clientId: string; refreshToken: string; scopes: string[] | null }): Promise<TokenSet> {
  const now = Date.now();
  const hash = tokenHash(input.refreshToken);
  const refresh = input.refreshToken.startsWith(REFRESH_TOKEN_PREFIX) ? await deps.store.oauth.getRefreshToken(hash) : null;
  if (refresh === null || refresh.revokedAt !== null || refresh.expiresAt <= now || refresh.appId !== input.clientId) {
    throw new DomainError('invalid_grant', 'The refresh token is unknown, revoked, expired or not this client\'s.');
  }
  const scopes = input.scopes === null ? refresh.scopes : withOpenid(input.scopes);
  const wider = scopes.filter((s) => !refresh.scopes.includes(s));
  if (wider.length > 0) throw new DomainError('invalid_scope', `scope may only narrow the refresh token's (${refresh.scopes.join(' ')}); not granted: ${wider.join(' ')}.`);
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX);
  const added = await deps.store.oauth.addAccessToken(hash, { hash: tokenHash(accessToken), expiresAt: now + ACCESS_TOKEN_TTL_SECONDS * 1000, scopes }, now);
  if (!added) throw new DomainError('invalid_grant', 'The refresh token was revoked.');
  return { accessToken, refreshToken: input.refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, scopes };
}

/**
 * The user whose grant a token or revocation request presents: the user of its code or
 * refresh token, or null when it names none known. A read that uses nothing up and
 * decides nothing (the grant's own checks come after): the token endpoint counts a
 * client's successes per user with it (oauth/limits.ts), so that one user's traffic
 * cannot spend another's.
 */
export async function grantHolder(deps: DomainDeps, presented: { code?: string; refreshToken?: string }): Promise<string | null> {
  if (presented.refreshToken !== undefined) {
    if (!presented.refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) return null;
    return (await deps.store.oauth.getRefreshToken(tokenHash(presented.refreshToken)))?.userId ?? null;
  }
  if (presented.code !== undefined) return deps.store.oauth.userOfCode(tokenHash(presented.code));
  return null;
}

export const TOKEN_TYPE_HINTS = ['refresh_token', 'access_token'] as const;
export type TokenTypeHint = (typeof TOKEN_TYPE_HINTS)[number];

/**
 * RFC 7009 with spec 4.16: only refresh tokens are revoked, and only by their own
 * client; revoking one ends the access tokens issued from it and writes
 * `oauth.token.revoked` with the hint sent (refresh_token when none). Anything else
 * (an access token, an unknown or revoked token, another client's) changes nothing.
 * True when a token was revoked (the rate limit counts the others as failures).
 */
export async function revokeToken(deps: DomainDeps, input: { clientId: string; token: string; hint: TokenTypeHint | null }): Promise<boolean> {
  if (!input.token.startsWith(REFRESH_TOKEN_PREFIX)) return false;
  return deps.store.oauth.revokeRefreshToken(tokenHash(input.token), input.clientId, Date.now(), (token) => [
    { appId: token.appId, type: 'oauth.token.revoked', payload: { token_type: input.hint ?? 'refresh_token' } },
  ]);
}

/** What a valid access token stands for; null for anything else (a session token, an expired or revoked token). */
export async function accessOf(deps: DomainDeps, token: string): Promise<OAuthAccess | null> {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return null;
  return deps.store.oauth.findAccessToken(tokenHash(token), Date.now());
}

/** What userinfo draws from (spec 2.8): the user, their primary agent key, the e-mail shared with the app. */
export interface UserInfoSource {
  user: User;
  agentKey: string | null;
  sharedEmail: string | null;
  scopes: string[];
}

export async function userInfoOf(deps: DomainDeps, access: OAuthAccess): Promise<UserInfoSource> {
  const [user, agents, grant] = await Promise.all([
    deps.store.accounts.getUser(access.userId),
    deps.store.accounts.listAgents(access.userId),
    deps.store.oauth.getGrant(access.userId, access.appId),
  ]);
  if (!user || !grant) throw new DomainError('invalid_token');
  const primary = agents.find((a) => a.unlinkedAt === null);
  return { user, agentKey: primary?.agentKey ?? null, sharedEmail: grant.sharedEmail, scopes: access.scopes };
}

/** The apps the user granted access to (GET /api/v1/account/apps). */
export function authorizedApps(deps: DomainDeps, userId: string): Promise<OAuthGrantListing[]> {
  return deps.store.oauth.listGrants(userId);
}

/** Revokes an app's access: the grant, its shared e-mail copy and every code and token go. */
export async function revokeAuthorizedApp(deps: DomainDeps, userId: string, appId: string): Promise<void> {
  if (!(await deps.store.oauth.deleteGrant(userId, appId))) throw new DomainError('not_found', 'This app has no access to your account.');
}
