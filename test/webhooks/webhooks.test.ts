// Webhooks end to end (spec 2.7, 3.2, 4.15, 6; decisions.md 8; issue 18): the management
// API, then real deliveries to an HTTPS receiver on loopback (its own CA, given to the
// in-process server as ComposeOptions.webhookCa) that checks each signature in constant
// time. Events come from their real causes: signs and revocations with the app's OAuth
// access token (authorization code + PKCE through test/oauth/support.ts), consent,
// refresh-token revocation, a display-name change. PROVENANT_WEBHOOK_ALLOW_PRIVATE=1
// lets this server reach loopback; the URL rules without it are ssrf.test.ts's.
// SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServerCell } from '../../server/src/domain/cells.js';
import type { Logger, LogFields } from '../../server/src/log.js';
import type { OrgTier } from '../../server/src/store/index.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { newAccount, postJson, registerApp, tokensFor, type TestApp } from '../oauth/support.js';
import { makeTestCa, Receiver, type TestCa } from './fixtures.js';

/** The dispatcher's warnings, to see why a delivery failed. */
const warnings: { msg: string; fields: LogFields }[] = [];
const log: Logger = { debug() {}, info() {}, error() {}, warn: (msg, fields = {}) => void warnings.push({ msg, fields }) };

let ca: TestCa;
let receiver: Receiver;
let srv: TestServer;

const test = suite('webhooks');
test.before(async () => {
  ca = makeTestCa();
  receiver = await Receiver.start(ca);
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1' }, { webhookCa: ca.caPem, log, engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
  await receiver.close();
  ca.remove();
});

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);
const hex = () => randomBytes(32).toString('hex');
let paths = 0;
/** A path of its own on the receiver, so each test reads only its deliveries. */
const newPath = () => `/hook-${++paths}`;

interface Developer {
  token: string;
  userId: string;
  orgId: string;
  appId: string;
  /** A developer session token carrying the app (decisions.md 5). */
  appToken: string;
  /** An OAuth access token of the app for the developer themselves, with the sign scope. */
  oauth: string;
  /** Its refresh token. */
  refresh: string;
  app: TestApp;
}

/** A registered developer on `tier`, with an app, a token carrying it, and a server-hosted cell to sign with. */
async function developer(tier: OrgTier = 'starter'): Promise<Developer> {
  const { token, user } = await srv.register();
  const orgId = (await srv.deps.store.accounts.personalOrg(user.id))!.id;
  await srv.deps.store.accounts.setOrgTier(orgId, tier);
  const redirectUri = 'https://app.example/callback';
  const created = await api('POST', '/api/v1/developer/apps', { token, body: { name: 'app', redirect_uris: [redirectUri], scopes: ['sign', 'display_name'] } });
  const appId = created.body.client_id;
  const appToken = (await api('POST', `/api/v1/developer/apps/${appId}/token`, { token })).body.token;
  await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium_plus');
  const app: TestApp = { clientId: appId, redirectUri, ownerToken: token };
  const { access, refresh } = await tokensFor(srv, app, { id: user.id, email: user.email!, token }, 'openid sign');
  return { token, userId: user.id, orgId, appId, appToken, oauth: access, refresh, app };
}

async function newApp(dev: Developer): Promise<string> {
  return (await api('POST', '/api/v1/developer/apps', { token: dev.token, body: { name: 'another', org_id: dev.orgId } })).body.client_id;
}

/** Registers a webhook on the receiver at `path` and tells the receiver its secret. */
async function hook(dev: Developer, path: string, events: string[], extra: { filters?: object; appId?: string } = {}) {
  const res = await api('POST', `/api/v1/webhooks?app_id=${extra.appId ?? dev.appId}`, {
    token: dev.token,
    body: { url: receiver.url(path), events, ...(extra.filters ? { filters: extra.filters } : {}) },
  });
  assert.is(res.status, 201, res.text);
  receiver.secrets.set(path, res.body.webhook.secret);
  return res.body.webhook as { id: string; secret: string };
}

