// The change feed on PostgreSQL: the `changes` table (migration 001), appended in the
// transaction of its cause, read by every node.
//
// Commit order. An identity column hands out numbers when rows are inserted, not when
// transactions commit: with two writers, seq 8 could commit before seq 7, and a reader
// that saw 8 and moved its cursor past 7 would never read 7. So every transaction that
// appends takes one transaction-level advisory lock (LOCKS.feed) before it appends and
// holds it to its commit (PostgreSQL releases it after the commit is visible): seqs are
// handed out and committed one transaction at a time, and a reader that sees seq n has
// seen every change below n. The alternative (hand readers only seqs below the oldest
// in-flight transaction) needs a snapshot query per read and still stalls behind a slow
// writer; writes that change answers are few and short beside reads, and the lock costs
// one round trip. A writer takes the lock before its first write (serialise(), done by
// write() unless the caller takes it later): taken after row locks, it could deadlock
// with a writer that holds it and waits for those rows.
//
// Waking. Local listeners are woken after the local commit, before the write resolves
// (read your writes). Other nodes learn of it by NOTIFY (pg_notify in the transaction
// is delivered at commit): each node keeps one LISTEN connection of its own and wakes
// its onRemote listeners, who catch up with since() from their own seq. The connection
// reconnects with backoff after a drop and wakes them once it is back, so changes
// committed while it was down are read too: a notification carries no data, and
// missing one loses nothing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Change, ChangeFeed, FeedWindow } from '../types.js';
import type { NewChange } from '../sqlite/feed.js';
import { LOCKS, type PgDb, type Queryable } from './db.js';
import { changeFromRow, PRUNE_BATCH, type ChangeRow } from '../rows/feed.js';

/** The NOTIFY channel; the payload is the writing node's id (a node ignores its own). */
const CHANNEL = 'provenant_changes';
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/** What a write transaction appends with. */
export interface FeedWriter {
  /** Takes the feed lock (once; append does it too): from here to commit, no other transaction appends. */
  serialise(): Promise<void>;
  append(change: NewChange): Promise<void>;
  /**
   * A 'stored' change for each record with `fromSeq <= seq <= toSeq`, in seq order, as
   * one statement. The caller inserted those records under the feed lock, so the range
   * holds exactly its records.
   */
  appendStored(fromSeq: number, toSeq: number, at: number): Promise<void>;
}


function wakeAll(listeners: Set<() => void>): void {
  for (const listener of listeners) {
    try {
      listener();
    } catch {
      // a consumer's failure must not turn a committed write into an error
    }
  }
}

export class PgChangeFeed implements ChangeFeed {
  private readonly local = new Set<() => void>();
  private readonly remote = new Set<() => void>();
  /** This node's id in notifications. */
  private readonly nodeId = randomUUID();
  private listener: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | undefined;
  private backoffMs = RECONNECT_MIN_MS;
  private closed = false;
  /** The LISTEN connection is up (for /healthz). */
  listening = false;

  constructor(
    private readonly db: PgDb,
    private readonly onConnectionError: (err: Error) => void,
  ) {}

  async latest(): Promise<number> {
    // the highest seq pruned stands in when the window has been pruned empty
    const row = await this.db.get<{ last: number | null }>(
      'SELECT GREATEST((SELECT max(seq) FROM changes), (SELECT pruned_through FROM feed_window WHERE id = 1)) AS last',
    );
    return row?.last ?? 0;
  }

  async horizon(): Promise<number> {
    const row = await this.db.get<{ pruned_through: number }>('SELECT pruned_through FROM feed_window WHERE id = 1');
    return row?.pruned_through ?? 0;
  }

