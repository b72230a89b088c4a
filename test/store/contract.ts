// The store contract (server/src/store/store.ts): what every engine must do, through the
// Store interfaces only, so that the same suites run unchanged against the next engine.
// `storeContract(name, open)` registers and runs them; each suite opens a fresh store.
// test/store/sqlite.test.ts runs them on a SQLite file.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { dataCode, imageCode, instanceCode, isccCode, isccDecompose, type SignatureRecord } from 'provenant';
import {
  MANIFESTS_PER_RECORD,
  reducedJson,
  StoreConflictError,
  StoreNotFoundError,
  type Change,
  type Charge,
  type NewContactRequest,
  type NewSignature,
  type NewWebhook,
  type QuotaUsage,
  type Store,
  type User,
  type Webhook,
} from '../../server/src/store/index.js';
import { outbox } from '../helpers/outbox.js';

export type OpenStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

/** The `what` of the store error `work` rejects with (and that it is one of `type`). */
async function storeErrorOf(type: typeof StoreConflictError | typeof StoreNotFoundError, work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    assert.instance(err, type, String(err));
    return (err as StoreConflictError).what;
  }
  assert.unreachable(`expected a ${type.name}`);
  return '';
}

const hex = () => randomBytes(32).toString('hex');
const agentKey = () => `uhCAk${randomBytes(36).toString('base64url')}`;
const FINGERPRINT = { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] };