const listing = async (dev: Developer) => (await api('GET', `/api/v1/webhooks?app_id=${dev.appId}`, { token: dev.token })).body.webhooks as any[];
const settled = () => srv.deps.webhooks.idle();

async function sign(dev: Developer, fileHash = hex(), token = dev.oauth) {
  const res = await api('POST', '/api/v1/sign-it/sign', { token, body: { file_hash: fileHash, intent: 'Approval' } });
  assert.is(res.status, 200, res.text);
  return res.body as { file_hash: string; action_hash: string; agent_pub_key: string; signed_at: number };
}

// ---------------------------------------------------------------- management

test('the catalog is public: every event of spec 6 with its fields; the reserved ones accepted, never fired', async () => {
  const res = await api('GET', '/api/v1/webhooks/events');
  assert.is(res.status, 200);
  const byType = Object.fromEntries(res.body.events.map((e: any) => [e.type, e]));
  assert.equal(byType['sign.created'].fields, ['file_hash', 'action_hash', 'signer', 'signed_at', 'intent']);
  assert.equal(byType['sign.revoked'].fields, ['action_hash', 'revoker', 'reason']);
  assert.equal(byType['oauth.authorized'].fields, ['user_id', 'scopes']);
  assert.equal(byType['oauth.token.revoked'].fields, ['token_type']);
  assert.equal(byType['user.profile.updated'].fields, ['user_id', 'fields_changed']);
  const reserved = ['subscription.upgraded', 'subscription.downgraded', 'subscription.cancelled', 'user.2fa.enabled', 'user.2fa.disabled'];
  assert.equal(res.body.events.filter((e: any) => !e.fires).map((e: any) => e.type), reserved);
  assert.is(res.body.events.length, 10);
});

test('management needs a developer session token (401; an app\'s OAuth token 403); an app by app_id or the token (403 app_required); only your own (403 forbidden)', async () => {
  const dev = await developer();
  const stranger = await developer();
  const body = { url: receiver.url('/never'), events: ['sign.created'] };
  assert.is((await api('GET', `/api/v1/webhooks?app_id=${dev.appId}`)).status, 401);
  assert.is((await api('POST', `/api/v1/webhooks?app_id=${dev.appId}`, { body })).status, 401);
  assert.is((await api('DELETE', `/api/v1/webhooks/${randomUUID()}`)).status, 401);
  const oauth = await api('GET', `/api/v1/webhooks?app_id=${dev.appId}`, { token: dev.oauth });
  assert.equal([oauth.status, oauth.body.error], [403, 'forbidden'], "an app's OAuth token does not manage webhooks (issue 25: refused like every session-only route)");
  const noApp = await api('POST', '/api/v1/webhooks', { token: dev.token, body });
  assert.equal([noApp.status, noApp.body.error], [403, 'app_required']);
  assert.equal((await api('GET', '/api/v1/webhooks', { token: dev.token })).body.error, 'app_required');
  const foreign = await api('POST', `/api/v1/webhooks?app_id=${stranger.appId}`, { token: dev.token, body });
  assert.equal([foreign.status, foreign.body.error], [403, 'forbidden']);
  assert.equal((await api('GET', `/api/v1/webhooks?app_id=${randomUUID()}`, { token: dev.token })).body.error, 'forbidden', 'an unknown app is not told apart');
  const carried = await api('POST', '/api/v1/webhooks', { token: dev.appToken, body });
  assert.is(carried.status, 201, 'a token carrying the app may omit app_id');
  assert.equal((await api('GET', '/api/v1/webhooks', { token: dev.appToken })).body.webhooks.map((w: any) => w.id), [carried.body.webhook.id]);
  const theirs = await api('PUT', `/api/v1/webhooks/${carried.body.webhook.id}`, { token: stranger.token, body: { active: false } });
  assert.equal([theirs.status, theirs.body.error], [404, 'not_found'], "someone else's webhook");
  assert.is((await api('DELETE', `/api/v1/webhooks/${carried.body.webhook.id}`, { token: stranger.token })).status, 404);
  assert.is(receiver.at('/never').length, 0);
});

