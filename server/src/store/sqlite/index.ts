// The SQLite engine: one database file (WAL), its migrations applied at open; the
// tables' queries are the shared ones (../store.ts), over this engine's Db and dialect.
import { Feed } from '../feed.js';
import { tableStores, type Store, type StoreOptions } from '../store.js';
import { Db, type MigrationListener } from './db.js';

/** The store over an open database (engine-specific tests use the Db beside it). */
export function sqliteStore(db: Db, options: StoreOptions = {}): Store {
  return {
    engine: 'sqlite',
    // one process owns the file: no other node appends, so no remote changes
    ...tableStores(db, new Feed(db), options),
    // the secrets sit beside the database file: nothing to compare
    recordSecretsFingerprint: async (fingerprint) => fingerprint,
    async ping() {
      await db.get('SELECT 1');
      return {};
    },
    close: () => db.close(),
  };
}

/**
 * Opens (creating if needed, owner-only) the database file and applies pending
 * migrations, telling `onMigration` when each one starts and once it is committed.
 */
export async function openSqliteStore(file: string, onMigration?: MigrationListener, options: StoreOptions = {}): Promise<Store> {
  return sqliteStore(await Db.open(file, onMigration), options);
}

export type { MigrationListener } from './db.js';
