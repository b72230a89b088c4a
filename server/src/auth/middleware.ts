// Bearer authentication. A token is tried against each verifier of the server in turn
// (`deps.tokenVerifiers`, built by the composition root): JWT session tokens now; OAuth
// access tokens (opaque, looked up by hash, with scopes) join that list without
// touching any route.
import type { Context, Next } from 'koa';
import { ApiError } from '../errors.js';
import type { AuthState } from '../types.js';
import { depsOf, type ServerDeps } from '../deps.js';
import { verifySessionToken } from './tokens.js';

/** Returns the caller a token stands for, or null when the token is not of its kind or invalid. */
export type TokenVerifier = (deps: ServerDeps, token: string) => Promise<AuthState | null>;

export type Scope = 'sign' | 'verify';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Session tokens: scopes null (everything the user may do); a carried app must still be the user's. */
export const sessionTokenVerifier: TokenVerifier = async (deps, token) => {
  if (!JWT_SHAPE.test(token)) return null;
  const claims = await verifySessionToken(deps, token);
  if (!claims) return null;
  if (!(await deps.store.accounts.getUser(claims.userId))) return null;
  if (claims.appId) {
    const app = await deps.store.accounts.getApp(claims.appId);
    if (!app || app.ownerId !== claims.userId) return null;
  }
  return { userId: claims.userId, kind: 'session', appId: claims.appId, scopes: null };
};

export function bearerToken(ctx: Pick<Context, 'get'>): string | null {
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(ctx.get('authorization'));
  return m ? m[1] : null;
}

function invalidToken(message?: string): ApiError {
  return new ApiError('invalid_token', message, {}, { 'WWW-Authenticate': 'Bearer' });
}

/** The caller of a request with a valid bearer token; null without an Authorization header. Throws invalid_token for a bad one. */
export async function authenticate(ctx: Context): Promise<AuthState | null> {
  if (!ctx.get('authorization')) return null;
  const token = bearerToken(ctx);
  if (!token) throw invalidToken('Send the token as Authorization: Bearer <token>.');
  const deps = depsOf(ctx);
  for (const verify of deps.tokenVerifiers) {
    const auth = await verify(deps, token);
    if (auth) return auth;
  }
  throw invalidToken();
}

/** Whether `auth` may act with `scope` (session tokens may do everything). */
export function hasScope(auth: AuthState, scope: Scope): boolean {
  return auth.scopes === null || auth.scopes.includes(scope);
}

/**
 * Requires a valid bearer token and sets `ctx.state.auth`; with `scope`, an OAuth token
 * must carry it (403 insufficient_scope otherwise).
 */
export function requireAuth(scope?: Scope) {
  return async function requireAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx);
    if (!auth) throw invalidToken('This endpoint needs Authorization: Bearer <token>.');
    if (scope && !hasScope(auth, scope)) {
      throw new ApiError('insufficient_scope', `This token lacks the "${scope}" scope.`, { scope }, {
        'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
      });
    }
    ctx.state.auth = auth;
    await next();
  };
}
