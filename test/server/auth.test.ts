// /api/v1/auth over real HTTP on loopback, on a real SQLite file.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requireAuth, SESSION_ONLY, sessionOrScope } from '../../server/src/auth/middleware.js';
import type { TokenVerifier } from '../../server/src/deps.js';
import { renderErrors } from '../../server/src/middleware.js';
import { createLogger } from '../../server/src/log.js';
import { startTestServer, testEngine, type TestServer } from '../helpers/server.js';

const test = suite('auth');
let server: TestServer;

test.before(async () => {
  server = await startTestServer({}, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await server.close();
});

async function call(method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(server.url + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, headers: res.headers };
}

/** An Ed25519 device key made with node:crypto; `pub` is plain base64 of the raw 32 bytes (an accepted input form). */
function deviceKey(): { pub: string; raw: Buffer; privateKey: KeyObject; sign(text: string): string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { pub: raw.toString('base64'), raw, privateKey, sign: (text) => sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64') };
}

async function vaultLogin(key: ReturnType<typeof deviceKey>) {
  const c = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: key.pub } });
  assert.is(c.status, 200);
  return call('POST', '/api/v1/auth/vault/token', {
    body: { challenge: c.json.challenge, agent_pub_key: key.pub, signature: key.sign(c.json.challenge) },
  });
}

test('register returns 201 with a token and the user; the token works on /me', async () => {
  const res = await call('POST', '/api/v1/auth/register', {
    body: { email: 'Alice@Example.com', password: 'a long password', display_name: 'Alice', username: 'alice' },
  });
  assert.is(res.status, 201);
  assert.type(res.json.token, 'string');
  assert.is(res.json.user.email, 'alice@example.com');
  assert.is(res.json.user.display_name, 'Alice');
  assert.is(res.json.user.username, 'alice');
  assert.is(res.json.user.tier, 'free');
  assert.equal(res.json.user.public_fields, []);
  assert.is(res.json.user.contact_opt_in, false);
  assert.ok(res.json.user.personal_org_id, 'every user gets a personal organization');
  const org = await server.deps.store.accounts.getOrg(res.json.user.personal_org_id);
  assert.is(org?.tier, 'free');
  assert.is(org?.ownerId, res.json.user.id);
  const me = await call('GET', '/api/v1/auth/me', { token: res.json.token });
  assert.is(me.status, 200);
  assert.is(me.json.user.id, res.json.user.id);
  assert.is(me.headers.get('cache-control'), 'no-store');
});

test('the password is stored as a salted scrypt hash, never in clear', async () => {
  const { user } = await server.register('hash@example.com', { password: 'same password 1' });
  const { user: other } = await server.register('hash2@example.com', { password: 'same password 1' });
  const a = (await server.deps.store.accounts.getUser(user.id))!.passwordHash!;
  const b = (await server.deps.store.accounts.getUser(other.id))!.passwordHash!;
  assert.match(a, /^scrypt\$\d+\$\d+\$\d+\$/);
  assert.not.ok(a.includes('same password 1'));
  assert.is.not(a, b, 'random salt per password');
});

test('register errors: duplicate e-mail (any case) 409, bad fields 400 naming the field', async () => {
  await server.register('dup@example.com');
  const dup = await call('POST', '/api/v1/auth/register', { body: { email: 'DUP@example.com', password: 'another password' } });
  assert.is(dup.status, 409);
  assert.is(dup.json.error, 'email_taken');
  assert.is(dup.json.field, 'email');
  await server.register('named@example.com', { username: 'dup_name' });
  const dupName = await call('POST', '/api/v1/auth/register', { body: { email: 'other@example.com', password: 'another password', username: 'DUP_NAME' } });
  assert.is(dupName.status, 409);
  assert.is(dupName.json.error, 'username_taken');
  assert.is(dupName.json.message, 'An account with this username exists.');
  assert.is(dupName.json.field, 'username');
  for (const [body, field] of [
    [{ password: 'long enough pw' }, 'email'],
    [{ email: 'not-an-email', password: 'long enough pw' }, 'email'],
    [{ email: 'x@example.com', password: 'short' }, 'password'],
    [{ email: 'x@example.com', password: 'long enough pw', username: 'a b' }, 'username'],
    [{ email: 'x@example.com', password: 'long enough pw', extra: 1 }, 'extra'],
  ] as const) {
    const res = await call('POST', '/api/v1/auth/register', { body });
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.json.error, 'invalid_request');
    assert.ok(res.json.message.includes(field), `${res.json.message} names ${field}`);
  }
  const bad = await call('POST', '/api/v1/auth/register', { body: '{"email": ' });
  assert.is(bad.status, 400);
  assert.is(bad.json.error, 'invalid_request');
});

