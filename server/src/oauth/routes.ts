// OAuth 2.0 + PKCE (spec 4.16, 5, 8; decisions.md 7): /oauth/authorize with its sign-in
// and consent pages, /oauth/token, /oauth/userinfo, /oauth/revoke; the server's
// metadata (RFC 8414) under /.well-known; the user's authorized apps under
// /api/v1/account. Each handler runs the rules of rules.ts in order, makes one domain
// call and presents the answer. Errors of token, userinfo and revoke are
// `{error, error_description}` with Cache-Control: no-store (spec 7, RFC 6749 5.2).
import { createHash } from 'node:crypto';
import { Router } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { ZodError } from 'zod';
import { bearerToken, requireAuth, SESSION_ONLY } from '../auth/middleware.js';
import { passwordAttempts } from '../auth/password-attempts.js';
import { SESSION_TTL_SECONDS } from '../domain/tokens.js';
import { jsonBody } from '../body.js';
import type { ServerDeps } from '../deps.js';
import {
  accessOf, authorizedApps, codeForGrantedScopes, consent, exchangeCode, refreshAccess, revokeAuthorizedApp, revokeToken, shareableEmail, userInfoOf,
} from '../domain/oauth.js';
import { login, sessionOfToken } from '../domain/sessions.js';
import { ApiError, DomainError } from '../errors.js';
import { zodMessage } from '../middleware.js';
import { clientKey, rateLimit } from '../ratelimit.js';
import type { User } from '../store/index.js';
import { consentPage, csrfTokenValid, errorPage, SESSION_COOKIE, setSessionCookie, signInPage, type PageRequest } from './pages.js';
import { authorizedAppsAnswer, metadataAnswer, tokenAnswer, userInfoAnswer } from './present.js';
import {
  CLIENT_RULES, codeGrantParams, REQUEST_RULES, refreshGrantParams, REVOKE_RULES, revocationParams, runRules, TOKEN_RULES,
  type AuthorizationDraft, type AuthorizationRequest, type ClientDraft, type Params, type TokenDraft,
} from './rules.js';
import { perClientOutcomeLimit, recordOutcome } from './limits.js';
import { consentForm, signInForm } from './schema.js';
import { rateLimitOf } from '../rate-limits.js';

export const OAUTH_PREFIX = '/oauth';
export const WELL_KNOWN_PREFIX = '/.well-known';
export const ACCOUNT_PREFIX = '/api/v1/account';

/** OAuth bodies are a few parameters: a small limit, read before the per-client limit needs client_id. */
const OAUTH_BODY_BYTES = 16 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** RFC 6749 5.1, 5.2: token answers, success or not, are never cached. */
function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/** Spec 7: OAuth errors as `{error, error_description}` (plus the table's extra fields, e.g. retry_after), never cached. */
async function oauthErrors(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    let apiErr: ApiError;
    if (err instanceof DomainError) apiErr = ApiError.of(err);
    else if (err instanceof ZodError) apiErr = new ApiError('invalid_request', zodMessage(err));
    else throw err;
    ctx.status = apiErr.status;
    ctx.set(apiErr.headers);
    noStore(ctx);
    ctx.body = { error: apiErr.code, error_description: apiErr.message, ...apiErr.extra };
  }
}

/** The parameters of a token or revocation request: a JSON object or a form (decisions.md 7). */
function bodyParams(ctx: Context): Params {
  const body = ctx.request.body;
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DomainError('invalid_request', 'The body must be a JSON object or a form.');
  return body as Params;
}

/** Spec 8 "per token": the bearer token's SHA-256 (never the token itself), else the caller's address. */
function perToken(deps: ServerDeps) {
  return (ctx: Context): string => {
    const token = bearerToken(ctx);
    return token === null ? `ip:${clientKey(ctx, deps.config)}` : `token:${createHash('sha256').update(token).digest('hex')}`;
  };
}

// ---------------------------------------------------------------- /oauth/authorize

/** The user of the browser's session cookie (decisions.md 7), or null (also once the user signed out everywhere). */
async function sessionUser(ctx: Context, deps: ServerDeps): Promise<User | null> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) return null;
  return (await sessionOfToken(deps, token))?.user ?? null;
}

/**
 * Back to the app's (checked) redirect URI with `params`, `state` as sent and `iss`
 * (RFC 9207) on every answer: 302 from a GET, 303 after a form (RFC 9700 4.12: never 307).
 */
