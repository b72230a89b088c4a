// The authorize endpoint's pages (decisions.md 7): sign in, consent, and the error page
// of a request that cannot be sent back to its app. Plain server-rendered forms that
// work without JavaScript. Every page is sent with a strict Content-Security-Policy
// (nothing loads; the one inline style by its hash; forms post only here, and on to the
// app's registered redirect origin, which the browser checks on the redirect that
// follows a form), `frame-ancestors 'none'` against clickjacking, no-store and no
// referrer.
//
// The forms post to /oauth/authorize with the authorization request's own query
// string, byte for byte, so `state` and the rest come back exactly as the app sent
// them; the fields are only the credentials or the decision and a CSRF token.
//
// CSRF: a random `provenant_csrf` cookie (HttpOnly, SameSite=Lax, path /oauth) and, in
// the form, an HMAC of that cookie, the form's purpose, the client and (consent) the
// signed-in user, under a key derived from jwt.key. Another site can neither read the
// cookie nor compute the HMAC, so it cannot make a form that passes; nothing is stored.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.js';
import { SCOPE_WORDS, type OAuthScope } from '../domain/oauth.js';
import { escapeMarkup as e } from '../public/present.js';
import type { Secrets } from '../secrets.js';

export const SESSION_COOKIE = 'provenant_session';
const CSRF_COOKIE = 'provenant_csrf';

/** The cookie a form's CSRF token is bound to: the OAuth pages' (path /oauth), or another page's (the e-mail confirmation: auth/pages.ts). */
export interface CsrfCookie {
  name: string;
  path: string;
}
const OAUTH_CSRF: CsrfCookie = { name: CSRF_COOKIE, path: '/oauth' };

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d2025}
h1{font-size:1.35rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box;font:inherit}
button{font:inherit;padding:.55rem 1.2rem;margin:1rem .5rem 0 0;cursor:pointer}.error{color:#a40e26}.muted{color:#59636e;font-size:.9rem}
ul{padding-left:1.2rem}li{margin:.3rem 0}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** The CSP of every page; `redirectOrigin`: where a form's answer may redirect (the app's registered URI). */
function contentSecurityPolicy(redirectOrigin: string | null): string {
  const formAction = redirectOrigin === null ? "'self'" : `'self' ${redirectOrigin}`;
  return `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

/** A page with this module's CSP and headers (also the e-mail verification pages: auth/pages.ts). */
export function sendPage(ctx: Context, status: number, title: string, body: string, redirectOrigin: string | null): void {
  ctx.status = status;
  ctx.set({
    'Content-Security-Policy': contentSecurityPolicy(redirectOrigin),
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  });
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** The origin of a registered redirect URI, for form-action (only http(s) URIs are registered). */
function originOf(uri: string): string {
  return new URL(uri).origin;
}

/** A request that cannot go back to its app (unknown client, unregistered redirect URI, a forged form): a page, never a redirect. */
export function errorPage(ctx: Context, status: number, code: string, description: string): void {
  sendPage(ctx, status, 'Authorization failed', `<h1>This authorization request cannot be completed</h1><p class="error">${e(description)}</p><p class="muted">Error: ${e(code)}. Go back to the app you came from and try again.</p>`, null);
}

/** What the sign-in and consent pages show of the request, and where their form posts. */
export interface PageRequest {
  appName: string;
  clientId: string;
  redirectUri: string;
  /** The authorization request's query string, as received. */
  query: string;
}

/** What a page with a form needs: the base URL (Secure cookies over https) and jwt.key (its CSRF MAC). */
export type PageDeps = { config: Pick<Config, 'baseUrl'>; secrets: Secrets };

const formAction = (request: PageRequest) => `/oauth/authorize?${e(request.query)}`;

/** Decisions.md 7: fields email_or_username and password. */
export function signInPage(ctx: Context, deps: PageDeps, request: PageRequest, problem: string | null = null): void {
  const csrf = csrfToken(ctx, deps, 'sign-in', request.clientId, '');
  const body = `<h1>Sign in to continue to ${e(request.appName)}</h1>
${problem === null ? '' : `<p class="error" role="alert">${e(problem)}</p>`}
<form method="post" action="${formAction(request)}">
<input type="hidden" name="csrf_token" value="${e(csrf)}">
<label for="login">E-mail or username</label><input id="login" name="email_or_username" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`;
  sendPage(ctx, problem === null ? 200 : 401, 'Sign in', body, originOf(request.redirectUri));
}

/** Decisions.md 7: the scopes in words; for `email`, the address to share; buttons decision=approve|deny. */
export function consentPage(
  ctx: Context,
  deps: PageDeps,
  request: PageRequest & { scopes: string[]; userId: string; userLabel: string; email: string | null },
): void {
  const csrf = csrfToken(ctx, deps, 'consent', request.clientId, request.userId);
  const items = request.scopes.map((scope) => {
    if (scope !== 'email') return `<li>${e(SCOPE_WORDS[scope as OAuthScope] ?? scope)}</li>`;
    return request.email === null
      ? '<li>See your e-mail address: your account has no verified address, so none will be shared</li>'
      : `<li>See your e-mail address: <strong>${e(request.email)}</strong> will be shared</li>`;
  });
  const body = `<h1>${e(request.appName)} wants to access your account</h1>
<p class="muted">Signed in as ${e(request.userLabel)}</p>
<p>It asks to:</p><ul>${items.join('')}</ul>
<form method="post" action="${formAction(request)}">
<input type="hidden" name="csrf_token" value="${e(csrf)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="muted">You can revoke this access at any time; the app is then told nothing more.</p>`;
  sendPage(ctx, 200, `Allow ${request.appName}?`, body, originOf(request.redirectUri));
}

