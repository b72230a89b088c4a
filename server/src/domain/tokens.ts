// JWT session tokens (decisions.md 5): HS256 under jwt.key (PROVENANT_SECRETS_DIR), 24 hours,
// `sub` = user id, an optional `app_id` claim for developer tokens, an optional `agent`
// claim (the device key of a vault login), and `iat_ms`: the issue time in
// milliseconds, which the per-user sessions cut-off ("sign out everywhere", a password
// change) is compared with (`iat` has whole seconds: a token issued in the same second
// after a sign-out must still work).
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Secrets } from '../secrets.js';

export const SESSION_TTL_SECONDS = 24 * 60 * 60;
const ISSUER = 'provenant';
const AUDIENCE = 'provenant-session';

export interface SessionClaims {
  userId: string;
  appId: string | null;
  /** The device key a vault login signed in with (its unlinking ends the token). */
  agentKey: string | null;
  /** Unix ms (`iat_ms`; `iat` x 1000 for a token issued before the claim existed). */
  issuedAt: number;
  expiresAt: number;
}

/** The keys, whose jwt.key signs the tokens. */
type TokenDeps = { secrets: Secrets };

function key(deps: TokenDeps): Uint8Array {
  return new Uint8Array(deps.secrets.key('jwt.key'));
}

/** A signed session token for `userId`, optionally carrying `appId` (a developer token) or the device key of a vault login. */
export async function issueSessionToken(deps: TokenDeps, userId: string, appId?: string | null, agentKey?: string | null): Promise<string> {
  const now = Date.now();
  const claims: Record<string, string | number> = { iat_ms: now };
  if (appId) claims.app_id = appId;
  if (agentKey) claims.agent = agentKey;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(now / 1000) + SESSION_TTL_SECONDS);
  return jwt.sign(key(deps));
}

/** The claims of a valid, unexpired session token, or null. */
export async function verifySessionToken(deps: TokenDeps, token: string): Promise<SessionClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key(deps), { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE });
    if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
    const appId = typeof payload.app_id === 'string' ? payload.app_id : null;
    const agentKey = typeof payload.agent === 'string' ? payload.agent : null;
    const issuedAt = Number.isSafeInteger(payload.iat_ms) ? (payload.iat_ms as number) : typeof payload.iat === 'number' ? payload.iat * 1000 : 0;
    return { userId: payload.sub, appId, agentKey, issuedAt, expiresAt: payload.exp * 1000 };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
}
