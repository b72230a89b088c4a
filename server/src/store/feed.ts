// The change feed: the `changes` table, appended in the transaction of its cause, read
// by every consumer from its own cursor (the verify cache, the answer cache, the match
// index).
//
// Commit order. Seqs must be committed in seq order, or a reader that saw seq 8 and moved
// its cursor past 7 would never read 7. SQLite's one writer commits transactions one at
// a time. On PostgreSQL an identity column hands out numbers at insert, not at commit:
// so every transaction that appends takes the feed lock (Lock 'feed', an advisory lock
// held to its commit) before it appends, and seqs are handed out and committed one
// transaction at a time. A writer takes the lock before its first write (write() does,
// unless the caller takes it later with serialise()): taken after row locks, it could
// deadlock with a writer that holds it and waits for those rows.
//
// Waking. Local listeners are woken after the local commit, before the write resolves
// (read your writes). Other nodes hear of it through the engine's `RemoteChanges`
// (PostgreSQL: NOTIFY at commit, ./postgres/feed.ts); SQLite has no other node.
import type { Db, Queryable } from './sql.js';
import { flag } from './sql.js';

/** A write that changes a verification answer, numbered in commit order. */
export type Change =
  | { seq: number; kind: 'stored'; file_hash: string; action_hash: string; signature_seq: number; has_fingerprint: boolean; at: number }
  | { seq: number; kind: 'revoked'; file_hash: string; action_hash: string; at: number }
  | { seq: number; kind: 'thumbnail'; file_hash: string; action_hash: string; at: number }
  /** A signer's public profile changed (answers show profile fields): any answer with their records. */
  | { seq: number; kind: 'profile'; user_id: string; at: number };

/** How much of the change feed is kept (PROVENANT_FEED_MAX_CHANGES, PROVENANT_FEED_MAX_AGE_HOURS). */
export interface FeedWindow {
  maxChanges: number;
  maxAgeMs: number;
}

/** Changes deleted per transaction when the feed's window is pruned (ChangeFeed.prune). */
const PRUNE_BATCH = 10_000;

/**
 * Every engine's log of the writes that change verification answers: each change is
 * appended in the transaction of its cause (a rolled-back write appends nothing), and
 * numbered so that a reader holding a seq has seen every change committed up to it.
 * Consumers (the verify cache, the answer cache, the match index) keep a cursor.
 */
export interface ChangeFeed {
  /** The seq of the latest committed change (0 when none), pruned ones included: never below horizon(). */
  latest(): Promise<number>;
  /**
   * Committed changes with seq > afterSeq, oldest first, at most `limit`: those still in
   * the window. Changes up to horizon() were pruned: a reader whose cursor is below it
   * missed some (see horizon()).
   */
  since(afterSeq: number, limit: number): Promise<Change[]>;
  /**
   * The highest seq pruned from the feed (0 when none). Pruning removes changes from the
   * oldest, so a reader at `cursor` has missed changes exactly when horizon() > cursor.
   * Read it AFTER the since() it checks (the horizon only grows): then a horizon not
   * above the cursor proves that since() saw every change after it. A since() whose first
   * change is cursor + 1 proves it alone.
   */
  horizon(): Promise<number>;
  /**
   * Deletes the oldest changes outside the window: beyond the newest `maxChanges`, or
   * written (`at`) before `now - maxAgeMs`; raises horizon() to the highest seq deleted,
   * in the same transaction. In batches (each its own transaction, so appends are never
   * held up long); several nodes pruning at once is harmless. Returns the changes deleted.
   */
  prune(window: FeedWindow, now: number): Promise<number>;
  /**
   * Wakes `listener` after a commit on this node appended changes (no payload: read
   * since() from your own cursor). Called synchronously once the commit is done and
   * before the writing call resolves, so a consumer that must not answer from before a
   * write its caller has seen (read your writes) marks itself stale here, then catches
   * up with since(). Writes by other processes wake nobody here: see onRemote.
   * Returns unsubscribe.
   */
  onAppend(listener: () => void): () => void;
  /**
   * Wakes `listener` when another node may have appended changes: on PostgreSQL a
   * notification from its commit, and every time the notification connection is
   * (re)established, since changes may have been committed while it was down. No
   * payload and no ordering promise: read since() from your own cursor. An engine one
   * process owns (SQLite) never calls it. Returns unsubscribe.
   */
  onRemote(listener: () => void): () => void;
}

/** A change as its cause writes it (the feed numbers it). */
export type NewChange = { [K in Change['kind']]: Omit<Extract<Change, { kind: K }>, 'seq'> }[Change['kind']];

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

/** How an engine shared by several nodes tells them of this node's commits. */
export interface RemoteChanges {
  /** Inside a transaction that appended: wakes the other nodes once it commits. */
  notify(tx: Queryable): Promise<void>;
  onRemote(listener: () => void): () => void;
}

interface ChangeRow {
  seq: number;
  kind: Change['kind'];
  file_hash: string | null;
  action_hash: string | null;
  signature_seq: number | null;
  has_fingerprint: boolean | number | null;
  user_id: string | null;
  at: number;
}

