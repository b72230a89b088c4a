// GET/POST /oauth/authorize (spec 4.16, decisions.md 7, RFC 6749 4.1, RFC 7636, RFC 9207,
// RFC 9700): each rule with its exact error, in the RFC's order (a bad client or
// redirect URI: a page, never a redirect; the rest: a redirect with error,
// error_description, state and iss); redirect URI near-misses; state round-tripping;
// the sign-in and consent pages (CSP, cookies, CSRF); consent recorded once.
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { authorizeQuery, Browser, newAccount, outbox, PASSWORD, pkce, registerApp, type TestApp } from './support.js';

const test = suite('oauth authorize');
let srv: TestServer;
let app: TestApp;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
  app = await registerApp(srv, ['openid', 'display_name', 'email', 'sign'], ['https://app.example/callback', 'http://127.0.0.1:8765/cb?tenant=a']);
});
test.after(async () => srv.close());

/** A signed-in browser (session cookie set through the sign-in form). */
async function signedIn(): Promise<{ browser: Browser; account: Awaited<ReturnType<typeof newAccount>> }> {
  const account = await newAccount(srv);
  const browser = new Browser(srv.url);
  const page = await browser.request(`/oauth/authorize?${authorizeQuery(app)}`);
  const after = await browser.submit(page, { email_or_username: account.email, password: PASSWORD });
  assert.is(after.status, 303);
  return { browser, account };
}

/** The redirect an authorize query gets from a signed-in browser (errors do not need one, but it must not matter). */
async function redirectOf(query: string, browser = new Browser(srv.url)): Promise<URL> {
  const r = await browser.request(`/oauth/authorize?${query}`);
  assert.is(r.status, 302, `a redirect, got ${r.status}: ${r.html.slice(0, 200)}`);
  return r.location!;
}

function assertRedirectError(to: URL, error: string, description: RegExp, state: string | null = 'st-123'): void {
  assert.is(`${to.origin}${to.pathname}`, 'https://app.example/callback');
  assert.is(to.searchParams.get('error'), error);
  assert.match(to.searchParams.get('error_description') ?? '', description);
  assert.is(to.searchParams.get('state'), state);
  assert.is(to.searchParams.get('iss'), srv.deps.config.baseUrl, 'iss on every authorization response (RFC 9207)');
  assert.is(to.searchParams.get('code'), null);
}

