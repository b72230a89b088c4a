// /oauth/token, /oauth/userinfo, /oauth/revoke, the scopes on the sign-it endpoints, the
// user's authorized apps and user.profile.updated (spec 2.8, 3.4, 4.16, 5, 6, 7, 8;
// decisions.md 7). Every rule with its exact error; PKCE against RFC 7636 Appendix B;
// code replay revoking what the code issued.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { s256, verifierMatches } from '../../server/src/domain/oauth.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { newSigner, S } from '../public/support.js';
import { authorizeQuery, Browser, newAccount, outbox, PASSWORD, pkce, postForm, postJson, registerApp, tokensFor, type TestApp } from './support.js';

const test = suite('oauth tokens');
let srv: TestServer;
let app: TestApp;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
  app = await registerApp(srv, ['openid', 'display_name', 'username', 'email', 'profile_picture', 'did', 'public_key', 'holochain', 'sign', 'verify']);
});
test.after(async () => srv.close());

/** A fresh code for a new user (and the verifier that goes with it). */
async function codeFor(scope = 'openid', challengeOf?: { verifier: string; challenge: string }) {
  const account = await newAccount(srv);
  const { verifier, challenge } = challengeOf ?? pkce();
  const back = await new Browser(srv.url).authorize(authorizeQuery(app, { scope }, challenge), account);
  return { code: back.searchParams.get('code')!, verifier, account };
}

function exchange(fields: Record<string, string | undefined>) {
  return postJson(srv, '/oauth/token', fields);
}

function assertOAuthError(r: { status: number; headers: Headers; body: any }, status: number, error: string, description: RegExp): void {
  assert.is(r.status, status, JSON.stringify(r.body));
  assert.equal(Object.keys(r.body).slice(0, 2), ['error', 'error_description'], 'spec 7: {error, error_description}');
  assert.is(r.body.error, error);
  assert.match(r.body.error_description, description);
  assert.is(r.headers.get('cache-control'), 'no-store');
}

// RFC 7636 Appendix B (the RFC's own verifier and challenge)
const RFC_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

test('RFC 7636 Appendix B: the verifier gives the challenge; a code made with it is exchanged with that verifier only', async () => {
  assert.is(s256(RFC_VERIFIER), RFC_CHALLENGE);
  assert.ok(verifierMatches(RFC_VERIFIER, RFC_CHALLENGE));
  assert.not.ok(verifierMatches(`${RFC_VERIFIER.slice(0, -1)}Y`, RFC_CHALLENGE));
  const { code } = await codeFor('openid', { verifier: RFC_VERIFIER, challenge: RFC_CHALLENGE });
  const r = await exchange({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: RFC_VERIFIER });
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
  assert.is(r.body.token_type, 'Bearer');
  assert.is(r.body.expires_in, 86400);
  assert.is(r.body.scope, 'openid');
  assert.match(r.body.access_token, /^pvat_[A-Za-z0-9_-]{43}$/);
  assert.match(r.body.refresh_token, /^pvrt_[A-Za-z0-9_-]{43}$/);
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.is(r.headers.get('pragma'), 'no-cache');
});