function redirectBack(ctx: Context, deps: ServerDeps, draft: AuthorizationDraft, params: Record<string, string>): void {
  const url = new URL(draft.redirectUri!);
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value);
  if (draft.state != null) url.searchParams.append('state', draft.state);
  url.searchParams.append('iss', deps.config.baseUrl);
  ctx.redirect(url.href);
  ctx.status = ctx.method === 'POST' ? 303 : 302;
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
}

/** The code at once for scopes granted before, else the consent page. */
async function codeOrConsent(ctx: Context, deps: ServerDeps, user: User, request: AuthorizationRequest, page: PageRequest): Promise<void> {
  const code = await codeForGrantedScopes(deps, user, request);
  if (code !== null) return redirectBack(ctx, deps, request, { code });
  consentPage(ctx, deps, {
    ...page,
    scopes: request.scopes,
    userId: user.id,
    userLabel: user.email ?? user.username ?? user.displayName ?? user.id,
    email: shareableEmail(user),
  });
}

const FORGED_FORM = 'The form expired or did not come from this site; start again from the app.';

/**
 * The sign-in form: CSRF, the password windows it shares with POST /api/v1/auth/login
 * (`passwordLimit`: auth/password-attempts.ts; over them, the page again with 429), the
 * credentials, the session cookie, then the request again (303: GET).
 */
async function signIn(ctx: Context, deps: ServerDeps, request: AuthorizationRequest, page: PageRequest, form: Params, passwordLimit: Middleware): Promise<void> {
  if (!csrfTokenValid(ctx, deps, form.csrf_token, 'sign-in', request.app.id, '')) return errorPage(ctx, 403, 'invalid_request', FORGED_FORM);
  const fields = signInForm.safeParse(form);
  if (!fields.success) return signInPage(ctx, deps, page, zodMessage(fields.error));
  let token = '';
  try {
    await passwordLimit(ctx, async () => {
      token = (await login(deps, fields.data)).token;
    });
  } catch (err) {
    if (err instanceof DomainError && err.code === 'invalid_credentials') return signInPage(ctx, deps, page, err.message);
    if (err instanceof ApiError && err.code === 'rate_limited') {
      signInPage(ctx, deps, page, `Too many sign-in attempts; try again in ${err.extra.retry_after} s.`);
      ctx.status = 429;
      ctx.set(err.headers);
      return;
    }
    throw err;
  }
  setSessionCookie(ctx, deps.config, token, SESSION_TTL_SECONDS);
  ctx.redirect(`${OAUTH_PREFIX}/authorize?${ctx.querystring}`);
  ctx.status = 303;
  ctx.set('Cache-Control', 'no-store');
}

/** The consent form: CSRF bound to the signed-in user; deny is access_denied, approve records the consent and issues a code. */
async function decide(ctx: Context, deps: ServerDeps, request: AuthorizationRequest, page: PageRequest, form: Params): Promise<void> {
  const user = await sessionUser(ctx, deps);
  if (user === null) return signInPage(ctx, deps, page, 'Your session ended; sign in again.');
  if (!csrfTokenValid(ctx, deps, form.csrf_token, 'consent', request.app.id, user.id)) return errorPage(ctx, 403, 'invalid_request', FORGED_FORM);
  const fields = consentForm.safeParse(form);
  if (!fields.success) return errorPage(ctx, 400, 'invalid_request', zodMessage(fields.error));
  if (fields.data.decision === 'deny') return redirectBack(ctx, deps, request, { error: 'access_denied', error_description: 'The user denied the request.' });
  redirectBack(ctx, deps, request, { code: await consent(deps, user, request) });
}

/**
 * GET: the checks, then sign-in, consent or the code. POST: the same checks on the
 * same query string, then the posted form (sign-in or decision).
 */
