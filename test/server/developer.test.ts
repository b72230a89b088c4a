// /api/v1/developer: apps and app-carrying session tokens.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeJwt } from 'jose';
import { startTestServer, testEngine, type TestServer } from '../helpers/server.js';

const test = suite('developer');
let server: TestServer;

test.before(async () => {
  server = await startTestServer({}, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await server.close();
});

async function call(method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(server.url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any, headers: res.headers };
}

test('create and list apps; client_id is a UUID; openid is always enabled', async () => {
  const { token } = await server.register();
  const created = await call('POST', '/api/v1/developer/apps', token, {
    name: 'My App',
    redirect_uris: ['https://app.example.com/callback', 'http://localhost:3000/cb'],
    scopes: ['sign', 'display_name'],
  });
  assert.is(created.status, 201);
  assert.match(created.json.client_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(created.json.name, 'My App');
  assert.equal(created.json.redirect_uris, ['https://app.example.com/callback', 'http://localhost:3000/cb']);
  assert.equal([...created.json.scopes].sort(), ['display_name', 'openid', 'sign']);
  assert.is(created.json.org_id, null);
  assert.is(created.json.active, true);
  const list = await call('GET', '/api/v1/developer/apps', token);
  assert.is(list.status, 200);
  assert.equal(list.json.apps.map((a: { client_id: string }) => a.client_id), [created.json.client_id]);
  const other = await server.register();
  assert.equal((await call('GET', '/api/v1/developer/apps', other.token)).json.apps, [], "others' apps are not listed");
});

test('org_id must be an organization the caller owns', async () => {
  const alice = await server.register();
  const bob = await server.register();
  const own = await call('POST', '/api/v1/developer/apps', alice.token, { name: 'a', org_id: alice.user.personal_org_id });
  assert.is(own.status, 201);
  assert.is(own.json.org_id, alice.user.personal_org_id);
  const foreign = await call('POST', '/api/v1/developer/apps', alice.token, { name: 'a', org_id: bob.user.personal_org_id });
  assert.is(foreign.status, 403);
  assert.is(foreign.json.error, 'forbidden');
});

test('invalid app bodies are 400 naming the field', async () => {
  const { token } = await server.register();
  for (const [body, field] of [
    [{}, 'name'],
    [{ name: 'x', redirect_uris: ['ftp://example.com'] }, 'redirect_uris'],
    [{ name: 'x', redirect_uris: ['https://example.com/#frag'] }, 'redirect_uris'],
    [{ name: 'x', scopes: ['admin'] }, 'scopes'],
    [{ name: 'x', org_id: 'not-a-uuid' }, 'org_id'],
  ] as const) {
    const res = await call('POST', '/api/v1/developer/apps', token, body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.json.error, 'invalid_request');
    assert.ok(res.json.message.includes(field), res.json.message);
  }
});

test('app tokens: owner gets a session token carrying app_id; others 403; unknown 404', async () => {
  const owner = await server.register();
  const stranger = await server.register();
  const app = (await call('POST', '/api/v1/developer/apps', owner.token, { name: 'tok' })).json;
  const res = await call('POST', `/api/v1/developer/apps/${app.client_id}/token`, owner.token);
  assert.is(res.status, 200);
  assert.is(res.json.app_id, app.client_id);
  assert.is(res.json.expires_in, 86400);
  const claims = decodeJwt(res.json.token);
  assert.is(claims.sub, owner.user.id);
  assert.is(claims.app_id, app.client_id);
  assert.is((claims.exp as number) - (claims.iat as number), 86400);
  // The app token authenticates like a session token.
  const me = await call('GET', '/api/v1/auth/me', res.json.token);
  assert.is(me.status, 200);
  assert.is(me.json.user.id, owner.user.id);
  const denied = await call('POST', `/api/v1/developer/apps/${app.client_id}/token`, stranger.token);
  assert.is(denied.status, 403);
  assert.is(denied.json.error, 'forbidden');
  const missing = await call('POST', '/api/v1/developer/apps/00000000-0000-4000-8000-000000000000/token', owner.token);
  assert.is(missing.status, 404);
});

test('session tokens (no app) have no app_id claim and 24 h lifetime', async () => {
  const { token } = await server.register();
  const claims = decodeJwt(token);
  assert.is(claims.app_id, undefined);
  assert.is((claims.exp as number) - (claims.iat as number), 86400);
});

test.run();
