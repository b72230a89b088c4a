// Where an app's OAuth access token reaches (issue 25 item 1, spec 5): only the routes
// whose policy names the scope that admits it (`verify`: quota and own signatures;
// `sign`: sign, sign-batch, revoke, fingerprint, set-thumbnail) and /oauth/userinfo.
// Every other authenticated route refuses it with 403 forbidden. Tokens come from the
// real authorization flow (sign-in and consent pages, PKCE, the token endpoint); the
// routes come from the routers' own stacks (app.ts FEATURES), as the OpenAPI test
// walks them. Runs again on PostgreSQL (test/postgres/suites.test.ts).
import { generateKeyPairSync, randomUUID, sign as edSign } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FEATURES } from '../../server/src/app.js';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { Browser, newAccount, postJson, registerApp, tokensFor, type TestAccount, type TestApp } from './support.js';

const test = suite('OAuth token reach');
let srv: TestServer;
let app: TestApp;
let account: TestAccount;
let tokens: { openid: string; sign: string; verify: string };

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
  app = await registerApp(srv, ['openid', 'sign', 'verify']);
  account = await newAccount(srv);
  const browser = new Browser(srv.url);
  tokens = {
    openid: (await tokensFor(srv, app, account, 'openid', browser)).access,
    sign: (await tokensFor(srv, app, account, 'sign', browser)).access,
    verify: (await tokensFor(srv, app, account, 'verify', browser)).access,
  };
});
test.after(async () => srv.close());

/** Spec 5's table: the routes an OAuth access token may reach, and the scope each needs. */
const SCOPED: Record<string, 'sign' | 'verify'> = {
  'GET /api/v1/sign-it/quota': 'verify',
  'GET /api/v1/sign-it/my-signatures': 'verify',
  'POST /api/v1/sign-it/sign': 'sign',
  'POST /api/v1/sign-it/sign-batch': 'sign',
  'POST /api/v1/sign-it/revoke': 'sign',
  'POST /api/v1/sign-it/fingerprint': 'sign',
  'POST /api/v1/sign-it/set-thumbnail': 'sign',
};
/** Spec 5: "GET /oauth/userinfo: Bearer access token" (any scope; openid is always granted). */
const USERINFO = 'GET /oauth/userinfo';
/**
 * The routes that take the user's session token only: webhook management ("developer
 * session token", spec 5), and the service's own account routes (decisions.md 5).
 */
const SESSION_ONLY = [
  'GET /api/v1/auth/me', 'PATCH /api/v1/auth/me', 'POST /api/v1/auth/agents', 'GET /api/v1/auth/agents', 'DELETE /api/v1/auth/agents/:agent_pub_key',
  'POST /api/v1/auth/sessions/revoke', 'POST /api/v1/auth/password', 'POST /api/v1/auth/email/verification',
  'POST /api/v1/developer/apps', 'GET /api/v1/developer/apps', 'POST /api/v1/developer/apps/:id/token',
  'GET /api/v1/account/apps', 'DELETE /api/v1/account/apps/:client_id',
  'POST /api/v1/webhooks', 'GET /api/v1/webhooks', 'PUT /api/v1/webhooks/:id', 'DELETE /api/v1/webhooks/:id',
];

/** `METHOD /path` of every route the routers hold (HEAD comes with GET). */
function registeredRoutes(): string[] {
  const out = new Set<string>();
  for (const [prefix, make] of FEATURES) {
    for (const layer of make(srv.deps).stack) {
      for (const method of layer.methods) if (method !== 'HEAD') out.add(`${method} ${prefix + layer.path}`);
    }
  }
  return [...out].sort();
}

function agentKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')));
}

/** A route called with `token`: path parameters filled in, an empty JSON object as the body of a write. */
function call(route: string, token?: string) {
  const [method, template] = route.split(' ');
  const path = template.replace(':agent_pub_key', encodeURIComponent(agentKey())).replace(/:[a-z_]+/g, randomUUID());
  return apiRequest(srv.url, method, path, { token, body: ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined });
}

test('every registered route against spec 5 with an openid-only, a sign and a verify token', async () => {
  const routes = registeredRoutes();
  assert.ok(routes.length > 40, `the walk found the routes (${routes.length})`);
  const authenticated: string[] = [];
  for (const route of routes) {
    const anonymous = await call(route);
    if (anonymous.status === 401) authenticated.push(route);
  }
  assert.equal(authenticated.sort(), [...Object.keys(SCOPED), USERINFO, ...SESSION_ONLY].sort(), 'the routes that need a token are exactly the table\'s');

  for (const route of authenticated) {
    for (const [granted, token] of Object.entries(tokens)) {
      const r = await call(route, token);
      const where = `${route} with a ${granted} token`;
      if (route === USERINFO) {
        assert.is(r.status, 200, where);
        assert.is(r.body.sub, account.id, where);
      } else if (SCOPED[route] === granted) {
        assert.ok(r.status !== 401 && r.status !== 403, `${where}: admitted (${r.status} ${r.text})`);
      } else if (SCOPED[route]) {
        assert.is(r.status, 403, where);
        assert.equal(r.body, { error: 'insufficient_scope', message: `This token lacks the "${SCOPED[route]}" scope.`, scope: SCOPED[route] }, where);
      } else {
        assert.is(r.status, 403, `${where}: ${r.text}`);
        assert.equal(Object.keys(r.body).sort(), ['error', 'message'], where);
        assert.is(r.body.error, 'forbidden', where);
      }
    }
  }
});

