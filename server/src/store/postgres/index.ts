// The PostgreSQL engine (PROVENANT_DATABASE_URL=postgres://...): the store of several
// nodes that share one database. Every interface of ../types.ts, held to the same
// contract as SQLite (test/store/contract.ts, run by test/store/postgres.test.ts).
//
// Layout, one file per store area: db.ts (the pool, transactions, typed errors, the
// advisory locks, migrations), feed.ts (the change feed, its commit order and
// LISTEN/NOTIFY), accounts.ts, signatures.ts, contacts.ts.
//
// To add a store area: its interface in ../types.ts and a field on Store; a file here,
// `createPg<Area>Store(db[, feed])` using db.get/all/run for reads and db.transaction
// (or feed.write, when the write changes verification answers and appends changes) for
// every write, one transaction per method, parameters as $1, $2, ...; unique
// constraints named in the migration and listed in db.ts UNIQUE_WHAT; wire it in
// pgStore() below; the same area on SQLite; its tests in test/store/contract.ts.
// To add a migration: migrations/NNN_name.sql with the next number reserved for you
// (decisions in the brief: 002 oauth, 003 webhooks, 004 public surfaces), plain DDL
// (it runs in one transaction with its schema_migrations row, under the migrations
// lock); never edit one that has shipped.
import type { MigrationListener } from '../sqlite/db.js';
import type { Store } from '../types.js';
import { createPgAccountsStore } from './accounts.js';
import { createPgContactStore } from './contacts.js';
import { createPgEmailVerificationStore } from './email-verifications.js';
import { PgDb } from './db.js';
import { PgChangeFeed } from './feed.js';
import { createPgOAuthStore } from './oauth.js';
import { createPgSignaturesStore } from './signatures.js';
import { createPgWebhooksStore } from './webhooks.js';

/** The PostgreSQL store as Store, plus what /healthz shows of it. */
export interface PgStore extends Store {
  readonly engine: 'postgres';
  /** The feed's LISTEN connection is up (other nodes' writes wake this node). */
  readonly listening: boolean;
}

function pgStore(db: PgDb, feed: PgChangeFeed): PgStore {
  return {
    engine: 'postgres',
    accounts: createPgAccountsStore(db, feed),
    signatures: createPgSignaturesStore(db, feed),
    contacts: createPgContactStore(db),
    emailVerifications: createPgEmailVerificationStore(db),
    webhooks: createPgWebhooksStore(db),
    oauth: createPgOAuthStore(db),
    feed,
    get listening() {
      return feed.listening;
    },
    async recordSecretsFingerprint(fingerprint) {
      await db.run(`INSERT INTO cluster_settings (name, value) VALUES ('secrets_fingerprint', $1) ON CONFLICT (name) DO NOTHING`, [fingerprint]);
      const row = await db.get<{ value: string }>(`SELECT value FROM cluster_settings WHERE name = 'secrets_fingerprint'`);
      return row!.value;
    },
    async ping() {
      await db.get('SELECT 1');
      return feed.listening ? {} : { degraded: "not listening for other nodes' changes (reconnecting)" };
    },
    async close() {
      await feed.close();
      await db.close();
    },
  };
}

/**
 * Connects to `url`, applies pending migrations under the migrations lock (telling
 * `onMigration` when each one starts and once it is committed) and starts listening
 * for other nodes' changes. `onConnectionError` hears of connections lost while idle
 * (the pool and the LISTEN connection replace them; nothing is thrown).
 */
export async function openPostgresStore(url: string, onMigration?: MigrationListener, onConnectionError: (err: Error) => void = () => undefined): Promise<PgStore> {
  const db = await PgDb.open(url, onMigration, onConnectionError);
  const feed = new PgChangeFeed(db, onConnectionError);
  try {
    await feed.listen();
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return pgStore(db, feed);
}
