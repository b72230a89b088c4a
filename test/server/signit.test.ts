// Sign-it over real HTTP on loopback, on a real SQLite file (spec 4.1, 4.4, 4.5,
// 4.7-4.10, 4.12, 4.14; decisions.md 2, 6). Records from the API are re-verified with
// node:crypto and the canonicalize package alone. postgres/suites.test.ts runs this
// file again on PostgreSQL (imported with ?engine=postgres: testEngine).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { outbox } from '../helpers/outbox.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { issueSessionToken } from '../../server/src/domain/tokens.js';
import type { TokenVerifier } from '../../server/src/deps.js';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';
import type { NewSignature } from '../../server/src/store/index.js';

let srv: TestServer;
const S = '/api/v1/sign-it';

// OAuth access tokens arrive with the OAuth issue; until then a test verifier stands in
// for one: `test-oauth:<userId>:<appId|->:<scope,scope>` (only this file's tokens match).
const testOauthVerifier: TokenVerifier = async (_deps, token) => {
  const m = /^test-oauth:([^:]+):([^:]+):(.*)$/.exec(token);
  if (!m) return null;
  return { userId: m[1], kind: 'oauth', appId: m[2] === '-' ? null : m[2], scopes: m[3].split(',').filter(Boolean) };
};

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { tokenVerifiers: [testOauthVerifier], engine: testEngine(import.meta.url) });
  // the outbox rows stay for these tests to read (helpers/outbox.ts; their delivery is test/webhooks/'s)
  await srv.deps.webhooks.close();
});
test.after(async () => {
  await srv.close();
});

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);

const hex = (n = 32) => randomBytes(n).toString('hex');
const nextMonthIso = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
};

/** A registered user with a server-hosted cell. */
async function cellUser(tier: 'free' | 'premium' | 'premium_plus' = 'premium', opts: { display_name?: string; username?: string } = {}) {
  const { token, user } = await srv.register(undefined, opts);
  const cell = await createServerCell(srv.deps, user.id);
  if (tier !== 'free') await srv.deps.store.accounts.setUserTier(user.id, tier);
  return { token, userId: user.id, agentKey: cell.agentKey };
}

// ---- a device (vault) identity, with node:crypto only
interface Device {
  privateKey: KeyObject;
  agentKey: string;
  token: string;
  userId: string;
}

function rawPublicKey(privateKey: KeyObject): Uint8Array {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return new Uint8Array(Buffer.from(String(jwk.x), 'base64url'));
}

async function device(): Promise<Device> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const agentKey = agentKeyFromPublicKey(rawPublicKey(privateKey));
  const ch = await api('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: agentKey } });
  assert.is(ch.status, 200, JSON.stringify(ch.body));
  const signature = edSign(null, Buffer.from(ch.body.challenge, 'utf8'), privateKey).toString('base64');
  const login = await api('POST', '/api/v1/auth/vault/token', { body: { challenge: ch.body.challenge, agent_pub_key: agentKey, signature } });
  assert.ok(login.status === 200 || login.status === 201, JSON.stringify(login.body));
  return { privateKey, agentKey, token: login.body.token, userId: login.body.user.id };
}

function vaultRecord(d: Device, over: Record<string, unknown> = {}): Record<string, unknown> {
  const record: Record<string, unknown> = {
    file_hash: hex(), signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: 'None',
    content_rights: { license: 'CCBY', commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
  const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
  return { ...record, signature };
}

const FIELDS = ['file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights', 'integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags'];

/** Re-verifies a record from the API with node:crypto + canonicalize, independent of src/. */
function verifiesIndependently(sig: Record<string, unknown>, signature: string): boolean {
  const record: Record<string, unknown> = {};
  for (const f of FIELDS) record[f] = sig[f];
  const bytes = Buffer.from(String(sig.signer).slice(1), 'base64url');
  assert.equal([...bytes.subarray(0, 3)], [0x84, 0x20, 0x24]);
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), bytes.subarray(3, 35)]);
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const ok = edVerify(null, Buffer.from(canonicalize(record)!, 'utf8'), key, Buffer.from(signature, 'base64'));
  const action = createHash('sha256').update(canonicalize({ ...record, signature })!).digest('hex');
  return ok && action === sig.action_hash;
}

const SIGNATURE_KEYS = [
  'action_hash', 'ai_generation', 'comment', 'contactable', 'content_rights', 'expires_at', 'file_hash', 'has_features', 'integrity_report',
  'intent', 'log_index', 'perceptual_hash', 'revocation_reason', 'revoked', 'revoked_at', 'signed_at', 'signer', 'signer_did',
  'signer_display_name', 'signer_profile_picture', 'signer_username', 'superseded_by', 'supersedes', 'tags',
];
const OWN_KEYS = [
  'action_hash', 'ai_generation', 'comment', 'content_rights', 'expires_at', 'file_hash', 'integrity_report', 'intent',
  'perceptual_hash', 'revoked', 'revoked_at', 'revoked_reason', 'signature', 'signed_at', 'signer', 'superseded_by',
  'supersedes', 'tags', 'thumbnail',
];

/** Stores `n` org-pool (or personal) rows directly, to bring a pool near its limit. */
async function fill(userId: string, agentKey: string, n: number, orgId: string | null): Promise<void> {
  const rows: NewSignature[] = Array.from({ length: n }, () => ({
    record: {
      file_hash: hex(), signer: agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
      integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
    },
    signature: randomBytes(64).toString('base64'), action_hash: hex(), userId, appId: null, source: 'vault',
  }));
  await srv.deps.store.signatures.insertSignatures(rows, {
    userId, orgId, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
    decide: (_u, k) => ({ quota: orgId ? 'org' : 'personal', orgId, overage: new Array(k).fill(false) }),
  });
}