test('unknown, malformed, missing or repeated client_id: an error page, never a redirect', async () => {
  const browser = new Browser(srv.url);
  for (const [label, client] of [['unknown', '6f1c1c1e-7d43-4a8e-9d0e-1b2c3d4e5f60'], ['malformed', 'not-a-uuid'], ['missing', undefined]] as const) {
    const r = await browser.request(`/oauth/authorize?${authorizeQuery(app, { client_id: client })}`);
    assert.is(r.status, 400, label);
    assert.is(r.location, null, `${label}: no redirect`);
    assert.match(r.html, /invalid_client|invalid_request/, label);
    assert.match(r.headers.get('content-type')!, /^text\/html/);
    assert.match(r.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
  }
  const repeated = await browser.request(`/oauth/authorize?${authorizeQuery(app)}&client_id=${app.clientId}`);
  assert.is(repeated.status, 400);
  assert.is(repeated.location, null);
  assert.match(repeated.html, /client_id: sent more than once/);
});

test('redirect_uri near-misses of a registered URI: an error page each, never a redirect', async () => {
  const browser = new Browser(srv.url);
  const misses = [
    'https://app.example/callback/', // trailing slash
    'https://app.example/callback?x=1', // extra query
    'https://app.example:8443/callback', // other port
    'https://APP.example/callback', // case of the host
    'https://app.example/Callback', // case of the path
    'http://app.example/callback', // other scheme
    'https://app.example/callback#f', // a fragment
    'http://127.0.0.1:8765/cb', // the registered one without its query
    'http://127.0.0.1:8766/cb?tenant=a', // other loopback port
    'https://evil.example/callback',
  ];
  for (const uri of misses) {
    const r = await browser.request(`/oauth/authorize?${authorizeQuery(app, { redirect_uri: uri })}`);
    assert.is(r.status, 400, uri);
    assert.is(r.location, null, `${uri}: no redirect`);
    assert.match(r.html, /redirect_uri: not a redirect URI registered for this app/, uri);
  }
  const missing = await browser.request(`/oauth/authorize?${authorizeQuery(app, { redirect_uri: undefined })}`);
  assert.is(missing.status, 400);
  assert.match(missing.html, /redirect_uri: required/);
});

test('issue 25 item 5: redirect URIs: https, http only on a loopback host, a native app\'s private-use scheme; refused at registration naming the rule', async () => {
  const owner = await srv.register();
  const register = (uri: string) => apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { token: owner.token, body: { name: 'x', redirect_uris: [uri] } });
  for (const uri of ['https://app.example/cb', 'http://127.0.0.1:9000/cb', 'http://127.5.6.7/cb', 'http://[::1]:8080/cb', 'http://localhost:3000/cb', 'com.example.app:/oauth2redirect']) {
    const r = await register(uri);
    assert.is(r.status, 201, `${uri}: ${r.text}`);
  }
  for (const [uri, message] of [
    ['http://evil.example/cb', /redirect_uris\.0: http is allowed only for loopback hosts .*register https:\/\/evil\.example\/cb instead/],
    ['http://10.0.0.1/cb', /http is allowed only for loopback hosts/],
    ['http://127.0.0.1.evil.example/cb', /http is allowed only for loopback hosts/],
    ['javascript:alert(1)', /"javascript:" is neither https/],
    ['data:text/html,hi', /"data:" is neither https/],
    ['myapp:/cb', /private-use scheme of a native app \(reverse domain name/],
  ] as const) {
    const r = await register(uri);
    assert.equal([r.status, r.body.error], [400, 'invalid_request'], uri);
    assert.match(r.body.message, message, uri);
  }
});

test('issue 25 item 5: an app registered before the rule with a plain-http URI gets no code there: an error page naming the fix, never a redirect', async () => {
  const owner = await srv.register();
  // stored as the old registration accepted it (the rule now refuses it at the API)
  const legacy = await srv.deps.store.accounts.createApp({ id: randomUUID(), orgId: null, ownerId: owner.user.id, name: 'Old app', redirectUris: ['http://evil.example/cb'], scopes: ['openid'] });
  const { browser } = await signedIn();
  const r = await browser.request(`/oauth/authorize?${authorizeQuery({ clientId: legacy.id, redirectUri: 'http://evil.example/cb', ownerToken: owner.token })}`);
  assert.is(r.status, 400);
  assert.is(r.location, null, 'no redirect: the code would travel in clear');
  assert.match(r.html, /http is allowed only for loopback hosts/);
  assert.match(r.html, /register https:\/\/evil\.example\/cb instead/);
  assert.match(r.html, /must register an allowed redirect URI/);
});

test('a native app\'s private-use scheme gets its code there', async () => {
  const native = await registerApp(srv, ['openid'], ['com.example.gallery:/oauth2redirect']);
  const account = await newAccount(srv);
  const back = await new Browser(srv.url).authorize(authorizeQuery(native), account);
  assert.is(back.protocol, 'com.example.gallery:');
  assert.is(back.pathname, '/oauth2redirect');
  assert.ok(back.searchParams.get('code'));
  assert.is(back.searchParams.get('state'), 'st-123');
});

test('the client checks come first: an unknown client with every other parameter wrong is still a page', async () => {
  const r = await new Browser(srv.url).request('/oauth/authorize?client_id=nope&response_type=token&redirect_uri=https://evil.example/');
  assert.is(r.status, 400);
  assert.is(r.location, null);
});

test('each request rule redirects with its exact error, error_description, state and iss', async () => {
  const cases: [Record<string, string | undefined>, string, RegExp][] = [
    [{ response_type: undefined }, 'invalid_request', /^response_type: required\.$/],
    [{ response_type: 'token' }, 'unsupported_response_type', /response_type: "token" is not supported/],
    [{ scope: undefined }, 'invalid_request', /^scope: required\.$/],
    [{ scope: 'openid  sign' }, 'invalid_request', /^scope: space-separated scope names\.$/],
    [{ scope: 'openid superpowers' }, 'invalid_scope', /^scope: unknown superpowers\.$/],
    [{ scope: 'openid verify' }, 'invalid_scope', /^scope: not enabled for this app: verify\.$/],
    [{ code_challenge: undefined }, 'invalid_request', /^code_challenge: required \(PKCE, S256\)\.$/],
    [{ code_challenge: 'short' }, 'invalid_request', /^code_challenge: must be BASE64URL/],
    [{ code_challenge_method: undefined }, 'invalid_request', /^code_challenge_method: must be S256\.$/],
    [{ code_challenge_method: 'plain' }, 'invalid_request', /^code_challenge_method: must be S256, not "plain"\.$/],
  ];
  for (const [over, error, description] of cases) {
    assertRedirectError(await redirectOf(authorizeQuery(app, over)), error, description);
  }
  // the same before sign-in and after: the rules run before any page
  const { browser } = await signedIn();
  assertRedirectError(await redirectOf(authorizeQuery(app, { code_challenge_method: 'plain' }), browser), 'invalid_request', /S256/);
});

test('rules run in the RFC order: response_type before scope before PKCE', async () => {
  const to = await redirectOf(authorizeQuery(app, { response_type: 'token', scope: 'nope', code_challenge: undefined }));
  assert.is(to.searchParams.get('error'), 'unsupported_response_type');
  const second = await redirectOf(authorizeQuery(app, { scope: 'nope', code_challenge: undefined }));
  assert.is(second.searchParams.get('error'), 'invalid_scope');
});

test('a repeated parameter is invalid_request; a repeated state goes back without state', async () => {
  assertRedirectError(await redirectOf(`${authorizeQuery(app)}&scope=sign`), 'invalid_request', /^scope: sent more than once\.$/);
  assertRedirectError(await redirectOf(`${authorizeQuery(app, { scope: 'bad scope!' })}&state=second`), 'invalid_request', /^state: sent more than once\.$/, null);
});

test('a registered redirect URI with its own query keeps it; parameters are added after it', async () => {
  const other = { ...app, redirectUri: 'http://127.0.0.1:8765/cb?tenant=a' };
  const to = await redirectOf(authorizeQuery(other, { scope: 'openid verify' }));
  assert.is(`${to.origin}${to.pathname}`, 'http://127.0.0.1:8765/cb');
  assert.equal([...to.searchParams.keys()], ['tenant', 'error', 'error_description', 'state', 'iss']);
  assert.is(to.searchParams.get('tenant'), 'a');
});

test('the sign-in page: a form, strict CSP, no framing, no-store; the CSRF cookie HttpOnly SameSite', async () => {
  const browser = new Browser(srv.url);
  const r = await browser.request(`/oauth/authorize?${authorizeQuery(app)}`);
  assert.is(r.status, 200);
  const csp = r.headers.get('content-security-policy')!;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /form-action 'self' https:\/\/app\.example(;|$)/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'/);
  assert.not.match(csp, /unsafe-inline/);
  assert.is(r.headers.get('x-frame-options'), 'DENY');
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.match(r.html, /name="email_or_username"/);
  assert.match(r.html, /name="password" type="password"/);
  assert.match(r.html, /Gallery &#60;App&#62; &#38; &#34;Co&#34;/, 'the app name escaped');
  assert.not.match(r.html, /<script/i);
  const csrf = browser.setCookies.find((c) => c.startsWith('provenant_csrf='))!;
  assert.match(csrf, /; HttpOnly/);
  assert.match(csrf, /; SameSite=Lax/);
  assert.match(csrf, /; Path=\/oauth/);
});

test('sign-in: wrong password re-shows the form (401); right one sets the HttpOnly session cookie and comes back (303)', async () => {
  const account = await newAccount(srv);
  const browser = new Browser(srv.url);
  const query = authorizeQuery(app);
  const page = await browser.request(`/oauth/authorize?${query}`);
  const wrong = await browser.submit(page, { email_or_username: account.email, password: 'wrong password!' });
  assert.is(wrong.status, 401);
  assert.match(wrong.html, /The e-mail\/username or password is wrong/);
  assert.is(browser.cookies.get('provenant_session'), undefined);
  const right = await browser.submit(wrong, { email_or_username: account.email, password: PASSWORD });
  assert.is(right.status, 303);
  assert.is(right.location!.pathname, '/oauth/authorize');
  assert.is(right.location!.search.slice(1), query, 'the same request, byte for byte');
  const session = browser.setCookies.find((c) => c.startsWith('provenant_session='))!;
  assert.match(session, /; HttpOnly/);
  assert.match(session, /; SameSite=Lax/);
  assert.match(session, /; Path=\//);
});

test('a form without its CSRF token, with another browser\'s, or for another purpose: 403 page, nothing done', async () => {
  const account = await newAccount(srv);
  const mine = new Browser(srv.url);
  const page = await mine.request(`/oauth/authorize?${authorizeQuery(app)}`);
  const query = `/oauth/authorize?${authorizeQuery(app)}`;
  const none = await mine.request(query, { form: { email_or_username: account.email, password: PASSWORD } });
  assert.is(none.status, 403);
  assert.match(none.html, /did not come from this site/);
  // a token lifted from someone else's page does not fit this browser's cookie
  const attacker = new Browser(srv.url);
  const theirs = await attacker.request(query);
  const token = /name="csrf_token" value="([^"]+)"/.exec(theirs.html)![1];
  const forged = await mine.request(query, { form: { csrf_token: token, email_or_username: account.email, password: PASSWORD } });
  assert.is(forged.status, 403);
  assert.is(mine.cookies.get('provenant_session'), undefined);
  // a sign-in token does not pass as a consent decision
  const signedIn = await mine.submit(page, { email_or_username: account.email, password: PASSWORD });
  assert.is(signedIn.status, 303);
  const signInToken = /name="csrf_token" value="([^"]+)"/.exec(page.html)![1];
  const crossed = await mine.request(query, { form: { csrf_token: signInToken, decision: 'approve' } });
  assert.is(crossed.status, 403);
});