function changeFromRow(r: ChangeRow): Change {
  switch (r.kind) {
    case 'stored':
      return { seq: r.seq, kind: 'stored', file_hash: r.file_hash!, action_hash: r.action_hash!, signature_seq: r.signature_seq!, has_fingerprint: r.has_fingerprint !== null && flag(r.has_fingerprint), at: r.at };
    case 'revoked':
    case 'thumbnail':
      return { seq: r.seq, kind: r.kind, file_hash: r.file_hash!, action_hash: r.action_hash!, at: r.at };
    case 'profile':
      return { seq: r.seq, kind: 'profile', user_id: r.user_id!, at: r.at };
  }
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

export class Feed implements ChangeFeed {
  private readonly local = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly remote: RemoteChanges | null = null,
  ) {}

  async latest(): Promise<number> {
    // max(seq) reads the primary key's last entry; when the window has been pruned empty
    // the highest seq pruned stands in (a seq is never handed out again)
    const row = await this.db.get<{ last: number | null }>(
      `SELECT ${this.db.dialect.greatest('COALESCE((SELECT max(seq) FROM changes), 0)', 'COALESCE((SELECT pruned_through FROM feed_window WHERE id = 1), 0)')} AS last`,
    );
    return row?.last ?? 0;
  }

  async horizon(): Promise<number> {
    const row = await this.db.get<{ pruned_through: number }>('SELECT pruned_through FROM feed_window WHERE id = 1');
    return row?.pruned_through ?? 0;
  }

  /**
   * Needs no feed lock: an append in flight holds a seq above every committed one (seqs
   * are handed out under the lock, or by SQLite's one writer), and only committed changes
   * are deleted. Two nodes pruning at once delete the same rows; the horizon only grows.
   */
  async prune(window: FeedWindow, now: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      // one batch per write transaction: signs wait for it at most that long
      const n = await this.db.transaction(async (tx) => {
        // of the oldest PRUNE_BATCH changes, up to the last one outside the window
        const cut = await tx.get<{ seq: number | null }>(
          `SELECT max(seq) AS seq FROM (SELECT seq, at FROM changes ORDER BY seq LIMIT ?) oldest
           WHERE seq <= (SELECT max(seq) FROM changes) - ? OR at < ?`,
          [PRUNE_BATCH, window.maxChanges, now - window.maxAgeMs],
        );
        if (cut?.seq == null) return 0;
        const count = await tx.run('DELETE FROM changes WHERE seq <= ?', [cut.seq]);
        await tx.run(`UPDATE feed_window SET pruned_through = ${this.db.dialect.greatest('pruned_through', '?')} WHERE id = 1`, [cut.seq]);
        return count;
      });
      deleted += n;
      if (n < PRUNE_BATCH) return deleted;
    }
  }

  async since(afterSeq: number, limit: number): Promise<Change[]> {
    const rows = await this.db.all<ChangeRow>('SELECT * FROM changes WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]);
    return rows.map(changeFromRow);
  }

  onAppend(listener: () => void): () => void {
    // a wrapper per registration: the same function registered twice is woken twice and
    // unsubscribed once each
    const entry = () => listener();
    this.local.add(entry);
    return () => this.local.delete(entry);
  }

  onRemote(listener: () => void): () => void {
    return this.remote?.onRemote(listener) ?? (() => undefined);
  }

  /**
   * Runs `work` as one write transaction in which it may append changes; the feed lock
   * is taken first unless `serialiseLater` (then `work` calls serialise() before its
   * first write). Wakes the local listeners once a transaction that appended has
   * committed (and, through RemoteChanges, the other nodes at that commit).
   */
  async write<T>(work: (tx: Queryable, feed: FeedWriter) => Promise<T>, opts: { missing?: string; serialiseLater?: boolean } = {}): Promise<T> {
    const { dialect } = this.db;
    let appended = false;
    const value = await this.db.transaction(async (tx) => {
      let locked = false;
      const serialise = async () => {
        if (locked) return;
        await dialect.serialise(tx, 'feed');
        locked = true;
      };
      if (!opts.serialiseLater) await serialise();
      const result = await work(tx, {
        serialise,
        async append(change) {
          await serialise();
          const c = { file_hash: null, action_hash: null, signature_seq: null, has_fingerprint: null, user_id: null, ...change };
          await tx.run(
            'INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, user_id, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
            [c.kind, c.file_hash, c.action_hash, c.signature_seq, c.has_fingerprint, c.user_id, c.at],
          );
          appended = true;
        },
        async appendStored(fromSeq, toSeq, at) {
          await serialise();
          const count = await tx.run(
            `INSERT INTO changes (kind, file_hash, action_hash, signature_seq, has_fingerprint, at)
             SELECT 'stored', file_hash, action_hash, seq, has_fingerprint, ? FROM signatures WHERE seq >= ? AND seq <= ? ORDER BY seq`,
            [at, fromSeq, toSeq],
          );
          if (count > 0) appended = true;
        },
      });
      if (appended) await this.remote?.notify(tx);
      return result;
    }, opts.missing);
    if (appended) wakeAll(this.local);
    return value;
  }
}