test('login by e-mail or username; wrong password and unknown user are the same 401', async () => {
  await call('POST', '/api/v1/auth/register', {
    body: { email: 'bob@example.com', password: 'bob password', username: 'bobby' },
  });
  const byEmail = await call('POST', '/api/v1/auth/login', { body: { email_or_username: 'BOB@example.com', password: 'bob password' } });
  assert.is(byEmail.status, 200);
  assert.is(byEmail.json.user.email, 'bob@example.com');
  const byName = await call('POST', '/api/v1/auth/login', { body: { email_or_username: 'bobby', password: 'bob password' } });
  assert.is(byName.status, 200);
  assert.is(byName.json.user.id, byEmail.json.user.id);
  const wrong = await call('POST', '/api/v1/auth/login', { body: { email_or_username: 'bob@example.com', password: 'nope nope' } });
  const unknown = await call('POST', '/api/v1/auth/login', { body: { email_or_username: 'who@example.com', password: 'nope nope' } });
  assert.is(wrong.status, 401);
  assert.is(unknown.status, 401);
  assert.equal(wrong.json, unknown.json);
  assert.is(wrong.json.error, 'invalid_credentials');
  const missing = await call('POST', '/api/v1/auth/login', { body: { email_or_username: 'bob@example.com' } });
  assert.is(missing.status, 400);
  assert.ok(missing.json.message.includes('password'));
});

test('PATCH /me changes profile fields; a taken username is 409; bad values 400', async () => {
  const { token } = await server.register('patch@example.com');
  await server.register('taken@example.com', { username: 'taken_name' });
  const res = await call('PATCH', '/api/v1/auth/me', {
    token,
    body: {
      display_name: 'Pat',
      username: 'pat',
      profile_picture: 'https://example.com/p.png',
      public_fields: ['display_name', 'profile_picture'],
      contact_opt_in: true,
    },
  });
  assert.is(res.status, 200);
  assert.is(res.json.user.display_name, 'Pat');
  assert.is(res.json.user.username, 'pat');
  assert.is(res.json.user.profile_picture, 'https://example.com/p.png');
  assert.equal(res.json.user.public_fields, ['display_name', 'profile_picture']);
  assert.is(res.json.user.contact_opt_in, true);
  const me = await call('GET', '/api/v1/auth/me', { token });
  assert.is(me.json.user.display_name, 'Pat');
  const cleared = await call('PATCH', '/api/v1/auth/me', { token, body: { profile_picture: null, public_fields: [] } });
  assert.is(cleared.json.user.profile_picture, null);
  assert.equal(cleared.json.user.public_fields, []);
  const taken = await call('PATCH', '/api/v1/auth/me', { token, body: { username: 'TAKEN_NAME' } });
  assert.is(taken.status, 409);
  assert.is(taken.json.error, 'username_taken');
  assert.is(taken.json.field, 'username');
  for (const [body, field] of [
    [{ public_fields: ['email'] }, 'public_fields'],
    [{ profile_picture: 'javascript:alert(1)' }, 'profile_picture'],
    [{ contact_opt_in: 'yes' }, 'contact_opt_in'],
    [{ tier: 'premium' }, 'tier'],
  ] as const) {
    const bad = await call('PATCH', '/api/v1/auth/me', { token, body });
    assert.is(bad.status, 400, JSON.stringify(body));
    assert.ok(bad.json.message.includes(field), bad.json.message);
  }
});