test('consent: the scopes in words, no verified address to share; deny lands with access_denied, state and iss', async () => {
  const { browser } = await signedIn();
  const consent = await browser.request(`/oauth/authorize?${authorizeQuery(app, { scope: 'openid email sign' })}`);
  assert.is(consent.status, 200);
  assert.match(consent.html, /See your e-mail address: your account has no verified address, so none will be shared/);
  assert.match(consent.html, /Create and manage signatures on your behalf/);
  const denied = await browser.submit(consent, { decision: 'deny' });
  assert.is(denied.status, 303);
  assertRedirectError(denied.location!, 'access_denied', /^The user denied the request\.$/);
});

test('consent with a verified address names it; approving lands with code, state and iss, records oauth.authorized once', async () => {
  const account = await newAccount(srv, { verified: true });
  const browser = new Browser(srv.url);
  const signIn = await browser.request(`/oauth/authorize?${authorizeQuery(app, { scope: 'email display_name' })}`);
  const back = await browser.submit(signIn, { email_or_username: account.email, password: PASSWORD });
  const consent = await browser.request(back.location!.pathname + back.location!.search);
  assert.match(consent.html, new RegExp(`<strong>${account.email.replace(/[.+]/g, '\\$&')}</strong> will be shared`));
  const approved = await browser.submit(consent, { decision: 'approve' });
  assert.is(approved.status, 303);
  const to = approved.location!;
  assert.is(`${to.origin}${to.pathname}`, 'https://app.example/callback');
  assert.match(to.searchParams.get('code')!, /^[A-Za-z0-9_-]{43}$/);
  assert.is(to.searchParams.get('state'), 'st-123');
  assert.is(to.searchParams.get('iss'), srv.deps.config.baseUrl);
  assert.is(to.searchParams.get('error'), null);

  // asked again for the same (or fewer) scopes: straight back with a new code, no consent, no second event
  const again = await redirectOf(authorizeQuery(app, { scope: 'display_name' }), browser);
  assert.match(again.searchParams.get('code')!, /^[A-Za-z0-9_-]{43}$/);
  assert.is(again.searchParams.get('iss'), srv.deps.config.baseUrl);
  const events = (await outbox(srv, 'oauth.authorized')).filter((e) => e.payload.user_id === account.id);
  assert.equal(events, [{ app_id: app.clientId, payload: { user_id: account.id, scopes: ['openid', 'email', 'display_name'] } }]);

  // a new scope asks again, and its consent is recorded
  const more = await browser.request(`/oauth/authorize?${authorizeQuery(app, { scope: 'sign' })}`);
  assert.is(more.status, 200);
  await browser.submit(more, { decision: 'approve' });
  const after = (await outbox(srv, 'oauth.authorized')).filter((e) => e.payload.user_id === account.id);
  assert.equal(after.map((e) => e.payload.scopes), [['openid', 'email', 'display_name'], ['openid', 'sign']]);
});