test('issue 25 item 8: every webhook route checks the named app first: 403 forbidden for an app the caller does not own, whatever the id or body', async () => {
  const dev = await developer();
  const stranger = await developer();
  const mine = await api('POST', `/api/v1/webhooks?app_id=${dev.appId}`, { token: dev.token, body: { url: receiver.url('/never'), events: ['sign.created'] } });
  assert.is(mine.status, 201, mine.text);
  const id = mine.body.webhook.id;
  for (const appId of [stranger.appId, randomUUID()]) {
    for (const [method, path, body] of [
      ['PUT', `/api/v1/webhooks/${id}?app_id=${appId}`, { active: false }],
      ['PUT', `/api/v1/webhooks/${randomUUID()}?app_id=${appId}`, { active: false }],
      ['PUT', `/api/v1/webhooks/${id}?app_id=${appId}`, { events: 'not a list' }],
      ['DELETE', `/api/v1/webhooks/${id}?app_id=${appId}`, undefined],
      ['DELETE', `/api/v1/webhooks/not-an-id?app_id=${appId}`, undefined],
      ['GET', `/api/v1/webhooks?app_id=${appId}`, undefined],
      ['POST', `/api/v1/webhooks?app_id=${appId}`, { url: 'not a url' }],
    ] as const) {
      const r = await api(method, path, { token: dev.token, body });
      assert.equal([r.status, r.body.error], [403, 'forbidden'], `${method} ${path}`);
    }
  }
  // the stranger's token carries their own app: naming it, dev's webhook is not theirs (404)
  const carried = await api('PUT', `/api/v1/webhooks/${id}`, { token: stranger.appToken, body: { active: false } });
  assert.equal([carried.status, carried.body.error], [404, 'not_found']);
  assert.is((await listing(dev))[0].active, true, 'nothing changed');
});

test('tiers: free is 402 tier_required; starter holds 10 across the organization\'s apps, then 402 limit_reached; enterprise has no limit', async () => {
  const free = await developer('free');
  const refused = await api('POST', `/api/v1/webhooks?app_id=${free.appId}`, { token: free.token, body: { url: receiver.url('/x'), events: ['sign.created'] } });
  assert.equal([refused.status, refused.body.error], [402, 'tier_required']);

  const starter = await developer('starter');
  const second = await newApp(starter);
  for (let i = 0; i < 10; i++) await hook(starter, '/x', ['sign.created'], { appId: i % 2 ? second : starter.appId });
  for (const appId of [starter.appId, second]) {
    const over = await api('POST', `/api/v1/webhooks?app_id=${appId}`, { token: starter.token, body: { url: receiver.url('/x'), events: ['sign.created'] } });
    assert.equal([over.status, over.body.error], [402, 'limit_reached']);
  }
  const first = (await listing(starter))[0];
  assert.is((await api('DELETE', `/api/v1/webhooks/${first.id}`, { token: starter.token })).status, 200);
  await hook(starter, '/x', ['sign.created']);

  const enterprise = await developer('enterprise');
  for (let i = 0; i < 12; i++) await hook(enterprise, '/x', ['sign.created']);
  assert.is((await listing(enterprise)).length, 12);
});

