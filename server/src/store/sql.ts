// What the store's table modules write their queries against, whichever engine runs
// them: `Queryable` (statements on one connection or the pool), `Db` (plus transactions)
// and `Dialect`, the few places where SQLite and PostgreSQL spell a thing differently.
//
// Every query is written once, in its table module (accounts.ts, signatures.ts, ...),
// with `?` placeholders (PostgreSQL's engine numbers them $1, $2, ...) and the dialect
// for the rest: flag literals, row-lock clauses, case-insensitive equality, a list or a
// batch of rows handed over as one parameter, and transaction locks. Only parameterised
// statements: values are never spliced into SQL. The engines (./sqlite/, ./postgres/)
// keep what really differs: connections, typed errors, migrations, the feed's NOTIFY.
import { createHash } from 'node:crypto';

export type Row = Record<string, unknown>;

/** A statement kept prepared on each connection that runs it (see prepared()). */
export interface Prepared {
  readonly name: string;
  readonly text: string;
}

export type Sql = string | Prepared;

/** What a table module may do: statements on one connection (or any, outside a transaction). */
export interface Queryable {
  get<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T | undefined>;
  all<T = Row>(sql: Sql, params?: readonly unknown[]): Promise<T[]>;
  /** A statement whose rows are not wanted; the number of rows it changed. */
  run(sql: Sql, params?: readonly unknown[]): Promise<number>;
}

/**
 * An engine's connections: plain reads and single writes as their own transactions, and
 * `transaction` for every method that writes more than once or reads before it writes
 * (one transaction per store method). A write with RETURNING runs in a transaction: a
 * plain read may go to a read-only connection.
 */
export interface Db extends Queryable {
  readonly dialect: Dialect;
  /**
   * Runs `work` in one transaction; rolls back and rethrows if it throws, a constraint
   * failure as the store's typed error (a failed foreign key as StoreNotFoundError(`missing`)).
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>, missing?: string): Promise<T>;
}

/** Transaction locks, each held to commit (PostgreSQL's advisory locks; SQLite's one writer holds them all). */
export type Lock =
  /** Every write that appends to the change feed (feed.ts): seqs are committed in order. */
  | 'feed'
  /** One user's or one organisation's quota (key: the id), taken before counting it. */
  | 'userQuota'
  | 'orgQuota'
  /** The node routing the webhook outbox: one at a time, so deliveries queue in event order. */
  | 'webhookRouting';

/** Column types of a batch (batch()): PostgreSQL's array types. */
export type ColumnType = 'text' | 'bigint' | 'boolean';

export interface Dialect {
  /**
   * Flag literals as the engine's flag columns hold them: SQLite stores 1/0 and uses a
   * partial index (`WHERE has_fingerprint = 1`) only for a query that says `= 1`.
   */
  readonly true: string;
  readonly false: string;
  /**
   * A row-lock clause ending a SELECT: FOR UPDATE / FOR SHARE [OF alias] [SKIP LOCKED].
   * Empty on SQLite, where the one writer serialises every transaction.
   */
  lock(mode: 'update' | 'share', opts?: { of?: string; skipLocked?: boolean }): string;
  /** `column = ?`, case-insensitively, the way the column's unique index compares. */
  equalsIgnoringCase(column: string): string;
  /** `column` is one of the list given as one parameter, made by list(). */
  inList(column: string, type: Exclude<ColumnType, 'boolean'>): string;
  list(values: readonly unknown[]): unknown;
  /**
   * Rows handed over in one statement: a FROM source named `batch` with the columns and
   * `n`, each row's position (ORDER BY n keeps the batch's order), and its parameters.
   */
  batch(columns: readonly (readonly [name: string, type: ColumnType])[], rows: readonly (readonly unknown[])[]): { from: string; params: unknown[] };
  /** The larger of two values (SQLite's two-argument MAX, PostgreSQL's GREATEST). */
  greatest(a: string, b: string): string;
  /** The rows' values of `expr` as one text, a line each (an aggregate). */
  lines(expr: string): string;
  /**
   * A record's perceptual hash as JSON text: PostgreSQL keeps it in a column written
   * beside the record (`written`); SQLite's table has none and reads it from the record.
   */
  readonly perceptualHash: { read: string; written: boolean };
  /** Takes a transaction lock (held to commit); `key` names whose (a user's, an organisation's). */
  serialise(tx: Queryable, lock: Lock, key?: string): Promise<void>;
  /** Takes it if free: false when another transaction holds it (never waits). */
  trySerialise(tx: Queryable, lock: Lock): Promise<boolean>;
}

/**
 * A statement of a hot read, parsed and planned once per connection and from then on
 * only bound and run (PostgreSQL: a named prepared statement; SQLite's readers keep
 * every statement prepared anyway). A plain statement is parsed and planned on every
 * call: for the one-row join behind GET /verify that took 0.2 ms of planning against
 * 0.05 ms of execution (EXPLAIN ANALYZE, 100k records). Only for fixed texts that name
 * their columns: a prepared `SELECT *` fails ("cached plan must not change result
 * type") once another node's migration adds a column. The name is the text's hash, so
 * one text always has one name.
 */
export function prepared(text: string): Prepared {
  return { name: `provenant_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`, text };
}

/** A flag column as read: a boolean on PostgreSQL, 0/1 on SQLite. */
export const flag = (value: boolean | number): boolean => value === true || value === 1;

/** A JSON array column; anything else (never written by the store) reads as empty. */
export function jsonArray<T>(text: string | null): T[] {
  if (text === null) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as T[]) : [];
  } catch {
    return [];
  }
}
