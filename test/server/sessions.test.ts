// Ending sessions and device keys (issue 25 item 1) over real HTTP: "sign out
// everywhere" and a password change void every session token issued up to then (on
// every node: on PostgreSQL a second node on the same database is asked too); the
// cut-off compares milliseconds, so a token issued in the same second after it works;
// device keys are listed and unlinked, and an unlinked key neither signs in, publishes
// nor keeps its sessions, while the records it signed stay. Runs again on PostgreSQL
// (test/postgres/suites.test.ts).
import { generateKeyPairSync, randomBytes, sign as edSign, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import { SignJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';

const test = suite('sessions and device keys');
let srv: TestServer;
const PASSWORD = 'correct horse battery staple';
const S = '/api/v1/sign-it';

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
});
test.after(async () => srv.close());

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}, base = srv.url) => apiRequest(base, method, path, opts);

async function login(email: string, password = PASSWORD, base = srv.url): Promise<string> {
  const r = await api('POST', '/api/v1/auth/login', { body: { email_or_username: email, password } }, base);
  assert.is(r.status, 200, r.text);
  return r.body.token;
}

const me = (token: string, base = srv.url) => api('GET', '/api/v1/auth/me', { token }, base);

interface Key {
  agentKey: string;
  privateKey: KeyObject;
  sign(text: string): string;
}

function deviceKey(): Key {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const agentKey = agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')));
  return { agentKey, privateKey, sign: (text) => edSign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64') };
}

async function signedChallenge(key: Key) {
  const c = await api('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: key.agentKey } });
  assert.is(c.status, 200, c.text);
  return { challenge: c.body.challenge, agent_pub_key: key.agentKey, signature: key.sign(c.body.challenge) };
}

const vaultLogin = async (key: Key) => api('POST', '/api/v1/auth/vault/token', { body: await signedChallenge(key) });
const linkKey = async (token: string, key: Key) => api('POST', '/api/v1/auth/agents', { token, body: await signedChallenge(key) });

/** A record signed by `key` as the vault signs it (canonical JSON, Ed25519), ready for POST /publish. */
function vaultRecord(key: Key): Record<string, unknown> {
  const record: Record<string, unknown> = {
    file_hash: randomBytes(32).toString('hex'), signer: key.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: 'None',
    content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
  };
  return { ...record, signature: key.sign(canonicalize(record)!) };
}

test('sign out everywhere: every session token issued before it ends (the caller\'s too, developer tokens included); signing in again works; on every node', async () => {
  const { user } = await srv.register();
  const email = user.email!;
  const [a, b] = [await login(email), await login(email)];
  const appId = (await api('POST', '/api/v1/developer/apps', { token: a, body: { name: 'tool' } })).body.client_id;
  const developerToken = (await api('POST', `/api/v1/developer/apps/${appId}/token`, { token: a })).body.token;
  for (const t of [a, b, developerToken]) assert.is((await me(t)).status, 200);
  const other = await srv.register();

  // a second node on the same PostgreSQL database and secrets (SQLite is one node's file)
  const second = srv.engine === 'postgres'
    ? await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DATABASE_URL: srv.deps.config.databaseUrl!, PROVENANT_SECRETS_DIR: srv.deps.config.secretsDir }, { engine: 'postgres' })
    : null;
  try {
    if (second) assert.is((await me(a, second.url)).status, 200, 'the second node takes the token before');
    const revoked = await api('POST', '/api/v1/auth/sessions/revoke', { token: b });
    assert.is(revoked.status, 200, revoked.text);
    assert.is(revoked.body.success, true);
    assert.ok(Date.parse(revoked.body.sessions_valid_after) > 0);
    assert.is(revoked.body.token, undefined, 'no fresh token: a stolen token cannot keep itself alive this way');
    for (const t of [a, b, developerToken]) {
      const r = await me(t);
      assert.equal([r.status, r.body.error], [401, 'invalid_token']);
      if (second) assert.is((await me(t, second.url)).status, 401, 'the second node refuses it too');
    }
    const fresh = await login(email);
    assert.is((await me(fresh)).status, 200, 'a token issued after the sign-out works');
    if (second) assert.is((await me(fresh, second.url)).status, 200);
    assert.is((await me(other.token)).status, 200, 'another user is not signed out');
  } finally {
    await second?.close();
  }
});