test('PATCH /me refuses a body that is not a JSON object (null, array, string, number, none, not JSON): 400 invalid_request, nothing changed', async () => {
  const { token } = await server.register('patch-body@example.com', { display_name: 'Kept' });
  const cases: { body?: string; type?: string }[] = [
    { body: 'null' },
    { body: '[]' },
    { body: '[{"display_name":"X"}]' },
    { body: '"display_name"' },
    { body: '42' },
    { body: 'true' },
    {},
    { body: '', type: 'application/json' },
    { body: '{"display_name":"X"}', type: 'text/html' },
    { body: 'display_name=X', type: 'application/x-www-form-urlencoded' },
    { body: '{"display_name":"X"}', type: 'application/octet-stream' },
  ];
  for (const c of cases) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (c.body !== undefined) headers['content-type'] = c.type ?? 'application/json';
    const res = await fetch(`${server.url}/api/v1/auth/me`, { method: 'PATCH', headers, body: c.body });
    const json = (await res.json()) as { error: string; message: string };
    assert.is(res.status, 400, JSON.stringify(c));
    assert.is(json.error, 'invalid_request', JSON.stringify(c));
    assert.match(json.message, 'JSON object', JSON.stringify(c));
  }
  const me = await call('GET', '/api/v1/auth/me', { token });
  assert.is(me.json.user.display_name, 'Kept');
  const empty = await call('PATCH', '/api/v1/auth/me', { token, body: {} });
  assert.is(empty.status, 200, 'an empty object changes nothing and is fine');
});

test('401 invalid_token without or with a bad token on every protected endpoint', async () => {
  const { token } = await server.register();
  const [header, payload] = token.split('.');
  const forged = `${header}.${payload}.${Buffer.alloc(32).toString('base64url')}`;
  const endpoints: [string, string][] = [
    ['GET', '/api/v1/auth/me'],
    ['PATCH', '/api/v1/auth/me'],
    ['POST', '/api/v1/auth/agents'],
    ['POST', '/api/v1/developer/apps'],
    ['GET', '/api/v1/developer/apps'],
    ['POST', '/api/v1/developer/apps/00000000-0000-4000-8000-000000000000/token'],
  ];
  for (const [method, path] of endpoints) {
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer not-a-token' }, { authorization: `Bearer ${forged}` }, { authorization: `Basic ${token}` }]) {
      const res = await call(method, path, { headers, body: method === 'GET' ? undefined : {} });
      assert.is(res.status, 401, `${method} ${path} ${JSON.stringify(headers).slice(0, 40)}`);
      assert.is(res.json.error, 'invalid_token');
      assert.is(res.headers.get('www-authenticate')?.startsWith('Bearer'), true);
    }
  }
});

test('an expired session token is refused', async () => {
  const { user } = await server.register();
  const { SignJWT } = await import('jose');
  const { readFileSync } = await import('node:fs');
  const key = new Uint8Array(readFileSync(`${server.dataDir}/secrets/jwt.key`));
  const past = Math.floor(Date.now() / 1000) - 3600;
  const expired = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user.id)
    .setIssuer('provenant')
    .setAudience('provenant-session')
    .setIssuedAt(past - 86400)
    .setExpirationTime(past)
    .sign(key);
  const res = await call('GET', '/api/v1/auth/me', { token: expired });
  assert.is(res.status, 401);
});

