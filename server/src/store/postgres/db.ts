// The PostgreSQL engine's connections (one pg Pool), dialect, typed errors and
// migrations.
//
// A plain read runs on any pooled connection (its own implicit transaction); every
// write runs in `transaction()`, BEGIN ... COMMIT on one connection, so each store
// method is one transaction. The table modules write `?` placeholders; each becomes
// $1, $2, ... here. Errors leave here as the store's typed errors: unique and
// foreign-key violations by constraint name, a lost or refused connection (PostgreSQL
// away) as StoreUnavailableError, so that a request answers 503 instead of 500.
import pg from 'pg';
import { StoreConflictError, StoreNotFoundError, StoreUnavailableError } from '../errors.js';
import { listMigrations, type MigrationListener } from '../migrations.js';
import type { Db, Dialect, Lock, Queryable, Row, Sql } from '../sql.js';

/** Texts already numbered (numbered()); the store's texts are a few hundred at most. */
const NUMBERED = new Map<string, string>();

/** `sql` with each `?` outside a quoted string made $1, $2, ... */
function numbered(sql: string): string {
  let text = NUMBERED.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/'(?:[^']|'')*'|\?/g, (m) => (m === '?' ? `$${++n}` : m));
    if (NUMBERED.size >= 2_000) NUMBERED.clear();
    NUMBERED.set(sql, text);
  }
  return text;
}

/** pg's query config for a plain or prepared statement (a prepared one keeps its name on each connection). */
function statement(sql: Sql, values: readonly unknown[]): pg.QueryConfig {
  return typeof sql === 'string' ? { text: numbered(sql), values: [...values] } : { name: sql.name, text: numbered(sql.text), values: [...values] };
}

/** Waiting for a connection longer than this fails the request (503), as does a dead server. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A statement running longer than this is cancelled by the server (lock waits included). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** Connections per node: PostgreSQL's default max_connections (100) serves several nodes. */
const POOL_SIZE = 10;

/**
 * The classes of this engine's advisory locks (pg_advisory_lock's (class, key)): one per
 * purpose, so that keys of different purposes never meet. The key is 0, or for a
 * user's or an organisation's quota hashtext(id). `migrations` is a session lock held
 * while migrations run (nodes starting together apply them once); the others are the
 * dialect's transaction locks (../sql.ts Lock), held to commit.
 */
const LOCK_CLASSES: Record<Lock | 'migrations', number> = { migrations: 1, feed: 2, userQuota: 3, orgQuota: 4, webhookRouting: 5 };

/** PostgreSQL spelled for the table modules (../sql.ts Dialect). */
export const postgresDialect: Dialect = {
  true: 'true',
  false: 'false',
  lock: (mode, opts = {}) => `FOR ${mode === 'update' ? 'UPDATE' : 'SHARE'}${opts.of ? ` OF ${opts.of}` : ''}${opts.skipLocked ? ' SKIP LOCKED' : ''}`,
  // the unique indexes are on lower(email) and lower(username)
  equalsIgnoringCase: (column) => `lower(${column}) = lower(?)`,
  inList: (column, type) => `${column} = ANY(?::${type}[])`,
  list: (values) => [...values],
  // the columns as arrays (unnest keeps them in step; WITH ORDINALITY numbers the rows)
  batch: (columns, rows) => ({
    from: `unnest(${columns.map(([, type]) => `?::${type}[]`).join(', ')}) WITH ORDINALITY AS batch (${columns.map(([name]) => name).join(', ')}, n)`,
    params: columns.map((_, i) => rows.map((row) => row[i])),
  }),
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  lines: (expr) => `string_agg(${expr}, E'\\n')`,
  // written beside the record at insert (migration 001): no record is parsed to read it
  perceptualHash: { read: 'perceptual_hash', written: true },
  async serialise(tx, lock, key) {
    if (key === undefined) await tx.run('SELECT pg_advisory_xact_lock(?, 0)', [LOCK_CLASSES[lock]]);
    else await tx.run('SELECT pg_advisory_xact_lock(?, hashtext(?))', [LOCK_CLASSES[lock], key]);
  },
  async trySerialise(tx, lock) {
    return (await tx.get<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock(?, 0) AS ok', [LOCK_CLASSES[lock]]))?.ok === true;
  },
};

/** Whose `what` each UNIQUE constraint (or unique index) names (the migrations name them). */
const UNIQUE_WHAT: Record<string, string> = {
  users_email: 'email',
  users_username: 'username',
  agents_agent_key: 'agent_key',
  cells_agent_key: 'agent_key',
  cells_user: 'cell',
  signatures_action_hash: 'action_hash',
  orgs_id: 'org',
  orgs_one_personal: 'personal_org',
  apps_id: 'app',
  challenges_hash: 'challenge',
  c2pa_manifests_pkey: 'manifest',
};

/** Node's socket errors and pg's own messages for a connection that is gone or never came. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection timeout|Connection ended unexpectedly/i;

/** True when `err` says PostgreSQL cannot serve now (unreachable, shutting down, overloaded), rather than refusing a statement. */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_ERRNOS.has(code)) return true;
    // SQLSTATE class 08 (connection exception); 57P01-03 (shutdown, crash, not yet
    // accepting); 53300 (too many connections); 57014 (cancelled: statement_timeout, an
    // overloaded or locked-up database): all worth a retry later, none the request's fault
    if (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300', '57014'].includes(code)) return true;
  }
  return CONNECTION_MESSAGES.test(err.message);
}

