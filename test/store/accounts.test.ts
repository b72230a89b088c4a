// The SQLite AccountsStore on a real database file: uniqueness, primary keys of
// agents, single-use challenges.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Db } from '../../server/src/store/db.js';
import { createSqliteAccountsStore, StoreConflictError, type AccountsStore } from '../../server/src/store/accounts.js';

const test = suite('store/accounts');
let dir: string;
let db: Db;
let store: AccountsStore;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-accounts-'));
  db = await Db.open(join(dir, 'provenant.db'));
  store = createSqliteAccountsStore(db);
});
test.after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const account = (fields: { email?: string; username?: string; agentKey?: string } = {}) =>
  store.createAccount({
    user: { id: randomUUID(), email: fields.email, username: fields.username, createdAt: Date.now() },
    personalOrg: { id: randomUUID(), name: 'Personal' },
    agentKey: fields.agentKey,
  });

async function conflictOf(work: Promise<unknown>): Promise<string | null> {
  try {
    await work;
    return null;
  } catch (err) {
    assert.instance(err, StoreConflictError);
    return (err as StoreConflictError).field;
  }
}

test('createAccount makes the user and exactly one personal free org, atomically', async () => {
  const user = await account({ email: 'one@example.com' });
  const orgs = await store.listOrgs(user.id);
  assert.is(orgs.length, 1);
  assert.is(orgs[0].personal, true);
  assert.is(orgs[0].tier, 'free');
  // A failed account leaves no org behind.
  const before = (await db.get<{ n: number }>('SELECT count(*) AS n FROM orgs'))!.n;
  assert.is(await conflictOf(account({ email: 'ONE@example.com' })), 'email');
  assert.is((await db.get<{ n: number }>('SELECT count(*) AS n FROM orgs'))!.n, before);
});

test('usernames are unique regardless of case; updateUser reports the conflict', async () => {
  await account({ username: 'Zed' });
  assert.is(await conflictOf(account({ username: 'zed' })), 'username');
  const u = await account({});
  assert.is(await conflictOf(store.updateUser(u.id, { username: 'ZED' })), 'username');
  const ok = await store.updateUser(u.id, { username: 'zed2', publicFields: ['username', 'username'] });
  assert.equal(ok?.publicFields, ['username']);
});

test('agent keys: first is primary, one primary per user, another user cannot take a key', async () => {
  const u = await account({ agentKey: 'uhCAkA' });
  const other = await account({});
  let agents = await store.listAgents(u.id);
  assert.equal(agents.map((a) => [a.agentKey, a.primary]), [['uhCAkA', true]]);
  await store.linkAgent(u.id, 'uhCAkB');
  await store.linkAgent(u.id, 'uhCAkC', { primary: true });
  agents = await store.listAgents(u.id);
  assert.equal(agents.map((a) => [a.agentKey, a.primary]), [['uhCAkC', true], ['uhCAkA', false], ['uhCAkB', false]]);
  await store.linkAgent(u.id, 'uhCAkB'); // idempotent
  assert.is((await store.listAgents(u.id)).length, 3);
  assert.is(await conflictOf(store.linkAgent(other.id, 'uhCAkB')), 'agent_key');
  assert.is((await store.findUserByAgentKey('uhCAkB'))?.id, u.id);
  assert.is(await store.findUserByAgentKey('uhCAkZ'), null);
});

test('challenges are single use, bound to their key, and expire', async () => {
  const now = Date.now();
  await store.createChallenge({ hash: 'h1', agentKey: 'k1', expiresAt: now + 60_000 });
  assert.is(await store.consumeChallenge('h1', 'k2', now), false, 'another key');
  assert.is(await store.consumeChallenge('h1', 'k1', now), true);
  assert.is(await store.consumeChallenge('h1', 'k1', now), false, 'used');
  await store.createChallenge({ hash: 'h2', agentKey: 'k1', expiresAt: now + 1000 });
  assert.is(await store.consumeChallenge('h2', 'k1', now + 1000), false, 'expired');
  // Concurrent consumers: exactly one wins.
  await store.createChallenge({ hash: 'h3', agentKey: 'k1', expiresAt: now + 60_000 });
  const results = await Promise.all(Array.from({ length: 8 }, () => store.consumeChallenge('h3', 'k1', now)));
  assert.is(results.filter(Boolean).length, 1);
});

test('orgs and apps round-trip', async () => {
  const u = await account({});
  const org = await store.createOrg({ id: randomUUID(), name: 'Big', ownerId: u.id, tier: 'starter', customLimit: null });
  assert.is(await store.setOrgTier(org.id, 'enterprise', 9000), true);
  assert.equal({ ...(await store.getOrg(org.id))!, createdAt: 0 }, { ...org, tier: 'enterprise', customLimit: 9000, createdAt: 0 });
  const app = await store.createApp({ id: randomUUID(), orgId: org.id, ownerId: u.id, name: 'A', redirectUris: ['https://a.example/cb'], scopes: ['openid'] });
  assert.equal(await store.getApp(app.id), app);
  assert.equal(await store.listApps(u.id), [app]);
  assert.is(await store.setOrgTier(randomUUID(), 'pro'), false);
});

test.run();