async function appFor(userId: string, tier: 'free' | 'starter' | 'pro' | 'enterprise', name = 'Acme App') {
  const org = await srv.deps.store.accounts.createOrg({ id: randomUUID(), name: `Org ${name}`, ownerId: userId, tier, customLimit: null });
  const app = await srv.deps.store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: userId, name, redirectUris: [], scopes: ['sign', 'verify'] });
  const token = await issueSessionToken(srv.deps, userId, app.id);
  return { org, app, token };
}

// ---------------------------------------------------------------- auth

test('every authenticated endpoint answers 401 invalid_token without a token', async () => {
  for (const [method, path] of [
    ['POST', '/sign'], ['POST', '/sign-batch'], ['POST', '/revoke'], ['POST', '/set-thumbnail'], ['GET', '/my-signatures'], ['GET', '/quota'],
  ]) {
    const r = await api(method, S + path, method === 'POST' ? { body: {} } : {});
    assert.is(r.status, 401, path);
    assert.is(r.body.error, 'invalid_token', path);
  }
  const bad = await api('GET', `${S}/quota`, { token: 'not.a.token' });
  assert.is(bad.status, 401);
});

// ---------------------------------------------------------------- verify

test('GET /verify: missing_hash, invalid_hash, and an empty answer', async () => {
  assert.equal((await api('GET', `${S}/verify`)).body.error, 'missing_hash');
  assert.is((await api('GET', `${S}/verify`)).status, 400);
  for (const h of ['abc', 'g'.repeat(64), '0'.repeat(63), '0'.repeat(65)]) {
    const r = await api('GET', `${S}/verify?hash=${h}`);
    assert.is(r.status, 400);
    assert.is(r.body.error, 'invalid_hash');
    assert.type(r.body.message, 'string');
  }
  assert.equal((await api('GET', `${S}/verify?hash=${hex()}`)).body, { signatures: [], count: 0 });
});

test('POST /sign then GET /verify: full shapes; profile fields only once granted; offline re-verification', async () => {
  const u = await cellUser('premium', { display_name: 'Grace', username: `grace${hex(3)}` });
  const file = hex();
  const r = await api('POST', `${S}/sign`, {
    token: u.token,
    body: {
      file_hash: file.toUpperCase(), intent: 'approval', ai_generation: 'assisted', comment: 'first cut 😀',
      content_rights: { license: 'cc-by-nc', commercial_licensing: 'contact_for_terms', ai_training: 'not_allowed', contact_preference: 'allow_contact_requests' },
      perceptual_hash: { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] },
    },
  });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal(Object.keys(r.body).sort(), ['action_hash', 'agent_pub_key', 'file_hash', 'signed_at', 'success']);
  assert.is(r.body.success, true);
  assert.is(r.body.file_hash, file);
  assert.is(r.body.agent_pub_key, u.agentKey);
  assert.ok(Number.isInteger(r.body.signed_at) && Math.abs(r.body.signed_at - Date.now()) < 60_000);
  assert.match(r.body.action_hash, /^[0-9a-f]{64}$/);

  const v = await api('GET', `${S}/verify?hash=${file}`);
  assert.is(v.status, 200);
  assert.is(v.body.count, 1);
  const s = v.body.signatures[0];
  assert.equal(Object.keys(s).sort(), SIGNATURE_KEYS);
  // issue 27: the record's index in the transparency log, null until a checkpoint covers it (test/tlog/server-log.test.ts)
  assert.ok(s.log_index === null || Number.isInteger(s.log_index), String(s.log_index));
  assert.equal(
    { ...s, signer_did: undefined, log_index: undefined },
    {
      file_hash: file, action_hash: r.body.action_hash, signer: u.agentKey, signer_did: undefined, log_index: undefined,
      signer_display_name: null, signer_username: null, signer_profile_picture: null, signed_at: r.body.signed_at,
      intent: 'Approval', ai_generation: 'Assisted',
      content_rights: { license: 'CCBYNC', commercial_licensing: 'ContactForTerms', ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
      integrity_report: null,
      perceptual_hash: { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] },
      comment: 'first cut 😀', supersedes: null, superseded_by: null, expires_at: null, tags: null,
      revoked: false, revoked_at: null, revocation_reason: null, contactable: true,
      has_features: false, // issue 32: POST /sign makes records without local features
    },
  );
  assert.match(s.signer_did, /^did:key:z6Mk/);

  // the signature comes from /my-signatures; both together re-verify offline
  const mine = await api('GET', `${S}/my-signatures`, { token: u.token });
  const own = mine.body.signatures.find((x: any) => x.action_hash === r.body.action_hash);
  assert.ok(verifiesIndependently(s, own.signature));
});

test('a profile grant (PATCH /auth/me public_fields) reaches /verify at once (updateMe calls invalidateVerifyCache)', async () => {
  const u = await cellUser('premium', { display_name: 'Grace', username: `grace${hex(3)}` });
  const file = hex();
  assert.is((await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file } })).status, 200);
  const before = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0]; // now cached
  assert.equal([before.signer_display_name, before.signer_username, before.signer_profile_picture], [null, null, null]);
  const patch = await api('PATCH', '/api/v1/auth/me', { token: u.token, body: { public_fields: ['display_name', 'username'] } });
  assert.is(patch.status, 200, JSON.stringify(patch.body));
  const v2 = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.is(v2.signer_display_name, 'Grace');
  assert.match(v2.signer_username, /^grace/);
  assert.is(v2.signer_profile_picture, null);
});

