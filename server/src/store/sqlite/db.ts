// The SQLite engine's connections, dialect, typed errors and migrations.
//
// One writer connection runs every read-then-write as `BEGIN IMMEDIATE` in strict
// sequence (sqlite3 shares one connection between callers, so interleaved
// transactions would mix statements); a few reader connections serve plain reads in
// turn (each connection runs one statement at a time, so several let reads use more
// of libuv's thread pool), which WAL lets proceed while a write is in flight and
// which never see uncommitted rows. Readers keep their statements prepared between
// calls, each stepped to its end or reset at once, so that none holds a read snapshot.
// The one writer is also every lock of the dialect: it serialises every transaction.
import sqlite3 from 'sqlite3';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreConflictError, StoreNotFoundError } from '../errors.js';
import { listMigrations, type MigrationListener } from '../migrations.js';
import type { Db as StoreDb, Dialect, Queryable, Row, Sql } from '../sql.js';

export type { MigrationListener } from '../migrations.js';

const textOf = (sql: Sql): string => (typeof sql === 'string' ? sql : sql.text);

/** SQLite spelled for the table modules (../sql.ts Dialect). */
export const sqliteDialect: Dialect = {
  // flags are 0/1, and the partial indexes say `= 1`
  true: '1',
  false: '0',
  // the one writer serialises every transaction: no row locks
  lock: () => '',
  // the e-mail and username columns are COLLATE NOCASE (their unique indexes too)
  equalsIgnoringCase: (column) => `${column} = ?`,
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  // one JSON array: node-sqlite3 spends ~0.5 µs of the event loop on each bound parameter
  list: (values) => JSON.stringify(values),
  batch: (columns, rows) => ({
    from: `(SELECT ${columns.map(([name], i) => `value->>${i} AS ${name}`).join(', ')}, key AS n FROM json_each(?)) AS batch`,
    params: [JSON.stringify(rows)],
  }),
  greatest: (a, b) => `MAX(${a}, ${b})`,
  lines: (expr) => `group_concat(${expr}, char(10))`,
  perceptualHash: {
    // A record SQLite cannot read (nested over its 1,000 levels: an older version could
    // store one) gives null instead of failing the whole range, and so the index load.
    // json_valid costs nothing here: SQLite reuses its parse for the ->.
    read: "CASE WHEN json_valid(record) THEN record->'$.perceptual_hash' END",
    written: false,
  },
  serialise: async () => undefined,
  trySerialise: async () => true,
};

/** Prepared statements a reader connection keeps, by SQL text (the least recently used go first). */
const KEPT_STATEMENTS = 128;

class Connection implements Queryable {
  /**
   * Statements prepared once and run again (`get` and `all` on a reader): preparing a
   * statement for every call cost the event loop ~0.3 ms per 100-row fetch. Each is
   * kept as the promise of its preparation: sqlite3 never calls back a statement that
   * failed to prepare, so a call waits for the preparation first.
   */
  private readonly statements = new Map<string, Promise<sqlite3.Statement>>();

  constructor(
    readonly raw: sqlite3.Database,
    private readonly keepStatements = false,
  ) {}

  static open(file: string, mode: number, keepStatements = false): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const raw = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(new Connection(raw, keepStatements))));
    });
  }

  /** The kept statement for `sql`, prepared on first use; a failed preparation is not kept. */
  private statement(sql: string): Promise<sqlite3.Statement> {
    let prepared = this.statements.get(sql);
    if (prepared !== undefined) {
      this.statements.delete(sql); // to the back: most recently used
    } else {
      prepared = new Promise((resolve, reject) => {
        const statement = this.raw.prepare(sql, (err) => (err ? reject(err) : resolve(statement)));
      });
      prepared.catch(() => this.statements.get(sql) === prepared && this.statements.delete(sql));
      if (this.statements.size >= KEPT_STATEMENTS) {
        const [oldest, old] = this.statements.entries().next().value as [string, Promise<sqlite3.Statement>];
        this.statements.delete(oldest);
        // finalize runs after the calls already queued on the statement
        old.then((st) => st.finalize(), () => undefined);
      }
    }
    this.statements.set(sql, prepared);
    return prepared;
  }

  get<T>(query: Sql, params: readonly unknown[] = []): Promise<T | undefined> {
    const sql = textOf(query);
    if (!this.keepStatements) {
      return new Promise((resolve, reject) =>
        this.raw.get(sql, params, (err: Error | null, row: T) => (err ? reject(err) : resolve(row))),
      );
    }
    return this.statement(sql).then(
      (st) =>
        new Promise((resolve, reject) => {
          st.get(params, (err: Error | null, row: T) => (err ? reject(err) : resolve(row)));
          // queued right behind the get: a statement stopped after one row would keep
          // its read snapshot (and the connection's) until reset
          st.reset(() => undefined);
        }),
    );
  }

  all<T>(query: Sql, params: readonly unknown[] = []): Promise<T[]> {
    const sql = textOf(query);
    if (!this.keepStatements) {
      return new Promise((resolve, reject) =>
        this.raw.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))),
      );
    }
    // `all` steps the statement to its end, which ends its read transaction: a kept
    // statement holds no snapshot between calls (`get` would stop after one row)
    return this.statement(sql).then(
      (st) => new Promise((resolve, reject) => st.all(params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows)))),
    );
  }

  run(query: Sql, params: readonly unknown[] = []): Promise<number> {
    return new Promise((resolve, reject) =>
      this.raw.run(textOf(query), params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve(this.changes);
      }),
    );
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.raw.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  /** Finalizes the kept statements (sqlite3 cannot close a connection with live ones), then closes. */
  async close(): Promise<void> {
    const kept = [...this.statements.values()];
    this.statements.clear();
    for (const prepared of kept) {
      const st = await prepared.catch(() => null);
      if (st !== null) await new Promise<void>((resolve) => st.finalize(() => resolve()));
    }
    return new Promise((resolve, reject) => this.raw.close((err) => (err ? reject(err) : resolve())));
  }
}