function recordOf(signer: string, over: Partial<SignatureRecord> = {}): SignatureRecord {
  return {
    file_hash: hex(), signer, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
}

/** A row to store: the store does not verify signatures, so random ones keep setups fast. */
function rowOf(userId: string, record: SignatureRecord): NewSignature {
  return { record, signature: randomBytes(64).toString('base64'), action_hash: hex(), userId, appId: null, source: 'vault' };
}

class Refused extends Error {}

/** Charges the personal quota; refuses when the period would go past `limit`. */
function personalCharge(userId: string, limit = Number.MAX_SAFE_INTEGER, seen?: QuotaUsage[]): Charge {
  return {
    userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
    decide(usage, requested) {
      seen?.push(usage);
      if (usage.personalUsed + requested > limit) throw new Refused('over quota');
      return { quota: 'personal', orgId: null, overage: new Array(requested).fill(false) };
    },
  };
}

/** Charges an org quota with `included` signs, the rest overage, refusing past `cap`. */
function orgCharge(userId: string, orgId: string, included: number, cap = Number.MAX_SAFE_INTEGER): Charge {
  return {
    userId, orgId, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
    decide(usage, requested) {
      const used = usage.orgUsed!;
      if (used + requested > cap) throw new Refused('over the org cap');
      return { quota: 'org', orgId, overage: Array.from({ length: requested }, (_, i) => used + i >= included) };
    },
  };
}

async function newUser(store: Store, fields: { email?: string; username?: string; agentKey?: string; displayName?: string } = {}): Promise<User> {
  return store.accounts.createAccount({
    user: { id: randomUUID(), email: fields.email, username: fields.username, displayName: fields.displayName, createdAt: Date.now() },
    personalOrg: { id: randomUUID(), name: 'Personal' },
    agentKey: fields.agentKey,
  });
}

/** A suite with a fresh store of its own. */
function storeSuite(title: string, open: OpenStore) {
  const s = suite<{ store: Store; cleanup(): Promise<void> }>(title);
  s.before(async (ctx) => {
    Object.assign(ctx, await open());
  });
  s.after(async (ctx) => {
    await ctx.store.close();
    await ctx.cleanup();
  });
  return s;
}

export function storeContract(name: string, open: OpenStore): void {
  accountsContract(name, open);
  signaturesContract(name, open);
  feedContract(name, open);
  feedWindowContract(name, open);
  contactsContract(name, open);
  webhooksContract(name, open);
  oauthContract(name, open);
  emailVerificationsContract(name, open);
  transparencyLogContract(name, open);
}

// ---------------------------------------------------------------- accounts

function accountsContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: accounts`, open);

  test('createAccount: the user, one personal free org and the first key (primary), all or nothing', async ({ store }) => {
    const key = agentKey();
    const user = await newUser(store, { email: 'one@example.com', username: 'One', agentKey: key, displayName: 'Ada' });
    assert.equal([user.email, user.username, user.displayName, user.tier, user.publicFields, user.contactOptIn], ['one@example.com', 'One', 'Ada', 'free', [], false]);
    assert.equal(await store.accounts.getUser(user.id), user);
    const personal = await store.accounts.personalOrg(user.id);
    assert.equal([personal?.personal, personal?.tier, personal?.ownerId], [true, 'free', user.id]);
    assert.equal(await store.accounts.getOrg(personal!.id), personal);
    assert.equal((await store.accounts.listAgents(user.id)).map((a) => [a.agentKey, a.primary]), [[key, true]]);

    // each unique value, in any case where it is case-insensitive, refused as a typed conflict
    const id = randomUUID();
    const again = (user: { email?: string; username?: string }, key?: string) =>
      store.accounts.createAccount({ user: { id, createdAt: 1, ...user }, personalOrg: { id: randomUUID(), name: 'P' }, agentKey: key });
    assert.is(await storeErrorOf(StoreConflictError, again({ email: 'ONE@example.com' })), 'email');
    assert.is(await storeErrorOf(StoreConflictError, again({ username: 'one' })), 'username');
    assert.is(await storeErrorOf(StoreConflictError, again({ email: 'two@example.com' }, key)), 'agent_key');
    // nothing of a refused account remains: the same id, e-mail and org name are free
    assert.is(await store.accounts.getUser(id), null);
    assert.is(await store.accounts.personalOrg(id), null);
    assert.is(await store.accounts.findUserByEmail('two@example.com'), null);
    assert.is((await again({ email: 'two@example.com' })).id, id);
  });

  test('lookups: by id, e-mail, e-mail or username (any case), agent key', async ({ store }) => {
    const key = agentKey();
    const user = await newUser(store, { email: 'look@example.com', username: 'Looker', agentKey: key });
    assert.is((await store.accounts.findUserByEmail('look@example.com'))?.id, user.id);
    for (const login of ['look@example.com', 'LOOK@example.com', 'looker', 'LOOKER']) assert.is((await store.accounts.findUserByLogin(login))?.id, user.id, login);
    assert.is((await store.accounts.findUserByAgentKey(key))?.id, user.id);
    assert.is(await store.accounts.findUserByAgentKey(agentKey()), null);
    assert.is(await store.accounts.findUserByLogin('nobody'), null);
    assert.is(await store.accounts.getUser(randomUUID()), null);
  });

  test('updateUser: fields, public fields without repeats, username conflicts typed, unknown user null', async ({ store }) => {
    await newUser(store, { username: 'Zed' });
    const u = await newUser(store);
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.updateUser(u.id, { username: 'ZED' })), 'username');
    const after = await store.accounts.updateUser(u.id, {
      username: 'zed2', displayName: 'Z', profilePicture: 'data:image/png;base64,AA', publicFields: ['username', 'username', 'display_name'], contactOptIn: true,
    });
    assert.equal([after?.username, after?.displayName, after?.profilePicture, after?.publicFields, after?.contactOptIn], ['zed2', 'Z', 'data:image/png;base64,AA', ['username', 'display_name'], true]);
    assert.equal(await store.accounts.updateUser(u.id, {}), after);
    assert.is(await store.accounts.updateUser(randomUUID(), { displayName: 'x' }), null);
    assert.is(await store.accounts.setUserTier(u.id, 'premium'), true);
    assert.is((await store.accounts.getUser(u.id))?.tier, 'premium');
    assert.is(await store.accounts.setUserTier(randomUUID(), 'premium'), false);
  });

  test('agents: first is primary, one primary per user, idempotent, another user cannot take a key', async ({ store }) => {
    const [a, b, c] = [agentKey(), agentKey(), agentKey()];
    const u = await newUser(store);
    const other = await newUser(store);
    assert.is((await store.accounts.linkAgent(u.id, a, { now: 1 })).primary, true, 'a first key is primary');
    assert.is((await store.accounts.linkAgent(u.id, b, { now: 2 })).primary, false);
    assert.is((await store.accounts.linkAgent(u.id, c, { primary: true, now: 3 })).primary, true);
    assert.equal((await store.accounts.listAgents(u.id)).map((x) => [x.agentKey, x.primary]), [[c, true], [a, false], [b, false]]);
    await store.accounts.linkAgent(u.id, b);
    assert.is((await store.accounts.listAgents(u.id)).length, 3);
    assert.equal(await store.accounts.getAgent(b), { agentKey: b, userId: u.id, primary: false, createdAt: 2, unlinkedAt: null });
    assert.is(await store.accounts.getAgent(agentKey()), null);
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.linkAgent(other.id, b)), 'agent_key');
    assert.is(await storeErrorOf(StoreNotFoundError, store.accounts.linkAgent(randomUUID(), agentKey())), 'user');
    assert.equal(await store.accounts.listAgents(other.id), []);
  });

  test('unlinkAgent: the row stays (unlinkedAt), primary moves to the oldest key left; never the last key or the cell\'s; relinking clears it; others still cannot take it', async ({ store }) => {
    const [a, b, c] = [agentKey(), agentKey(), agentKey()];
    const u = await newUser(store);
    const other = await newUser(store);
    await store.accounts.linkAgent(u.id, a, { now: 1 });
    await store.accounts.linkAgent(u.id, b, { now: 2 });
    await store.accounts.linkAgent(u.id, c, { now: 3 });
    assert.is(await store.accounts.unlinkAgent(other.id, a, 10), 'not_linked', 'another user\'s key');
    assert.is(await store.accounts.unlinkAgent(u.id, agentKey(), 10), 'not_linked', 'an unknown key');
    assert.is(await store.accounts.unlinkAgent(u.id, a, 10), 'unlinked');
    assert.equal(await store.accounts.getAgent(a), { agentKey: a, userId: u.id, primary: false, createdAt: 1, unlinkedAt: 10 });
    assert.equal((await store.accounts.listAgents(u.id)).map((x) => [x.agentKey, x.primary, x.unlinkedAt]), [[b, true, null], [a, false, 10], [c, false, null]], 'the primary moved to the oldest key left; the unlinked row stays');
    assert.is(await store.accounts.unlinkAgent(u.id, a, 11), 'not_linked', 'twice');
    assert.is((await store.accounts.findUserByAgentKey(a))?.id, u.id, 'still the user\'s key (its records keep their signer)');
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.linkAgent(other.id, a)), 'agent_key', 'nobody else can take an unlinked key');
    assert.is(await store.accounts.unlinkAgent(u.id, c, 12), 'unlinked');
    assert.is(await store.accounts.unlinkAgent(u.id, b, 13), 'only_key', 'the last linked key stays');
    const relinked = await store.accounts.linkAgent(u.id, a, { now: 30 });
    assert.equal([relinked.unlinkedAt, relinked.primary, relinked.createdAt], [null, false, 30], 'linked again by its user, from now');
    assert.is((await store.accounts.linkAgent(u.id, a, { now: 40 })).createdAt, 30, 'linking a linked key again changes nothing');
    // two unlinks at once of the last two keys: one of them stays
    const outcomes = await Promise.all([store.accounts.unlinkAgent(u.id, a, 14), store.accounts.unlinkAgent(u.id, b, 14)]);
    assert.equal(outcomes.sort(), ['only_key', 'unlinked']);
    assert.is((await store.accounts.listAgents(u.id)).filter((x) => x.unlinkedAt === null && x.primary).length, 1);
    // a server-hosted cell's key cannot be unlinked
    const v = await newUser(store);
    const cellKey = agentKey();
    await store.accounts.createCell({ userId: v.id, agentKey: cellKey, ciphertext: new Uint8Array(16), nonce: new Uint8Array(12) });
    await store.accounts.linkAgent(v.id, agentKey());
    assert.is(await store.accounts.unlinkAgent(v.id, cellKey, 20), 'cell_key');
  });

  test('sessions cut-off: revokeSessions only moves forward; setPassword stores the hash and moves it; unknown users false', async ({ store }) => {
    const u = await newUser(store);
    assert.is(u.sessionsValidAfter, null);
    assert.is(await store.accounts.revokeSessions(u.id, 5000), true);
    assert.is((await store.accounts.getUser(u.id))?.sessionsValidAfter, 5000);
    assert.is(await store.accounts.revokeSessions(u.id, 4000), true);
    assert.is((await store.accounts.getUser(u.id))?.sessionsValidAfter, 5000, 'never back');
    assert.is(await store.accounts.setPassword(u.id, 'scrypt$new', 6000), true);
    const after = await store.accounts.getUser(u.id);
    assert.equal([after?.passwordHash, after?.sessionsValidAfter], ['scrypt$new', 6000]);
    assert.is(await store.accounts.setPassword(u.id, 'scrypt$newer', 1), true);
    assert.equal([(await store.accounts.getUser(u.id))?.passwordHash, (await store.accounts.getUser(u.id))?.sessionsValidAfter], ['scrypt$newer', 6000]);
    assert.is(await store.accounts.revokeSessions(randomUUID(), 1), false);
    assert.is(await store.accounts.setPassword(randomUUID(), 'x', 1), false);
  });

  test('cells: sealed bytes round-trip, the key linked as primary; one per user; typed refusals', async ({ store }) => {
    const u = await newUser(store, { agentKey: agentKey() });
    const key = agentKey();
    const ciphertext = new Uint8Array(randomBytes(64));
    const nonce = new Uint8Array(randomBytes(12));
    await store.accounts.createCell({ userId: u.id, agentKey: key, ciphertext, nonce, createdAt: 5 });
    assert.equal(await store.accounts.getCell(u.id), { userId: u.id, agentKey: key, ciphertext, nonce, createdAt: 5 });
    assert.is((await store.accounts.listAgents(u.id))[0].agentKey, key, 'the cell key is primary');
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.createCell({ userId: u.id, agentKey: agentKey(), ciphertext, nonce })), 'cell');
    const v = await newUser(store);
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.createCell({ userId: v.id, agentKey: key, ciphertext, nonce })), 'agent_key');
    assert.is(await storeErrorOf(StoreNotFoundError, store.accounts.createCell({ userId: randomUUID(), agentKey: agentKey(), ciphertext, nonce })), 'user');
    // a refused cell links nothing
    assert.equal([await store.accounts.getCell(v.id), await store.accounts.listAgents(v.id)], [null, []]);
  });

  test('orgs and apps round-trip; typed refusals', async ({ store }) => {
    const u = await newUser(store);
    const org = await store.accounts.createOrg({ id: randomUUID(), name: 'Big', ownerId: u.id, tier: 'starter', customLimit: null, createdAt: 7 });
    assert.equal(await store.accounts.getOrg(org.id), org);
    assert.equal([org.personal, (await store.accounts.personalOrg(u.id))?.id === org.id], [false, false]);
    assert.is(await store.accounts.setOrgTier(org.id, 'enterprise', 9000), true);
    assert.equal(await store.accounts.getOrg(org.id), { ...org, tier: 'enterprise', customLimit: 9000 });
    assert.is(await store.accounts.setOrgTier(org.id, 'pro'), true);
    assert.equal(await store.accounts.getOrg(org.id), { ...org, tier: 'pro', customLimit: 9000 }, 'the custom limit stays unless given');
    assert.is(await store.accounts.setOrgTier(randomUUID(), 'pro'), false);
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.createOrg({ ...org, name: 'Again' })), 'org');
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.createOrg({ id: randomUUID(), name: 'P2', ownerId: u.id, personal: true, tier: 'free', customLimit: null })), 'personal_org');
    assert.is(await storeErrorOf(StoreNotFoundError, store.accounts.createOrg({ id: randomUUID(), name: 'X', ownerId: randomUUID(), tier: 'free', customLimit: null })), 'user');

    const app = await store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: u.id, name: 'A', redirectUris: ['https://a.example/cb'], scopes: ['openid'] });
    assert.is(app.active, true);
    assert.equal(await store.accounts.getApp(app.id), app);
    const loose = await store.accounts.createApp({ id: randomUUID(), orgId: null, ownerId: u.id, name: 'B', redirectUris: [], scopes: [], active: false, createdAt: app.createdAt + 1 });
    assert.equal(await store.accounts.listApps(u.id), [app, loose]);
    assert.is(await store.accounts.getApp(randomUUID()), null);
    assert.is(await storeErrorOf(StoreConflictError, store.accounts.createApp({ ...app, name: 'Again' })), 'app');
    assert.is(await storeErrorOf(StoreNotFoundError, store.accounts.createApp({ ...app, id: randomUUID(), orgId: randomUUID() })), 'org');
    assert.is(await storeErrorOf(StoreNotFoundError, store.accounts.createApp({ ...app, id: randomUUID(), ownerId: randomUUID() })), 'user');
  });

  test('challenges: single use, bound to their key, expiring; of concurrent consumers exactly one wins', async ({ store }) => {
    const now = Date.now();
    await store.accounts.createChallenge({ hash: 'h1', agentKey: 'k1', expiresAt: now + 60_000 });
    assert.is(await store.accounts.consumeChallenge('h1', 'k2', now), false, 'another key');
    assert.is(await store.accounts.consumeChallenge('h1', 'k1', now), true);
    assert.is(await store.accounts.consumeChallenge('h1', 'k1', now), false, 'used');
    await store.accounts.createChallenge({ hash: 'h2', agentKey: 'k1', expiresAt: now + 1000 });
    assert.is(await store.accounts.consumeChallenge('h2', 'k1', now + 1000), false, 'expired');
    assert.is(await store.accounts.consumeChallenge('h0', 'k1', now), false, 'never issued');
    await store.accounts.createChallenge({ hash: 'h3', agentKey: 'k1', expiresAt: now + 60_000 });
    const results = await Promise.all(Array.from({ length: 8 }, () => store.accounts.consumeChallenge('h3', 'k1', now)));
    assert.is(results.filter(Boolean).length, 1);
  });

  test.run();
}

// ---------------------------------------------------------------- signatures

function signaturesContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: signatures`, open);

  test('a stored record comes back unchanged, with the signer profile it grants', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key, displayName: 'Ada', username: `ada${randomBytes(4).toString('hex')}` });
    await store.accounts.updateUser(u.id, { publicFields: ['display_name'] });
    const record = recordOf(key, {
      tags: ['a', 1.5], expires_at: { at: 1 }, comment: 'é 😀 "q" \\ \n',
      content_rights: { license: { Custom: 'mine' }, commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: null },
    });
    const row = { ...rowOf(u.id, record), appId: 'app-1', source: 'rest' as const };
    const decision = await store.signatures.insertSignatures([row], personalCharge(u.id));
    assert.equal(decision, { quota: 'personal', orgId: null, overage: [false] });
    const got = (await store.signatures.get(row.action_hash))!;
    assert.equal(got.record, record);
    assert.equal(
      [got.signature, got.user_id, got.app_id, got.source, got.quota, got.org_id, got.overage, got.revocation, got.thumbnail],
      [row.signature, u.id, 'app-1', 'rest', 'personal', null, false, null, null],
    );
    assert.ok(got.seq > 0 && Math.abs(got.published_at - Date.now()) < 60_000);
    assert.equal(got.profile, { display_name: 'Ada', username: u.username, profile_picture: null, public_fields: ['display_name'] });
    assert.equal(await store.signatures.findByFileHash(record.file_hash), [got]);
    assert.is(await store.signatures.get(hex()), undefined);
    assert.equal(await store.signatures.findByFileHash(hex()), []);
  });

  test('a record stored again is a typed conflict, and its whole batch is refused', async ({ store }) => {
    const u = await newUser(store);
    const first = rowOf(u.id, recordOf(agentKey()));
    await store.signatures.insertSignatures([first], personalCharge(u.id));
    const fresh = rowOf(u.id, recordOf(agentKey()));
    assert.is(await storeErrorOf(StoreConflictError, store.signatures.insertSignatures([fresh, first], personalCharge(u.id))), 'action_hash');
    assert.is(await store.signatures.get(fresh.action_hash), undefined);
    assert.is(await storeErrorOf(StoreNotFoundError, store.signatures.insertSignatures([rowOf(randomUUID(), recordOf(agentKey()))], personalCharge(randomUUID()))), 'user');
  });

  test('decide sees the period usage; a refusal writes nothing, outbox included', async ({ store }) => {
    const u = await newUser(store);
    const seen: QuotaUsage[] = [];
    await store.signatures.insertSignatures([rowOf(u.id, recordOf(agentKey())), rowOf(u.id, recordOf(agentKey()))], personalCharge(u.id, 3, seen));
    await store.signatures.insertSignatures([rowOf(u.id, recordOf(agentKey()))], personalCharge(u.id, 3, seen));
    assert.equal(seen.map((x) => x.personalUsed), [0, 2]);
    assert.equal(seen[0], { personalUsed: 0, orgUsed: null, orgOverage: null });
    const pending = (await store.webhooks.backlog()).events;
    const refused = rowOf(u.id, recordOf(agentKey()));
    try {
      await store.signatures.insertSignatures([refused], personalCharge(u.id, 3), [{ appId: 'x', type: 'sign.created', payload: {} }]);
      assert.unreachable('refused');
    } catch (err) {
      assert.instance(err, Refused, 'the refusal reaches the caller as thrown');
    }
    assert.is(await store.signatures.get(refused.action_hash), undefined);
    assert.is((await store.webhooks.backlog()).events, pending);
    assert.is((await store.signatures.countUsage(u.id, null, 0, Number.MAX_SAFE_INTEGER)).personalUsed, 3);
    // the period is [start, end) of published_at
    const now = Date.now();
    assert.is((await store.signatures.countUsage(u.id, null, 0, now - 60_000)).personalUsed, 0);
    assert.is((await store.signatures.countUsage(u.id, null, now + 60_000, now + 120_000)).personalUsed, 0);
  });

  test('30 concurrent signs of one user with 10 left: exactly 10 are stored', async ({ store }) => {
    const u = await newUser(store);
    await store.signatures.insertSignatures(Array.from({ length: 5 }, () => rowOf(u.id, recordOf(agentKey()))), personalCharge(u.id));
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => store.signatures.insertSignatures([rowOf(u.id, recordOf(agentKey()))], personalCharge(u.id, 15))));
    assert.is(results.filter((r) => r.status === 'fulfilled').length, 10);
    for (const r of results) if (r.status === 'rejected') assert.instance(r.reason, Refused);
    assert.is((await store.signatures.countUsage(u.id, null, 0, Number.MAX_SAFE_INTEGER)).personalUsed, 15);
  });

  test('30 concurrent signs of three users on one org quota with 10 left: exactly 10 are charged', async ({ store }) => {
    const owner = await newUser(store);
    const org = await store.accounts.createOrg({ id: randomUUID(), name: 'Acme', ownerId: owner.id, tier: 'free', customLimit: null });
    const users = [owner, await newUser(store), await newUser(store)];
    await store.signatures.insertSignatures(Array.from({ length: 5 }, () => rowOf(owner.id, recordOf(agentKey()))), orgCharge(owner.id, org.id, 100));
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => store.signatures.insertSignatures([rowOf(users[i % 3].id, recordOf(agentKey()))], orgCharge(users[i % 3].id, org.id, 100, 15))),
    );
    assert.is(results.filter((r) => r.status === 'fulfilled').length, 10);
    assert.equal(await store.signatures.countUsage(users[1].id, org.id, 0, Number.MAX_SAFE_INTEGER), { personalUsed: 0, orgUsed: 15, orgOverage: 0 });
  });

  test('org quota: charged to the org, overage counted past the included signs', async ({ store }) => {
    const u = await newUser(store);
    const org = await store.accounts.createOrg({ id: randomUUID(), name: 'Acme', ownerId: u.id, tier: 'starter', customLimit: null });
    await store.signatures.insertSignatures(Array.from({ length: 4 }, () => rowOf(u.id, recordOf(agentKey()))), orgCharge(u.id, org.id, 5));
    const rows = [0, 1, 2].map(() => rowOf(u.id, recordOf(agentKey())));
    const d = await store.signatures.insertSignatures(rows, orgCharge(u.id, org.id, 5));
    assert.equal(d, { quota: 'org', orgId: org.id, overage: [false, true, true] });
    assert.equal((await Promise.all(rows.map((r) => store.signatures.get(r.action_hash)))).map((s) => [s!.quota, s!.org_id, s!.overage]), [
      ['org', org.id, false], ['org', org.id, true], ['org', org.id, true],
    ]);
    assert.equal(await store.signatures.countUsage(u.id, org.id, 0, Number.MAX_SAFE_INTEGER), { personalUsed: 0, orgUsed: 7, orgOverage: 2 });
    assert.equal(await store.signatures.countUsage(u.id, null, 0, Number.MAX_SAFE_INTEGER), { personalUsed: 0, orgUsed: null, orgOverage: null });
  });

  test('findBySigners oldest first; findForUser newest first, including records of keys linked later', async ({ store }) => {
    const [k1, k2] = [agentKey(), agentKey()];
    const u = await newUser(store, { agentKey: k1 });
    const stranger = await newUser(store);
    const a = rowOf(u.id, recordOf(k1, { signed_at: 1000 }));
    const b = rowOf(stranger.id, recordOf(k2, { signed_at: 2000 })); // made under another account, before the link
    const c = rowOf(stranger.id, recordOf(agentKey(), { signed_at: 3000 }));
    await store.signatures.insertSignatures([b], personalCharge(stranger.id));
    await store.signatures.insertSignatures([a], personalCharge(u.id));
    await store.signatures.insertSignatures([c], personalCharge(stranger.id));
    assert.equal((await store.signatures.findBySigners([k2, k1])).map((s) => s.action_hash), [a.action_hash, b.action_hash]);
    assert.equal(await store.signatures.findBySigners([]), []);
    assert.equal((await store.signatures.findForUser(u.id)).map((s) => s.action_hash), [a.action_hash]);
    await store.accounts.linkAgent(u.id, k2);
    assert.equal((await store.signatures.findForUser(u.id)).map((s) => s.action_hash), [b.action_hash, a.action_hash]);
  });

  test('revocation: once, linked by action hash, the record untouched, its outbox row written', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    const row = rowOf(u.id, recordOf(key));
    await store.signatures.insertSignatures([row], personalCharge(u.id));
    const rev = { action_hash: row.action_hash, reason: 'oops', revoked_at: Date.now(), signer: key, signature: 'sig', source: 'vault' as const, appId: null };
    assert.is(await store.signatures.insertRevocation(rev, [{ appId: 'app-r', type: 'sign.revoked', payload: { action_hash: row.action_hash } }]), 'revoked');
    assert.is(await store.signatures.insertRevocation({ ...rev, reason: 'again' }, [{ appId: 'app-r', type: 'sign.revoked', payload: {} }]), 'already_revoked');
    assert.is(await store.signatures.insertRevocation({ ...rev, action_hash: hex() }), 'unknown');
    const got = (await store.signatures.get(row.action_hash))!;
    assert.equal(got.revocation, { reason: 'oops', revoked_at: rev.revoked_at, signer: key, signature: 'sig' });
    assert.equal(got.record, row.record);
    const mine = (await outbox(store)).filter((e) => e.appId === 'app-r');
    assert.equal(mine.map((e) => [e.type, e.payload]), [['sign.revoked', { action_hash: row.action_hash }]]);
    assert.is((await store.webhooks.backlog()).events, 0, 'routed once');
  });

  test('thumbnails are set and replaced; unknown records refused', async ({ store }) => {
    const u = await newUser(store);
    const row = rowOf(u.id, recordOf(agentKey()));
    await store.signatures.insertSignatures([row], personalCharge(u.id));
    assert.ok(await store.signatures.setThumbnail(row.action_hash, 'data:image/png;base64,AAAA', 1));
    assert.ok(await store.signatures.setThumbnail(row.action_hash, 'data:image/png;base64,BBBB', 2));
    assert.is((await store.signatures.get(row.action_hash))!.thumbnail, 'data:image/png;base64,BBBB');
    assert.not.ok(await store.signatures.setThumbnail(hex(), 'data:image/png;base64,AAAA', 3));
  });

  test('the match index reads: fingerprinted records by seq, perceptual hashes by range, the reduced JSON text', async ({ store }) => {
    const u = await newUser(store);
    const key = agentKey();
    const withFp = [0, 1, 2].map((i) => rowOf(u.id, recordOf(key, { perceptual_hash: FINGERPRINT, signed_at: 1_700_000_000_000 + i, comment: 'not reduced' })));
    const plain = rowOf(u.id, recordOf(key));
    const tricky = rowOf(u.id, recordOf(key, {
      perceptual_hash: FINGERPRINT, ai_generation: 'Assisted',
      content_rights: { license: { Custom: 'q"\\ é\n😀\u0001' }, commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: null },
    }));
    const all = [...withFp, plain, tricky];
    await store.signatures.insertSignatures(all, personalCharge(u.id));
    const seqs = await Promise.all(all.map(async (r) => (await store.signatures.get(r.action_hash))!.seq));
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), 'seqs follow the batch order');
    assert.is(await store.signatures.lastSeq(), seqs[4]);

    assert.equal((await store.signatures.get(tricky.action_hash))!.record, tricky.record);

    const range = await store.signatures.listPerceptualHashes(seqs[0] - 1, seqs[4]);
    assert.equal(range.map((r) => r.seq), [seqs[0], seqs[1], seqs[2], seqs[4]]);
    assert.equal(JSON.parse(range[0].perceptual_hash_json!), FINGERPRINT);
    assert.is(range[1].signed_at, withFp[1].record.signed_at);
    assert.equal((await store.signatures.listPerceptualHashes(seqs[1], seqs[2])).map((r) => r.seq), [seqs[2]]);

    // the reduced text is reducedJson's, byte for byte; records without a fingerprint and unknown seqs are skipped
    const reduced = await store.signatures.reducedBySeqs([seqs[4], seqs[0], seqs[3], 999_999_999]);
    assert.equal(reduced.sort((a, b) => a.seq - b.seq), [
      { seq: seqs[0], signed_at: withFp[0].record.signed_at, json: reducedJson(withFp[0].record) },
      { seq: seqs[4], signed_at: tricky.record.signed_at, json: reducedJson(tricky.record) },
    ]);
    assert.equal(await store.signatures.reducedBySeqs([999_999_999]), []);
    assert.equal(await store.signatures.reducedBySeqs([]), []);
  });

  test('issue 28: pdq_hash in its own column; a record with one is fingerprinted and reduced; revoked ones say so', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    const pdq = { hash_type: 'PDQ' as const, hash_value: 'ab'.repeat(32), quality: 90 };
    const vpdq = { hash_type: 'vPDQ' as const, frames: [{ timestamp: 0.5, hash_value: 'cd'.repeat(32), quality: 70 }] };
    const onlyPdq = rowOf(u.id, recordOf(key, { pdq_hash: pdq }));
    const both = rowOf(u.id, recordOf(key, { perceptual_hash: FINGERPRINT, pdq_hash: vpdq }));
    const neither = rowOf(u.id, recordOf(key));
    await store.signatures.insertSignatures([onlyPdq, both, neither], personalCharge(u.id));
    const seqs = await Promise.all([onlyPdq, both, neither].map(async (r) => (await store.signatures.get(r.action_hash))!.seq));
    assert.equal((await store.signatures.get(onlyPdq.action_hash))!.record, onlyPdq.record);
    let list = await store.signatures.listPdqHashes(seqs[0] - 1, 10);
    assert.equal(list.map((r) => [r.seq, r.action_hash, JSON.parse(r.pdq_hash_json), r.revoked]), [
      [seqs[0], onlyPdq.action_hash, pdq, false],
      [seqs[1], both.action_hash, vpdq, false],
    ]);
    assert.equal((await store.signatures.listPdqHashes(seqs[0], 1)).map((r) => r.seq), [seqs[1]]);
    // the feed and the fingerprinted reads include a record with a PDQ only; its reduced row is there
    assert.equal((await store.signatures.listFingerprinted(seqs[0] - 1, 10)).map((r) => r.seq), [seqs[0], seqs[1]]);
    assert.equal((await store.signatures.reducedBySeqs([seqs[0], seqs[2]])).map((r) => r.seq), [seqs[0]]);
    const stored = (await store.feed.since(0, 10_000)).filter((c) => c.kind === 'stored' && c.signature_seq >= seqs[0]);
    assert.equal(stored.map((c) => c.kind === 'stored' && c.has_fingerprint), [true, true, false]);
    await store.signatures.insertRevocation({ action_hash: onlyPdq.action_hash, reason: null, revoked_at: Date.now(), signer: key, signature: 'sig', source: 'vault', appId: null });
    list = await store.signatures.listPdqHashes(seqs[0] - 1, 10);
    assert.equal(list.map((r) => r.revoked), [true, false]);
  });

  test('issues 32, 33: a feature set and an ISCC Content-Code beside their records; such records are fingerprinted and reduced', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    // a real ISCC-CODE (Image-Code, Data-Code, Instance-Code) and an ISCC-SUM without a Content-Code
    const image = isccCode([imageCode(Array.from({ length: 1024 }, (_, i) => (i * 37) % 256)).iscc, dataCode(new Uint8Array([1, 2, 3])).iscc, instanceCode(new Uint8Array([1, 2, 3])).iscc]).iscc;
    const sum = isccCode([dataCode(new Uint8Array([4])).iscc, instanceCode(new Uint8Array([4])).iscc]).iscc;
    const features = new Uint8Array(3000).map((_, i) => (i * 7) & 0xff);
    const digest = createHash('sha256').update(features).digest('hex');
    const withIscc = rowOf(u.id, recordOf(key, { iscc: image }));
    const withFeatures = { ...rowOf(u.id, recordOf(key, { features: { version: 1, count: 10, digest } })), features };
    const onlySum = rowOf(u.id, recordOf(key, { iscc: sum }));
    await store.signatures.insertSignatures([withIscc, withFeatures, onlySum], personalCharge(u.id));
    const seqs = await Promise.all([withIscc, withFeatures, onlySum].map(async (r) => (await store.signatures.get(r.action_hash))!.seq));
    assert.equal((await store.signatures.get(withIscc.action_hash))!.record, withIscc.record);
    assert.equal((await store.signatures.get(withFeatures.action_hash))!.record, withFeatures.record);
    assert.equal(await store.signatures.listIsccContents(seqs[0] - 1, 10), [{ seq: seqs[0], content: isccDecompose(image)[0] }]);
    const sets = await store.signatures.listFeatures(seqs[0] - 1, seqs[2]);
    assert.equal(sets.map((r) => r.seq), [seqs[1]]);
    assert.ok(Buffer.from(sets[0].data).equals(Buffer.from(features)), 'the bytes come back as stored');
    assert.equal(await store.signatures.listFeatures(seqs[1], seqs[2]), []);
    // matchable by features or by a Content-Code; an ISCC-SUM alone matches nothing
    assert.equal((await store.signatures.reducedBySeqs(seqs)).map((r) => r.seq).sort((a, b) => a - b), [seqs[0], seqs[1]]);
    const stored = (await store.feed.since(0, 10_000)).filter((c) => c.kind === 'stored' && c.signature_seq >= seqs[0]);
    assert.equal(stored.map((c) => c.kind === 'stored' && c.has_fingerprint), [true, true, false]);
  });

  test('issue 33: manifest stores by id for a record; the same bytes again unchanged, other bytes a conflict; at most MANIFESTS_PER_RECORD; newest first per record', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    const [a, b] = [rowOf(u.id, recordOf(key)), rowOf(u.id, recordOf(key))];
    await store.signatures.insertSignatures([a, b], personalCharge(u.id));
    const [seqA, seqB] = await Promise.all([a, b].map(async (r) => (await store.signatures.get(r.action_hash))!.seq));
    const manifest = (id: string, seq: number, storedAt: number, fill = 1) => ({
      manifestId: id, seq, store: new Uint8Array(100).fill(fill), active: new Uint8Array(60).fill(fill), validationState: 'untrusted_signer' as const,
      validationCodes: ['signingCredential.untrusted'], softBinding: 'ISCC:EEAX', storedAt,
    });
    const id = (n: number) => `urn:c2pa:00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    assert.is(await store.manifests.insert(manifest(id(1), seqA, 1000)), 'stored');
    assert.is(await store.manifests.insert(manifest(id(1), seqA, 2000)), 'unchanged');
    assert.is(await storeErrorOf(StoreConflictError, store.manifests.insert(manifest(id(1), seqA, 3000, 2))), 'manifest');
    assert.is(await storeErrorOf(StoreNotFoundError, store.manifests.insert(manifest(id(2), 987_654_321, 1000))), 'record');
    assert.is(await store.manifests.insert({ ...manifest(id(3), seqA, 5000), softBinding: null }), 'stored');
    assert.is(await store.manifests.insert(manifest(id(4), seqB, 4000)), 'stored');
    assert.ok(Buffer.from((await store.manifests.bytes(id(1), 'store'))!).equals(Buffer.alloc(100, 1)));
    assert.ok(Buffer.from((await store.manifests.bytes(id(1), 'active'))!).equals(Buffer.alloc(60, 1)));
    assert.is(await store.manifests.bytes(id(9), 'store'), undefined);
    const entries = await store.manifests.bySeqs([seqA, seqB]);
    assert.equal(entries.map((e) => [e.manifestId, e.seq, e.actionHash, e.softBinding]), [[id(3), seqA, a.action_hash, null], [id(1), seqA, a.action_hash, 'ISCC:EEAX'], [id(4), seqB, b.action_hash, 'ISCC:EEAX']]);
    assert.equal(entries[1].validationCodes, ['signingCredential.untrusted']);
    assert.equal(await store.manifests.bySeqs([]), []);
    for (let n = 10; n < 10 + MANIFESTS_PER_RECORD - 1; n++) assert.is(await store.manifests.insert(manifest(id(n), seqB, n)), 'stored');
    assert.is(await storeErrorOf(StoreConflictError, store.manifests.insert(manifest(id(99), seqB, 99))), 'manifest_limit');
    // one store sent five times at once (two nodes, a retry): stored once, the others see it stored
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => store.manifests.insert(manifest(id(7), seqA, 7000, 3))));
    assert.equal(outcomes.sort(), ['stored', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
  });

  test.run();
}

// ---------------------------------------------------------------- the change feed

function feedContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: change feed`, open);

  /** The changes after `seq`, without their seq and time (checked apart). */
  async function after(store: Store, seq: number): Promise<unknown[]> {
    return (await store.feed.since(seq, 1000)).map(({ seq: _seq, at: _at, ...rest }) => rest);
  }

  test('an empty feed: latest 0, nothing since', async ({ store }) => {
    assert.is(await store.feed.latest(), 0);
    assert.equal(await store.feed.since(0, 10), []);
  });

  test('each write that changes an answer appends its change, in the order of the writes', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    const start = await store.feed.latest();
    const rows = [rowOf(u.id, recordOf(key, { perceptual_hash: FINGERPRINT })), rowOf(u.id, recordOf(key))];
    const before = Date.now();
    await store.signatures.insertSignatures(rows, personalCharge(u.id));
    const [s0, s1] = await Promise.all(rows.map(async (r) => (await store.signatures.get(r.action_hash))!.seq));
    const [r0, r1] = rows.map((r) => r.record);
    assert.equal(await after(store, start), [
      { kind: 'stored', file_hash: r0.file_hash, action_hash: rows[0].action_hash, signature_seq: s0, has_fingerprint: true },
      { kind: 'stored', file_hash: r1.file_hash, action_hash: rows[1].action_hash, signature_seq: s1, has_fingerprint: false },
    ]);
    const stored = await store.feed.since(start, 10);
    assert.ok(stored.every((c) => c.at >= before && c.at <= Date.now()), 'at: when the write was made');

    const mark = await store.feed.latest();
    await store.signatures.insertRevocation({ action_hash: rows[0].action_hash, reason: null, revoked_at: 1, signer: key, signature: 's', source: 'rest', appId: null });
    await store.signatures.setThumbnail(rows[1].action_hash, 'data:image/png;base64,AA', 2);
    await store.accounts.updateUser(u.id, { displayName: 'Shown' });
    await store.accounts.updateUser(u.id, { publicFields: ['display_name'] });
    assert.equal(await after(store, mark), [
      { kind: 'revoked', file_hash: r0.file_hash, action_hash: rows[0].action_hash },
      { kind: 'thumbnail', file_hash: r1.file_hash, action_hash: rows[1].action_hash },
      { kind: 'profile', user_id: u.id },
      { kind: 'profile', user_id: u.id },
    ]);
    const seqs = (await store.feed.since(start, 1000)).map((c) => c.seq);
    assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), `strictly increasing: ${seqs}`);
    assert.is(await store.feed.latest(), seqs[seqs.length - 1]);
  });

  test('linking a key that signed stored records changes their profile: a profile change; a fresh key none', async ({ store }) => {
    const key = agentKey();
    const maker = await newUser(store);
    await store.signatures.insertSignatures([rowOf(maker.id, recordOf(key))], personalCharge(maker.id));
    const u = await newUser(store);
    const mark = await store.feed.latest();
    await store.accounts.linkAgent(u.id, agentKey());
    await store.accounts.linkAgent(u.id, key);
    await store.accounts.linkAgent(u.id, key, { primary: true }); // already linked: no change of holder
    assert.equal(await after(store, mark), [{ kind: 'profile', user_id: u.id }]);
  });

  test('writes that change no answer append nothing: refusals, rollbacks, non-public fields, accounts', async ({ store }) => {
    const key = agentKey();
    const u = await newUser(store, { agentKey: key });
    const row = rowOf(u.id, recordOf(key));
    await store.signatures.insertSignatures([row], personalCharge(u.id, 1));
    await store.signatures.insertRevocation({ action_hash: row.action_hash, reason: null, revoked_at: 1, signer: key, signature: 's', source: 'rest', appId: null });
    const mark = await store.feed.latest();
    const fail = (work: Promise<unknown>) => work.then(() => assert.unreachable('refused'), () => undefined);
    await fail(store.signatures.insertSignatures([rowOf(u.id, recordOf(key))], personalCharge(u.id, 1))); // over quota
    await fail(store.signatures.insertSignatures([rowOf(u.id, recordOf(key)), row], personalCharge(u.id))); // a stored record in the batch
    assert.is(await store.signatures.insertRevocation({ action_hash: row.action_hash, reason: null, revoked_at: 2, signer: key, signature: 's', source: 'rest', appId: null }), 'already_revoked');
    assert.is(await store.signatures.insertRevocation({ action_hash: hex(), reason: null, revoked_at: 2, signer: key, signature: 's', source: 'rest', appId: null }), 'unknown');
    assert.is(await store.signatures.setThumbnail(hex(), 'data:image/png;base64,AA', 3), false);
    await fail(store.accounts.updateUser(u.id, { username: (await newUser(store, { username: `taken${randomBytes(3).toString('hex')}` })).username }));
    await store.accounts.updateUser(u.id, { contactOptIn: true });
    await store.accounts.updateUser(randomUUID(), { displayName: 'nobody' });
    await store.accounts.setUserTier(u.id, 'premium');
    await store.accounts.createOrg({ id: randomUUID(), name: 'O', ownerId: u.id, tier: 'free', customLimit: null });
    await store.accounts.createChallenge({ hash: hex(), agentKey: key, expiresAt: Date.now() + 1000 });
    assert.is(await store.feed.latest(), mark);
    assert.equal(await store.feed.since(mark, 10), []);
  });

  test('since(after, limit): exactly the changes after `after`, oldest first, at most `limit`', async ({ store }) => {
    const u = await newUser(store);
    const start = await store.feed.latest();
    await store.signatures.insertSignatures(Array.from({ length: 7 }, () => rowOf(u.id, recordOf(agentKey()))), personalCharge(u.id));
    const all = await store.feed.since(start, 100);
    assert.is(all.length, 7);
    assert.equal(await store.feed.since(start, 3), all.slice(0, 3));
    assert.equal(await store.feed.since(all[2].seq, 3), all.slice(3, 6));
    assert.equal(await store.feed.since(all[5].seq, 3), all.slice(6));
    assert.equal(await store.feed.since(all[6].seq, 3), []);
    // a cursor read in pages meets every change once, whatever the page size
    for (const page of [1, 2, 5]) {
      const seen: Change[] = [];
      for (let cursor = start, next; (next = await store.feed.since(cursor, page)).length > 0; cursor = next[next.length - 1].seq) seen.push(...next);
      assert.equal(seen, all, `pages of ${page}`);
    }
  });

  test('concurrent writes: every change appears once, in commit order', async ({ store }) => {
    const u = await newUser(store);
    const start = await store.feed.latest();
    const rows = Array.from({ length: 20 }, () => rowOf(u.id, recordOf(agentKey())));
    await Promise.all(rows.map((r) => store.signatures.insertSignatures([r], personalCharge(u.id))));
    const changes = await store.feed.since(start, 100);
    assert.equal(new Set(changes.map((c) => (c as { action_hash: string }).action_hash)), new Set(rows.map((r) => r.action_hash)));
    assert.is(changes.length, 20);
    const recordSeqs = changes.map((c) => (c as { signature_seq: number }).signature_seq);
    assert.ok(recordSeqs.every((s, i) => i === 0 || s > recordSeqs[i - 1]), 'the records were stored in the order of their changes');
  });

  test('onAppend: woken after the commit (since() sees the change), before the write returns; not for a refusal; unsubscribes', async ({ store }) => {
    const u = await newUser(store);
    const cursor = await store.feed.latest();
    const reads: Promise<Change[]>[] = [];
    let wakes = 0;
    const off = store.feed.onAppend(() => {
      wakes += 1;
      reads.push(store.feed.since(cursor, 10));
    });
    const offThrowing = store.feed.onAppend(() => {
      throw new Error('a consumer failing');
    });
    const row = rowOf(u.id, recordOf(agentKey()));
    await store.signatures.insertSignatures([row], personalCharge(u.id, 1));
    assert.is(wakes, 1, 'woken before the write resolved');
    const seen = await reads[0];
    assert.equal(seen.map((c) => [c.kind, (c as { action_hash: string }).action_hash]), [['stored', row.action_hash]]);
    await store.signatures.insertSignatures([rowOf(u.id, recordOf(agentKey()))], personalCharge(u.id, 1)).catch(() => undefined);
    assert.is(wakes, 1, 'a refused write wakes nobody');
    assert.is(await store.signatures.insertRevocation({ action_hash: hex(), reason: null, revoked_at: 1, signer: 'k', signature: 's', source: 'rest', appId: null }), 'unknown');
    await store.accounts.updateUser(u.id, { contactOptIn: true });
    assert.is(wakes, 1, 'a write that appended nothing wakes nobody');
    off();
    offThrowing();
    await store.signatures.setThumbnail(row.action_hash, 'data:image/png;base64,AA', 1);
    assert.is(wakes, 1, 'unsubscribed');
    assert.is((await store.feed.since(cursor, 10)).length, 2);
  });

  test.run();
}