test('profile fields are granted by the signer: shown for a hash not yet cached', async () => {
  const u = await cellUser('premium', { display_name: 'Hopper', username: `hopper${hex(3)}` });
  assert.is((await api('PATCH', '/api/v1/auth/me', { token: u.token, body: { public_fields: ['username'] } })).status, 200);
  const file = hex();
  assert.is((await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file } })).status, 200);
  const s = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.equal([s.signer_display_name, s.signer_profile_picture], [null, null]);
  assert.match(s.signer_username, /^hopper/);
});

test('POST /sign: errors in spec 4.7 order; intent fails at commit; device-hosted identities', async () => {
  const u = await cellUser();
  const sign = (body: unknown, token = u.token) => api('POST', `${S}/sign`, { token, body });
  const long = 'x'.repeat(281);
  let r = await sign({});
  assert.equal([r.status, r.body.error], [400, 'missing_fields']);
  r = await sign({ file_hash: 'nothex', comment: long, supersedes: 'bad' });
  assert.equal([r.status, r.body.error], [400, 'invalid_hash']);
  r = await sign({ file_hash: hex(), comment: long, supersedes: 'bad', content_rights: { license: 'nope' } });
  assert.equal([r.status, r.body.error], [400, 'invalid_comment']);
  r = await sign({ file_hash: hex(), supersedes: 'bad', content_rights: { license: 'nope' } });
  assert.equal([r.status, r.body.error], [400, 'invalid_supersedes']);
  r = await sign({ file_hash: hex(), content_rights: { license: 'nope' } });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  assert.match(r.body.message, 'content_rights.license');
  r = await sign({ file_hash: hex(), ai_generation: 'Mostly' });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  assert.match(r.body.message, 'ai_generation');
  r = await sign({ file_hash: hex(), content_rights: { ai_training: 'NotAllowed' } }); // response form is not a request token
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await sign({ file_hash: hex(), intent: 'Forgery' });
  assert.equal([r.status, r.body.error], [500, 'signing_failed']);
  assert.match(r.body.message, 'intent');
  // 280 code points (emoji are 2 UTF-16 units each) are fine; custom licenses convert
  r = await sign({ file_hash: hex(), comment: '😀'.repeat(280), content_rights: { license: { custom: 'ask me' } } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const quota = await api('GET', `${S}/quota`, { token: u.token });
  assert.is(quota.body.used, 1); // the refused signs drew nothing
  const { token } = await srv.register();
  r = await sign({ file_hash: hex() }, token);
  assert.equal([r.status, r.body.error], [500, 'signing_failed']);
});

// ---------------------------------------------------------------- quotas

test('free personal quota of 2: the third sign is 402 with every spec 4.7 field; GET /quota follows', async () => {
  const u = await cellUser('free');
  let q = await api('GET', `${S}/quota`, { token: u.token });
  assert.is(q.headers.get('cache-control'), 'no-store');
  assert.equal(q.body, { allowed: true, scope: 'community', tier: 'free', used: 0, limit: 2, resets_at: nextMonthIso() });
  for (let i = 0; i < 2; i++) assert.is((await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).status, 200);
  const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } });
  assert.is(r.status, 402);
  assert.equal({ ...r.body, message: typeof r.body.message }, {
    error: 'quota_exceeded', message: 'string', scope: 'community', tier: 'free', used: 2, limit: 2, resets_at: nextMonthIso(), upgrade_tier: 'premium',
  });
  q = await api('GET', `${S}/quota`, { token: u.token });
  assert.equal(q.body, { allowed: false, scope: 'community', tier: 'free', used: 2, limit: 2, resets_at: nextMonthIso(), upgrade_tier: 'premium' });
});

test('ten concurrent signs with one sign left: exactly one succeeds', async () => {
  const u = await cellUser('free');
  assert.is((await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).status, 200);
  const file = hex(); // the same file ten times: distinct records all the same
  const rs = await Promise.all(Array.from({ length: 10 }, () => api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file } })));
  assert.equal(rs.map((r) => r.status).sort(), [200, 402, 402, 402, 402, 402, 402, 402, 402, 402]);
  assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.count, 1);
});

test('free org pool: signs through the app draw on it; full, they fall back to personal with sponsor.exhausted', async () => {
  const u = await cellUser('free');
  const { app, org, token } = await appFor(u.userId, 'free', 'Sponsor App');
  let r = await api('POST', `${S}/sign`, { token, body: { file_hash: hex(), intent: 'Witness' } });
  assert.is(r.status, 200);
  let q = await api('GET', `${S}/quota`, { token });
  assert.equal(q.body, { allowed: true, scope: 'org', tier: 'free', used: 1, limit: 250, resets_at: nextMonthIso() });
  const byAgent = await api('GET', `${S}/quota/by-agent?agent_pub_key=${u.agentKey}&client_id=${app.id}`);
  assert.equal(byAgent.body.sponsor, { app_name: 'Sponsor App', exhausted: false });
  assert.is(byAgent.body.scope, 'org');

  // the sign through an app token left a sign.created row in the outbox (webhook seam)
  const events = (await outbox(srv.deps.store)).filter((e) => e.appId === app.id);
  assert.equal(events.map((e) => e.type), ['sign.created']);
  assert.equal(events[0].payload, { file_hash: r.body.file_hash, action_hash: r.body.action_hash, signer: u.agentKey, signed_at: r.body.signed_at, intent: 'Witness' });

  await fill(u.userId, u.agentKey, 249, org.id);
  q = await api('GET', `${S}/quota`, { token });
  assert.equal([q.body.scope, q.body.used], ['community', 0]); // the next sign would fall back
  r = await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } });
  assert.is(r.status, 200);
  const full = await api('GET', `${S}/quota/by-agent?agent_pub_key=${u.agentKey}&client_id=${app.id}`);
  assert.is(full.headers.get('cache-control'), 'no-store');
  assert.equal(full.body, {
    allowed: true, scope: 'community', tier: 'free', used: 1, limit: 2, resets_at: nextMonthIso(), sponsor: { app_name: 'Sponsor App', exhausted: true },
  });
  assert.is((await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } })).status, 200);
  r = await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } });
  assert.equal([r.status, r.body.scope, r.body.upgrade_tier], [402, 'community', 'premium']);
  const usage = await srv.deps.store.signatures.countUsage(u.userId, org.id, 0, Number.MAX_SAFE_INTEGER);
  assert.equal(usage, { personalUsed: 2, orgUsed: 250, orgOverage: 0 });
});