test('create shows the secret once (64 hex); the listing shape; reserved events accepted; bad input named; PUT and DELETE; the URL is never requested', async () => {
  const dev = await developer();
  const path = newPath();
  const res = await api('POST', `/api/v1/webhooks?app_id=${dev.appId}`, {
    token: dev.token,
    body: { url: receiver.url(path), events: ['sign.created', 'user.2fa.enabled', 'subscription.cancelled'], filters: { file_hash: 'AB'.repeat(32) } },
  });
  assert.is(res.status, 201);
  const w = res.body.webhook;
  assert.equal(Object.keys(w).sort(), ['created_at', 'events', 'filters', 'id', 'secret', 'url']);
  assert.match(w.secret, /^[0-9a-f]{64}$/);
  assert.match(w.id, /^[0-9a-f-]{36}$/);
  assert.equal(w.filters, { file_hash: 'ab'.repeat(32) });
  assert.type(res.body.message, 'string');
  const [listed] = await listing(dev);
  assert.equal(listed, { id: w.id, url: w.url, events: w.events, filters: w.filters, active: true, failure_count: 0, last_triggered_at: null, created_at: w.created_at });
  assert.not.ok(JSON.stringify(await listing(dev)).includes(w.secret), 'the secret is not listed');

  const bad = async (body: unknown, field: string, code = 'invalid_request') => {
    const r = await api('POST', `/api/v1/webhooks?app_id=${dev.appId}`, { token: dev.token, body });
    assert.equal([r.status, r.body.error], [400, code], JSON.stringify(body));
    assert.ok(r.body.message.includes(field), `${r.body.message} names ${field}`);
  };
  await bad({ url: receiver.url(path), events: ['sign.created', 'sign.deleted'] }, 'events[1]');
  await bad({ url: receiver.url(path), events: [] }, 'events');
  await bad({ events: ['sign.created'] }, 'url');
  await bad({ url: receiver.url(path), events: ['sign.created'], filters: { file_hash: 'xyz' } }, 'file_hash');
  await bad({ url: receiver.url(path), events: ['sign.created'], filters: { signer: 'a' } }, 'signer');
  await bad({ url: receiver.url(path).replace('https:', 'http:'), events: ['sign.created'] }, 'https', 'invalid_url');

  const put = await api('PUT', `/api/v1/webhooks/${w.id}?app_id=${dev.appId}`, { token: dev.token, body: { events: ['sign.revoked'], filters: {} } });
  assert.is(put.status, 200);
  assert.equal(put.body.webhook, { ...listed, events: ['sign.revoked'], filters: {} });
  assert.is((await api('PUT', `/api/v1/webhooks/${w.id}`, { token: dev.token, body: {} })).body.error, 'invalid_request');
  assert.is((await api('PUT', `/api/v1/webhooks/${w.id}`, { token: dev.token, body: { url: 'https://localhost.:1/' } })).status, 200, 'loopback allowed in this tests-only mode');
  const del = await api('DELETE', `/api/v1/webhooks/${w.id}`, { token: dev.token });
  assert.equal([del.status, del.body], [200, { success: true }]);
  assert.is((await api('DELETE', `/api/v1/webhooks/${w.id}`, { token: dev.token })).status, 404);
  assert.equal(await listing(dev), []);
  assert.is(receiver.at(path).length, 0, 'registration and updates make no request');
});

// ---------------------------------------------------------------- deliveries

test('sign.created (sign and sign-batch) and sign.revoked through the app: the envelope of spec 6, the headers, a valid signature, once each', async () => {
  const dev = await developer();
  const path = newPath();
  const w = await hook(dev, path, ['sign.created', 'sign.revoked']);
  const before = Date.now();
  const one = await sign(dev);
  const batchHashes = [hex(), hex()];
  const batch = await api('POST', '/api/v1/sign-it/sign-batch', { token: dev.oauth, body: { files: batchHashes.map((file_hash) => ({ file_hash })) } });
  assert.is(batch.body.signed, 2);
  assert.is((await api('POST', '/api/v1/sign-it/revoke', { token: dev.oauth, body: { action_hash: one.action_hash, reason: 'mistake' } })).status, 200);
  await settled();

  const got = receiver.at(path);
  assert.is(got.length, 4, 'one delivery per event');
  for (const d of got) {
    assert.is(d.signatureValid, true, 'X-Service-Signature verifies over the raw body');
    assert.is(d.headers['content-type'], 'application/json');
    assert.is(d.headers['x-service-event'], d.body.event);
    assert.match(String(d.headers['x-service-delivery']), /^[0-9a-f-]{36}$/);
    assert.ok(typeof d.body.timestamp === 'number' && d.body.timestamp >= before && d.body.timestamp <= d.at);
    assert.equal(Object.keys(d.body).slice(0, 2), ['event', 'timestamp'], 'event, timestamp, then the fields');
  }
  assert.is(new Set(got.map((d) => d.headers['x-service-delivery'])).size, 4, 'X-Service-Delivery unique');
  const bodies = got.map(({ body: { timestamp: _t, ...rest } }) => rest);
  const stored = await srv.deps.store.signatures.get(one.action_hash);
  assert.equal(bodies[0], { event: 'sign.created', file_hash: one.file_hash, action_hash: one.action_hash, signer: one.agent_pub_key, signed_at: one.signed_at, intent: 'Approval' });
  assert.equal(stored!.record.intent, 'Approval');
  const batchBodies = bodies.slice(1, 3);
  assert.equal(batchBodies.map((b) => b.file_hash), batchHashes);
  assert.equal(batchBodies.map((b) => b.action_hash), batch.body.results.map((r: any) => r.action_hash));
  for (const b of batchBodies) assert.equal(Object.keys(b).sort(), ['action_hash', 'event', 'file_hash', 'signed_at', 'signer'], 'no intent for batch signatures');
  assert.equal(bodies[3], { event: 'sign.revoked', action_hash: one.action_hash, revoker: one.agent_pub_key, reason: 'mistake' });
  const [after] = await listing(dev);
  assert.equal([after.id, after.failure_count], [w.id, 0]);
  assert.ok(Date.parse(after.last_triggered_at) >= before);
});