// ---------------------------------------------------------------- the change feed's window (issue 25 item 10)

function feedWindowContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: change feed window`, open);
  const NEVER = Number.MAX_SAFE_INTEGER;

  /** Stores `n` records in one write: n 'stored' changes; their seqs. */
  async function write(store: Store, userId: string, n: number): Promise<number[]> {
    const from = await store.feed.latest();
    await store.signatures.insertSignatures(Array.from({ length: n }, () => rowOf(userId, recordOf(agentKey()))), personalCharge(userId));
    const seqs: number[] = [];
    for (let cursor = from, next; (next = await store.feed.since(cursor, 5_000)).length > 0; cursor = next[next.length - 1].seq) seqs.push(...next.map((c) => c.seq));
    assert.is(seqs.length, n);
    return seqs;
  }

  test('a fresh feed: horizon 0; pruning a window wider than the feed deletes nothing', async ({ store }) => {
    assert.is(await store.feed.horizon(), 0);
    const u = await newUser(store);
    const seqs = await write(store, u.id, 5);
    assert.is(await store.feed.prune({ maxChanges: 5, maxAgeMs: NEVER }, Date.now()), 0);
    assert.is(await store.feed.horizon(), 0);
    assert.equal((await store.feed.since(0, 10)).map((c) => c.seq), seqs);
  });

  test('by count: the newest maxChanges stay; horizon is the highest seq deleted; latest unchanged; since() from below gives what is kept', async ({ store }) => {
    const u = await newUser(store);
    const earlier = (await store.feed.since(0, 1_000)).length;
    const seqs = await write(store, u.id, 12_345); // more than one pruning batch
    const latest = await store.feed.latest();
    assert.is(latest, seqs[seqs.length - 1]);
    const kept = seqs.slice(-300);
    const deleted = await store.feed.prune({ maxChanges: 300, maxAgeMs: NEVER }, Date.now());
    assert.is(deleted, earlier + seqs.length - 300);
    assert.is(await store.feed.horizon(), kept[0] - 1);
    assert.is(await store.feed.latest(), latest);
    assert.equal((await store.feed.since(0, 1_000)).map((c) => c.seq), kept, 'a reader from 0 gets only the window');
    assert.equal((await store.feed.since(kept[9], 1_000)).map((c) => c.seq), kept.slice(10));
    assert.is(await store.feed.prune({ maxChanges: 300, maxAgeMs: NEVER }, Date.now()), 0, 'again: nothing more');
  });

  test('by age: changes written before now - maxAgeMs go; pruned empty, latest stays at the last seq and a new reader starts inside the window', async ({ store }) => {
    const u = await newUser(store);
    const old = await write(store, u.id, 4);
    const cut = Date.now();
    while (Date.now() <= cut) await new Promise((r) => setTimeout(r, 1)); // the next changes are written after `cut`
    const young = await write(store, u.id, 3);
    assert.ok((await store.feed.prune({ maxChanges: NEVER, maxAgeMs: 1_000 }, cut + 1_001)) >= old.length);
    assert.is(await store.feed.horizon(), old[old.length - 1]);
    assert.equal((await store.feed.since(0, 100)).map((c) => c.seq), young);
    const latest = await store.feed.latest();
    assert.is(await store.feed.prune({ maxChanges: NEVER, maxAgeMs: 0 }, NEVER), 3, 'everything is older than now');
    assert.equal(await store.feed.since(0, 100), []);
    assert.is(await store.feed.horizon(), young[young.length - 1]);
    assert.is(await store.feed.latest(), latest, 'latest never goes back: a reader starting there has missed nothing');
    const next = await write(store, u.id, 1);
    assert.ok(next[0] > latest, 'seqs are never handed out again');
    assert.equal((await store.feed.since(latest, 10)).map((c) => c.seq), next);
  });

  test('pruning while writers append: each change is either still in the feed or at or below the horizon, never lost between', async ({ store }) => {
    const u = await newUser(store);
    const start = await store.feed.latest();
    const writes = Promise.all(Array.from({ length: 30 }, () => store.signatures.insertSignatures([rowOf(u.id, recordOf(agentKey()))], personalCharge(u.id))));
    const prunes = Promise.all(Array.from({ length: 10 }, () => store.feed.prune({ maxChanges: 3, maxAgeMs: NEVER }, Date.now())));
    await Promise.all([writes, prunes]);
    const horizon = await store.feed.horizon();
    const kept = (await store.feed.since(start, 100)).map((c) => c.seq);
    const latest = await store.feed.latest();
    assert.ok(kept.length >= 3 || horizon === latest);
    // the kept changes are exactly those above the horizon, contiguous up to latest
    assert.ok(kept.every((s) => s > horizon));
    if (store.engine === 'sqlite') assert.equal(kept, Array.from({ length: latest - Math.max(horizon, start) }, (_, i) => Math.max(horizon, start) + i + 1));
  });

  test.run();
}

// ---------------------------------------------------------------- the contact relay's queue

function contactsContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: contact queue`, open);
  const request = (over: Partial<NewContactRequest> = {}): NewContactRequest => ({
    signerAgentKey: agentKey(), fileHash: hex(), senderName: 'Ana', senderEmail: 'ana@example.org',
    message: 'Hello,\nmay I license this?', purpose: 'licensing', createdAt: 1_000, ...over,
  });

  test('enqueue then claim: every field back as queued, oldest first, no attempts yet', async ({ store }) => {
    const first = request({ createdAt: 1_000 });
    const second = request({ fileHash: null, purpose: 'other', createdAt: 2_000 });
    await store.contacts.enqueue(second);
    await store.contacts.enqueue(first);
    assert.is(await store.contacts.pending(), 2);
    const claimed = await store.contacts.claimDue(5_000, 65_000, 10);
    assert.equal(claimed.map(({ id: _id, ...rest }) => rest), [{ ...first, attempts: 0 }, { ...second, attempts: 0 }]);
    for (const c of claimed) await store.contacts.complete(c.id);
  });

  test('a claim leases: not claimed again until the lease ends; not due before its time; limit respected', async ({ store }) => {
    for (let i = 0; i < 3; i++) await store.contacts.enqueue(request({ createdAt: 10_000 + i }));
    assert.equal(await store.contacts.claimDue(9_999, 20_000, 10), [], 'nothing is due before it was queued');
    const a = await store.contacts.claimDue(10_500, 20_000, 2);
    assert.is(a.length, 2);
    const b = await store.contacts.claimDue(10_600, 20_000, 10);
    assert.equal(b.map((c) => c.createdAt), [10_002], 'only the unleased one');
    const again = await store.contacts.claimDue(20_000, 30_000, 10);
    assert.equal(again.map((c) => c.createdAt).sort(), [10_000, 10_001, 10_002], 'an expired lease makes them due again');
    for (const c of again) await store.contacts.complete(c.id);
    assert.is(await store.contacts.pending(), 0);
  });

  test('concurrent claims never hand out the same request twice', async ({ store }) => {
    for (let i = 0; i < 20; i++) await store.contacts.enqueue(request({ createdAt: 50_000 + i }));
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.contacts.claimDue(60_000, 120_000, 5)));
    const ids = claims.flat().map((c) => c.id);
    assert.is(ids.length, 20);
    assert.is(new Set(ids).size, 20);
    for (const id of ids) await store.contacts.complete(id);
  });

  test('retryLater counts the attempt and sets the next due time; complete removes', async ({ store }) => {
    await store.contacts.enqueue(request({ createdAt: 100 }));
    const [c] = await store.contacts.claimDue(200, 300, 1);
    await store.contacts.retryLater(c.id, 5_000, 'connection refused');
    assert.equal(await store.contacts.claimDue(4_999, 6_000, 1), []);
    const [again] = await store.contacts.claimDue(5_000, 6_000, 1);
    assert.is(again.id, c.id);
    assert.is(again.attempts, 1);
    await store.contacts.complete(c.id);
    assert.is(await store.contacts.pending(), 0);
    assert.equal(await store.contacts.claimDue(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 10), []);
  });

  test.run();
}