// ---------------------------------------------------------------- cookies and CSRF

function secureCookies(config: Pick<Config, 'baseUrl'>): boolean {
  return config.baseUrl.startsWith('https:');
}

/** An HttpOnly cookie, Secure when the base URL is https (also the device cookie: auth/device-cookie.ts). */
export function setCookie(ctx: Context, config: Pick<Config, 'baseUrl'>, name: string, value: string, path: string, maxAgeSeconds: number, sameSite: 'Lax' | 'Strict' = 'Lax'): void {
  // Koa's cookies refuse Secure on a request that reached us as http (a TLS proxy in front): written here
  const secure = secureCookies(config) ? '; Secure' : '';
  ctx.append('Set-Cookie', `${name}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${sameSite}${secure}`);
}

/** Decisions.md 7: the session cookie holds the JWT session token, HttpOnly, SameSite=Lax. */
export function setSessionCookie(ctx: Context, config: Pick<Config, 'baseUrl'>, token: string, maxAgeSeconds: number): void {
  setCookie(ctx, config, SESSION_COOKIE, token, '/', maxAgeSeconds);
}

/** HKDF of jwt.key: the CSRF MACs never share a key with the session tokens. */
function csrfKey(secrets: Secrets): Buffer {
  return Buffer.from(hkdfSync('sha256', secrets.key('jwt.key'), '', 'provenant oauth csrf v1', 32));
}

function csrfMac(secrets: Secrets, cookie: string, purpose: string, clientId: string, userId: string): Buffer {
  return createHmac('sha256', csrfKey(secrets)).update(`${cookie}\n${purpose}\n${clientId}\n${userId}`).digest();
}

/** The form's token, setting the browser's CSRF cookie first when it has none. */
export function csrfToken(ctx: Context, deps: PageDeps, purpose: string, clientId: string, userId: string, at: CsrfCookie = OAUTH_CSRF): string {
  let cookie = ctx.cookies.get(at.name);
  if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) {
    cookie = randomBytes(32).toString('base64url');
    setCookie(ctx, deps.config, at.name, cookie, at.path, 60 * 60);
  }
  return csrfMac(deps.secrets, cookie, purpose, clientId, userId).toString('base64url');
}

/** Whether a posted form's token is the one its page carried for this browser, purpose, client and user (constant time). */
export function csrfTokenValid(ctx: Context, deps: Pick<PageDeps, 'secrets'>, token: unknown, purpose: string, clientId: string, userId: string, at: CsrfCookie = OAUTH_CSRF): boolean {
  const cookie = ctx.cookies.get(at.name);
  if (!cookie || typeof token !== 'string') return false;
  const expected = csrfMac(deps.secrets, cookie, purpose, clientId, userId);
  const given = Buffer.from(token, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
