// The store: everything the server and the admin CLI persist, behind the interfaces of
// ./types.ts. Routes and services see `Store`, never an engine; the SQLite engine lives
// in ./sqlite/, the PostgreSQL engine in ./postgres/, and nothing outside those folders
// knows SQL (docs/server.md, "The store" and "Engines").
import { openPostgresStore } from './postgres/index.js';
import { openSqliteStore, type MigrationListener } from './sqlite/index.js';
import type { Store } from './types.js';

export * from './types.js';
export { reducedJson } from './reduced.js';
export { openSqliteStore, type MigrationListener } from './sqlite/index.js';
export { openPostgresStore } from './postgres/index.js';

/**
 * The engine the configuration names: PostgreSQL at `databaseUrl` (PROVENANT_DATABASE_URL),
 * otherwise SQLite in `sqliteFile`. `onConnectionError` hears of PostgreSQL connections
 * lost while idle (they are replaced; nothing is thrown).
 */
export function openStore(
  where: { databaseUrl: string | null; sqliteFile: string },
  onMigration?: MigrationListener,
  onConnectionError?: (err: Error) => void,
): Promise<Store> {
  if (where.databaseUrl !== null) return openPostgresStore(where.databaseUrl, onMigration, onConnectionError);
  return openSqliteStore(where.sqliteFile, onMigration);
}