test('oauth.authorized (consent), user.profile.updated (display name) and oauth.token.revoked (refresh token): their envelopes, to the app\'s webhook', async () => {
  const dev = await developer();
  const path = newPath();
  await hook(dev, path, ['oauth.authorized', 'oauth.token.revoked', 'user.profile.updated']);
  const user = await newAccount(srv, { displayName: 'Ana Lima' });
  const { refresh } = await tokensFor(srv, dev.app, user, 'openid display_name');
  const renamed = await api('PATCH', '/api/v1/auth/me', { token: user.token, body: { display_name: 'Ana L.' } });
  assert.is(renamed.status, 200, renamed.text);
  const revoked = await postJson(srv, '/oauth/revoke', { token: refresh, token_type_hint: 'refresh_token', client_id: dev.appId });
  assert.is(revoked.status, 200, revoked.text);
  await api('PATCH', '/api/v1/auth/me', { token: user.token, body: { display_name: 'Ana' } }); // no unrevoked refresh token of the app left
  await settled();
  const got = receiver.at(path);
  assert.equal(got.map(({ body: { timestamp: _t, ...rest } }) => rest), [
    { event: 'oauth.authorized', user_id: user.id, scopes: ['openid', 'display_name'] },
    { event: 'user.profile.updated', user_id: user.id, fields_changed: ['display_name'] },
    { event: 'oauth.token.revoked', token_type: 'refresh_token' },
  ]);
  assert.ok(got.every((d) => d.signatureValid === true && d.headers['x-service-event'] === d.body.event));
});

test('filters.file_hash applies to sign.created, in any case; other hashes are not delivered', async () => {
  const dev = await developer();
  const path = newPath();
  const wanted = hex();
  await hook(dev, path, ['sign.created'], { filters: { file_hash: wanted.toUpperCase() } });
  await sign(dev, hex());
  await sign(dev, wanted);
  await sign(dev, hex());
  await settled();
  assert.equal(receiver.at(path).map((d) => d.body.file_hash), [wanted]);
});

test("one app's events never reach another app's webhooks; signs without an app fire nothing", async () => {
  const dev = await developer();
  const other = await developer();
  const mine = newPath();
  const theirs = newPath();
  const sibling = newPath();
  await hook(dev, mine, ['sign.created']);
  await hook(other, theirs, ['sign.created']);
  const secondApp = await newApp(dev);
  await hook(dev, sibling, ['sign.created'], { appId: secondApp });
  const signed = await sign(dev);
  await sign(dev, hex(), dev.token); // a plain session: no app, no event
  await settled();
  assert.equal(receiver.at(mine).map((d) => d.body.action_hash), [signed.action_hash]);
  assert.is(receiver.at(theirs).length, 0);
  assert.is(receiver.at(sibling).length, 0, 'not even an app of the same developer');
});

