// JWT session tokens (decisions.md 5): HS256 under jwt.key (PROVENANT_SECRETS_DIR), 24 hours,
// `sub` = user id and an optional `app_id` claim for developer tokens.
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Config } from '../config.js';
import { loadSecret } from '../secrets.js';

export const SESSION_TTL_SECONDS = 24 * 60 * 60;
const ISSUER = 'provenant';
const AUDIENCE = 'provenant-session';

export interface SessionClaims {
  userId: string;
  appId: string | null;
  expiresAt: number;
}

/** The secrets directory whose jwt.key signs the tokens. */
type TokenDeps = { config: Pick<Config, 'secretsDir'> };

function key(deps: TokenDeps): Uint8Array {
  return new Uint8Array(loadSecret(deps.config, 'jwt.key'));
}

/** A signed session token for `userId`, optionally carrying `appId` (a developer token). */
export async function issueSessionToken(deps: TokenDeps, userId: string, appId?: string | null): Promise<string> {
  const jwt = new SignJWT(appId ? { app_id: appId } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${SESSION_TTL_SECONDS}s`);
  return jwt.sign(key(deps));
}

/** The claims of a valid, unexpired session token, or null. */
export async function verifySessionToken(deps: TokenDeps, token: string): Promise<SessionClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key(deps), { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE });
    if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
    const appId = typeof payload.app_id === 'string' ? payload.app_id : null;
    return { userId: payload.sub, appId, expiresAt: payload.exp * 1000 };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
}