test('a session token is admitted on every authenticated route but userinfo (sign out everywhere last: it ends the token)', async () => {
  const { token } = await srv.register();
  const routes = [USERINFO, ...Object.keys(SCOPED), ...SESSION_ONLY.filter((r) => r !== 'POST /api/v1/auth/sessions/revoke'), 'POST /api/v1/auth/sessions/revoke'];
  for (const route of routes) {
    const r = await call(route, token);
    if (route === USERINFO) {
      assert.is(r.status, 401, 'userinfo takes access tokens only');
      continue;
    }
    assert.ok(r.status !== 401, `${route}: ${r.text}`);
    assert.ok(!(r.status === 403 && /access token/.test(r.body?.message ?? '')), `${route}: ${r.text}`);
  }
  assert.is((await call('GET /api/v1/auth/me', token)).status, 401, 'signed out');
});

test('GET /openapi.json declares the same: the oauth scheme with its scope on the scoped routes, the session scheme alone on the session-only ones', async () => {
  const doc = await (await fetch(`${srv.url}/openapi.json`)).json();
  const securityOf = (route: string) => {
    const [method, path] = route.split(' ');
    return doc.paths[path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][method.toLowerCase()].security;
  };
  for (const [route, scope] of Object.entries(SCOPED)) assert.equal(securityOf(route), [{ session: [] }, { oauth: [scope] }], route);
  for (const route of SESSION_ONLY) assert.equal(securityOf(route), [{ session: [] }], route);
});

test('issue 25 item 1: an openid-only token cannot create an app, mint a session token, link a device key, read or change the account; nothing survives revoking the app', async () => {
  const victim = await newAccount(srv, { verified: false });
  const access = (await tokensFor(srv, app, victim, 'openid')).access;
  const bearer = { token: access };

  const created = await apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { ...bearer, body: { name: 'evil', redirect_uris: ['https://evil.example/cb'], scopes: ['sign'] } });
  assert.equal([created.status, created.body.error], [403, 'forbidden'], 'no app created for the user');
  // an app the user does own: no session token minted for it either
  const own = await apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { token: victim.token, body: { name: 'mine' } });
  assert.is(own.status, 201);
  const minted = await apiRequest(srv.url, 'POST', `/api/v1/developer/apps/${own.body.client_id}/token`, bearer);
  assert.equal([minted.status, minted.body.error, minted.body.token], [403, 'forbidden', undefined]);

  // the app's own key, with a challenge it signed itself
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const key = agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')));
  const challenge = (await postJson(srv, '/api/v1/auth/vault/challenge', { agent_pub_key: key })).body.challenge;
  const linked = await apiRequest(srv.url, 'POST', '/api/v1/auth/agents', {
    ...bearer,
    body: { challenge, agent_pub_key: key, signature: edSign(null, Buffer.from(challenge, 'utf8'), privateKey).toString('base64') },
  });
  assert.equal([linked.status, linked.body.error], [403, 'forbidden'], 'the app\'s key is not linked');
  assert.equal((await srv.deps.store.accounts.listAgents(victim.id)).map((a) => a.agentKey), []);

  const me = await apiRequest(srv.url, 'GET', '/api/v1/auth/me', bearer);
  assert.equal([me.status, me.body.user], [403, undefined], 'the unverified e-mail address is not shared');
  const renamed = await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', { ...bearer, body: { display_name: 'Owned' } });
  assert.is(renamed.status, 403);
  assert.is((await srv.deps.store.accounts.getUser(victim.id))?.displayName, 'Ana Lima');
  assert.is((await apiRequest(srv.url, 'GET', '/api/v1/account/apps', bearer)).status, 403);

  // the user revokes the app: its access token ends (and there is nothing minted from it)
  assert.is((await apiRequest(srv.url, 'DELETE', `/api/v1/account/apps/${app.clientId}`, { token: victim.token })).status, 200);
  assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', bearer)).status, 401);
});

test('revoking an app\'s grant ends every token it issued: the first access token, those refreshed from it, and the refresh token', async () => {
  const user = await newAccount(srv);
  const first = await tokensFor(srv, app, user, 'openid verify');
  const refreshed = await postJson(srv, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh, client_id: app.clientId });
  assert.is(refreshed.status, 200, refreshed.text);
  const narrowed = await postJson(srv, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh, client_id: app.clientId, scope: 'openid verify' });
  const accessTokens = [first.access, refreshed.body.access_token, narrowed.body.access_token];
  for (const t of accessTokens) assert.is((await apiRequest(srv.url, 'GET', '/api/v1/sign-it/quota', { token: t })).status, 200);

  assert.is((await apiRequest(srv.url, 'DELETE', `/api/v1/account/apps/${app.clientId}`, { token: user.token })).status, 200);
  for (const t of accessTokens) {
    assert.is((await apiRequest(srv.url, 'GET', '/api/v1/sign-it/quota', { token: t })).status, 401);
    assert.is((await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: t })).status, 401);
  }
  const again = await postJson(srv, '/oauth/token', { grant_type: 'refresh_token', refresh_token: first.refresh, client_id: app.clientId });
  assert.equal([again.status, again.body.error], [400, 'invalid_grant']);
});

test.run();