test('paid org tier: never blocks, overage counted and priced', async () => {
  const u = await cellUser('free');
  const { org, token } = await appFor(u.userId, 'starter');
  await fill(u.userId, u.agentKey, 2500, org.id);
  for (let i = 0; i < 2; i++) assert.is((await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } })).status, 200);
  const q = await api('GET', `${S}/quota`, { token });
  assert.equal(q.body, {
    allowed: true, scope: 'org', tier: 'starter', used: 2502, limit: 2500, resets_at: nextMonthIso(), overage_signs: 2, overage_cents_per_100: 100,
  });
});

test('enterprise org: its custom overage has no price, so the quota state leaves overage_cents_per_100 out (spec 2.5: a number), never null', async () => {
  const u = await cellUser('free');
  const { org, token } = await appFor(u.userId, 'enterprise');
  await srv.deps.store.accounts.setOrgTier(org.id, 'enterprise', 3);
  await fill(u.userId, u.agentKey, 3, org.id);
  assert.is((await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } })).status, 200);
  const q = await api('GET', `${S}/quota`, { token });
  assert.equal(q.body, { allowed: true, scope: 'org', tier: 'enterprise', used: 4, limit: 3, resets_at: nextMonthIso(), overage_signs: 1 });
});

test('GET /quota/by-agent: invalid_agent_pub_key, agent_not_found, plain base64 accepted', async () => {
  let r = await api('GET', `${S}/quota/by-agent`);
  assert.equal([r.status, r.body.error], [400, 'invalid_agent_pub_key']);
  r = await api('GET', `${S}/quota/by-agent?agent_pub_key=uhCAkNotAKey`);
  assert.equal([r.status, r.body.error], [400, 'invalid_agent_pub_key']);
  const stranger = agentKeyFromPublicKey(new Uint8Array(randomBytes(32)));
  r = await api('GET', `${S}/quota/by-agent?agent_pub_key=${stranger}`);
  assert.equal([r.status, r.body.error], [404, 'agent_not_found']);
  const u = await cellUser('premium');
  const plain = Buffer.from(u.agentKey.slice(1), 'base64url').toString('base64');
  r = await api('GET', `${S}/quota/by-agent?agent_pub_key=${encodeURIComponent(plain)}`);
  assert.equal(r.body, { allowed: true, scope: 'community', tier: 'premium', used: 0, limit: 100, resets_at: nextMonthIso() });
});

