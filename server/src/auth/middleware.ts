// Bearer authentication and who may call a route. A token is tried against each
// verifier of the server in turn (`deps.tokenVerifiers`, built by the composition
// root): JWT session tokens, then OAuth access tokens (opaque, looked up by hash, with
// scopes).
//
// Every authenticated route names its policy: `requireAuth(deps, SESSION_ONLY)` or
// `requireAuth(deps, sessionOrScope('sign'))`. An app's OAuth access token is admitted
// only where the policy names the scope that admits it (spec 5: `verify` for quota and
// own signatures, `sign` for signing, revoking, thumbnails and fingerprints); every
// other route refuses it (403 forbidden). Refusal is the default: a route added later
// that names no scope cannot be reached with an app's token (issue 25, item 1: an
// `openid` token used to create apps, mint session tokens and link device keys).
import type { Context, Next } from 'koa';
import { ApiError } from '../errors.js';
import type { AuthState } from '../types.js';
import type { ServerDeps, TokenVerifier } from '../deps.js';
import { sessionOfToken } from '../domain/sessions.js';

export type Scope = 'sign' | 'verify';

/** Who may call a route. */
export interface AuthPolicy {
  /** The OAuth scope whose access tokens the route admits; absent: session tokens only (the default). */
  readonly oauthScope?: Scope;
}

/** Session tokens only: the user signed in, never an app acting for them. */
export const SESSION_ONLY: AuthPolicy = Object.freeze({});

/** Session tokens, and OAuth access tokens that carry `scope` (spec 5). */
export function sessionOrScope(scope: Scope): AuthPolicy {
  return Object.freeze({ oauthScope: scope });
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Session tokens: scopes null (everything the user may do). The token must be signed,
 * unexpired, issued after the user's last "sign out everywhere" or password change,
 * its device key (vault login) still linked, and its app (developer token) still the
 * user's (domain/sessions.ts sessionOfToken).
 */
export const sessionTokenVerifier: TokenVerifier = async (deps, token) => {
  if (!JWT_SHAPE.test(token)) return null;
  const session = await sessionOfToken(deps, token);
  if (!session) return null;
  return { userId: session.user.id, kind: 'session', appId: session.appId, scopes: null };
};

export function bearerToken(ctx: Pick<Context, 'get'>): string | null {
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(ctx.get('authorization'));
  return m ? m[1] : null;
}

function invalidToken(message?: string): ApiError {
  return new ApiError('invalid_token', message, {}, { 'WWW-Authenticate': 'Bearer' });
}

/** The caller of a request with a valid bearer token; null without an Authorization header. Throws invalid_token for a bad one. */
export async function authenticate(deps: ServerDeps, ctx: Context): Promise<AuthState | null> {
  if (!ctx.get('authorization')) return null;
  const token = bearerToken(ctx);
  if (!token) throw invalidToken('Send the token as Authorization: Bearer <token>.');
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

/** What `policy` makes of a valid caller: nothing (admitted), or the refusal to throw. */
export function refusal(auth: AuthState, policy: AuthPolicy): ApiError | null {
  if (auth.kind === 'session') return null;
  const scope = policy.oauthScope;
  if (scope === undefined) {
    return new ApiError('forbidden', 'This endpoint takes the user\'s session token; an app\'s access token is not accepted here.');
  }
  if (!hasScope(auth, scope)) {
    return new ApiError('insufficient_scope', `This token lacks the "${scope}" scope.`, { scope }, {
      'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
    });
  }
  return null;
}

/**
 * Requires a valid bearer token (401 invalid_token) that `policy` admits (403
 * forbidden for an app's token on a session-only route, 403 insufficient_scope for one
 * without the named scope), and sets `ctx.state.auth`.
 */
export function requireAuth(deps: ServerDeps, policy: AuthPolicy) {
  return async function requireAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(deps, ctx);
    if (!auth) throw invalidToken('This endpoint needs Authorization: Bearer <token>.');
    const refused = refusal(auth, policy);
    if (refused) throw refused;
    ctx.state.auth = auth;
    await next();
  };
}
