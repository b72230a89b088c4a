// The SQLite connection pair behind every store module.
//
// One writer connection runs every read-then-write as `BEGIN IMMEDIATE` in strict
// sequence (sqlite3 shares one connection between callers, so interleaved
// transactions would mix statements); a few reader connections serve plain reads in
// turn (each connection runs one statement at a time, so several let reads use more
// of libuv's thread pool), which WAL lets proceed while a write is in flight and
// which never see uncommitted rows. Only parameterised statements: values are never spliced into SQL.
import sqlite3 from 'sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../lib/wasm.js';

export type SqlValue = string | number | bigint | null | Uint8Array;
export type Params = SqlValue[] | Record<string, SqlValue>;
export type Row = Record<string, unknown>;

/** What a store module may do: statements on one connection. */
export interface Queryable {
  get<T = Row>(sql: string, params?: Params): Promise<T | undefined>;
  all<T = Row>(sql: string, params?: Params): Promise<T[]>;
  run(sql: string, params?: Params): Promise<{ changes: number; lastID: number }>;
}

class Connection implements Queryable {
  constructor(readonly raw: sqlite3.Database) {}

  static open(file: string, mode: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const raw = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(new Connection(raw))));
    });
  }

  get<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return new Promise((resolve, reject) =>
      this.raw.get(sql, params, (err: Error | null, row: T) => (err ? reject(err) : resolve(row))),
    );
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return new Promise((resolve, reject) =>
      this.raw.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))),
    );
  }

  run(sql: string, params: Params = []): Promise<{ changes: number; lastID: number }> {
    return new Promise((resolve, reject) =>
      this.raw.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ changes: this.changes, lastID: this.lastID });
      }),
    );
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.raw.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.raw.close((err) => (err ? reject(err) : resolve())));
  }
}

/** Reader connections: libuv runs 4 file-system/sqlite jobs at once by default. */
const READERS = 4;

const MIGRATIONS_DIR = join(packageRoot, 'src', 'store', 'migrations');

/** `NNN_name.sql` files in src/store/migrations, applied once each, in order. */
export function listMigrations(dir = MIGRATIONS_DIR): { version: number; name: string; sql: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql: readFileSync(join(dir, f), 'utf8') }));
}

/** Told when a migration starts (no `ms`) and when it is done (`ms`: how long it took). */
export type MigrationListener = (event: { version: number; name: string; ms?: number }) => void;

export class Db implements Queryable {
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly writer: Connection,
    private readonly readers: Connection[],
    readonly file: string,
  ) {}

  /**
   * Opens (creating if needed) the database file and applies pending migrations, telling
   * `onMigration` when each one starts and once it is committed (some rewrite every record).
   */
  static async open(file: string, onMigration?: MigrationListener): Promise<Db> {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    const writer = await Connection.open(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    await writer.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
    );
    writer.raw.configure('busyTimeout', 5000);
    const readers: Connection[] = [];
    for (let i = 0; i < (file === ':memory:' ? 0 : READERS); i++) {
      const reader = await Connection.open(file, sqlite3.OPEN_READONLY);
      await reader.exec('PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
      reader.raw.configure('busyTimeout', 5000);
      readers.push(reader);
    }
    // An in-memory database exists on its one connection only.
    const db = new Db(writer, readers.length > 0 ? readers : [writer], file);
    await db.migrate(onMigration);
    return db;
  }

  private async migrate(onMigration?: MigrationListener): Promise<void> {
    await this.writer.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    let applied = 0;
    for (const m of listMigrations()) {
      const started = Date.now();
      const ran = await this.transaction(async (tx) => {
        if (await tx.get('SELECT 1 FROM schema_migrations WHERE version = ?', [m.version])) return false;
        onMigration?.({ version: m.version, name: m.name });
        await this.writer.exec(m.sql);
        await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
          m.version,
          m.name,
          Date.now(),
        ]);
        return true;
      });
      if (!ran) continue;
      applied++;
      onMigration?.({ version: m.version, name: m.name, ms: Date.now() - started });
    }
    // A migration that rewrites many rows (003 fills a table from every record) leaves a
    // WAL file of that size, which SQLite keeps at its largest until the last connection
    // closes: copy it into the database now and cut the file back to nothing.
    if (applied > 0 && this.file !== ':memory:') await this.writer.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  }

  private nextReader = 0;

  private reader(): Connection {
    this.nextReader = (this.nextReader + 1) % this.readers.length;
    return this.readers[this.nextReader];
  }

  /** A read on a reader connection (committed data only). */
  get<T = Row>(sql: string, params?: Params): Promise<T | undefined> {
    return this.reader().get<T>(sql, params);
  }

  all<T = Row>(sql: string, params?: Params): Promise<T[]> {
    return this.reader().all<T>(sql, params);
  }

  /** A single write statement, as its own transaction. */
  run(sql: string, params?: Params): Promise<{ changes: number; lastID: number }> {
    return this.transaction((tx) => tx.run(sql, params));
  }

  /**
   * Runs `work` inside `BEGIN IMMEDIATE ... COMMIT` on the writer, after every
   * transaction queued before it; rolls back and rethrows if `work` throws. Every
   * read-then-write (quota, codes, revocation) goes through here.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const result = this.tail.then(async () => {
      await this.writer.exec('BEGIN IMMEDIATE');
      try {
        const value = await work(this.writer);
        await this.writer.exec('COMMIT');
        return value;
      } catch (err) {
        await this.writer.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Waits for queued transactions, then closes both connections. */
  async close(): Promise<void> {
    await this.tail;
    for (const reader of this.readers) if (reader !== this.writer) await reader.close();
    await this.writer.close();
  }
}