// ---------------------------------------------------------------- webhooks and their deliveries

function webhooksContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: webhooks`, open);

  /** A user, an app of theirs on their personal org, and a webhook row to store. */
  async function appOf(store: Store) {
    const u = await newUser(store);
    const org = (await store.accounts.personalOrg(u.id))!;
    const app = await store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: u.id, name: 'A', redirectUris: [], scopes: ['openid'] });
    const webhook = (over: Partial<NewWebhook> = {}): NewWebhook => ({
      id: randomUUID(), appId: app.id, orgId: org.id, url: 'https://hooks.example.com/in', events: ['sign.created'], filters: {}, sealedSecret: 'sealed', createdAt: 1_000, ...over,
    });
    return { u, org, app, webhook };
  }

  /** Writes one outbox row for `appId` (through a sign, the way events are written). */
  async function emit(store: Store, userId: string, appId: string, type: string, payload: Record<string, unknown>): Promise<void> {
    await store.signatures.insertSignatures([rowOf(userId, recordOf(agentKey()))], personalCharge(userId), [{ appId, type, payload }]);
  }

  const created = (w: Webhook | 'limit_reached'): Webhook => {
    assert.type(w, 'object', 'created');
    return w as Webhook;
  };

  test('create, get, list, update, delete; fields round-trip; an unknown app is typed', async ({ store }) => {
    const { app, webhook } = await appOf(store);
    const first = created(await store.webhooks.create(webhook({ filters: { file_hash: 'a'.repeat(64) } }), 10));
    assert.equal(first, { ...webhook(), id: first.id, filters: { file_hash: 'a'.repeat(64) }, active: true, failureCount: 0, lastTriggeredAt: null, lastFailureAt: null, activeSince: 1_000 });
    assert.equal(await store.webhooks.get(first.id), first);
    const second = created(await store.webhooks.create(webhook({ createdAt: 2_000, events: ['sign.revoked', 'oauth.authorized'] }), null));
    assert.equal((await store.webhooks.listForApp(app.id)).map((w) => w.id), [first.id, second.id]);
    const updated = await store.webhooks.update(first.id, { url: 'https://other.example.com/', events: ['sign.revoked'], filters: {} }, 1_500);
    assert.equal(updated, { ...first, url: 'https://other.example.com/', events: ['sign.revoked'], filters: {} });
    assert.is(await store.webhooks.update(randomUUID(), { active: true }, 1_500), null);
    assert.is(await store.webhooks.delete(first.id), true);
    assert.is(await store.webhooks.delete(first.id), false);
    assert.is(await store.webhooks.get(first.id), null);
    assert.is(await storeErrorOf(StoreNotFoundError, store.webhooks.create(webhook({ appId: randomUUID() }), null)), 'app');
  });

  test('the limit counts the organization across its apps; concurrent creates never pass it', async ({ store }) => {
    const { u, org, webhook } = await appOf(store);
    const other = await store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: u.id, name: 'B', redirectUris: [], scopes: [] });
    created(await store.webhooks.create(webhook(), 2));
    created(await store.webhooks.create(webhook({ appId: other.id }), 2));
    assert.is(await store.webhooks.create(webhook(), 2), 'limit_reached');
    created(await store.webhooks.create(webhook(), null));
    const results = await Promise.all(Array.from({ length: 12 }, () => store.webhooks.create(webhook(), 8)));
    assert.is(results.filter((r) => r !== 'limit_reached').length, 5, '3 stored, 5 more up to 8');
  });

  test('routing: each outbox row once, to the webhooks chosen among the app\'s active ones', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    const a = created(await store.webhooks.create(webhook(), null));
    const b = created(await store.webhooks.create(webhook({ createdAt: 2_000 }), null));
    const off = created(await store.webhooks.create(webhook({ createdAt: 3_000 }), null));
    await store.webhooks.update(off.id, { active: false }, 4_000);
    const stranger = await appOf(store);
    created(await store.webhooks.create(stranger.webhook(), null));
    await emit(store, u.id, app.id, 'sign.created', { file_hash: 'x' });
    await emit(store, u.id, app.id, 'sign.revoked', { action_hash: 'y' });
    const offered: [string, string[]][] = [];
    const routed = await store.webhooks.routeEvents(100, 5_000, (event, webhooks) => {
      offered.push([event.type, webhooks.map((w) => w.id)]);
      return event.type === 'sign.created' ? webhooks : webhooks.filter((w) => w.id === b.id);
    });
    assert.is(routed, 2);
    assert.equal(offered, [['sign.created', [a.id, b.id]], ['sign.revoked', [a.id, b.id]]], 'oldest first; only this app\'s active webhooks');
    assert.is(await store.webhooks.routeEvents(100, 6_000, () => assert.unreachable('routed twice') as never), 0);
    assert.equal(await store.webhooks.backlog(), { events: 0, deliveries: 3 });
    const claimed = await store.webhooks.claimDeliveries(5_000, 20_000, 10);
    assert.equal(claimed.map((d) => [d.webhookId, d.event.type, d.event.payload, d.attempts, d.url, d.sealedSecret]).sort(), [
      [a.id, 'sign.created', { file_hash: 'x' }, 1, 'https://hooks.example.com/in', 'sealed'],
      [b.id, 'sign.created', { file_hash: 'x' }, 1, 'https://hooks.example.com/in', 'sealed'],
    ].sort(), "one at a time per webhook: b's second waits");
    for (const d of claimed) assert.is(await store.webhooks.finishDelivery(d.id, { ok: true, at: 7_000 }, 10), 'delivered');
    const [next] = await store.webhooks.claimDeliveries(7_000, 20_000, 10);
    assert.equal([next.webhookId, next.event.type], [b.id, 'sign.revoked']);
    assert.ok(!claimed.some((d) => d.id === next.id), 'a delivery id per event and webhook');
    assert.is((await store.webhooks.get(a.id))!.lastTriggeredAt, 7_000);
    assert.is(await store.webhooks.finishDelivery(next.id, { ok: true, at: 8_000 }, 10), 'delivered');
  });

  test('a lease: not claimed again before it ends; then the same delivery, attempts counted; a finished one is gone', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    created(await store.webhooks.create(webhook(), null));
    await emit(store, u.id, app.id, 'sign.created', {});
    await store.webhooks.routeEvents(10, 1_000, (_e, ws) => ws);
    const [first] = await store.webhooks.claimDeliveries(1_000, 16_000, 10);
    assert.equal(await store.webhooks.claimDeliveries(15_999, 30_000, 10), []);
    const [again] = await store.webhooks.claimDeliveries(16_000, 31_000, 10);
    assert.equal([again.id, again.attempts], [first.id, 2]);
    assert.is(await store.webhooks.finishDelivery(first.id, { ok: true, at: 17_000 }, 10), 'delivered');
    assert.is(await store.webhooks.finishDelivery(first.id, { ok: false, at: 17_001 }, 10), 'gone');
    assert.equal(await store.webhooks.claimDeliveries(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 10), []);
  });

  test('renewDelivery: the current claim extends its lease; a claim taken over, finished or deleted is refused (issue 25 item 11)', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    const w = created(await store.webhooks.create(webhook(), null));
    await emit(store, u.id, app.id, 'sign.created', {});
    await store.webhooks.routeEvents(10, 1_000, (_e, ws) => ws);
    const [first] = await store.webhooks.claimDeliveries(1_000, 16_000, 10);
    assert.is(await store.webhooks.renewDelivery(first.id, first.attempts, 40_000), true);
    assert.equal(await store.webhooks.claimDeliveries(39_999, 60_000, 10), [], 'the renewed lease holds past the first one');
    // a sender that stalled: its lease ran out and another claim took the delivery
    const [again] = await store.webhooks.claimDeliveries(40_000, 55_000, 10);
    assert.equal([again.id, again.attempts], [first.id, first.attempts + 1]);
    assert.is(await store.webhooks.renewDelivery(first.id, first.attempts, 90_000), false, 'an old claim is refused');
    assert.equal(await store.webhooks.claimDeliveries(54_999, 90_000, 10), [], 'and did not move the current lease');
    assert.is(await store.webhooks.renewDelivery(again.id, again.attempts, 70_000), true);
    assert.is(await store.webhooks.finishDelivery(first.id, { ok: false, at: 59_000 }, 10, first.attempts), 'gone', 'an old claim records nothing');
    assert.equal([(await store.webhooks.get(w.id))!.failureCount, (await store.webhooks.backlog()).deliveries], [0, 1]);
    assert.is(await store.webhooks.finishDelivery(again.id, { ok: true, at: 60_000 }, 10, again.attempts), 'delivered');
    assert.is(await store.webhooks.renewDelivery(again.id, again.attempts, 80_000), false, 'finished');
    assert.is(await store.webhooks.renewDelivery(randomUUID(), 1, 80_000), false, 'unknown');
    await emit(store, u.id, app.id, 'sign.created', {});
    await store.webhooks.routeEvents(10, 61_000, (_e, ws) => ws);
    const [next] = await store.webhooks.claimDeliveries(61_000, 76_000, 10);
    await store.webhooks.delete(w.id);
    assert.is(await store.webhooks.renewDelivery(next.id, next.attempts, 80_000), false, 'its webhook deleted');
  });

  test('a renewal racing a claim after the lease ran out: exactly one of them wins', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    const w = created(await store.webhooks.create(webhook(), null));
    for (let i = 0; i < 10; i++) await emit(store, u.id, app.id, 'sign.created', { n: i });
    await store.webhooks.routeEvents(100, 1_000, (_e, ws) => ws);
    let now = 1_000;
    let [held] = await store.webhooks.claimDeliveries(now, now + 100, 10);
    for (let round = 0; round < 10; round++) {
      now += 200; // the lease has run out
      const [claimed, renewed] = await Promise.all([
        store.webhooks.claimDeliveries(now, now + 100, 10),
        store.webhooks.renewDelivery(held.id, held.attempts, now + 100),
      ]);
      assert.ok((claimed.length === 1) !== renewed, `round ${round}: claimed ${claimed.length}, renewed ${renewed}`);
      if (claimed.length === 1) {
        assert.equal([claimed[0].id, claimed[0].attempts], [held.id, held.attempts + 1]);
        held = claimed[0];
      }
    }
    await store.webhooks.delete(w.id); // nothing left for the next tests to claim
  });

  test('failures count; the 10th in a row disables and drops what is pending; a 2xx resets; PUT active: true re-enables', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    const w = created(await store.webhooks.create(webhook(), null));
    for (let i = 0; i < 14; i++) await emit(store, u.id, app.id, 'sign.created', { n: i });
    await store.webhooks.routeEvents(100, 1_000, (_e, ws) => ws);
    const outcomes: string[] = [];
    const sent: unknown[] = [];
    for (let i = 0; i < 14; i++) {
      const [d] = await store.webhooks.claimDeliveries(2_000 + i, 100_000, 10);
      if (!d) break;
      sent.push(d.event.payload.n);
      // the third succeeds: the count starts again from there
      outcomes.push(await store.webhooks.finishDelivery(d.id, { ok: i === 2, at: 2_000 + i }, 10));
    }
    assert.equal(sent, Array.from({ length: 13 }, (_, i) => i), 'in order, one at a time; nothing after the disable');
    assert.equal(outcomes, ['failed', 'failed', 'delivered', ...Array(9).fill('failed'), 'disabled']);
    const off = (await store.webhooks.get(w.id))!;
    assert.equal([off.active, off.failureCount, off.lastTriggeredAt, off.lastFailureAt], [false, 10, 2_002, 2_012]);
    assert.equal(await store.webhooks.backlog(), { events: 0, deliveries: 0 }, 'the 14th was dropped');
    const on = (await store.webhooks.update(w.id, { active: true }, 2_900))!;
    assert.equal([on.active, on.failureCount, on.activeSince], [true, 0, 2_900], 're-enabled now');
    assert.is((await store.webhooks.update(w.id, { active: true }, 2_950))!.activeSince, 2_900, 'an active one stays active since then');
    await emit(store, u.id, app.id, 'sign.created', { n: 'after' });
    await store.webhooks.routeEvents(100, 3_000, (_e, ws) => ws);
    const [d] = await store.webhooks.claimDeliveries(3_000, 100_000, 10);
    assert.equal(d.event.payload, { n: 'after' });
    await store.webhooks.update(w.id, { active: false }, 3_002);
    assert.is(await store.webhooks.finishDelivery(d.id, { ok: true, at: 3_001 }, 10), 'gone', 'disabling by PUT drops the pending one');
    assert.is(await store.webhooks.delete(w.id), true);
  });

  test('concurrent claims never hand out the same delivery twice', async ({ store }) => {
    const { u, app, webhook } = await appOf(store);
    for (let i = 0; i < 20; i++) created(await store.webhooks.create(webhook({ createdAt: i }), null));
    await emit(store, u.id, app.id, 'sign.created', {});
    await Promise.all([1, 2, 3].map(() => store.webhooks.routeEvents(10, 1_000, (_e, ws) => ws)));
    assert.equal(await store.webhooks.backlog(), { events: 0, deliveries: 20 });
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.webhooks.claimDeliveries(1_000, 60_000, 4)));
    const ids = claims.flat().map((d) => d.id);
    assert.is(ids.length, 20);
    assert.is(new Set(ids).size, 20);
  });

  test.run();
}

// ---------------------------------------------------------------- OAuth grants, codes and tokens

function oauthContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: oauth`, open);
  const DAY = 86_400_000;

  /** A user, an app of another owner, and builders of codes and tokens to store. */
  async function setup(store: Store) {
    const user = await newUser(store, { email: `u${randomUUID()}@example.com`, displayName: 'Ana' });
    const owner = await newUser(store);
    const app = await store.accounts.createApp({ id: randomUUID(), orgId: null, ownerId: owner.id, name: 'Gallery', redirectUris: ['https://app.example/cb'], scopes: ['openid', 'email', 'sign'] });
    const code = (over: Partial<{ hash: string; expiresAt: number; scopes: string[] }> = {}) => ({
      hash: hex(), redirectUri: 'https://app.example/cb', scopes: ['openid', 'sign'], codeChallenge: 'c'.repeat(43), expiresAt: Date.now() + 600_000, ...over,
    });
    const tokens = () => ({ access: { hash: hex(), expiresAt: Date.now() + DAY }, refresh: { hash: hex(), expiresAt: Date.now() + 30 * DAY } });
    return { user, app, code, tokens };
  }

  async function consented(store: Store, s: Awaited<ReturnType<typeof setup>>, scopes = ['openid', 'sign']) {
    const code = s.code({ scopes });
    const grant = await store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: s.app.id, scopes, code, events: [], now: Date.now() });
    return { grant, code };
  }

  const eventsOf = async (store: Store, type: string) => (await outbox(store)).filter((e) => e.type === type);

  test('consent: a grant whose scopes grow, the shared e-mail kept until replaced, its event written with it', async ({ store }) => {
    const s = await setup(store);
    const event = { appId: s.app.id, type: 'oauth.authorized', payload: { user_id: s.user.id, scopes: ['openid', 'email'] } };
    const first = await store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: s.app.id, scopes: ['openid', 'email'], sharedEmail: 'ana@example.com', code: s.code(), events: [event], now: 1_000 });
    assert.equal(first.scopes, ['openid', 'email']);
    assert.is(first.sharedEmail, 'ana@example.com');
    const second = await store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: s.app.id, scopes: ['openid', 'sign'], code: s.code(), events: [], now: 2_000 });
    assert.is(second.id, first.id, 'one grant per user and app');
    assert.equal(second.scopes, ['openid', 'email', 'sign']);
    assert.is(second.sharedEmail, 'ana@example.com', 'kept when not given');
    assert.is(second.createdAt, 1_000);
    assert.is(second.updatedAt, 2_000);
    assert.equal(await store.oauth.getGrant(s.user.id, s.app.id), second);
    const written = await eventsOf(store, 'oauth.authorized');
    assert.equal(written.map((e) => [e.appId, e.payload]), [[s.app.id, event.payload]]);
    assert.is(await storeErrorOf(StoreNotFoundError, store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: randomUUID(), scopes: ['openid'], code: s.code(), events: [], now: 1 })), 'app');
    assert.is(await storeErrorOf(StoreNotFoundError, store.oauth.consent({ grantId: randomUUID(), userId: randomUUID(), appId: s.app.id, scopes: ['openid'], code: s.code(), events: [], now: 1 })), 'user');
    assert.is(await store.oauth.createCode(randomUUID(), s.code(), Date.now()), false, 'no such grant');
    assert.is(await store.oauth.createCode(first.id, s.code(), Date.now()), true);
  });

  test('a code is redeemed once: the second redemption revokes what the first issued; a refused one is used up', async ({ store }) => {
    const s = await setup(store);
    const { grant, code } = await consented(store, s);
    const t = s.tokens();
    const seen: string[] = [];
    assert.is(await store.oauth.userOfCode(code.hash), s.user.id, 'whose code, before it is used');
    const issued = await store.oauth.redeemCode(code.hash, Date.now(), (c) => {
      seen.push(c.redirectUri);
      return null;
    }, t);
    assert.is(issued.outcome, 'issued');
    assert.equal(seen, ['https://app.example/cb']);
    const stored = (issued as { code: { userId: string; appId: string; grantId: string; scopes: string[]; codeChallenge: string } }).code;
    assert.equal([stored.userId, stored.appId, stored.grantId, stored.scopes, stored.codeChallenge], [s.user.id, s.app.id, grant.id, ['openid', 'sign'], 'c'.repeat(43)]);
    const access = await store.oauth.findAccessToken(t.access.hash, Date.now());
    assert.equal(access && [access.userId, access.appId, access.scopes], [s.user.id, s.app.id, ['openid', 'sign']]);
    assert.is((await store.oauth.getRefreshToken(t.refresh.hash))?.appId, s.app.id);

    assert.is((await store.oauth.redeemCode(code.hash, Date.now(), () => null, s.tokens())).outcome, 'replayed');
    assert.is(await store.oauth.findAccessToken(t.access.hash, Date.now()), null, 'the access token of the replayed code is gone');
    assert.is(await store.oauth.getRefreshToken(t.refresh.hash), null, 'and its refresh token');
    assert.is((await store.oauth.redeemCode(hex(), Date.now(), () => null, s.tokens())).outcome, 'unknown');
    assert.equal([await store.oauth.userOfCode(code.hash), await store.oauth.userOfCode(hex())], [s.user.id, null], 'a used code still names its user; an unknown one none');

    const other = s.code();
    assert.ok(await store.oauth.createCode(grant.id, other, Date.now()));
    const refusedTokens = s.tokens();
    const refused = await store.oauth.redeemCode(other.hash, Date.now(), () => 'wrong verifier', refusedTokens);
    assert.equal([refused.outcome, (refused as { problem?: string }).problem], ['refused', 'wrong verifier']);
    assert.is(await store.oauth.findAccessToken(refusedTokens.access.hash, Date.now()), null, 'nothing issued');
    assert.is((await store.oauth.redeemCode(other.hash, Date.now(), () => null, s.tokens())).outcome, 'replayed', 'a refused code is used up');
  });

  test('concurrent redemptions of one code: exactly one issues tokens', async ({ store }) => {
    const s = await setup(store);
    const { code } = await consented(store, s);
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => store.oauth.redeemCode(code.hash, Date.now(), () => null, s.tokens())));
    assert.equal(outcomes.map((o) => o.outcome).sort(), ['issued', 'replayed', 'replayed', 'replayed', 'replayed', 'replayed']);
  });

  test('refresh: new access tokens while the refresh token stands; revocation is the owning app\'s, ends them and writes its event once', async ({ store }) => {
    const s = await setup(store);
    const { code } = await consented(store, s);
    const t = s.tokens();
    await store.oauth.redeemCode(code.hash, Date.now(), () => null, t);
    const second = { hash: hex(), expiresAt: Date.now() + DAY, scopes: ['openid'] };
    assert.is(await store.oauth.addAccessToken(t.refresh.hash, second, Date.now()), true);
    assert.equal((await store.oauth.findAccessToken(second.hash, Date.now()))?.scopes, ['openid']);
    assert.is(await store.oauth.addAccessToken(hex(), { hash: hex(), expiresAt: Date.now() + DAY, scopes: ['openid'] }, Date.now()), false);

    const event = (token: { appId: string }) => [{ appId: token.appId, type: 'oauth.token.revoked', payload: { token_type: 'refresh_token' } }];
    assert.is(await store.oauth.revokeRefreshToken(t.refresh.hash, randomUUID(), Date.now(), event), false, 'another client\'s');
    assert.ok(await store.oauth.findAccessToken(t.access.hash, Date.now()), 'left alone');
    assert.is(await store.oauth.revokeRefreshToken(t.refresh.hash, s.app.id, Date.now(), event), true);
    assert.is(await store.oauth.findAccessToken(t.access.hash, Date.now()), null);
    assert.is(await store.oauth.findAccessToken(second.hash, Date.now()), null, 'every access token of the refresh token ends');
    assert.ok((await store.oauth.getRefreshToken(t.refresh.hash))?.revokedAt);
    assert.is(await store.oauth.addAccessToken(t.refresh.hash, { hash: hex(), expiresAt: Date.now() + DAY, scopes: ['openid'] }, Date.now()), false);
    assert.is(await store.oauth.revokeRefreshToken(t.refresh.hash, s.app.id, Date.now(), event), false, 'once');
    assert.equal((await eventsOf(store, 'oauth.token.revoked')).map((e) => [e.appId, e.payload]), [[s.app.id, { token_type: 'refresh_token' }]]);
  });

  test('an expired access token is not found', async ({ store }) => {
    const s = await setup(store);
    const { code } = await consented(store, s);
    const t = s.tokens();
    t.access.expiresAt = Date.now() + 1_000;
    await store.oauth.redeemCode(code.hash, Date.now(), () => null, t);
    assert.ok(await store.oauth.findAccessToken(t.access.hash, Date.now()));
    assert.is(await store.oauth.findAccessToken(t.access.hash, Date.now() + 1_000), null);
  });

  test('a changed display name writes user.profile.updated for each app holding a live refresh token, in its transaction', async ({ store }) => {
    const s = await setup(store);
    const { code } = await consented(store, s);
    const t = s.tokens();
    await store.oauth.redeemCode(code.hash, Date.now(), () => null, t);
    const second = await setup(store); // another app of another owner, revoked below
    const other = await store.accounts.createApp({ id: randomUUID(), orgId: null, ownerId: second.user.id, name: 'Other', redirectUris: [], scopes: ['openid'] });
    const otherCode = s.code();
    await store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: other.id, scopes: ['openid'], code: otherCode, events: [], now: Date.now() });
    const otherTokens = s.tokens();
    await store.oauth.redeemCode(otherCode.hash, Date.now(), () => null, otherTokens);
    await store.oauth.revokeRefreshToken(otherTokens.refresh.hash, other.id, Date.now(), () => []);

    await store.accounts.updateUser(s.user.id, { displayName: 'Ana Lima' });
    await store.accounts.updateUser(s.user.id, { displayName: 'Ana Lima' }); // unchanged: nothing
    await store.accounts.updateUser(s.user.id, { username: `ana${randomUUID().slice(0, 8)}` }); // not the display name
    const events = await eventsOf(store, 'user.profile.updated');
    assert.equal(events.map((e) => [e.appId, e.payload]), [[s.app.id, { user_id: s.user.id, fields_changed: ['display_name'] }]]);
  });

  test('the user\'s grants, and deleting one ends its tokens and its shared e-mail', async ({ store }) => {
    const s = await setup(store);
    const grant = await store.oauth.consent({ grantId: randomUUID(), userId: s.user.id, appId: s.app.id, scopes: ['openid', 'email'], sharedEmail: 'ana@example.com', code: s.code(), events: [], now: 5 });
    const code = s.code();
    await store.oauth.createCode(grant.id, code, Date.now());
    const t = s.tokens();
    await store.oauth.redeemCode(code.hash, Date.now(), () => null, t);
    const listed = await store.oauth.listGrants(s.user.id);
    assert.equal(listed.map((g) => [g.appId, g.appName, g.scopes, g.sharedEmail]), [[s.app.id, 'Gallery', ['openid', 'email'], 'ana@example.com']]);
    assert.is(await store.oauth.deleteGrant(s.user.id, randomUUID()), false);
    assert.is(await store.oauth.deleteGrant(s.user.id, s.app.id), true);
    assert.is(await store.oauth.getGrant(s.user.id, s.app.id), null);
    assert.is(await store.oauth.findAccessToken(t.access.hash, Date.now()), null);
    assert.is(await store.oauth.getRefreshToken(t.refresh.hash), null);
    assert.equal(await store.oauth.listGrants(s.user.id), []);
  });

  test.run();
}

