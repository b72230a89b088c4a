// What the OAuth tests share: an app registered through the developer API, a user
// (with a verified address when asked), PKCE from node:crypto, and a browser stand-in
// over fetch that keeps cookies and reads the pages' forms, so the sign-in and consent
// pages are driven exactly as their HTML says (the same forms Chromium submits in
// test/browser/oauth-pages.test.ts).
import { createHash, randomBytes } from 'node:crypto';
import * as assert from 'uvu/assert';
import { apiRequest, type TestServer } from '../helpers/server.js';

export const PASSWORD = 'correct horse battery staple';

export interface TestApp {
  clientId: string;
  redirectUri: string;
  ownerToken: string;
}

/** An app of a fresh developer, with `scopes` enabled and `redirectUris` registered (the first is the one used). */
export async function registerApp(srv: TestServer, scopes: string[], redirectUris = ['https://app.example/callback']): Promise<TestApp> {
  const owner = await srv.register();
  const r = await apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { token: owner.token, body: { name: 'Gallery <App> & "Co"', redirect_uris: redirectUris, scopes } });
  assert.is(r.status, 201, r.text);
  return { clientId: r.body.client_id, redirectUri: redirectUris[0], ownerToken: owner.token };
}

export interface TestAccount {
  id: string;
  email: string;
  token: string;
}

/** A registered user; `verified`: their address is marked verified in the database (the mailed link's flow: test/server/email-verification.test.ts). */
export async function newAccount(srv: TestServer, opts: { verified?: boolean; displayName?: string } = {}): Promise<TestAccount> {
  const { token, user } = await srv.register(undefined, { display_name: opts.displayName ?? 'Ana Lima' });
  if (opts.verified) await (await srv.sql()).run('UPDATE users SET email_verified = ? WHERE id = ?', [true, user.id]);
  return { id: user.id, email: user.email as string, token };
}

/** A fresh RFC 7636 verifier (32 random bytes) and its S256 challenge, from node:crypto. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The authorize URL's query for `app`, with what a test overrides (undefined drops a parameter). */
export function authorizeQuery(app: TestApp, over: Record<string, string | undefined> = {}, challenge = pkce().challenge): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: 'openid',
    state: 'st-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...over,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  return q.toString();
}

export interface PageAnswer {
  status: number;
  headers: Headers;
  html: string;
  /** The Location of a redirect, as a URL (null when none). */
  location: URL | null;
}

/** A browser stand-in: keeps cookies by name, follows nothing by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header received, as sent. */
  readonly setCookies: string[] = [];

  constructor(private readonly base: string) {}

  async request(path: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<PageAnswer> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(new URL(path, this.base), { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    return { status: res.status, headers: res.headers, html: await res.text(), location: location === null ? null : new URL(location, this.base) };
  }

  /** Submits the page's (only) form with `fields` added to its own inputs, as a browser would. */
  submit(page: PageAnswer, fields: Record<string, string>): Promise<PageAnswer> {
    const form = /<form method="post" action="([^"]*)">/.exec(page.html);
    assert.ok(form, `a form on the page: ${page.html.slice(0, 300)}`);
    const hidden: Record<string, string> = {};
    for (const m of page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[m[1]] = unescape(m[2]);
    return this.request(unescape(form[1]), { form: { ...hidden, ...fields } });
  }

  /**
   * The whole front channel for a user who is not signed in: the authorize page, the
   * sign-in form, the redirect back to authorize, the consent form with `decision`.
   * Returns the final redirect to the app.
   */
  async authorize(query: string, account: { email: string }, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
    let next = await this.request(`/oauth/authorize?${query}`);
    if (next.status === 200 && next.html.includes('name="password"')) {
      const afterSignIn = await this.submit(next, { email_or_username: account.email, password: PASSWORD });
      assert.is(afterSignIn.status, 303, afterSignIn.html);
      next = await this.request(afterSignIn.location!.pathname + afterSignIn.location!.search);
    }
    if (next.status === 302) return next.location!; // granted before: no consent
    assert.is(next.status, 200, next.html);
    assert.match(next.html, /name="decision" value="approve"/);
    const back = await this.submit(next, { decision });
    assert.is(back.status, 303, back.html);
    return back.location!;
  }
}

/** HTML character references as escapeMarkup writes them (numeric) and the named five. */
export function unescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"');
}

/** POST a JSON body; the answer as apiRequest gives it. */
export function postJson(srv: TestServer, path: string, body: unknown) {
  return apiRequest(srv.url, 'POST', path, { body });
}

/** POST an application/x-www-form-urlencoded body (what standard clients send to /oauth/token). */
export async function postForm(srv: TestServer, path: string, fields: Record<string, string>) {
  const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

/** Code, then tokens, for `account` and `app` with `scope`: the test's shortcut to a token pair. */
export async function tokensFor(srv: TestServer, app: TestApp, account: TestAccount, scope: string, browser = new Browser(srv.url)) {
  const { verifier, challenge } = pkce();
  const back = await browser.authorize(authorizeQuery(app, { scope }, challenge), account);
  const code = back.searchParams.get('code');
  assert.ok(code, `a code: ${back}`);
  const r = await postJson(srv, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
  assert.is(r.status, 200, r.text);
  return { access: r.body.access_token as string, refresh: r.body.refresh_token as string, scope: r.body.scope as string, code: code!, verifier, browser };
}

/** The outbox rows of `type` (spec 6 events waiting for, or routed by, the dispatcher). */
export async function outbox(srv: TestServer, type: string): Promise<{ app_id: string; payload: Record<string, unknown> }[]> {
  const rows = await (await srv.sql()).all<{ app_id: string; payload: string | Record<string, unknown> }>('SELECT app_id, payload FROM event_outbox WHERE type = ? ORDER BY id', [type]);
  return rows.map((r) => ({ app_id: r.app_id, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}
