// The change feed on SQLite: the `changes` table (migration 004), appended in the
// transaction of its cause. AUTOINCREMENT numbers the rows and the one writer commits
// them in that order, so seq order is commit order and a reader that has seen seq n has
// seen every change up to n.
import type { Change, ChangeFeed, FeedWindow } from '../types.js';
import type { Db, Queryable } from './db.js';
import { changeFromRow, PRUNE_BATCH, type ChangeRow } from '../rows/feed.js';

/** A change as its cause writes it (the feed numbers it). */
export type NewChange = { [K in Change['kind']]: Omit<Extract<Change, { kind: K }>, 'seq'> }[Change['kind']];

/** What a write transaction appends with. */
export interface FeedWriter {
  append(change: NewChange): Promise<void>;
  /**
   * A 'stored' change for each record with `fromSeq <= seq <= toSeq`, in seq order, as
   * one statement: a batch of 10,000 records costs one round trip, not 10,000. Only the
   * caller's transaction inserts records while it runs (one writer), so the range holds
   * exactly its records.
   */
  appendStored(fromSeq: number, toSeq: number, at: number): Promise<void>;
}

/** A change as SQLite stores it: its flag as 0/1. */
type SqliteChangeRow = Omit<ChangeRow, 'has_fingerprint'> & { has_fingerprint: number | null };

const toChange = (r: SqliteChangeRow): Change => changeFromRow({ ...r, has_fingerprint: r.has_fingerprint === null ? null : r.has_fingerprint === 1 });

export class SqliteChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly db: Db) {}

  async latest(): Promise<number> {
    // max(seq) reads the primary key's last entry; when the window has been pruned empty
    // the highest seq pruned stands in (AUTOINCREMENT never hands out a seq again)
    const row = await this.db.get<{ last: number | null }>(
      'SELECT max(coalesce((SELECT max(seq) FROM changes), 0), (SELECT pruned_through FROM feed_window WHERE id = 1)) AS last',
    );
    return row?.last ?? 0;
  }

  async horizon(): Promise<number> {
    const row = await this.db.get<{ pruned_through: number }>('SELECT pruned_through FROM feed_window WHERE id = 1');
    return row?.pruned_through ?? 0;
  }

  async prune(window: FeedWindow, now: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      // one batch per write transaction: signs wait for the one writer at most that long
      const n = await this.db.transaction(async (tx) => {
        const last = (await tx.get<{ last: number | null }>('SELECT max(seq) AS last FROM changes'))?.last ?? 0;
        // of the oldest PRUNE_BATCH changes, up to the last one outside the window
        const cut = await tx.get<{ seq: number | null }>(
          'SELECT max(seq) AS seq FROM (SELECT seq, at FROM changes ORDER BY seq LIMIT ?) WHERE seq <= ? OR at < ?',
          [PRUNE_BATCH, last - window.maxChanges, now - window.maxAgeMs],
        );
        if (cut?.seq == null) return 0;
        const { changes } = await tx.run('DELETE FROM changes WHERE seq <= ?', [cut.seq]);
        await tx.run('UPDATE feed_window SET pruned_through = max(pruned_through, ?) WHERE id = 1', [cut.seq]);
        return changes;
      });
      deleted += n;
      if (n < PRUNE_BATCH) return deleted;
    }
  }

  async since(afterSeq: number, limit: number): Promise<Change[]> {
    const rows = await this.db.all<SqliteChangeRow>('SELECT * FROM changes WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]);
    return rows.map(toChange);
  }

  onAppend(listener: () => void): () => void {
    // a wrapper per registration: the same function registered twice is woken twice and
    // unsubscribed once each
    const entry = () => listener();
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  /** One process owns the file: no other node appends. */
  onRemote(): () => void {
    return () => undefined;
  }

  /**
   * Runs `work` as one write transaction in which it appends changes, and wakes the
   * listeners once that transaction has committed any.
   */
  async write<T>(work: (tx: Queryable, feed: FeedWriter) => Promise<T>, missing?: string): Promise<T> {
    let appended = false;
    const value = await this.db.transaction((tx) =>
      work(tx, {
        async append(change) {
          const c: Omit<ChangeRow, 'seq' | 'has_fingerprint'> & { has_fingerprint: boolean | null } = {
            file_hash: null, action_hash: null, signature_seq: null, has_fingerprint: null, user_id: null, ...change,
          };
          await tx.run(
            'INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, user_id, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
            [c.kind, c.file_hash, c.action_hash, c.signature_seq, c.has_fingerprint === null ? null : c.has_fingerprint ? 1 : 0, c.user_id, c.at],
          );
          appended = true;
        },
        async appendStored(fromSeq, toSeq, at) {
          const { changes } = await tx.run(
            `INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, at)
             SELECT 'stored', file_hash, action_hash, seq, has_fingerprint, ? FROM signatures WHERE seq >= ? AND seq <= ? ORDER BY seq`,
            [at, fromSeq, toSeq],
          );
          if (changes > 0) appended = true;
        },
      }),
      missing,
    );
    if (appended) this.wake();
    return value;
  }

  private wake(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // a consumer's failure must not turn a committed write into an error
      }
    }
  }
}