test('POST /quota/sync-by-agent: signed message, 5-minute window, recount', async () => {
  const d = await device();
  const body = (over: Record<string, unknown> = {}) => {
    const b: Record<string, unknown> = { agent_pub_key: d.agentKey, count: 7, timestamp: Date.now(), ...over };
    const msg = `provenant-quota-sync:${b.agent_pub_key}:${b.timestamp}:${b.count}${b.client_id ? `:${b.client_id}` : ''}`;
    return { ...b, signature: edSign(null, Buffer.from(msg), d.privateKey).toString('hex') };
  };
  assert.is((await api('POST', `${S}/publish`, { body: vaultRecord(d) })).status, 200);
  let r = await api('POST', `${S}/quota/sync-by-agent`, { body: body() });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body, { allowed: true, scope: 'community', tier: 'free', used: 1, limit: 2, resets_at: nextMonthIso() });
  r = await api('POST', `${S}/quota/sync-by-agent`, { body: { ...body(), count: 8 } });
  assert.equal([r.status, r.body.error], [400, 'invalid_signature']);
  r = await api('POST', `${S}/quota/sync-by-agent`, { body: body({ timestamp: Date.now() - 6 * 60_000 }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await api('POST', `${S}/quota/sync-by-agent`, { body: { count: 1 } });
  assert.equal([r.status, r.body.error], [400, 'invalid_agent_pub_key']);
  const { privateKey } = generateKeyPairSync('ed25519');
  const stranger = { ...d, privateKey, agentKey: agentKeyFromPublicKey(rawPublicKey(privateKey)) };
  const sb = { agent_pub_key: stranger.agentKey, count: 0, timestamp: Date.now() };
  const sig = edSign(null, Buffer.from(`provenant-quota-sync:${sb.agent_pub_key}:${sb.timestamp}:0`), privateKey).toString('hex');
  r = await api('POST', `${S}/quota/sync-by-agent`, { body: { ...sb, signature: sig } });
  assert.equal([r.status, r.body.error], [404, 'agent_not_found']);
});

test('OAuth scopes: sign endpoints need `sign`, quota and my-signatures need `verify`; an app without an org is tier unknown', async () => {
  const u = await cellUser('free');
  const { app } = await appFor(u.userId, 'free', 'OAuth App');
  const verifyOnly = `test-oauth:${u.userId}:${app.id}:verify`;
  const signOnly = `test-oauth:${u.userId}:${app.id}:sign`;
  for (const path of ['/sign', '/sign-batch', '/revoke', '/set-thumbnail']) {
    const r = await api('POST', S + path, { token: verifyOnly, body: {} });
    assert.equal([r.status, r.body.error], [403, 'insufficient_scope'], path);
  }
  for (const path of ['/quota', '/my-signatures']) {
    const r = await api('GET', S + path, { token: signOnly });
    assert.equal([r.status, r.body.error], [403, 'insufficient_scope'], path);
  }
  const s = await api('POST', `${S}/sign`, { token: signOnly, body: { file_hash: hex() } });
  assert.is(s.status, 200);
  assert.equal((await api('GET', `${S}/quota`, { token: verifyOnly })).body, {
    allowed: true, scope: 'org', tier: 'free', used: 1, limit: 250, resets_at: nextMonthIso(),
  });
  const events = (await outbox(srv.deps.store)).filter((e) => e.appId === app.id);
  assert.equal(events.map((e) => [e.type, e.payload.action_hash]), [['sign.created', s.body.action_hash]]);

  const orphan = await srv.deps.store.accounts.createApp({ id: randomUUID(), orgId: null, ownerId: u.userId, name: 'No Org', redirectUris: [], scopes: [] });
  const q = await api('GET', `${S}/quota`, { token: `test-oauth:${u.userId}:${orphan.id}:verify` });
  assert.equal(q.body, { allowed: true, scope: 'community', tier: 'unknown', used: 0, limit: 2, resets_at: null });
  // its signs draw on the personal quota
  assert.is((await api('POST', `${S}/sign`, { token: `test-oauth:${u.userId}:${orphan.id}:sign`, body: { file_hash: hex() } })).status, 200);
  assert.is((await api('GET', `${S}/quota`, { token: u.token })).body.used, 1);
});

// ---------------------------------------------------------------- batch

test('POST /sign-batch: shared metadata, per-file failures, the shapes', async () => {
  const u = await cellUser('premium');
  const files = [hex(), hex(), hex()];
  const r = await api('POST', `${S}/sign-batch`, {
    token: u.token,
    body: {
      files: [{ file_hash: files[0] }, { file_hash: 'zz' }, { file_hash: files[1], comment: 'own note', ai_generation: 'generated' }, { file_hash: files[2], intent: 'Bogus' }],
      shared_metadata: { comment: 'shared note', ai_generation: 'none', content_rights: { license: 'cc0' } },
    },
  });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal(Object.keys(r.body).sort(), ['failed', 'results', 'signed']);
  assert.equal([r.body.signed, r.body.failed], [2, 2]);
  assert.equal(r.body.results.map((x: any) => [x.file_hash, x.success, x.error ?? null]), [
    [files[0], true, null], ['zz', false, 'invalid_hash'], [files[1], true, null], [files[2], false, 'signing_failed'],
  ]);
  for (const x of r.body.results) {
    if (x.success) assert.match(x.action_hash, /^[0-9a-f]{64}$/);
    else assert.is(x.action_hash, null);
  }
  const a = (await api('GET', `${S}/verify?hash=${files[0]}`)).body.signatures[0];
  assert.equal([a.comment, a.ai_generation, a.content_rights.license], ['shared note', 'None', 'CC0']);
  const b = (await api('GET', `${S}/verify?hash=${files[1]}`)).body.signatures[0];
  assert.equal([b.comment, b.ai_generation], ['own note', 'Generated']);
  assert.is((await api('GET', `${S}/verify?hash=${files[2]}`)).body.count, 0);
});

test('POST /sign-batch: request errors, device-hosted, and the whole batch refused over quota', async () => {
  const u = await cellUser('free');
  const batch = (body: unknown, token = u.token) => api('POST', `${S}/sign-batch`, { token, body });
  let r = await batch({});
  assert.equal([r.status, r.body.error], [400, 'missing_fields']);
  r = await batch({ files: Array.from({ length: 101 }, () => ({ file_hash: hex() })) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await batch({ files: [{ file_hash: hex() }], shared_metadata: { comment: 'y'.repeat(281) } });
  assert.equal([r.status, r.body.error], [400, 'invalid_comment']);
  const { token } = await srv.register();
  r = await batch({ files: [{ file_hash: hex() }] }, token);
  assert.equal([r.status, r.body.error], [500, 'signing_failed']);
  const files = [hex(), hex(), hex()];
  r = await batch({ files: files.map((file_hash) => ({ file_hash })) });
  assert.is(r.status, 402);
  assert.equal({ ...r.body, message: typeof r.body.message }, {
    error: 'quota_exceeded', message: 'string', scope: 'community', tier: 'free', used: 0, limit: 2, resets_at: nextMonthIso(), upgrade_tier: 'premium',
    remaining: 2, requested: 3,
  });
  for (const f of files) assert.is((await api('GET', `${S}/verify?hash=${f}`)).body.count, 0);
  r = await batch({ files: files.slice(0, 2).map((file_hash) => ({ file_hash })) });
  assert.equal([r.status, r.body.signed], [200, 2]);
});

// ---------------------------------------------------------------- revoke, thumbnails, my-signatures

test('POST /revoke: the original signer only; refusals are 500 revocation_failed; the verify answer follows', async () => {
  const u = await cellUser();
  const other = await cellUser();
  const file = hex();
  const s = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, content_rights: { contact_preference: 'allow_contact_requests' } } });
  assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0].revoked, false); // cached now
  const revoke = (body: unknown, token = u.token) => api('POST', `${S}/revoke`, { token, body });
  let r = await revoke({});
  assert.equal([r.status, r.body.error], [400, 'missing_fields']);
  for (const [body, token, why] of [
    [{ action_hash: hex() }, u.token, 'no signature'],
    [{ action_hash: 'nothex' }, u.token, 'no signature'],
    [{ action_hash: s.body.action_hash }, other.token, 'original signer'],
    [{ action_hash: s.body.action_hash, reason: 'r'.repeat(281) }, u.token, '280'],
  ] as const) {
    r = await revoke(body, token);
    assert.equal([r.status, r.body.error], [500, 'revocation_failed']);
    assert.match(r.body.message, why);
  }
  const device = await srv.register();
  r = await revoke({ action_hash: s.body.action_hash }, device.token);
  assert.equal([r.status, r.body.error], [500, 'revocation_failed']);
  r = await revoke({ action_hash: s.body.action_hash, reason: 'wrong file' });
  assert.equal([r.status, r.body], [200, { success: true }]);
  const v = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.equal([v.revoked, v.revocation_reason, v.contactable], [true, 'wrong file', false]);
  assert.ok(Math.abs(v.revoked_at - Date.now()) < 60_000);
  r = await revoke({ action_hash: s.body.action_hash });
  assert.equal([r.status, r.body.error], [500, 'revocation_failed']);
  const own = (await api('GET', `${S}/my-signatures`, { token: u.token })).body.signatures[0];
  assert.equal([own.revoked, own.revoked_reason, own.revoked_at], [true, 'wrong file', v.revoked_at]);
});