test('vault challenge login creates a device-hosted account once, then logs into it', async () => {
  const key = deviceKey();
  const first = await vaultLogin(key);
  assert.is(first.status, 201);
  assert.type(first.json.token, 'string');
  assert.is(first.json.user.email, null);
  assert.is(first.json.user.tier, 'free');
  assert.match(first.json.user.agent_pub_key, /^uhCAk/);
  assert.match(first.json.user.did, /^did:key:z6Mk/);
  assert.is(first.json.user.server_cell, false);
  assert.ok(first.json.user.personal_org_id);
  const again = await vaultLogin(key);
  assert.is(again.status, 200);
  assert.is(again.json.user.id, first.json.user.id);
  // The uhCAk form of the same key reaches the same account.
  const c = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: first.json.user.agent_pub_key } });
  const third = await call('POST', '/api/v1/auth/vault/token', {
    body: { challenge: c.json.challenge, agent_pub_key: first.json.user.agent_pub_key, signature: key.sign(c.json.challenge) },
  });
  assert.is(third.status, 200);
  assert.is(third.json.user.id, first.json.user.id);
  const me = await call('GET', '/api/v1/auth/me', { token: third.json.token });
  assert.is(me.json.user.agents.length, 1);
});

test('vault challenges: shape, single use, bound to the key, signature checked, bad keys refused', async () => {
  const key = deviceKey();
  const c = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: key.pub } });
  assert.match(c.json.challenge, /^provenant-auth-challenge:v1:[A-Za-z0-9_-]{43}$/);
  const body = { challenge: c.json.challenge, agent_pub_key: key.pub, signature: key.sign(c.json.challenge) };

  const other = deviceKey();
  const wrongSigner = await call('POST', '/api/v1/auth/vault/token', { body: { ...body, signature: other.sign(c.json.challenge) } });
  assert.is(wrongSigner.status, 400);
  assert.is(wrongSigner.json.error, 'invalid_signature');
  const otherKey = await call('POST', '/api/v1/auth/vault/token', {
    body: { challenge: c.json.challenge, agent_pub_key: other.pub, signature: other.sign(c.json.challenge) },
  });
  assert.is(otherKey.status, 400, 'a challenge issued to one key is not valid for another');
  assert.is(otherKey.json.error, 'invalid_challenge');

  assert.is((await call('POST', '/api/v1/auth/vault/token', { body })).status, 201);
  const replay = await call('POST', '/api/v1/auth/vault/token', { body });
  assert.is(replay.status, 400);
  assert.is(replay.json.error, 'invalid_challenge');

  const invented = 'provenant-auth-challenge:v1:' + 'A'.repeat(43);
  const notIssued = await call('POST', '/api/v1/auth/vault/token', {
    body: { challenge: invented, agent_pub_key: key.pub, signature: key.sign(invented) },
  });
  assert.is(notIssued.json.error, 'invalid_challenge');

  for (const agent_pub_key of [undefined, 'nope', 'uhCAk' + 'A'.repeat(48)]) {
    const res = await call('POST', '/api/v1/auth/vault/challenge', { body: agent_pub_key === undefined ? {} : { agent_pub_key } });
    assert.is(res.status, 400);
    assert.is(res.json.error, 'invalid_agent_pub_key');
  }
});

test('an expired challenge is refused (stored hashed, 5 minutes)', async () => {
  const key = deviceKey();
  const c = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: key.pub } });
  const expiresAt = Date.parse(c.json.expires_at);
  assert.ok(Math.abs(expiresAt - Date.now() - 5 * 60_000) < 10_000, 'valid about 5 minutes');
  const hash = createHash('sha256').update(c.json.challenge).digest('hex');
  const db = await server.sql();
  const rows = await db.all<{ hash: string }>('SELECT hash FROM challenges');
  assert.ok(rows.some((r) => r.hash === hash), 'stored as its SHA-256');
  assert.not.ok(rows.some((r) => r.hash === c.json.challenge), 'never in clear');
  // Age it past its expiry, as five minutes would.
  await db.run('UPDATE challenges SET expires_at = ? WHERE hash = ?', [Date.now() - 1, hash]);
  const res = await call('POST', '/api/v1/auth/vault/token', {
    body: { challenge: c.json.challenge, agent_pub_key: key.pub, signature: key.sign(c.json.challenge) },
  });
  assert.is(res.status, 400);
  assert.is(res.json.error, 'invalid_challenge');
});

