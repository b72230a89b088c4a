// Two server nodes on one PostgreSQL database (issue 18): both dispatchers route and
// claim from the same outbox (FOR UPDATE SKIP LOCKED with leases), and every event
// reaches every subscribed webhook exactly once, whichever node sends it. Skipped (and
// why) without the PostgreSQL binaries; a failure under CI=true.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { createServerCell } from '../../server/src/domain/cells.js';
import { runWithPostgres } from '../helpers/postgres.js';
import { apiRequest, startTestServer, type TestServer } from '../helpers/server.js';
import { makeTestCa, Receiver, type TestCa } from './fixtures.js';

const WEBHOOKS = 12;
const BATCHES = 8;
const PER_BATCH = 10;

const test = suite('webhooks: two nodes on one PostgreSQL');
let ca: TestCa;
let receiver: Receiver;
let a: TestServer;
let b: TestServer;

test.before(async () => {
  ca = makeTestCa();
  receiver = await Receiver.start(ca);
  const env = { PROVENANT_RATE_LIMIT: 'off', PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1' };
  a = await startTestServer(env, { engine: 'postgres', webhookCa: ca.caPem });
  b = await startTestServer({ ...env, PROVENANT_DATABASE_URL: a.deps.config.databaseUrl!, PROVENANT_SECRETS_DIR: a.deps.config.secretsDir }, { engine: 'postgres', webhookCa: ca.caPem });
});
test.after(async () => {
  await b?.close();
  await a?.close();
  await receiver?.close();
  ca?.remove();
});

test('every event reaches every webhook once; both nodes send', async () => {
  const { token, user } = await a.register();
  const orgId = (await a.deps.store.accounts.personalOrg(user.id))!.id;
  await a.deps.store.accounts.setOrgTier(orgId, 'enterprise');
  await a.deps.store.accounts.setUserTier(user.id, 'premium_plus');
  await createServerCell(a.deps, user.id);
  const appId = (await apiRequest(a.url, 'POST', '/api/v1/developer/apps', { token, body: { name: 'app', org_id: orgId } })).body.client_id;
  const appToken = (await apiRequest(a.url, 'POST', `/api/v1/developer/apps/${appId}/token`, { token })).body.token;
  for (let i = 0; i < WEBHOOKS; i++) {
    const path = `/node-${i}`;
    const r = await apiRequest(i % 2 ? b.url : a.url, 'POST', `/api/v1/webhooks?app_id=${appId}`, { token, body: { url: receiver.url(path), events: ['sign.created'] } });
    assert.is(r.status, 201, r.text);
    receiver.secrets.set(path, r.body.webhook.secret);
  }
  const hashes: string[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const files = Array.from({ length: PER_BATCH }, () => ({ file_hash: randomBytes(32).toString('hex') }));
    hashes.push(...files.map((f) => f.file_hash));
    const r = await apiRequest(i % 2 ? b.url : a.url, 'POST', '/api/v1/sign-it/sign-batch', { token: appToken, body: { files } });
    assert.is(r.body.signed, PER_BATCH, r.text);
  }
  const total = hashes.length * WEBHOOKS;
  const end = Date.now() + 60_000;
  while (receiver.received.length < total && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  await Promise.all([a.deps.webhooks.idle(), b.deps.webhooks.idle()]);
  await new Promise((r) => setTimeout(r, 1_500)); // a second copy would be under way by now
  assert.is(receiver.received.length, total);
  for (let i = 0; i < WEBHOOKS; i++) {
    const got = receiver.at(`/node-${i}`);
    assert.equal(got.map((d) => d.body.file_hash), hashes, `webhook ${i}: each event once, in order`);
    assert.ok(got.every((d) => d.signatureValid === true));
  }
  const sent = [a.deps.webhooks.counts.delivered, b.deps.webhooks.counts.delivered];
  assert.is(sent[0] + sent[1], total);
  assert.ok(sent[0] > 0 && sent[1] > 0, `both nodes sent: ${sent}`);
});

runWithPostgres(() => test.run());
