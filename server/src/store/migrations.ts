// Each engine's migrations: `NNN_name.sql` files in src/store/<engine>/migrations,
// applied once each, in order, by the engine's db.ts (each in one transaction with its
// schema_migrations row). Plain DDL for its engine; never edit one that has shipped.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Told when a migration starts (no `ms`) and when it is done (`ms`: how long it took). */
export type MigrationListener = (event: { version: number; name: string; ms?: number }) => void;

/** The server package's directory (its package.json names it), found from this module
 *  whether it runs from src/ (tsx) or dist/: the .sql migrations stay in src/. */
function serverRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === '@provenant/server') return dir;
    if (dirname(dir) === dir) throw new Error('cannot find the server package root (a package.json named "@provenant/server")');
  }
}

/** The engine's migrations, in order. */
export function listMigrations(engine: 'sqlite' | 'postgres'): { version: number; name: string; sql: string }[] {
  const dir = join(serverRoot(), 'src', 'store', engine, 'migrations');
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql: readFileSync(join(dir, f), 'utf8') }));
}