test('a lone surrogate in a comment or reason says "must be valid Unicode", not "at most 280 characters"', async () => {
  const u = await cellUser();
  const d = await device();
  const lone = 'note \ud800';
  let r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), comment: lone } });
  assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_comment', 'comment']);
  assert.match(r.body.message, 'comment must be valid Unicode');
  r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), comment: 'x'.repeat(281) } });
  assert.equal([r.body.error, r.body.field], ['invalid_comment', 'comment']);
  assert.match(r.body.message, 'at most 280 characters');
  r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), comment: 7 } });
  assert.match(r.body.message, 'comment must be a string');
  r = await api('POST', `${S}/sign-batch`, { token: u.token, body: { files: [{ file_hash: hex() }], shared_metadata: { comment: lone } } });
  assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_comment', 'shared_metadata.comment']);
  assert.match(r.body.message, 'shared_metadata.comment must be valid Unicode');
  r = await api('POST', `${S}/publish`, { body: { ...vaultRecord(d), comment: lone } }); // refused before the signature is checked
  assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_comment', 'comment']);
  assert.match(r.body.message, 'comment must be valid Unicode');
  const s = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } });
  r = await api('POST', `${S}/revoke`, { token: u.token, body: { action_hash: s.body.action_hash, reason: lone } });
  assert.equal([r.status, r.body.error], [500, 'revocation_failed']); // spec 4.10: the reason is the cell's to refuse
  assert.match(r.body.message, 'reason must be valid Unicode');
  const entry = { action_hash: hex(), reason: lone, revoked_at: Date.now(), signer: d.agentKey };
  r = await api('POST', `${S}/publish-revocation`, { body: { ...entry, signature: 'AAAA' } });
  assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_request', 'reason']);
  assert.match(r.body.message, 'reason must be valid Unicode');
});

test('POST /revoke: an action_hash that is not a string is 400 invalid_request, never a 500', async () => {
  const u = await cellUser();
  for (const action_hash of [{ toString: 1 }, [hex()], 12, true]) {
    const r = await api('POST', `${S}/revoke`, { token: u.token, body: { action_hash } });
    assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_request', 'action_hash'], JSON.stringify(action_hash));
  }
});

test('POST /revoke through an app token writes sign.revoked to the outbox', async () => {
  const u = await cellUser();
  const { app, token } = await appFor(u.userId, 'pro');
  const s = await api('POST', `${S}/sign`, { token, body: { file_hash: hex() } });
  assert.is((await api('POST', `${S}/revoke`, { token, body: { action_hash: s.body.action_hash } })).status, 200);
  const events = (await outbox(srv.deps.store)).filter((e) => e.appId === app.id);
  assert.equal(events.map((e) => e.type), ['sign.created', 'sign.revoked']);
  assert.equal(events[1].payload, { action_hash: s.body.action_hash, revoker: u.agentKey, reason: null });
});

test('POST /set-thumbnail: checks, signer only, shown in /my-signatures', async () => {
  const u = await cellUser();
  const other = await cellUser();
  const s = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } });
  const thumb = 'data:image/png;base64,' + 'A'.repeat(100);
  const set = (body: unknown, token = u.token) => api('POST', `${S}/set-thumbnail`, { token, body });
  let r = await set({ thumbnail: thumb });
  assert.equal([r.status, r.body.error], [400, 'missing_fields']);
  r = await set({ action_hash: s.body.action_hash });
  assert.equal([r.status, r.body.error], [400, 'missing_fields']);
  r = await set({ action_hash: s.body.action_hash, thumbnail: 'https://example.com/x.png' });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await set({ action_hash: s.body.action_hash, thumbnail: 'data:image/png;base64,' + 'A'.repeat(15_000) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await set({ action_hash: hex(), thumbnail: thumb });
  assert.equal([r.status, r.body.error], [404, 'not_found']);
  r = await set({ action_hash: s.body.action_hash, thumbnail: thumb }, other.token);
  assert.equal([r.status, r.body.error], [403, 'forbidden']);
  r = await set({ action_hash: s.body.action_hash, thumbnail: thumb }, (await srv.register()).token);
  assert.equal([r.status, r.body.error], [500, 'signing_failed']);
  const max = 'data:image/png;base64,' + 'B'.repeat(15_000 - 22);
  r = await set({ action_hash: s.body.action_hash, thumbnail: max });
  assert.equal([r.status, r.body], [200, { success: true }]);
  const own = (await api('GET', `${S}/my-signatures`, { token: u.token })).body.signatures[0];
  assert.is(own.thumbnail, max);
});