test('a long state with reserved characters round-trips exactly, through sign-in and consent; no state: none back', async () => {
  const state = `${'x'.repeat(1500)} &=?#/%+;:@!$'()*,[]"<>\\^\`{|}~é😀`;
  const account = await newAccount(srv);
  const browser = new Browser(srv.url);
  const to = await browser.authorize(authorizeQuery(app, { state }), account);
  assert.is(to.searchParams.get('state'), state);
  assert.ok(to.searchParams.get('code'));
  const stateless = await browser.request(`/oauth/authorize?${authorizeQuery(app, { state: undefined })}`);
  assert.is(stateless.status, 302);
  assert.is(stateless.location!.searchParams.has('state'), false);
  assert.ok(stateless.location!.searchParams.get('code'));
  assert.is(stateless.location!.searchParams.get('iss'), srv.deps.config.baseUrl);
});

test('an expired or foreign session cookie: the sign-in page again', async () => {
  const browser = new Browser(srv.url);
  browser.cookies.set('provenant_session', 'eyJhbGciOiJIUzI1NiJ9.e30.AAAA');
  const r = await browser.request(`/oauth/authorize?${authorizeQuery(app, { code_challenge: pkce().challenge })}`);
  assert.is(r.status, 200);
  assert.match(r.html, /name="password"/);
});

test('100 requests a minute per IP, with X-RateLimit headers', async () => {
  const limited = await startTestServer({}, { engine: testEngine(import.meta.url) });
  try {
    const limitedApp = await registerApp(limited, ['openid']);
    const browser = new Browser(limited.url);
    let last = await browser.request(`/oauth/authorize?${authorizeQuery(limitedApp)}`);
    assert.is(last.headers.get('x-ratelimit-limit'), '100');
    assert.is(last.headers.get('x-ratelimit-remaining'), '99');
    assert.match(last.headers.get('x-ratelimit-reset')!, /^\d+$/);
    for (let i = 0; i < 100; i++) last = await browser.request(`/oauth/authorize?${authorizeQuery(limitedApp)}`);
    assert.is(last.status, 429);
    assert.ok(Number(last.headers.get('retry-after')) > 0);
  } finally {
    await limited.close();
  }
});

test.run();