test('token request rules, each with its exact error and no-store', async () => {
  const { code, verifier } = await codeFor();
  const good = { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier };
  const cases: [Record<string, string | undefined>, string, RegExp][] = [
    [{ grant_type: undefined }, 'invalid_request', /^grant_type: required\.$/],
    [{ grant_type: 'password' }, 'unsupported_grant_type', /^grant_type: "password" is not supported/],
    [{ client_id: undefined }, 'invalid_request', /^client_id: required\.$/],
    [{ client_id: '6f1c1c1e-7d43-4a8e-9d0e-1b2c3d4e5f60' }, 'invalid_client', /^client_id: no such app\.$/],
    [{ code: undefined }, 'invalid_request', /^code: required\.$/],
    [{ redirect_uri: undefined }, 'invalid_request', /^redirect_uri: required\.$/],
    [{ code_verifier: undefined }, 'invalid_request', /^code_verifier: required\.$/],
    [{ code_verifier: 'a'.repeat(42) }, 'invalid_request', /^code_verifier: 43 to 128 characters/],
    [{ code_verifier: 'a'.repeat(129) }, 'invalid_request', /^code_verifier: 43 to 128 characters/],
    [{ code_verifier: `${'a'.repeat(42)}+` }, 'invalid_request', /^code_verifier: 43 to 128 characters/],
  ];
  for (const [over, error, description] of cases) assertOAuthError(await exchange({ ...good, ...over }), 400, error, description);
  const notObject = await apiRequest(srv.url, 'POST', '/oauth/token', { text: '[1]' });
  assertOAuthError(notObject, 400, 'invalid_request', /JSON object or a form/);
  const repeated = await postForm(srv, '/oauth/token', {} as Record<string, string>);
  assertOAuthError(repeated, 400, 'invalid_request', /^grant_type: required\.$/);
  const twice = await fetch(`${srv.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `${new URLSearchParams(good)}&code=again` });
  assertOAuthError({ status: twice.status, headers: twice.headers, body: await twice.json() }, 400, 'invalid_request', /^code: sent more than once\.$/);
  // none of that used the code up
  assert.is((await exchange(good)).status, 200);
});

test('the code grant refuses with invalid_grant: unknown code, another client, another redirect_uri, a wrong verifier, an expired code; each refusal uses the code up', async () => {
  const other = await registerApp(srv, ['openid']);
  const cases: [(c: { code: string; verifier: string }) => Record<string, string>, RegExp][] = [
    [(c) => ({ code: `${c.code}x`, code_verifier: c.verifier }), /^The code is unknown\.$/],
    [(c) => ({ code: c.code, code_verifier: c.verifier, client_id: other.clientId }), /^The code was issued to another client\.$/],
    [(c) => ({ code: c.code, code_verifier: c.verifier, redirect_uri: `${app.redirectUri}/` }), /^redirect_uri differs from the one of the authorization request\.$/],
    [(c) => ({ code: c.code, code_verifier: pkce().verifier }), /^code_verifier does not match the code_challenge \(S256\)\.$/],
  ];
  for (const [fields, description] of cases) {
    const c = await codeFor();
    const base = { grant_type: 'authorization_code', redirect_uri: app.redirectUri, client_id: app.clientId };
    assertOAuthError(await exchange({ ...base, ...fields(c) }), 400, 'invalid_grant', description);
    if (!description.source.includes('unknown')) {
      const retry = await exchange({ ...base, code: c.code, code_verifier: c.verifier });
      assertOAuthError(retry, 400, 'invalid_grant', /already used/);
    }
  }
  const c = await codeFor();
  await (await srv.sql()).run('UPDATE oauth_codes SET expires_at = ? WHERE hash = ?', [Date.now() - 1, createHash('sha256').update(c.code).digest('hex')]);
  assertOAuthError(await exchange({ grant_type: 'authorization_code', code: c.code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: c.verifier }), 400, 'invalid_grant', /^The code has expired \(codes live 10 minutes\)\.$/);
});

test('a code is stored only as its SHA-256, and lives 10 minutes', async () => {
  const before = Date.now();
  const { code } = await codeFor();
  const row = await (await srv.sql()).get<{ hash: string; expires_at: number }>('SELECT hash, expires_at FROM oauth_codes WHERE hash = ?', [createHash('sha256').update(code).digest('hex')]);
  assert.ok(row, 'found by its hash');
  assert.ok(row!.expires_at >= before + 600_000 && row!.expires_at <= Date.now() + 600_000);
  const plain = await (await srv.sql()).get('SELECT 1 FROM oauth_codes WHERE hash = ?', [code]);
  assert.is(plain, undefined);
});

test('a replayed code fails and revokes every token issued from it (access and refresh)', async () => {
  const { code, verifier } = await codeFor('openid verify');
  const body = { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier };
  const first = await exchange(body);
  assert.is(first.status, 200);
  const refreshed = await exchange({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: app.clientId });
  assert.is(refreshed.status, 200);
  for (const token of [first.body.access_token, refreshed.body.access_token]) {
    assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token })).status, 200);
  }
  assertOAuthError(await exchange(body), 400, 'invalid_grant', /^The code was already used; every token issued from it is now revoked\.$/);
  for (const token of [first.body.access_token, refreshed.body.access_token]) {
    const r = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token });
    assert.is(r.status, 401);
    const quota = await apiRequest(srv.url, 'GET', `${S}/quota`, { token });
    assert.is(quota.status, 401, 'the API refuses it too');
  }
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: app.clientId }), 400, 'invalid_grant', /unknown, revoked/);
});

test('form bodies (what standard clients send) work as JSON does', async () => {
  const { code, verifier } = await codeFor();
  const r = await postForm(srv, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.token_type, 'Bearer');
});

test('refresh: a new access token, the refresh token not rotated, scope only narrows, another client\'s refused', async () => {
  const account = await newAccount(srv);
  const t = await tokensFor(srv, app, account, 'openid display_name verify');
  assert.is(t.scope, 'openid display_name verify');
  const same = await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId });
  assert.is(same.status, 200, same.text);
  assert.is(same.body.refresh_token, t.refresh, 'not rotated (spec 3.4)');
  assert.is.not(same.body.access_token, t.access);
  assert.is(same.body.scope, 'openid display_name verify');
  assert.is(same.headers.get('cache-control'), 'no-store');
  const narrow = await postForm(srv, '/oauth/token', { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId, scope: 'verify' });
  assert.is(narrow.status, 200);
  assert.is(narrow.body.scope, 'openid verify');
  const info = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: narrow.body.access_token });
  assert.is(info.body.name, undefined, 'the narrowed token does not carry display_name');
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId, scope: 'openid sign' }), 400, 'invalid_scope', /not granted: sign\.$/);
  const other = await registerApp(srv, ['openid']);
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: other.clientId }), 400, 'invalid_grant', /not this client's/);
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: t.access, client_id: app.clientId }), 400, 'invalid_grant', /unknown/);
  assertOAuthError(await exchange({ grant_type: 'refresh_token', client_id: app.clientId }), 400, 'invalid_request', /^refresh_token: required\.$/);
  // the old access token still works: refreshing adds, it does not replace
  assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: t.access })).status, 200);
});

test('tokens are stored only as SHA-256 hashes', async () => {
  const t = await tokensFor(srv, app, await newAccount(srv), 'openid');
  const sql = await srv.sql();
  assert.ok(await sql.get('SELECT 1 FROM oauth_access_tokens WHERE hash = ?', [createHash('sha256').update(t.access).digest('hex')]));
  assert.ok(await sql.get('SELECT 1 FROM oauth_refresh_tokens WHERE hash = ?', [createHash('sha256').update(t.refresh).digest('hex')]));
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens', 'oauth_codes']) {
    const rows = await sql.all<Record<string, unknown>>(`SELECT * FROM ${table}`);
    const text = JSON.stringify(rows);
    assert.not.ok(text.includes(t.access.slice(5)) || text.includes(t.refresh.slice(5)) || text.includes(t.code), `${table} holds no token or code`);
  }
});

test('userinfo: sub always; each field only with its scope; email only when a verified address was shared', async () => {
  const verified = await newAccount(srv, { verified: true, displayName: 'Ana Lima' });
  await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', { token: verified.token, body: { username: `ana${Date.now()}`, profile_picture: 'https://pics.example/ana.png' } });
  const signer = await newSigner(srv, { displayName: 'Cell Owner' });
  const openid = await tokensFor(srv, app, verified, 'openid');
  const bare = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: openid.access });
  assert.is(bare.status, 200);
  assert.equal(bare.body, { sub: verified.id, scope: 'openid' });
  assert.is(bare.headers.get('cache-control'), 'no-store');

  const everything = await tokensFor(srv, app, verified, 'openid display_name username email profile_picture', openid.browser);
  const all = (await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: everything.access })).body;
  const me = (await apiRequest(srv.url, 'GET', '/api/v1/auth/me', { token: verified.token })).body.user;
  assert.equal(all, {
    sub: verified.id, name: 'Ana Lima', preferred_username: me.username, profile_picture: 'https://pics.example/ana.png', has_custom_picture: true,
    email: verified.email, email_verified: true, scope: 'openid display_name username email profile_picture',
  });

  // keys: did, public_key, holochain, for a user with an agent key (a server-hosted cell)
  const signerAccount = { id: signer.userId, email: signer.email, token: signer.token };
  const keys = await tokensFor(srv, app, signerAccount, 'did');
  const signerDid = (await apiRequest(srv.url, 'GET', '/api/v1/auth/me', { token: signer.token })).body.user.did;
  assert.match(signerDid, /^did:key:z6Mk/);
  assert.equal((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: keys.access })).body, { sub: signer.userId, did: signerDid, scope: 'openid did' });
  const holo = await tokensFor(srv, app, signerAccount, 'holochain', keys.browser);
  const holoInfo = (await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: holo.access })).body;
  assert.is(holoInfo.agent_pub_key, signer.agentKey);
  assert.match(holoInfo.did, /^did:key:z6Mk/);
  const pub = await tokensFor(srv, app, signerAccount, 'public_key', keys.browser);
  assert.equal(Object.keys((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: pub.access })).body), ['sub', 'agent_pub_key', 'scope']);

  // email with no verified address: consent says so, nothing is shared
  const unverified = await newAccount(srv);
  const noEmail = await tokensFor(srv, app, unverified, 'email');
  assert.equal((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: noEmail.access })).body, { sub: unverified.id, scope: 'openid email' });
});

test('userinfo 401s: WWW-Authenticate Bearer without a token; error="invalid_token" for a bad, a session or an expired token', async () => {
  const none = await fetch(`${srv.url}/oauth/userinfo`);
  assert.is(none.status, 401);
  assert.is(none.headers.get('www-authenticate'), 'Bearer');
  assert.is((await none.json()).error, 'invalid_token');
  const account = await newAccount(srv);
  const t = await tokensFor(srv, app, account, 'openid');
  await (await srv.sql()).run('UPDATE oauth_access_tokens SET expires_at = ? WHERE hash = ?', [Date.now() - 1, createHash('sha256').update(t.access).digest('hex')]);
  for (const token of ['pvat_nope', account.token, t.access]) {
    const r = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token });
    assertOAuthError(r, 401, 'invalid_token', /invalid or expired/);
    assert.is(r.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
  }
});

test('access tokens live 24 hours, refresh tokens 30 days', async () => {
  const before = Date.now();
  const t = await tokensFor(srv, app, await newAccount(srv), 'openid');
  const sql = await srv.sql();
  const access = await sql.get<{ expires_at: number }>('SELECT expires_at FROM oauth_access_tokens WHERE hash = ?', [createHash('sha256').update(t.access).digest('hex')]);
  const refresh = await sql.get<{ expires_at: number }>('SELECT expires_at FROM oauth_refresh_tokens WHERE hash = ?', [createHash('sha256').update(t.refresh).digest('hex')]);
  assert.ok(access!.expires_at >= before + 86_400_000 && access!.expires_at <= Date.now() + 86_400_000);
  assert.ok(refresh!.expires_at >= before + 30 * 86_400_000 && refresh!.expires_at <= Date.now() + 30 * 86_400_000);
});

test('revoke: 200 always; a refresh token ends with its access tokens and oauth.token.revoked carries the hint; access tokens, unknown tokens and another client\'s are left alone and fire nothing', async () => {
  const account = await newAccount(srv);
  const t = await tokensFor(srv, app, account, 'openid verify');
  const other = await registerApp(srv, ['openid']);
  const before = (await outbox(srv, 'oauth.token.revoked')).length;
  for (const body of [
    { token: t.access, token_type_hint: 'access_token', client_id: app.clientId },
    { token: t.refresh, token_type_hint: 'refresh_token', client_id: other.clientId },
    { token: 'pvrt_unknown', client_id: app.clientId },
  ]) {
    const r = await postJson(srv, '/oauth/revoke', body);
    assert.is(r.status, 200, r.text);
    assert.is(r.headers.get('cache-control'), 'no-store');
  }
  assert.is((await outbox(srv, 'oauth.token.revoked')).length, before, 'nothing fired');
  assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: t.access })).status, 200, 'still valid');

  const second = await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId });
  const r = await postForm(srv, '/oauth/revoke', { token: t.refresh, token_type_hint: 'access_token', client_id: app.clientId });
  assert.is(r.status, 200);
  for (const token of [t.access, second.body.access_token]) assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token })).status, 401);
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId }), 400, 'invalid_grant', /revoked/);
  assert.is((await postJson(srv, '/oauth/revoke', { token: t.refresh, client_id: app.clientId })).status, 200, 'again: 200');
  const events = (await outbox(srv, 'oauth.token.revoked')).slice(before);
  assert.equal(events, [{ app_id: app.clientId, payload: { token_type: 'access_token' } }], 'once, with the hint as sent');

  const plain = await tokensFor(srv, app, account, 'openid', t.browser);
  await postJson(srv, '/oauth/revoke', { token: plain.refresh, client_id: app.clientId });
  assert.equal((await outbox(srv, 'oauth.token.revoked')).slice(before + 1).map((e) => e.payload), [{ token_type: 'refresh_token' }], 'no hint: refresh_token');

  assertOAuthError(await postJson(srv, '/oauth/revoke', { client_id: app.clientId }), 400, 'invalid_request', /^token: required\.$/);
  assertOAuthError(await postJson(srv, '/oauth/revoke', { token: 'x' }), 400, 'invalid_request', /^client_id: required\.$/);
  assertOAuthError(await postJson(srv, '/oauth/revoke', { token: 'x', client_id: app.clientId, token_type_hint: 'id_token' }), 400, 'invalid_request', /^token_type_hint: refresh_token or access_token/);
});

test('scopes on the sign-it endpoints: verify for quota and my-signatures, sign for the rest; the app\'s id rides into its events', async () => {
  const signer = await newSigner(srv);
  const account = { id: signer.userId, email: signer.email, token: signer.token };
  const verifyOnly = await tokensFor(srv, app, account, 'verify');
  const signOnly = await tokensFor(srv, app, account, 'sign', verifyOnly.browser);
  const fileHash = 'ab'.repeat(32);

  assert.is((await apiRequest(srv.url, 'GET', `${S}/quota`, { token: verifyOnly.access })).status, 200);
  assert.is((await apiRequest(srv.url, 'GET', `${S}/my-signatures`, { token: verifyOnly.access })).status, 200);
  for (const [method, path, body] of [['POST', `${S}/sign`, { file_hash: fileHash }], ['POST', `${S}/sign-batch`, { files: [{ file_hash: fileHash }] }], ['POST', `${S}/revoke`, { action_hash: fileHash }], ['POST', `${S}/set-thumbnail`, { action_hash: fileHash, thumbnail: 'data:image/png;base64,AA==' }]] as const) {
    const r = await apiRequest(srv.url, method, path, { token: verifyOnly.access, body });
    assert.is(r.status, 403, path);
    assert.is(r.body.error, 'insufficient_scope', path);
    assert.match(r.headers.get('www-authenticate')!, /error="insufficient_scope", scope="sign"/);
  }
  const fingerprint = await fetch(`${srv.url}${S}/fingerprint`, { method: 'POST', headers: { authorization: `Bearer ${verifyOnly.access}`, 'content-type': 'application/octet-stream' }, body: new Uint8Array([1, 2, 3]) });
  assert.is(fingerprint.status, 403);
  for (const path of [`${S}/quota`, `${S}/my-signatures`]) {
    const r = await apiRequest(srv.url, 'GET', path, { token: signOnly.access });
    assert.is(r.status, 403, path);
    assert.match(r.headers.get('www-authenticate')!, /scope="verify"/);
  }

  const signed = await apiRequest(srv.url, 'POST', `${S}/sign`, { token: signOnly.access, body: { file_hash: fileHash, intent: 'Authorship' } });
  assert.is(signed.status, 200, signed.text);
  const revoked = await apiRequest(srv.url, 'POST', `${S}/revoke`, { token: signOnly.access, body: { action_hash: signed.body.action_hash, reason: 'test' } });
  assert.is(revoked.status, 200, revoked.text);
  const created = (await outbox(srv, 'sign.created')).filter((e) => e.payload.action_hash === signed.body.action_hash);
  assert.equal(created.map((e) => e.app_id), [app.clientId], 'sign.created for the app of the token');
  const revokedEvents = (await outbox(srv, 'sign.revoked')).filter((e) => e.payload.action_hash === signed.body.action_hash);
  assert.equal(revokedEvents.map((e) => e.app_id), [app.clientId]);
});

test('invalid_scope for a scope the app has not enabled (and an unknown scope)', async () => {
  const narrow = await registerApp(srv, ['openid', 'verify']);
  const browser = new Browser(srv.url);
  for (const [scope, description] of [['sign', /not enabled for this app: sign/], ['openid email', /not enabled for this app: email/], ['admin', /unknown admin/]] as const) {
    const r = await browser.request(`/oauth/authorize?${authorizeQuery(narrow, { scope })}`);
    assert.is(r.status, 302);
    assert.is(r.location!.searchParams.get('error'), 'invalid_scope');
    assert.match(r.location!.searchParams.get('error_description')!, description);
  }
});

test('the user\'s apps: listed with scopes; revoking one ends its tokens and deletes the shared e-mail; session tokens only', async () => {
  const account = await newAccount(srv, { verified: true });
  const t = await tokensFor(srv, app, account, 'openid email verify');
  const listed = await apiRequest(srv.url, 'GET', '/api/v1/account/apps', { token: account.token });
  assert.is(listed.status, 200);
  assert.is(listed.headers.get('cache-control'), 'no-store');
  assert.equal(listed.body.apps.map((a: any) => [a.client_id, a.name, a.scopes, a.email_shared]), [[app.clientId, 'Gallery <App> & "Co"', ['openid', 'email', 'verify'], true]]);
  const viaApp = await apiRequest(srv.url, 'GET', '/api/v1/account/apps', { token: t.access });
  assert.is(viaApp.status, 403, 'an app cannot manage the user\'s apps');
  assert.is((await apiRequest(srv.url, 'GET', '/api/v1/account/apps')).status, 401);

  const sql = await srv.sql();
  assert.ok(await sql.get('SELECT 1 FROM oauth_grants WHERE shared_email = ?', [account.email]));
  const gone = await apiRequest(srv.url, 'DELETE', `/api/v1/account/apps/${app.clientId}`, { token: account.token });
  assert.is(gone.status, 200);
  assert.equal(gone.body, { success: true });
  assert.is(await sql.get('SELECT 1 FROM oauth_grants WHERE shared_email = ?', [account.email]), undefined, 'the shared copy is deleted');
  assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: t.access })).status, 401);
  assertOAuthError(await exchange({ grant_type: 'refresh_token', refresh_token: t.refresh, client_id: app.clientId }), 400, 'invalid_grant', /unknown/);
  assert.equal((await apiRequest(srv.url, 'GET', '/api/v1/account/apps', { token: account.token })).body, { apps: [] });
  const again = await apiRequest(srv.url, 'DELETE', `/api/v1/account/apps/${app.clientId}`, { token: account.token });
  assert.is(again.status, 404);
  // revoked apps ask for consent again
  const r = await t.browser.request(`/oauth/authorize?${authorizeQuery(app)}`);
  assert.is(r.status, 200);
  assert.match(r.html, /name="decision"/);
});

test('PATCH /me: a changed display name records user.profile.updated for each app holding a live refresh token, and only then', async () => {
  const account = await newAccount(srv, { displayName: 'Before' });
  const t = await tokensFor(srv, app, account, 'openid display_name');
  const other = await registerApp(srv, ['openid']);
  const o = await tokensFor(srv, other, account, 'openid', t.browser);
  await postJson(srv, '/oauth/revoke', { token: o.refresh, client_id: other.clientId });
  const mine = async () => (await outbox(srv, 'user.profile.updated')).filter((e) => e.payload.user_id === account.id);

  assert.is((await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', { token: account.token, body: { display_name: 'After' } })).status, 200);
  await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', { token: account.token, body: { display_name: 'After' } });
  await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', { token: account.token, body: { contact_opt_in: true } });
  assert.equal(await mine(), [{ app_id: app.clientId, payload: { user_id: account.id, fields_changed: ['display_name'] } }]);
  const info = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: t.access });
  assert.is(info.body.name, 'After');
});

test('RFC 8414 metadata', async () => {
  const r = await apiRequest(srv.url, 'GET', '/.well-known/oauth-authorization-server');
  assert.is(r.status, 200);
  const base = srv.deps.config.baseUrl;
  assert.is(r.body.issuer, base);
  assert.is(r.body.authorization_endpoint, `${base}/oauth/authorize`);
  assert.is(r.body.token_endpoint, `${base}/oauth/token`);
  assert.is(r.body.userinfo_endpoint, `${base}/oauth/userinfo`);
  assert.is(r.body.revocation_endpoint, `${base}/oauth/revoke`);
  assert.equal(r.body.code_challenge_methods_supported, ['S256']);
  assert.is(r.body.authorization_response_iss_parameter_supported, true);
  assert.equal(r.body.response_types_supported, ['code']);
  assert.equal(r.body.token_endpoint_auth_methods_supported, ['none']);
  assert.ok(r.body.scopes_supported.includes('sign') && r.body.scopes_supported.includes('holochain'));
});

test('rate limits: 50/min per client on token and revoke, 500/min per token on userinfo, with X-RateLimit headers', async () => {
  const limited = await startTestServer({}, { engine: testEngine(import.meta.url) });
  try {
    const a = await registerApp(limited, ['openid']);
    const b = await registerApp(limited, ['openid']);
    const body = (clientId: string) => ({ grant_type: 'refresh_token', refresh_token: 'pvrt_x', client_id: clientId });
    let last = await postJson(limited, '/oauth/token', body(a.clientId));
    assert.is(last.headers.get('x-ratelimit-limit'), '50');
    assert.is(last.headers.get('x-ratelimit-remaining'), '49');
    assert.match(last.headers.get('x-ratelimit-reset')!, /^\d+$/);
    for (let i = 0; i < 50; i++) last = await postJson(limited, '/oauth/token', body(a.clientId));
    assert.is(last.status, 429);
    assert.is(last.body.error, 'rate_limited');
    assert.type(last.body.error_description, 'string');
    assert.ok(Number(last.headers.get('retry-after')) > 0);
    assert.is((await postJson(limited, '/oauth/token', body(b.clientId))).status, 400, 'another client has its own window');
    const revoke = await postJson(limited, '/oauth/revoke', { token: 'x', client_id: a.clientId });
    assert.is(revoke.headers.get('x-ratelimit-limit'), '50');
    const info = await apiRequest(limited.url, 'GET', '/oauth/userinfo', { token: 'pvat_x' });
    assert.is(info.headers.get('x-ratelimit-limit'), '500');
    assert.is(info.headers.get('x-ratelimit-remaining'), '499');
  } finally {
    await limited.close();
  }
});

/** A JSON POST from a chosen loopback source address (127.0.0.1, 127.0.0.2: two callers on one machine). */
function postFrom(base: string, localAddress: string, path: string, payload: unknown): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(payload);
    const req = httpRequest(new URL(path, base), { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

test('issue 25 item 2: junk for a client from one address does not lock the client out: failures count per client and address, successes per client and user', async () => {
  const limited = await startTestServer({}, { engine: testEngine(import.meta.url) });
  try {
    const victim = await registerApp(limited, ['openid']);
    const account = await newAccount(limited);
    const { verifier, challenge } = pkce();
    const code = (await new Browser(limited.url).authorize(authorizeQuery(victim, {}, challenge), account)).searchParams.get('code')!;
    const attacker = '127.0.0.2';
    const junk = { grant_type: 'refresh_token', refresh_token: 'pvrt_junk', client_id: victim.clientId };
    const answers: number[] = [];
    for (let i = 0; i < 60; i++) answers.push((await postFrom(limited.url, attacker, '/oauth/token', junk)).status);
    assert.equal([answers.slice(0, 50).every((s) => s === 400), answers.slice(50).every((s) => s === 429)], [true, true], 'the junk address is limited after 50');
    const exchanged = await postFrom(limited.url, '127.0.0.1', '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: victim.redirectUri, client_id: victim.clientId, code_verifier: verifier });
    assert.is(exchanged.status, 200, `the client's real exchange from another address: ${JSON.stringify(exchanged.body)}`);
    assert.is(exchanged.headers['x-ratelimit-limit'], '50');

    // revoke: revocations that revoke nothing are failures of their address
    for (let i = 0; i < 51; i++) await postFrom(limited.url, attacker, '/oauth/revoke', { token: `pvrt_junk${i}`, client_id: victim.clientId });
    assert.is((await postFrom(limited.url, attacker, '/oauth/revoke', { token: 'pvrt_more', client_id: victim.clientId })).status, 429);

    // successes are the client's and its user's own budget: 50 a minute, from any address
    const refresh = exchanged.body.refresh_token;
    const refreshes: number[] = [];
    for (let i = 0; i < 50; i++) refreshes.push((await postFrom(limited.url, i % 2 ? '127.0.0.1' : '127.0.0.3', '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh, client_id: victim.clientId })).status);
    assert.equal(refreshes.filter((s) => s === 200).length, 49, 'the exchange and 49 refreshes');
    assert.is(refreshes[49], 429);
    const revoked = await postFrom(limited.url, '127.0.0.1', '/oauth/revoke', { token: refresh, client_id: victim.clientId });
    assert.is(revoked.status, 200, 'the revoke endpoint has its own window');
    assert.is((await postFrom(limited.url, '127.0.0.1', '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh, client_id: victim.clientId })).status, 429);
  } finally {
    await limited.close();
  }
});

test('issue 34: one user refreshing their own token cannot lock the app\'s other users out: successes count per client and user', async () => {
  const limited = await startTestServer({}, { engine: testEngine(import.meta.url) });
  try {
    const app = await registerApp(limited, ['openid']);
    const attacker = await tokensFor(limited, app, await newAccount(limited), 'openid');
    const refresh = () => postFrom(limited.url, '127.0.0.2', '/oauth/token', { grant_type: 'refresh_token', refresh_token: attacker.refresh, client_id: app.clientId });
    const own = await Promise.all(Array.from({ length: 49 }, refresh));
    assert.equal(own.map((r) => r.status), Array(49).fill(200), 'the exchange and 49 refreshes: the attacker\'s 50');
    assert.is((await refresh()).status, 429, 'the attacker\'s own window is full');
    // another user of the same app, from another address and from the attacker's
    const victim = await newAccount(limited);
    const { verifier, challenge } = pkce();
    const code = (await new Browser(limited.url).authorize(authorizeQuery(app, {}, challenge), victim)).searchParams.get('code')!;
    const exchanged = await postFrom(limited.url, '127.0.0.1', '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
    assert.is(exchanged.status, 200, `the other user's code exchange: ${JSON.stringify(exchanged.body)}`);
    assert.is(exchanged.headers['x-ratelimit-remaining'], '49', 'in a window of that user\'s own');
    const theirs = await postFrom(limited.url, '127.0.0.2', '/oauth/token', { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token, client_id: app.clientId });
    assert.is(theirs.status, 200, 'their refresh, even from the attacker\'s address');
    // revocation: the attacker's revocation window is theirs alone too
    assert.is((await postFrom(limited.url, '127.0.0.1', '/oauth/revoke', { token: exchanged.body.refresh_token, client_id: app.clientId })).headers['x-ratelimit-remaining'], '49');
  } finally {
    await limited.close();
  }
});

test('issue 34: 120 junk requests at once from one address, limit 50: 50 run, 70 are refused without running', async () => {
  const limited = await startTestServer({}, { engine: testEngine(import.meta.url) });
  const accounts = limited.deps.store.accounts;
  const getApp = accounts.getApp;
  try {
    const app = await registerApp(limited, ['openid']);
    // a request that runs looks its client up once (clientIdIsKnown): counted here, in the server
    let ran = 0;
    accounts.getApp = (id) => {
      if (id === app.clientId) ran += 1;
      return getApp.call(accounts, id);
    };
    const junk = { grant_type: 'refresh_token', refresh_token: 'pvrt_junk', client_id: app.clientId };
    const answers = await Promise.all(Array.from({ length: 120 }, () => postFrom(limited.url, '127.0.0.2', '/oauth/token', junk)));
    const statuses = answers.map((r) => r.status);
    assert.is(ran, 50, 'requests that ran');
    assert.is(statuses.filter((s) => s === 400).length, 50);
    assert.is(statuses.filter((s) => s === 429).length, 70);
    // the refused ones counted nowhere: another address still has its 50
    assert.is((await postFrom(limited.url, '127.0.0.1', '/oauth/token', junk)).headers['x-ratelimit-remaining'], '49');
  } finally {
    accounts.getApp = getApp;
    await limited.close();
  }
});

test.run();