test('GET /my-signatures: spec 2.4 shape, linked agents included, no-store, records verify offline', async () => {
  const u = await cellUser();
  const d = await device();
  // link the device key to u's account (decisions.md 5)
  const ch = await api('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: d.agentKey } });
  const signature = edSign(null, Buffer.from(ch.body.challenge), d.privateKey).toString('base64');
  // d already has its own device account; publish one record first, then link a fresh key instead
  const { privateKey } = generateKeyPairSync('ed25519');
  const fresh = { ...d, privateKey, agentKey: agentKeyFromPublicKey(rawPublicKey(privateKey)) };
  const ch2 = await api('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: fresh.agentKey } });
  const link = await api('POST', '/api/v1/auth/agents', {
    token: u.token,
    body: { challenge: ch2.body.challenge, agent_pub_key: fresh.agentKey, signature: edSign(null, Buffer.from(ch2.body.challenge), privateKey).toString('base64') },
  });
  assert.ok(link.status === 200 || link.status === 201, JSON.stringify(link.body));
  void signature;
  const a = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), tags: ['x'], expires_at: 1893456000000 } });
  const published = vaultRecord(fresh, { integrity_report: { checks_performed: ['EntropyAnalysis'], issues_found: [], checked_at: 1 } });
  const p = await api('POST', `${S}/publish`, { body: published });
  assert.is(p.status, 200, JSON.stringify(p.body));
  const r = await api('GET', `${S}/my-signatures`, { token: u.token });
  assert.is(r.status, 200);
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.equal(Object.keys(r.body), ['signatures']);
  assert.is(r.body.signatures.length, 2);
  for (const s of r.body.signatures) {
    assert.equal(Object.keys(s).sort(), OWN_KEYS);
    assert.ok(verifiesIndependently(s, s.signature), s.action_hash);
  }
  assert.equal(new Set(r.body.signatures.map((s: any) => s.action_hash)), new Set([a.body.action_hash, p.body.action_hash]));
  const fromCell = r.body.signatures.find((s: any) => s.action_hash === a.body.action_hash);
  assert.equal([fromCell.tags, fromCell.expires_at, fromCell.thumbnail, fromCell.revoked], [['x'], 1893456000000, null, false]);
});

test('supersede chains: superseded_by within the result set, same signer only', async () => {
  const u = await cellUser();
  const other = await cellUser();
  const file = hex();
  const a = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, comment: 'v1' } });
  const b = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, comment: 'v2', supersedes: a.body.action_hash } });
  const c = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, comment: 'v3', supersedes: b.body.action_hash.toUpperCase() } });
  const x = await api('POST', `${S}/sign`, { token: other.token, body: { file_hash: file, supersedes: c.body.action_hash } });
  const v = await api('GET', `${S}/verify?hash=${file}`);
  const by = new Map(v.body.signatures.map((s: any) => [s.action_hash, s]));
  assert.is(v.body.count, 4);
  assert.equal((by.get(a.body.action_hash) as any).superseded_by, b.body.action_hash);
  assert.equal((by.get(b.body.action_hash) as any).superseded_by, c.body.action_hash);
  assert.equal((by.get(c.body.action_hash) as any).superseded_by, null); // another signer cannot amend it
  assert.equal((by.get(c.body.action_hash) as any).supersedes, b.body.action_hash);
  assert.equal((by.get(x.body.action_hash) as any).superseded_by, null);
  const own = (await api('GET', `${S}/my-signatures`, { token: u.token })).body.signatures;
  assert.equal(own.map((s: any) => [s.comment, s.superseded_by]), [['v3', null], ['v2', c.body.action_hash], ['v1', b.body.action_hash]]);
});

// ---------------------------------------------------------------- vault publishing

