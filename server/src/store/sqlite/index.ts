// The SQLite engine: one database file (WAL), its migrations applied at open.
import type { Store } from '../types.js';
import { createSqliteAccountsStore } from './accounts.js';
import { createSqliteContactStore } from './contacts.js';
import { createSqliteEmailVerificationStore } from './email-verifications.js';
import { Db, type MigrationListener } from './db.js';
import { SqliteChangeFeed } from './feed.js';
import { createSqliteOAuthStore } from './oauth.js';
import { createSqliteSignaturesStore } from './signatures.js';
import { createSqliteWebhooksStore } from './webhooks.js';

/** The store over an open database (engine-specific tests use the Db beside it). */
export function sqliteStore(db: Db): Store {
  const feed = new SqliteChangeFeed(db);
  return {
    engine: 'sqlite',
    accounts: createSqliteAccountsStore(db, feed),
    signatures: createSqliteSignaturesStore(db, feed),
    contacts: createSqliteContactStore(db),
    emailVerifications: createSqliteEmailVerificationStore(db),
    webhooks: createSqliteWebhooksStore(db),
    oauth: createSqliteOAuthStore(db),
    feed,
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
export async function openSqliteStore(file: string, onMigration?: MigrationListener): Promise<Store> {
  return sqliteStore(await Db.open(file, onMigration));
}

export type { MigrationListener } from './db.js';