async function authorize(ctx: Context, deps: ServerDeps, passwordLimit: Middleware): Promise<void> {
  const draft: AuthorizationDraft = { params: ctx.query as Params };
  try {
    await runRules(CLIENT_RULES, draft, deps);
  } catch (err) {
    if (err instanceof DomainError) return errorPage(ctx, 400, err.code, err.message);
    throw err;
  }
  try {
    await runRules(REQUEST_RULES, draft, deps);
  } catch (err) {
    if (err instanceof DomainError) return redirectBack(ctx, deps, draft, { error: err.code, error_description: err.message });
    throw err;
  }
  const request = draft as AuthorizationRequest;
  const page: PageRequest = { appName: request.app.name, clientId: request.app.id, redirectUri: request.redirectUri, query: ctx.querystring };
  if (ctx.method === 'POST') {
    const body = ctx.request.body;
    const form = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Params) : {};
    return 'decision' in form ? decide(ctx, deps, request, page, form) : signIn(ctx, deps, request, page, form, passwordLimit);
  }
  const user = await sessionUser(ctx, deps);
  if (user === null) return signInPage(ctx, deps, page);
  return codeOrConsent(ctx, deps, user, request, page);
}

// ---------------------------------------------------------------- the routers

export function oauthRoutes(deps: ServerDeps): Router {
  const router = new Router();
  const perIp = rateLimit(deps, rateLimitOf('oauth:authorize'));
  const body = jsonBody({ limitBytes: OAUTH_BODY_BYTES });

  // Spec 4.16, 8: public, 100/min per IP; the pages' forms post back here.
  const passwordLimit = passwordAttempts(deps);
  router.get('/authorize', perIp, (ctx) => authorize(ctx, deps, passwordLimit));
  router.post('/authorize', perIp, body, (ctx) => authorize(ctx, deps, passwordLimit));

  // Spec 4.16, 5, 8: JSON or a form; 50/min per client, failures per client and address (limits.ts).
  router.post('/token', oauthErrors, body, perClientOutcomeLimit(deps, 'oauth:token'), async (ctx) => {
    noStore(ctx);
    const draft = await runRules<TokenDraft>(TOKEN_RULES, { params: bodyParams(ctx) }, deps);
    const clientId = draft.app!.id;
    const tokens = draft.grantType === 'authorization_code'
      ? await exchangeCode(deps, { clientId, ...codeGrantParams(draft.params) })
      : await refreshAccess(deps, { clientId, ...refreshGrantParams(draft.params) });
    ctx.body = tokenAnswer(tokens);
  });

  // Spec 2.8, 4.16, 8: an access token (never a session token); 500/min per token.
  router.get('/userinfo', oauthErrors, rateLimit(deps, { ...rateLimitOf('oauth:userinfo'), key: perToken(deps) }), async (ctx) => {
    noStore(ctx);
    const token = bearerToken(ctx);
    if (token === null) throw new ApiError('invalid_token', 'Send the access token as Authorization: Bearer <token>.', {}, { 'WWW-Authenticate': 'Bearer' });
    const access = await accessOf(deps, token);
    if (access === null) throw new ApiError('invalid_token', undefined, {}, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    ctx.body = userInfoAnswer(await userInfoOf(deps, access));
  });

  // Spec 4.16, 8, RFC 7009: 200 whatever the token was; 50/min per client, where a
  // revocation that revoked nothing counts as a failure (per client and address).
  router.post('/revoke', oauthErrors, body, perClientOutcomeLimit(deps, 'oauth:revoke'), async (ctx) => {
    noStore(ctx);
    const draft = await runRules<ClientDraft>(REVOKE_RULES, { params: bodyParams(ctx) }, deps);
    const revoked = await revokeToken(deps, { clientId: draft.app!.id, ...revocationParams(draft.params) });
    recordOutcome(ctx, revoked ? 'success' : 'failure');
    ctx.body = {};
  });

  return router;
}

/** RFC 8414 3: the authorization server's metadata. */
export function oauthMetadataRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.get('/oauth-authorization-server', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = metadataAnswer(deps.config);
  });
  return router;
}

/**
 * /api/v1/account/apps: the apps holding access to the user's account, and revoking
 * one; managed with the user's session token (an app's access token is refused).
 */
export function accountAppsRoutes(deps: ServerDeps): Router {
  const router = new Router();
  const sessionOnly = requireAuth(deps, SESSION_ONLY);

  router.get('/apps', sessionOnly, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = authorizedAppsAnswer(await authorizedApps(deps, ctx.state.auth!.userId));
  });

  router.delete('/apps/:client_id', sessionOnly, async (ctx) => {
    if (!UUID.test(ctx.params.client_id)) throw new ApiError('not_found', 'This app has no access to your account.');
    await revokeAuthorizedApp(deps, ctx.state.auth!.userId, ctx.params.client_id.toLowerCase());
    ctx.body = { success: true };
  });

  return router;
}