/** The store's name for each UNIQUE column SQLite reports (`table.column`). */
const UNIQUE_WHAT: Record<string, string> = {
  'users.email': 'email',
  'users.username': 'username',
  'agents.agent_key': 'agent_key',
  'cells.agent_key': 'agent_key',
  'cells.user_id': 'cell',
  'signatures.action_hash': 'action_hash',
  'orgs.id': 'org',
  'orgs.owner_id': 'personal_org', // orgs_one_personal
  'apps.id': 'app',
  'challenges.hash': 'challenge',
  'c2pa_manifests.manifest_id': 'manifest',
};

/**
 * SQLite's constraint failures as the store's typed errors, so that no caller reads
 * SQLite's messages: a UNIQUE failure names its `table.column`, a FOREIGN KEY failure
 * names nothing, so the caller says what was `missing` ('row' when it did not).
 * Anything else is returned unchanged.
 */
export function storeError(err: unknown, missing = 'row'): unknown {
  if (err instanceof StoreConflictError || err instanceof StoreNotFoundError || !(err instanceof Error)) return err;
  const unique = /UNIQUE constraint failed: (\w+\.\w+)/.exec(err.message);
  if (unique !== null) return new StoreConflictError(UNIQUE_WHAT[unique[1]] ?? unique[1]);
  if (/FOREIGN KEY constraint failed/.test(err.message)) return new StoreNotFoundError(missing);
  return err;
}

/** Reader connections: libuv runs 4 file-system/sqlite jobs at once by default. */
const READERS = 4;

/**
 * The database holds e-mail addresses and password hashes: only its owner may read it.
 * SQLite creates a new file 0644 (less the umask) but gives the WAL, its index and the
 * rollback journal the database file's own mode, so the file is made 0600 before
 * SQLite opens it; the directories made here are 0700. Files left 0644 by an older
 * version are tightened on every open (new WAL files then inherit 0600).
 */
function ownerOnly(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    try {
      chmodSync(file + suffix, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

export class Db implements StoreDb {
  readonly dialect = sqliteDialect;

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
    if (file !== ':memory:') ownerOnly(file);
    const writer = await Connection.open(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE);
    await writer.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
    );
    writer.raw.configure('busyTimeout', 5000);
    const readers: Connection[] = [];
    for (let i = 0; i < (file === ':memory:' ? 0 : READERS); i++) {
      const reader = await Connection.open(file, sqlite3.OPEN_READONLY, true);
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
    for (const m of listMigrations('sqlite')) {
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
  get<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T | undefined> {
    return this.reader().get<T>(sql, params);
  }

  all<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T[]> {
    return this.reader().all<T>(sql, params);
  }

  /** A single write statement, as its own transaction. */
  run(sql: Sql, params?: readonly unknown[]): Promise<number> {
    return this.transaction((tx) => tx.run(sql, params));
  }

  /**
   * Runs `work` inside `BEGIN IMMEDIATE ... COMMIT` on the writer, after every
   * transaction queued before it; rolls back and rethrows if `work` throws (a constraint
   * failure as the store's typed error: see storeError). Every read-then-write (quota,
   * codes, revocation) goes through here: the one writer is what serialises them.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>, missing?: string): Promise<T> {
    const result = this.tail.then(async () => {
      await this.writer.exec('BEGIN IMMEDIATE');
      try {
        const value = await work(this.writer);
        await this.writer.exec('COMMIT');
        return value;
      } catch (err) {
        await this.writer.exec('ROLLBACK').catch(() => undefined);
        throw storeError(err, missing);
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