test('a receiver answering 500: ten failures in a row make the webhook inactive and nothing more is sent; PUT {active: true} re-enables', async () => {
  const dev = await developer();
  const path = newPath();
  receiver.answers.set(path, (n) => ({ status: n <= 10 ? 500 : 200 }));
  const w = await hook(dev, path, ['sign.created']);
  for (let i = 0; i < 9; i++) await sign(dev);
  await settled();
  let [state] = await listing(dev);
  assert.equal([state.active, state.failure_count], [true, 9]);
  for (let i = 0; i < 3; i++) await sign(dev); // the 10th fails; the other two are dropped
  await settled();
  [state] = await listing(dev);
  assert.equal([state.active, state.failure_count, state.last_triggered_at], [false, 10, null]);
  assert.is(receiver.at(path).length, 10, 'nothing after the tenth failure');
  await sign(dev);
  await settled();
  assert.is(receiver.at(path).length, 10, 'an inactive webhook gets nothing');

  const put = await api('PUT', `/api/v1/webhooks/${w.id}?app_id=${dev.appId}`, { token: dev.token, body: { active: true } });
  assert.equal([put.body.webhook.active, put.body.webhook.failure_count], [true, 0]);
  const signed = await sign(dev);
  await settled();
  const got = receiver.at(path);
  assert.is(got.length, 11);
  assert.is(got[10].body.action_hash, signed.action_hash, 'the next matching event, not the dropped ones');
  [state] = await listing(dev);
  assert.equal([state.active, state.failure_count], [true, 0]);
  assert.ok(state.last_triggered_at !== null);
});

test('a redirect is a failure and is not followed', async () => {
  const dev = await developer();
  const path = newPath();
  const target = newPath();
  receiver.answers.set(path, () => ({ status: 302, headers: { location: receiver.url(target) } }));
  await hook(dev, path, ['sign.created']);
  await sign(dev);
  await settled();
  assert.is(receiver.at(path).length, 1);
  assert.is(receiver.at(target).length, 0, 'the Location is never requested');
  const [state] = await listing(dev);
  assert.equal([state.active, state.failure_count, state.last_triggered_at], [true, 1, null]);
  assert.ok(warnings.some((w) => w.fields.webhook === state.id && w.fields.reason === 'redirect'));
});

test('a receiver that answers after 12 s: a failure at the 10 s deadline, as a timeout', async () => {
  const dev = await developer();
  const path = newPath();
  receiver.answers.set(path, () => ({ status: 200, delayMs: 12_000 }));
  await hook(dev, path, ['sign.created']);
  await sign(dev);
  await settled();
  const [state] = await listing(dev);
  assert.equal([state.failure_count, state.last_triggered_at], [1, null]);
  const failure = warnings.find((w) => w.fields.webhook === state.id);
  assert.is(failure?.fields.reason, 'timeout', JSON.stringify(failure));
  assert.is(receiver.at(path).length, 1);
});

test.run();

// ---------------------------------------------------------------- the create limit

const limited = suite('webhooks: 30 creates a minute per developer');
let rl: TestServer;
limited.before(async () => {
  rl = await startTestServer({ PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1' }, { engine: testEngine(import.meta.url) });
});
limited.after(async () => {
  await rl.close();
});

limited('the 31st create within a minute is 429; another developer is not held back', async () => {
  const make = async () => {
    const { token, user } = await rl.register();
    await rl.deps.store.accounts.setOrgTier((await rl.deps.store.accounts.personalOrg(user.id))!.id, 'enterprise');
    const appId = (await apiRequest(rl.url, 'POST', '/api/v1/developer/apps', { token, body: { name: 'a' } })).body.client_id;
    return (n = 1) => Promise.all(Array.from({ length: n }, () => apiRequest(rl.url, 'POST', `/api/v1/webhooks?app_id=${appId}`, { token, body: { url: 'https://127.0.0.1:9/x', events: ['sign.created'] } })));
  };
  const create = await make();
  const first = await create(30);
  assert.equal([...new Set(first.map((r) => r.status))], [201]);
  const [over] = await create();
  assert.equal([over.status, over.body.error], [429, 'rate_limited']);
  assert.ok(Number(over.headers.get('retry-after')) > 0);
  const [other] = await (await make())();
  assert.is(other.status, 201);
});

limited.run();
