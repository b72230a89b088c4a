// The store: everything the server and the admin CLI persist, behind the interfaces of
// the table modules (./store.ts lists them). Routes and services see `Store`, never an
// engine; the SQLite engine lives in ./sqlite/, the PostgreSQL engine in ./postgres/,
// and nothing outside this folder knows SQL (docs/server.md, "The store" and "Engines").
import { openPostgresStore } from './postgres/index.js';
import { openSqliteStore, type MigrationListener } from './sqlite/index.js';
import type { Store, StoreOptions } from './store.js';

export * from './accounts.js';
export * from './contacts.js';
export * from './email-verifications.js';
export * from './errors.js';
export type { Change, ChangeFeed, FeedWindow } from './feed.js';
export type { StoredCheckpoint, TransparencyLogStore } from './log.js';
export * from './oauth.js';
export { reducedJson } from './reduced.js';
export * from './signatures.js';
export type { Store, StoreOptions } from './store.js';
export * from './webhooks.js';
export * from './manifests.js';
export { openSqliteStore, type MigrationListener } from './sqlite/index.js';
export { openPostgresStore, type PgStore } from './postgres/index.js';

/**
 * The engine the configuration names: PostgreSQL at `databaseUrl` (PROVENANT_DATABASE_URL),
 * otherwise SQLite in `sqliteFile`. `onConnectionError` hears of PostgreSQL connections
 * lost while idle (they are replaced; nothing is thrown).
 */
export function openStore(
  where: { databaseUrl: string | null; sqliteFile: string },
  onMigration?: MigrationListener,
  onConnectionError?: (err: Error) => void,
  options: StoreOptions = {},
): Promise<Store> {
  if (where.databaseUrl !== null) return openPostgresStore(where.databaseUrl, onMigration, onConnectionError, options);
  return openSqliteStore(where.sqliteFile, onMigration, options);
}