test('the cut-off compares milliseconds (iat_ms): a token issued in the same second after a sign-out works, one issued a millisecond before it does not', async () => {
  const { user, token } = await srv.register();
  const revoked = await api('POST', '/api/v1/auth/sessions/revoke', { token });
  const cutoff = Date.parse(revoked.body.sessions_valid_after);
  const key = new Uint8Array(srv.deps.secrets.key('jwt.key'));
  // tokens as the server issues them, with the issue time chosen: in the cut-off's second, after and before it
  const tokenAt = (ms: number) =>
    new SignJWT({ iat_ms: ms })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer('provenant')
      .setAudience('provenant-session')
      .setIssuedAt(Math.floor(ms / 1000))
      .setExpirationTime(Math.floor(ms / 1000) + 3600)
      .sign(key);
  assert.is((await me(await tokenAt(cutoff))).status, 200, 'issued at the cut-off');
  assert.is((await me(await tokenAt(cutoff - 1))).status, 401, 'issued a millisecond before');
  // a token without iat_ms (issued before the claim existed) counts from its iat second
  const legacy = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer('provenant').setAudience('provenant-session')
    .setIssuedAt(Math.floor(cutoff / 1000) - 1).setExpirationTime(Math.floor(cutoff / 1000) + 3600).sign(key);
  assert.is((await me(legacy)).status, 401);
});

test('a password change needs the current password, ends every session issued before it and answers a fresh one; the old password no longer signs in', async () => {
  const { user } = await srv.register();
  const email = user.email!;
  const [a, b] = [await login(email), await login(email)];
  const wrong = await api('POST', '/api/v1/auth/password', { token: a, body: { current_password: 'not it at all', new_password: 'a brand new passphrase' } });
  assert.equal([wrong.status, wrong.body.error], [401, 'invalid_credentials']);
  const short = await api('POST', '/api/v1/auth/password', { token: a, body: { current_password: PASSWORD, new_password: 'short' } });
  assert.equal([short.status, short.body.error], [400, 'invalid_request']);
  assert.is((await me(b)).status, 200, 'refused attempts end nothing');

  const changed = await api('POST', '/api/v1/auth/password', { token: a, body: { current_password: PASSWORD, new_password: 'a brand new passphrase' } });
  assert.is(changed.status, 200, changed.text);
  assert.is(changed.body.user.id, user.id);
  for (const t of [a, b]) assert.is((await me(t)).status, 401);
  assert.is((await me(changed.body.token)).status, 200, 'the answer\'s session works');
  const old = await api('POST', '/api/v1/auth/login', { body: { email_or_username: email, password: PASSWORD } });
  assert.is(old.status, 401);
  await login(email, 'a brand new passphrase');
});

test('the OAuth pages\' session cookie ends with the sessions: after a sign-out the authorize page asks to sign in again', async () => {
  const { user, token } = await srv.register();
  const owner = await srv.register();
  const created = await api('POST', '/api/v1/developer/apps', { token: owner.token, body: { name: 'app', redirect_uris: ['https://app.example/cb'] } });
  const query = new URLSearchParams({
    response_type: 'code', client_id: created.body.client_id, redirect_uri: 'https://app.example/cb', scope: 'openid', state: 's',
    code_challenge: randomBytes(32).toString('base64url').slice(0, 43), code_challenge_method: 'S256',
  });
  const cookie = `provenant_session=${token}`;
  const page = async () => (await fetch(`${srv.url}/oauth/authorize?${query}`, { headers: { cookie }, redirect: 'manual' })).text();
  assert.match(await page(), /name="decision"/, 'signed in: the consent page');
  await api('POST', '/api/v1/auth/sessions/revoke', { token });
  assert.match(await page(), /name="password"/, 'signed out: the sign-in page');
  assert.ok(user.id);
});