// ---------------------------------------------------------------- e-mail verification links

function emailVerificationsContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: e-mail verification`, open);
  const DAY = 24 * 3600 * 1000;

  test('a link verifies its user\'s address once; then used; expired at its time; unknown otherwise', async ({ store }) => {
    const user = await newUser(store, { email: 'verify-me@example.com' });
    assert.is(user.emailVerified, false);
    await store.emailVerifications.create({ hash: 'v1', userId: user.id, email: 'verify-me@example.com', createdAt: 1_000, expiresAt: 1_000 + DAY }, 0);
    await store.emailVerifications.create({ hash: 'v2', userId: user.id, email: 'verify-me@example.com', createdAt: 1_000, expiresAt: 2_000 }, 0);
    assert.equal(await store.emailVerifications.consume('v2', 2_000), { outcome: 'expired' }, 'expired at expiresAt');
    assert.is((await store.accounts.getUser(user.id))!.emailVerified, false);
    assert.equal(await store.emailVerifications.consume('v1', 5_000), { outcome: 'verified', userId: user.id, email: 'verify-me@example.com' });
    assert.is((await store.accounts.getUser(user.id))!.emailVerified, true);
    assert.equal(await store.emailVerifications.consume('v1', 5_001), { outcome: 'used' });
    assert.equal(await store.emailVerifications.consume('nope', 5_000), { outcome: 'unknown' });
  });

  test('bound to the address it was sent to; an unknown user is typed; old links purged on the next create', async ({ store }) => {
    const user = await newUser(store, { email: 'Mixed@Example.com' });
    await store.emailVerifications.create({ hash: 's1', userId: user.id, email: 'old@example.com', createdAt: 1_000, expiresAt: 1_000 + DAY }, 0);
    assert.equal(await store.emailVerifications.consume('s1', 2_000), { outcome: 'stale' });
    assert.is((await store.accounts.getUser(user.id))!.emailVerified, false);
    // the user row's address in any case matches the lowercase one a link was sent to
    await store.emailVerifications.create({ hash: 's2', userId: user.id, email: 'mixed@example.com', createdAt: 1_000, expiresAt: 1_000 + DAY }, 0);
    assert.is((await store.emailVerifications.consume('s2', 2_000)).outcome, 'verified');
    assert.is(await storeErrorOf(StoreNotFoundError, store.emailVerifications.create({ hash: 's3', userId: randomUUID(), email: 'x@example.com', createdAt: 1, expiresAt: 2 }, 0)), 'user');
    // links that expired before purgeBefore are gone (unknown); later ones stay (used)
    await store.emailVerifications.create({ hash: 's4', userId: user.id, email: 'mixed@example.com', createdAt: 10 * DAY, expiresAt: 11 * DAY }, 1_000 + DAY + 1);
    assert.equal(await store.emailVerifications.consume('s1', 10 * DAY), { outcome: 'unknown' }, 'purged');
    assert.equal(await store.emailVerifications.consume('s2', 10 * DAY), { outcome: 'unknown' }, 'purged');
    assert.is((await store.emailVerifications.consume('s4', 10 * DAY)).outcome, 'verified');
  });

  test('concurrent uses of one link: exactly one verifies, the others find it used', async ({ store }) => {
    const user = await newUser(store, { email: 'race@example.com' });
    await store.emailVerifications.create({ hash: 'r1', userId: user.id, email: 'race@example.com', createdAt: 1_000, expiresAt: 1_000 + DAY }, 0);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => store.emailVerifications.consume('r1', 2_000)));
    assert.equal(outcomes.map((o) => o.outcome).sort(), ['used', 'used', 'used', 'used', 'used', 'used', 'used', 'verified']);
  });

  test.run();
}

// ---------------------------------------------------------------- transparency log (issue 27)

function transparencyLogContract(name: string, open: OpenStore): void {
  const test = storeSuite(`${name} store: transparency log`, open);
  const entryOf = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as { kind: string; action_hash: string };

  test('every stored event is one entry, in order, with the writes of its transaction; a refused write appends none', async ({ store }) => {
    const before = await store.log.size();
    const user = await newUser(store);
    const rows = [rowOf(user.id, recordOf(agentKey())), rowOf(user.id, recordOf(agentKey()))];
    await store.signatures.insertSignatures(rows, personalCharge(user.id));
    // a refused batch (over quota) and a conflicting one write no entry
    await store.signatures.insertSignatures([rowOf(user.id, recordOf(agentKey()))], personalCharge(user.id, 0)).catch(() => undefined);
    await storeErrorOf(StoreConflictError, store.signatures.insertSignatures([rowOf(user.id, recordOf(agentKey())), rows[0]!], personalCharge(user.id)));
    const rec = rows[1]!;
    assert.is(await store.signatures.insertRevocation({ action_hash: rec.action_hash, reason: null, revoked_at: 1, signer: rec.record.signer, signature: 'c2ln', source: 'vault', appId: null }), 'revoked');
    assert.is(await store.signatures.setThumbnail(rows[0]!.action_hash, 'data:image/png;base64,AAAA', 2), true);
    assert.is(await store.signatures.setThumbnail(hex(), 'data:image/png;base64,AAAA', 3), false);
    assert.is(await store.log.size(), before + 4);
    const entries = (await store.log.entries(before, before + 4)).map(entryOf);
    assert.equal(entries.map((e) => [e.kind, e.action_hash]), [
      ['record', rows[0]!.action_hash], ['record', rec.action_hash], ['revocation', rec.action_hash], ['thumbnail', rows[0]!.action_hash],
    ]);
    assert.is(await store.log.recordIndex(rec.action_hash), before + 1);
    assert.is(await store.log.recordIndex(hex()), null);
    assert.equal([...(await store.log.recordIndexes([rows[0]!.action_hash, hex()]))], [[rows[0]!.action_hash, before]]);
    assert.is(await store.log.backfill(), 0, 'the backfill ran once, in the first write (which left its own rows to itself)');
  });

  test('concurrent signs get distinct indexes 0..n-1 in the order their records were stored', async ({ store }) => {
    const user = await newUser(store);
    const before = await store.log.size();
    const rows = Array.from({ length: 20 }, () => rowOf(user.id, recordOf(agentKey())));
    await Promise.all(rows.map((r) => store.signatures.insertSignatures([r], personalCharge(user.id))));
    const entries = (await store.log.entries(before, before + 20)).map(entryOf);
    assert.is(entries.length, 20);
    assert.equal(new Set(entries.map((e) => e.action_hash)), new Set(rows.map((r) => r.action_hash)));
    const seqs = await Promise.all(entries.map(async (e) => (await store.signatures.get(e.action_hash))!.seq));
    assert.equal(seqs, [...seqs].sort((a, b) => a - b), 'index order is seq (commit) order');
  });

  test('checkpoints only grow; tiles are kept at their widest; cosigning replaces the note of that size only', async ({ store }) => {
    const tile = (width: number, fill: number) => ({ level: 0, index: 7, width, data: new Uint8Array(width * 32).fill(fill) });
    assert.is(await store.log.saveCheckpoint(10, [tile(10, 1)], 'note 10'), true);
    assert.is(await store.log.saveCheckpoint(10, [tile(10, 2)], 'again'), false);
    assert.is(await store.log.saveCheckpoint(5, [tile(5, 3)], 'older'), false);
    assert.equal(await store.log.latestCheckpoint(), { size: 10, note: 'note 10' });
    assert.is((await store.log.readTiles([{ level: 0, index: 7, width: 10 }]))[0]![0], 1, 'a refused checkpoint wrote no tile');
    assert.is(await store.log.saveCheckpoint(20, [tile(20, 4)], 'note 20'), true);
    const [narrow, wide, missing] = await store.log.readTiles([{ level: 0, index: 7, width: 3 }, { level: 0, index: 7, width: 20 }, { level: 1, index: 0, width: 1 }]);
    assert.is(narrow!.length, 20 * 32);
    assert.is(wide![0], 4);
    assert.is(missing, null);
    assert.equal(await store.log.readTiles([{ level: 0, index: 7, width: 21 }]), [null]);
    assert.is(await store.log.cosignCheckpoint(10, 'stale'), false);
    assert.is(await store.log.cosignCheckpoint(20, 'note 20 cosigned'), true);
    assert.equal(await store.log.latestCheckpoint(), { size: 20, note: 'note 20 cosigned' });
  });

  test.run();
}
