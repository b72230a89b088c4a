// The PostgreSQL engine (PROVENANT_DATABASE_URL=postgres://...): the store of several
// nodes that share one database, held to the same contract as SQLite
// (test/store/contract.ts, run by test/store/postgres.test.ts). The tables' queries are
// the shared ones (../store.ts); here are only what this engine does differently:
// db.ts (the pool, the dialect with its row and advisory locks, typed errors,
// migrations under the migrations lock) and feed.ts (other nodes' changes: NOTIFY and
// the LISTEN connection).
//
// To add a migration: migrations/NNN_name.sql with the next number reserved for you,
// plain DDL (it runs in one transaction with its schema_migrations row, under the
// migrations lock); unique constraints named, and listed in db.ts UNIQUE_WHAT; never
// edit one that has shipped.
import { Feed } from '../feed.js';
import type { MigrationListener } from '../migrations.js';
import { tableStores, type Store, type StoreOptions } from '../store.js';
import { PgDb } from './db.js';
import { PgNotifications } from './feed.js';

/** The PostgreSQL store as Store, plus what /healthz shows of it. */
export interface PgStore extends Store {
  readonly engine: 'postgres';
  /** The feed's LISTEN connection is up (other nodes' writes wake this node). */
  readonly listening: boolean;
}

function pgStore(db: PgDb, notifications: PgNotifications, options: StoreOptions = {}): PgStore {
  return {
    engine: 'postgres',
    ...tableStores(db, new Feed(db, notifications), options),
    get listening() {
      return notifications.listening;
    },
    async recordSecretsFingerprint(fingerprint) {
      await db.run(`INSERT INTO cluster_settings (name, value) VALUES ('secrets_fingerprint', ?) ON CONFLICT (name) DO NOTHING`, [fingerprint]);
      const row = await db.get<{ value: string }>(`SELECT value FROM cluster_settings WHERE name = 'secrets_fingerprint'`);
      return row!.value;
    },
    async ping() {
      await db.get('SELECT 1');
      return notifications.listening ? {} : { degraded: "not listening for other nodes' changes (reconnecting)" };
    },
    async close() {
      await notifications.close();
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
export async function openPostgresStore(url: string, onMigration?: MigrationListener, onConnectionError: (err: Error) => void = () => undefined, options: StoreOptions = {}): Promise<PgStore> {
  const db = await PgDb.open(url, onMigration, onConnectionError);
  const notifications = new PgNotifications(db.config, onConnectionError);
  try {
    await notifications.listen();
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return pgStore(db, notifications, options);
}