test('device keys: listed, unlinked (sessions of that key end; it cannot sign in, publish or start an account; its records stay); never the only key', async () => {
  const { user, token } = await srv.register();
  const [k1, k2] = [deviceKey(), deviceKey()];
  assert.is((await linkKey(token, k1)).status, 201);
  assert.is((await linkKey(token, k2)).status, 201);
  let listed = await api('GET', '/api/v1/auth/agents', { token });
  assert.is(listed.status, 200);
  assert.equal(listed.body.agents.map((a: any) => [a.agent_pub_key, a.primary]), [[k1.agentKey, true], [k2.agentKey, false]]);

  const viaK2 = await vaultLogin(k2);
  assert.equal([viaK2.status, viaK2.body.user.id], [200, user.id]);
  const viaK1 = await vaultLogin(k1);
  assert.is((await me(viaK1.body.token)).status, 200);
  const record = vaultRecord(k2);
  assert.is((await api('POST', `${S}/publish`, { body: record })).status, 200);

  // unlinking the primary moves the primary flag; the answer lists what is left
  const unlinked = await api('DELETE', `/api/v1/auth/agents/${encodeURIComponent(k1.agentKey)}`, { token });
  assert.is(unlinked.status, 200, unlinked.text);
  assert.equal(unlinked.body.agents.map((a: any) => [a.agent_pub_key, a.primary]), [[k2.agentKey, true]]);
  const only = await api('DELETE', `/api/v1/auth/agents/${encodeURIComponent(k2.agentKey)}`, { token });
  assert.equal([only.status, only.body.error], [409, 'agent_required'], 'the only key left stays');
  assert.is((await linkKey(token, k1)).status, 201, 'the user may link it again');
  assert.is((await me(viaK1.body.token)).status, 401, 'linking it again does not revive the sessions it had');
  const viaK1Again = await vaultLogin(k1);
  assert.is((await me(viaK1Again.body.token)).status, 200, 'a new sign-in with it works');

  assert.is((await api('DELETE', `/api/v1/auth/agents/${encodeURIComponent(k2.agentKey)}`, { token })).status, 200);
  assert.equal((await me(viaK2.body.token)).status, 401, 'the session the key signed in with ends');
  assert.equal((await me(token)).body.user.agents.map((a: any) => a.agent_pub_key), [k1.agentKey], 'the account shows linked keys only');
  const again = await vaultLogin(k2);
  assert.equal([again.status, again.body.error], [403, 'agent_unlinked'], 'no sign-in, and no new account for the key');
  const publish = await api('POST', `${S}/publish`, { body: vaultRecord(k2) });
  assert.equal([publish.status, publish.body.error], [403, 'agent_unlinked']);
  const quota = await api('GET', `${S}/quota/by-agent?agent_pub_key=${encodeURIComponent(k2.agentKey)}`);
  assert.equal([quota.status, quota.body.error], [403, 'agent_unlinked']);
  const verified = await api('GET', `${S}/verify?hash=${record.file_hash}`);
  assert.equal(verified.body.signatures.map((s: any) => s.signer), [k2.agentKey], 'the record it signed stays');
  const mine = await api('GET', `${S}/my-signatures`, { token });
  assert.ok(mine.body.signatures.some((s: any) => s.file_hash === record.file_hash), 'and is still the user\'s');

  const stranger = await srv.register();
  const taken = await linkKey(stranger.token, k2);
  assert.equal([taken.status, taken.body.error], [409, 'agent_taken'], 'nobody else can take an unlinked key');
  const notMine = await api('DELETE', `/api/v1/auth/agents/${encodeURIComponent(k1.agentKey)}`, { token: stranger.token });
  assert.equal([notMine.status, notMine.body.error], [404, 'not_found']);
  const bad = await api('DELETE', '/api/v1/auth/agents/not-a-key', { token });
  assert.equal([bad.status, bad.body.error], [400, 'invalid_agent_pub_key']);
});

test.run();