  /**
   * Needs no feed lock: an append in flight holds a seq above every committed one (seqs
   * are handed out under the lock), and only committed changes are deleted. Two nodes
   * pruning at once delete the same rows; the horizon only grows.
   */
  async prune(window: FeedWindow, now: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const n = await this.db.transaction(async (tx) => {
        const cut = await tx.get<{ seq: number | null }>(
          `SELECT max(seq) AS seq FROM (SELECT seq, at FROM changes ORDER BY seq LIMIT $1) oldest
           WHERE seq <= (SELECT max(seq) FROM changes) - $2 OR at < $3`,
          [PRUNE_BATCH, window.maxChanges, now - window.maxAgeMs],
        );
        if (cut?.seq == null) return 0;
        const count = await tx.run('DELETE FROM changes WHERE seq <= $1', [cut.seq]);
        await tx.run('UPDATE feed_window SET pruned_through = GREATEST(pruned_through, $1) WHERE id = 1', [cut.seq]);
        return count;
      });
      deleted += n;
      if (n < PRUNE_BATCH) return deleted;
    }
  }

  async since(afterSeq: number, limit: number): Promise<Change[]> {
    const rows = await this.db.all<ChangeRow>('SELECT * FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit]);
    return rows.map(changeFromRow);
  }

  onAppend(listener: () => void): () => void {
    // a wrapper per registration: the same function registered twice is woken twice
    const entry = () => listener();
    this.local.add(entry);
    return () => this.local.delete(entry);
  }

  onRemote(listener: () => void): () => void {
    const entry = () => listener();
    this.remote.add(entry);
    return () => this.remote.delete(entry);
  }

  /**
   * Runs `work` as one write transaction in which it may append changes; the feed lock
   * is taken first unless `serialiseLater` (then `work` calls serialise() before its
   * first write). Wakes the local listeners once a transaction that appended has
   * committed; its NOTIFY reaches the other nodes at that commit.
   */
  async write<T>(work: (tx: Queryable, feed: FeedWriter) => Promise<T>, opts: { missing?: string; serialiseLater?: boolean } = {}): Promise<T> {
    let appended = false;
    const value = await this.db.transaction(async (tx) => {
      let locked = false;
      const serialise = async () => {
        if (locked) return;
        await tx.run('SELECT pg_advisory_xact_lock($1, $2)', [...LOCKS.feed]);
        locked = true;
      };
      if (!opts.serialiseLater) await serialise();
      const result = await work(tx, {
        serialise,
        async append(change) {
          await serialise();
          const c: Omit<ChangeRow, 'seq'> = {
            file_hash: null, action_hash: null, signature_seq: null, has_fingerprint: null, user_id: null, ...change,
          };
          await tx.run(
            'INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, user_id, at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
            [c.kind, c.file_hash, c.action_hash, c.signature_seq, c.has_fingerprint, c.user_id, c.at],
          );
          appended = true;
        },
        async appendStored(fromSeq, toSeq, at) {
          await serialise();
          const count = await tx.run(
            `INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, at)
             SELECT 'stored', file_hash, action_hash, seq, has_fingerprint, $1 FROM signatures WHERE seq >= $2 AND seq <= $3 ORDER BY seq`,
            [at, fromSeq, toSeq],
          );
          if (count > 0) appended = true;
        },
      });
      if (appended) await tx.run('SELECT pg_notify($1, $2)', [CHANNEL, this.nodeId]);
      return result;
    }, opts.missing);
    if (appended) wakeAll(this.local);
    return value;
  }

  /** Opens the LISTEN connection (and keeps it open until close()). */
  async listen(): Promise<void> {
    const client = new pg.Client(this.db.config);
    // an error on the connection is followed by 'end'; handled there
    client.on('error', (err) => this.onConnectionError(err));
    client.on('end', () => {
      if (this.listener !== client) return;
      this.listener = null;
      this.listening = false;
      this.scheduleReconnect();
    });
    client.on('notification', (msg) => {
      if (msg.payload !== this.nodeId) wakeAll(this.remote);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.listening = true;
    this.backoffMs = RECONNECT_MIN_MS;
    // whatever was committed while no connection listened is read now
    wakeAll(this.remote);
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnect !== undefined) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      this.listen().catch((err: Error) => {
        this.onConnectionError(err);
        this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
        this.scheduleReconnect();
      });
    }, this.backoffMs);
    this.reconnect.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    this.reconnect = undefined;
    const client = this.listener;
    this.listener = null;
    this.listening = false;
    if (client) await client.end().catch(() => undefined);
  }
}