test('POST /publish: verified, fresh, known signer, quota 403; idempotent; answers the action hash', async () => {
  const d = await device();
  const rec = vaultRecord(d);
  const expected = createHash('sha256').update(canonicalize(rec)!).digest('hex');
  let r = await api('POST', `${S}/publish`, { body: rec });
  assert.equal([r.status, r.body], [200, { success: true, action_hash: expected }]);
  r = await api('POST', `${S}/publish`, { body: rec });
  assert.equal([r.status, r.body.action_hash], [200, expected]); // the same record again: no second charge
  const tampered = { ...rec, comment: 'added later' };
  r = await api('POST', `${S}/publish`, { body: tampered });
  assert.equal([r.status, r.body.error], [400, 'invalid_signature']);
  r = await api('POST', `${S}/publish`, { body: vaultRecord(d, { signed_at: Date.now() - 11 * 60_000 }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  assert.match(r.body.message, 'signed_at');
  r = await api('POST', `${S}/publish`, { body: vaultRecord(d, { signed_at: Date.now() + 11 * 60_000 }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await api('POST', `${S}/publish`, { body: { ...vaultRecord(d), intent: undefined } });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  const { privateKey } = generateKeyPairSync('ed25519');
  const stranger = { ...d, privateKey, agentKey: agentKeyFromPublicKey(rawPublicKey(privateKey)) };
  r = await api('POST', `${S}/publish`, { body: vaultRecord(stranger) });
  assert.equal([r.status, r.body.error], [404, 'agent_not_found']);
  assert.is((await api('POST', `${S}/publish`, { body: vaultRecord(d) })).status, 200);
  r = await api('POST', `${S}/publish`, { body: vaultRecord(d) });
  assert.is(r.status, 403);
  assert.equal({ ...r.body, message: typeof r.body.message }, {
    error: 'quota_exceeded', message: 'string', scope: 'community', tier: 'free', used: 2, limit: 2, resets_at: nextMonthIso(), upgrade_tier: 'premium',
  });
});

test('POST /publish with client_id draws on the sponsoring org pool', async () => {
  const d = await device();
  const owner = await cellUser();
  const { app, org } = await appFor(owner.userId, 'free', 'Vault Partner');
  const r = await api('POST', `${S}/publish`, { body: { ...vaultRecord(d), client_id: app.id } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const usage = await srv.deps.store.signatures.countUsage(d.userId, org.id, 0, Number.MAX_SAFE_INTEGER);
  assert.equal(usage, { personalUsed: 0, orgUsed: 1, orgOverage: 0 });
  const q = await api('GET', `${S}/quota/by-agent?agent_pub_key=${d.agentKey}&client_id=${app.id}`);
  assert.equal(q.body, { allowed: true, scope: 'org', tier: 'free', used: 1, limit: 250, resets_at: nextMonthIso(), sponsor: { app_name: 'Vault Partner', exhausted: false } });
  // no webhook rows for vault publishing (spec 6)
  assert.is((await outbox(srv.deps.store)).filter((e) => e.appId === app.id).length, 0);
});

test('POST /publish-revocation: signed by the original signer only', async () => {
  const d = await device();
  const other = await device();
  const rec = vaultRecord(d);
  const p = await api('POST', `${S}/publish`, { body: rec });
  const revocation = (who: Device, over: Record<string, unknown> = {}) => {
    const entry: Record<string, unknown> = { action_hash: p.body.action_hash, reason: 'superseded elsewhere', revoked_at: Date.now(), signer: who.agentKey, ...over };
    return { ...entry, signature: edSign(null, Buffer.from(canonicalize(entry)!), who.privateKey).toString('base64') };
  };
  let r = await api('POST', `${S}/publish-revocation`, { body: { ...revocation(d), reason: 'changed' } });
  assert.equal([r.status, r.body.error], [400, 'invalid_signature']);
  r = await api('POST', `${S}/publish-revocation`, { body: revocation(other) });
  assert.equal([r.status, r.body.error], [403, 'forbidden']);
  r = await api('POST', `${S}/publish-revocation`, { body: revocation(d, { action_hash: hex() }) });
  assert.equal([r.status, r.body.error], [404, 'not_found']);
  r = await api('POST', `${S}/publish-revocation`, { body: revocation(d, { revoked_at: Date.now() - 20 * 60_000 }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
  r = await api('POST', `${S}/publish-revocation`, { body: revocation(d) });
  assert.equal([r.status, r.body], [200, { success: true, action_hash: p.body.action_hash }]);
  const v = (await api('GET', `${S}/verify?hash=${rec.file_hash}`)).body.signatures[0];
  assert.equal([v.revoked, v.revocation_reason], [true, 'superseded elsewhere']);
  r = await api('POST', `${S}/publish-revocation`, { body: revocation(d) });
  assert.equal([r.status, r.body.error], [400, 'invalid_request']);
});

test('the verify cache is never stale after sign, batch, publish, revoke, publish-revocation', async () => {
  const u = await cellUser();
  const d = await device();
  const file = hex();
  const count = async () => (await api('GET', `${S}/verify?hash=${file}`)).body.count;
  assert.is(await count(), 0);
  const a = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file } });
  assert.is(await count(), 1);
  await api('POST', `${S}/sign-batch`, { token: u.token, body: { files: [{ file_hash: file }] } });
  assert.is(await count(), 2);
  const rec = vaultRecord(d, { file_hash: file });
  await api('POST', `${S}/publish`, { body: rec });
  assert.is(await count(), 3);
  await api('POST', `${S}/revoke`, { token: u.token, body: { action_hash: a.body.action_hash } });
  let list = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures;
  assert.equal(list.filter((s: any) => s.revoked).map((s: any) => s.action_hash), [a.body.action_hash]);
  const hash = createHash('sha256').update(canonicalize(rec)!).digest('hex');
  const entry = { action_hash: hash, reason: null, revoked_at: Date.now(), signer: d.agentKey };
  await api('POST', `${S}/publish-revocation`, { body: { ...entry, signature: edSign(null, Buffer.from(canonicalize(entry)!), d.privateKey).toString('base64') } });
  list = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures;
  assert.is(list.filter((s: any) => s.revoked).length, 2);
  // many reads racing one write: the answers after the write all see it
  const racing = Array.from({ length: 20 }, () => api('GET', `${S}/verify?hash=${file}`));
  await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file } });
  await Promise.all(racing);
  assert.is(await count(), 4);
});

test('the change feed sees every committed sign, batch and revocation, never a refused one', async () => {
  const u = await cellUser('free');
  const from = await srv.deps.store.feed.latest();
  const a = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } });
  const files = [hex()];
  await api('POST', `${S}/sign-batch`, { token: u.token, body: { files: files.map((file_hash) => ({ file_hash })) } });
  assert.is((await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).status, 402);
  await api('POST', `${S}/revoke`, { token: u.token, body: { action_hash: a.body.action_hash } });
  const changes = await srv.deps.store.feed.since(from, 100);
  assert.equal(changes.filter((c) => c.kind === 'stored').map((c) => c.file_hash), [a.body.file_hash, files[0]]);
  assert.equal(changes.filter((c) => c.kind === 'revoked').map((c) => c.action_hash), [a.body.action_hash]);
});

test('rate limits: 30/min on /verify, 60/min on /quota/by-agent, 429 rate_limited', async () => {
  const limited = await startTestServer();
  try {
    const get = (path: string) => fetch(`${limited.url}${S}${path}`);
    const hash = hex();
    for (let i = 0; i < 30; i++) assert.is((await get(`/verify?hash=${hash}`)).status, 200);
    const r = await get(`/verify?hash=${hash}`);
    assert.is(r.status, 429);
    assert.is(((await r.json()) as any).error, 'rate_limited');
    assert.ok(r.headers.get('retry-after'));
    const key = agentKeyFromPublicKey(new Uint8Array(randomBytes(32)));
    for (let i = 0; i < 60; i++) assert.is((await get(`/quota/by-agent?agent_pub_key=${key}`)).status, 404);
    assert.is((await get(`/quota/by-agent?agent_pub_key=${key}`)).status, 429);
  } finally {
    await limited.close();
  }
});

test.run();