/**
 * PostgreSQL's errors as the store's typed errors, so that no caller reads PostgreSQL's
 * messages: 23505 (unique) by constraint name, 23503 (foreign key) as `missing` ('row'
 * when the caller did not say), a lost connection as StoreUnavailableError. Anything
 * else is returned unchanged.
 */
export function storeError(err: unknown, missing = 'row'): unknown {
  if (err instanceof StoreConflictError || err instanceof StoreNotFoundError || err instanceof StoreUnavailableError) return err;
  if (!(err instanceof Error)) return err;
  const { code, constraint } = err as { code?: string; constraint?: string };
  if (code === '23505') return new StoreConflictError(UNIQUE_WHAT[constraint ?? ''] ?? constraint ?? 'row');
  if (code === '23503') return new StoreNotFoundError(missing);
  if (isUnavailable(err)) return new StoreUnavailableError(`the database is unavailable: ${err.message}`, { cause: err });
  return err;
}

/** int8 (counts, ids, times) as JS numbers: every value the store keeps is below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (text: string) => Number(text) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

function queryable(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async get<T>(sql: Sql, params: readonly unknown[] = []) {
      return (await client.query(statement(sql, params))).rows[0] as T | undefined;
    },
    async all<T>(sql: Sql, params: readonly unknown[] = []) {
      return (await client.query(statement(sql, params))).rows as T[];
    },
    async run(sql: Sql, params: readonly unknown[] = []) {
      return (await client.query(statement(sql, params))).rowCount ?? 0;
    },
  };
}

export class PgDb implements Db {
  readonly dialect = postgresDialect;
  private readonly direct: Queryable;

  private constructor(
    readonly pool: pg.Pool,
    /** The connection settings, for the feed's LISTEN connection. */
    readonly config: pg.ClientConfig,
    private readonly onIdleError: (err: Error) => void,
  ) {
    this.direct = queryable(pool);
  }

  /**
   * A pool on `url`, then pending migrations applied under the migrations lock (a second
   * node starting waits, then finds them applied), telling `onMigration` when each one
   * starts and once it is committed. `onIdleError`: an idle pooled connection failed
   * (PostgreSQL restarted): logged, never thrown (the pool replaces it).
   */
  static async open(url: string, onMigration?: MigrationListener, onIdleError: (err: Error) => void = () => undefined): Promise<PgDb> {
    const config: pg.ClientConfig = {
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      // a transaction left open by a wedged caller must not hold the feed lock forever
      idle_in_transaction_session_timeout: STATEMENT_TIMEOUT_MS,
      application_name: 'provenant',
      types,
    };
    const pool = new pg.Pool({ ...config, max: POOL_SIZE });
    // without a listener an idle client's error would crash the process
    pool.on('error', onIdleError);
    const db = new PgDb(pool, config, onIdleError);
    try {
      await db.migrate(onMigration);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw storeError(err);
    }
    return db;
  }

  private async migrate(onMigration?: MigrationListener): Promise<void> {
    const client = await this.pool.connect();
    const lockClass = LOCK_CLASSES.migrations;
    try {
      // a migration may rewrite every row, and a node waits for another's: no statement limit here
      await client.query('SET statement_timeout = 0');
      await client.query('SELECT pg_advisory_lock($1, 0)', [lockClass]);
      try {
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
        );
        const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
        for (const m of listMigrations('postgres')) {
          if (done.has(m.version)) continue;
          const started = Date.now();
          onMigration?.({ version: m.version, name: m.name });
          await client.query('BEGIN');
          try {
            await client.query(m.sql); // a multi-statement text: the simple protocol, no parameters
            await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw err;
          }
          onMigration?.({ version: m.version, name: m.name, ms: Date.now() - started });
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, 0)', [lockClass]).catch(() => undefined);
        await client.query('RESET statement_timeout').catch(() => undefined);
      }
    } finally {
      client.release();
    }
  }

  get<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T | undefined> {
    return this.direct.get<T>(sql, params).catch((err) => Promise.reject(storeError(err)));
  }

  all<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T[]> {
    return this.direct.all<T>(sql, params).catch((err) => Promise.reject(storeError(err)));
  }

  /** A single write statement, as its own transaction. */
  run(sql: Sql, params?: readonly unknown[]): Promise<number> {
    return this.direct.run(sql, params).catch((err) => Promise.reject(storeError(err)));
  }

  /**
   * Runs `work` inside BEGIN ... COMMIT on one pooled connection; rolls back and rethrows
   * if `work` throws (as the store's typed error: see storeError). Isolation is READ
   * COMMITTED: a read-then-write that must not race takes a lock first (the dialect's serialise, or a row lock) or
   * decides in one statement (UPDATE ... WHERE).
   */
  async transaction<T>(work: (tx: Queryable) => Promise<T>, missing?: string): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw storeError(err, missing);
    }
    let broken: Error | undefined;
    // while checked out the pool does not listen on the connection: PostgreSQL ending it
    // between two queries (or in the same read as a COMMIT's answer) emits 'error' with
    // no listener, which would end the process; noted here, it goes instead of back
    const onError = (err: Error) => {
      broken ??= err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const value = await work(queryable(client));
      await client.query('COMMIT');
      return value;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // a connection that failed goes, instead of back into the pool
      if (isUnavailable(err)) broken = err as Error;
      throw storeError(err, missing);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /** Ends the pool (waits for connections in use to be released). */
  close(): Promise<void> {
    return this.pool.end();
  }
}
