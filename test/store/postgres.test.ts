// The store contract (test/store/contract.ts) on the PostgreSQL engine: one throwaway
// PostgreSQL for the file, a fresh database per suite. Then what only a shared engine
// has: nodes migrating together, a reader following the feed while several
// connections write, other nodes' writes waking onRemote (also after the LISTEN
// connection is dropped). Skipped (and why) without the PostgreSQL binaries; a failure
// under CI=true.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { SignatureRecord } from 'provenant';
import { openPostgresStore, type PgStore } from '../../server/src/store/postgres/index.js';
import type { Change, NewSignature, Store } from '../../server/src/store/index.js';
import { storeContract } from './contract.js';
import { runWithPostgres, sharedPostgres } from '../helpers/postgres.js';
import { unlimitedCharge } from '../helpers/charge.js';

const hex = () => randomBytes(32).toString('hex');

async function newUserId(store: Store): Promise<string> {
  const user = await store.accounts.createAccount({ user: { id: randomUUID(), createdAt: Date.now() }, personalOrg: { id: randomUUID(), name: 'P' } });
  return user.id;
}

function rowOf(userId: string): NewSignature {
  const record: SignatureRecord = {
    file_hash: hex(), signer: `uhCAk${randomBytes(36).toString('base64url')}`, signed_at: Date.now(), intent: 'Authorship', ai_generation: null,
    content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
  };
  return { record, signature: randomBytes(64).toString('base64'), action_hash: hex(), userId, appId: null, source: 'vault' };
}


/** Resolves once `listener` registration is called, or rejects after `ms`. */
function woken(subscribe: (listener: () => void) => () => void, ms = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`not woken within ${ms} ms`));
    }, ms);
    const off = subscribe(() => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

const shared = suite<{ url: string; stores: PgStore[] }>('postgres engine: several nodes on one database');

shared.before(async (ctx) => {
  ctx.url = await (await sharedPostgres()).createDatabase();
  // three nodes starting together: the migrations lock lets one apply, the others wait
  ctx.stores = await Promise.all([0, 1, 2].map(() => openPostgresStore(ctx.url)));
});
shared.after(async ({ stores }) => {
  for (const store of stores ?? []) await store.close();
});

shared('nodes started together applied each migration once', async ({ url }) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: number; n: string }>('SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version');
    assert.ok(rows.length >= 2, 'the schema and later migrations');
    assert.ok(rows.every((r) => r.n === '1'));
    assert.is(rows[0].version, 1);
  } finally {
    await client.end();
  }
});

shared('a reader following since() while three nodes write concurrently reads every change exactly once', async ({ stores }) => {
  const userIds = await Promise.all(stores.map(newUserId));
  const start = await stores[0].feed.latest();
  const rows = userIds.flatMap((userId) => Array.from({ length: 40 }, () => rowOf(userId)));
  let writing = true;
  const seen: Change[] = [];
  const reader = (async () => {
    let cursor = start;
    // a cursor moved past a seq that commits later would never read it: the feed lock prevents that
    for (;;) {
      // read before the query: an empty answer ends the loop only if every write had
      // committed before it started (a query in flight when the last write commits may
      // not see it)
      const allCommitted = !writing;
      const batch = await stores[2].feed.since(cursor, 1000);
      seen.push(...batch);
      if (batch.length > 0) cursor = batch[batch.length - 1].seq;
      else if (allCommitted) break;
    }
  })();
  await Promise.all(rows.map((row, i) => stores[i % 3].signatures.insertSignatures([row], unlimitedCharge(row.userId))));
  writing = false;
  await reader;
  const hashes = seen.map((c) => (c as { action_hash: string }).action_hash);
  assert.is(hashes.length, rows.length, 'no change missed or read twice');
  assert.equal(new Set(hashes), new Set(rows.map((r) => r.action_hash)));
});

shared("another node's write wakes onRemote (not onAppend); its own does not wake its onRemote", async ({ stores }) => {
  const [a, b] = stores;
  const userId = await newUserId(a);
  const cursor = await b.feed.latest();
  let localWakesOnB = 0;
  const offLocal = b.feed.onAppend(() => localWakesOnB++);
  const remote = woken((l) => b.feed.onRemote(l));
  const row = rowOf(userId);
  await a.signatures.insertSignatures([row], unlimitedCharge(userId));
  await remote;
  offLocal();
  assert.is(localWakesOnB, 0);
  assert.equal((await b.feed.since(cursor, 10)).map((c) => (c as { action_hash: string }).action_hash), [row.action_hash]);

  let ownRemoteWakes = 0;
  const offOwn = a.feed.onRemote(() => ownRemoteWakes++);
  const bSaw = woken((l) => b.feed.onRemote(l));
  await a.signatures.insertSignatures([rowOf(userId)], unlimitedCharge(userId));
  await bSaw; // by then a's own notification has come back to a, too
  offOwn();
  assert.is(ownRemoteWakes, 0, 'a node ignores its own notifications');
});

shared('the LISTEN connection dropped: it reconnects and wakes onRemote, so changes made meanwhile are read', async ({ url, stores }) => {
  const [a, , c] = stores;
  const userId = await newUserId(a);
  const cursor = await c.feed.latest();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // every LISTEN connection of this database but a's goes (c's among them)
    const wake = woken((l) => c.feed.onRemote(l), 10_000);
    const dropped = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    );
    assert.ok((dropped.rowCount ?? 0) >= 1, 'LISTEN connections found');
    const row = rowOf(userId);
    await a.signatures.insertSignatures([row], unlimitedCharge(userId));
    await wake;
    const changes = await c.feed.since(cursor, 10);
    assert.ok(changes.some((ch) => (ch as { action_hash: string }).action_hash === row.action_hash));
    for (let i = 0; i < 100 && !c.listening; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(c.listening, 'listening again');
  } finally {
    await admin.end();
  }
});

shared('ping: degraded while the LISTEN connection cannot come back, ok once it has', async ({ url, stores }) => {
  const b = stores[1];
  // the test before dropped b's LISTEN connection too: it is back after a backoff
  for (let i = 0; i < 100 && !b.listening; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await b.ping(), {});
  const database = new URL(url).pathname.slice(1);
  // from another database: a database cannot close itself to new connections
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.href });
  await admin.connect();
  try {
    // new connections refused (b's pool keeps the idle one ping just used)
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`, [database]);
    for (let i = 0; i < 100 && b.listening; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(b.listening, false);
    assert.match((await b.ping()).degraded ?? '', /not listening for other nodes' changes/);
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
    for (let i = 0; i < 300 && !b.listening; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await b.ping(), {});
  } finally {
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin.end();
  }
});

runWithPostgres(() => {
  storeContract('postgres', async () => {
    const url = await (await sharedPostgres()).createDatabase();
    return { store: await openPostgresStore(url), cleanup: async () => undefined };
  });
  shared.run();
});