test('POST /agents links another device key; a key of another account is 409', async () => {
  const { token, user } = await server.register('linker@example.com');
  const key = deviceKey();
  const c = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: key.pub } });
  const linked = await call('POST', '/api/v1/auth/agents', {
    token,
    body: { challenge: c.json.challenge, agent_pub_key: key.pub, signature: key.sign(c.json.challenge) },
  });
  assert.is(linked.status, 201);
  assert.is(linked.json.user.id, user.id);
  assert.is(linked.json.user.agents.length, 1);
  assert.is(linked.json.user.agents[0].primary, true, "a user's first key is primary");

  const second = deviceKey();
  const c2 = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: second.pub } });
  const linked2 = await call('POST', '/api/v1/auth/agents', {
    token,
    body: { challenge: c2.json.challenge, agent_pub_key: second.pub, signature: second.sign(c2.json.challenge) },
  });
  assert.is(linked2.json.user.agents.length, 2);
  assert.is(linked2.json.user.agents.filter((a: { primary: boolean }) => a.primary).length, 1);

  // The linked key now logs into this account.
  const login = await vaultLogin(second);
  assert.is(login.status, 200);
  assert.is(login.json.user.id, user.id);

  // A key that already has its own account cannot be linked here.
  const loner = deviceKey();
  assert.is((await vaultLogin(loner)).status, 201);
  const c3 = await call('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: loner.pub } });
  const stolen = await call('POST', '/api/v1/auth/agents', {
    token,
    body: { challenge: c3.json.challenge, agent_pub_key: loner.pub, signature: loner.sign(c3.json.challenge) },
  });
  assert.is(stolen.status, 409);
  assert.is(stolen.json.error, 'agent_taken');
});

test('a second token verifier plugs in; requireAuth(deps, policy): a named scope admits its tokens, no scope refuses them', async () => {
  const { user, token } = await server.register();
  const opaque: TokenVerifier = async (_deps, t) =>
    t === 'opaque-verify-only' ? { userId: user.id, kind: 'oauth', appId: null, scopes: ['openid', 'verify'] } : null;
  const app = new Koa();
  // the server's parts with one more verifier, as the composition root lists OAuth's
  const deps = { ...server.deps, tokenVerifiers: [...server.deps.tokenVerifiers, opaque] };
  app.use(renderErrors(createLogger('silent')));
  const sign = requireAuth(deps, sessionOrScope('sign'));
  const verify = requireAuth(deps, sessionOrScope('verify'));
  const sessionOnly = requireAuth(deps, SESSION_ONLY);
  app.use(async (ctx, next) => (ctx.path === '/sign' ? sign(ctx, next) : ctx.path === '/session' ? sessionOnly(ctx, next) : verify(ctx, next)));
  app.use((ctx) => {
    ctx.body = ctx.state.auth;
  });
  const http = createServer(app.callback());
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  try {
    const get = (path: string, t: string) => fetch(url + path, { headers: { authorization: `Bearer ${t}` } });
    const ok = await get('/verify', 'opaque-verify-only');
    assert.is(ok.status, 200);
    assert.equal(await ok.json(), { userId: user.id, kind: 'oauth', appId: null, scopes: ['openid', 'verify'] });
    const noScope = await get('/sign', 'opaque-verify-only');
    assert.is(noScope.status, 403);
    assert.is((await noScope.json()).error, 'insufficient_scope');
    const session = await get('/sign', token);
    assert.is(session.status, 200, 'session tokens may do everything');
    assert.equal((await session.json()).scopes, null);
    assert.is((await get('/verify', 'opaque-unknown')).status, 401);
    const refused = await get('/session', 'opaque-verify-only');
    assert.is(refused.status, 403, 'a route naming no scope refuses an app\'s token');
    assert.is((await refused.json()).error, 'forbidden');
    assert.is((await get('/session', token)).status, 200);
  } finally {
    await new Promise<void>((r) => http.close(() => r()));
  }
});

test.run();
