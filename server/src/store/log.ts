// The transparency log's table module (issue 27, docs/transparency-log.md): entries,
// tiles and the latest checkpoint, the queries written once for every engine (./sql.ts).
//
// Order. An entry's index is handed out in the transaction of its event, by
// appendLogEntries, which its callers run inside the change feed's write (feed.ts) after
// the feed lock is taken: from there to commit no other transaction appends, on any
// node, so indexes are committed in order and the committed entries are always exactly
// 0 .. size - 1 (a rolled-back transaction's indexes are handed out again).
//
// Backfill. Records, revocations and thumbnails stored before the log existed are
// appended first, once, in the order they were stored (their server times: published_at,
// created_at, set_at; records before revocations before thumbnails at the same
// millisecond), under the feed lock, before the first new entry: backfillLog runs it,
// at start (root.ts) and, should an event come first, inside that event's transaction.
import { encodeLogEntry, thumbnailEntry, type LogEntry, type SignatureRecord, type TileCoord, type TileData } from 'provenant';
import type { Db, Queryable } from './sql.js';
import { flag } from './sql.js';

export interface StoredCheckpoint {
  size: number;
  /** The signed note as served: the log's signature and every cosignature it got. */
  note: string;
}

export interface TransparencyLogStore {
  /** Committed entries: indexes 0 .. size - 1. */
  size(): Promise<number>;
  /** The entries [from, to) (UTF-8 bytes), in index order. */
  entries(from: number, to: number): Promise<Uint8Array[]>;
  /** The index of the entry of the record `actionHash`, or null. */
  recordIndex(actionHash: string): Promise<number | null>;
  /** The indexes of these records' entries (those with one). */
  recordIndexes(actionHashes: readonly string[]): Promise<Map<string, number>>;
  /** For each coordinate the stored tile of that level and index when at least that wide (else null). */
  readTiles(coords: readonly TileCoord[]): Promise<(Uint8Array | null)[]>;
  latestCheckpoint(): Promise<StoredCheckpoint | null>;
  /**
   * In one transaction: the checkpoint of `size` and its `tiles` (each kept at its
   * widest), if `size` is above the stored checkpoint's; false (nothing written) when
   * another node stored one at least as large first.
   */
  saveCheckpoint(size: number, tiles: readonly TileData[], note: string): Promise<boolean>;
  /** Replaces the note of the checkpoint of `size` (cosignatures added); false when another size is stored now. */
  cosignCheckpoint(size: number, note: string): Promise<boolean>;
  /** Appends what was stored before the log existed, once (see the top of this file). Returns the entries appended. */
  backfill(): Promise<number>;
}

/** An event's entry as its transaction appends it. */
export interface NewLogEntry {
  kind: LogEntry['kind'];
  action_hash: string;
  entry: Uint8Array;
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** Events whose entries the backfill makes per query (and appends per statement). */
const BACKFILL_BATCH = 1_000;

/** Databases whose backfill was read back as done (committed; it never becomes undone). */
const backfilled = new WeakSet<Db>();

/**
 * Appends `entries` in order, inside a write of the change feed that holds the feed lock
 * (the caller took it: feed.write's serialise()). Runs the backfill first if it is not
 * done yet.
 */
export async function appendLogEntries(db: Db, tx: Queryable, entries: readonly NewLogEntry[]): Promise<void> {
  // the event's own rows are already written in this transaction: the backfill leaves them to it
  if (!backfilled.has(db)) await backfillIn(db, tx, new Set(entries.map((e) => `${e.kind}:${e.action_hash}`)));
  await insertEntries(db, tx, entries);
}

async function insertEntries(db: Db, tx: Queryable, entries: readonly NewLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  // one statement (one round trip under the feed lock): the next index is read in it,
  // once, before its own rows (an uncorrelated subquery on both engines)
  const batch = db.dialect.batch(
    [['pos', 'bigint'], ['kind', 'text'], ['action_hash', 'text'], ['entry', 'text']],
    entries.map((e, i) => [i, e.kind, e.action_hash, text.decode(e.entry)]),
  );
  await tx.run(
    `INSERT INTO log_entries (idx, kind, action_hash, entry)
     SELECT (SELECT COALESCE(max(idx), -1) + 1 FROM log_entries) + pos, kind, action_hash, entry FROM ${batch.from} ORDER BY n`,
    batch.params,
  );
}

async function nextIndex(q: Queryable): Promise<number> {
  const row = await q.get<{ next: number }>('SELECT COALESCE(max(idx), -1) + 1 AS next FROM log_entries');
  return Number(row?.next ?? 0);
}

/** The record entry of a stored record (the record column holds its canonical JSON). */
export function recordLogEntry(actionHash: string, record: SignatureRecord, signature: string, publishedAt: number): NewLogEntry {
  return { kind: 'record', action_hash: actionHash, entry: encodeLogEntry({ kind: 'record', action_hash: actionHash, record, signature, published_at: publishedAt }) };
}

export function revocationLogEntry(r: { action_hash: string; reason: string | null; revoked_at: number; signer: string; signature: string }): NewLogEntry {
  return { kind: 'revocation', action_hash: r.action_hash, entry: encodeLogEntry({ kind: 'revocation', ...r }) };
}

export function thumbnailLogEntry(actionHash: string, dataUri: string): NewLogEntry {
  return { kind: 'thumbnail', action_hash: actionHash, entry: encodeLogEntry(thumbnailEntry(actionHash, dataUri)) };
}

/**
 * The backfill inside a transaction holding the feed lock; a no-op once done. `exclude`
 * (`kind:action_hash`): rows the calling transaction wrote itself, which it appends.
 */
async function backfillIn(db: Db, tx: Queryable, exclude: ReadonlySet<string> = new Set()): Promise<number> {
  const state = await tx.get<{ backfilled: boolean | number }>(`SELECT backfilled FROM log_state WHERE id = 1 ${db.dialect.lock('update')}`);
  if (state === undefined || flag(state.backfilled)) {
    backfilled.add(db);
    return 0;
  }
  // first the order alone (a few numbers per event: a large database's bodies are not
  // all held at once), then the bodies a thousand at a time in that order
  type Key = { at: number; order: 0 | 1 | 2; seq: number };
  const keys: Key[] = [];
  const order = async (sql: string, o: Key['order']) => {
    for (const r of await tx.all<{ seq: number; at: number }>(sql)) keys.push({ at: Number(r.at), order: o, seq: Number(r.seq) });
  };
  await order('SELECT seq, published_at AS at FROM signatures', 0);
  await order('SELECT s.seq, r.created_at AS at FROM revocations r JOIN signatures s ON s.action_hash = r.action_hash', 1);
  await order('SELECT s.seq, t.set_at AS at FROM thumbnails t JOIN signatures s ON s.action_hash = t.action_hash', 2);
  keys.sort((a, b) => a.at - b.at || a.order - b.order || a.seq - b.seq);
  const d = db.dialect;
  let appended = 0;
  for (let i = 0; i < keys.length; i += BACKFILL_BATCH) {
    const chunk = keys.slice(i, i + BACKFILL_BATCH);
    const seqs = (o: Key['order']) => d.list(chunk.filter((k) => k.order === o).map((k) => k.seq));
    const entries = new Map<string, NewLogEntry>();
    for (const r of await tx.all<{ seq: number; action_hash: string; record: string; signature: string; published_at: number }>(
      `SELECT seq, action_hash, record, signature, published_at FROM signatures WHERE ${d.inList('seq', 'bigint')}`, [seqs(0)],
    )) entries.set(`0:${r.seq}`, recordLogEntry(r.action_hash, JSON.parse(r.record) as SignatureRecord, r.signature, Number(r.published_at)));
    for (const r of await tx.all<{ seq: number; action_hash: string; reason: string | null; revoked_at: number; signer: string; signature: string }>(
      `SELECT s.seq, r.action_hash, r.reason, r.revoked_at, r.signer, r.signature FROM revocations r JOIN signatures s ON s.action_hash = r.action_hash WHERE ${d.inList('s.seq', 'bigint')}`, [seqs(1)],
    )) entries.set(`1:${r.seq}`, revocationLogEntry({ action_hash: r.action_hash, reason: r.reason, revoked_at: Number(r.revoked_at), signer: r.signer, signature: r.signature }));
    for (const r of await tx.all<{ seq: number; action_hash: string; data: string }>(
      `SELECT s.seq, t.action_hash, t.data FROM thumbnails t JOIN signatures s ON s.action_hash = t.action_hash WHERE ${d.inList('s.seq', 'bigint')}`, [seqs(2)],
    )) entries.set(`2:${r.seq}`, thumbnailLogEntry(r.action_hash, r.data));
    const batch = chunk.map((k) => entries.get(`${k.order}:${k.seq}`)!).filter((e) => !exclude.has(`${e.kind}:${e.action_hash}`));
    await insertEntries(db, tx, batch);
    appended += batch.length;
  }
  await tx.run(`UPDATE log_state SET backfilled = ${db.dialect.true} WHERE id = 1`);
  // not remembered in memory until read back committed: a rollback undoes the flag too
  return appended;
}

export function createLogStore(db: Db, feed: { write<T>(work: (tx: Queryable, w: { serialise(): Promise<void> }) => Promise<T>): Promise<T> }): TransparencyLogStore {
  const d = db.dialect;
  return {
    size() {
      return nextIndex(db);
    },

    async entries(from, to) {
      if (to <= from) return [];
      const rows = await db.all<{ entry: string }>('SELECT entry FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx', [from, to]);
      return rows.map((r) => utf8.encode(r.entry));
    },

    async recordIndex(actionHash) {
      const row = await db.get<{ idx: number }>(`SELECT idx FROM log_entries WHERE action_hash = ? AND kind = 'record'`, [actionHash]);
      return row === undefined ? null : Number(row.idx);
    },

    async recordIndexes(actionHashes) {
      if (actionHashes.length === 0) return new Map();
      const rows = await db.all<{ idx: number; action_hash: string }>(
        `SELECT idx, action_hash FROM log_entries WHERE kind = 'record' AND ${d.inList('action_hash', 'text')}`,
        [d.list(actionHashes)],
      );
      return new Map(rows.map((r) => [r.action_hash, Number(r.idx)]));
    },

    async readTiles(coords) {
      if (coords.length === 0) return [];
      // one query for all (a proof reads three tiles: one round trip, not three)
      const batch = d.batch([['level', 'bigint'], ['idx', 'bigint']], coords.map((c) => [c.level, c.index]));
      const rows = await db.all<{ level: number; idx: number; width: number; data: Uint8Array }>(
        `SELECT t.level, t.idx, t.width, t.data FROM ${batch.from} JOIN log_tiles t ON t.level = batch.level AND t.idx = batch.idx`,
        batch.params,
      );
      const found = new Map(rows.map((r) => [`${Number(r.level)}/${Number(r.idx)}`, r]));
      return coords.map((c) => {
        const row = found.get(`${c.level}/${c.index}`);
        return row === undefined || Number(row.width) < c.width ? null : new Uint8Array(row.data.buffer, row.data.byteOffset, row.data.byteLength);
      });
    },

    async latestCheckpoint() {
      const row = await db.get<{ checkpoint_size: number; checkpoint: string }>('SELECT checkpoint_size, checkpoint FROM log_state WHERE id = 1');
      return row === undefined || Number(row.checkpoint_size) < 0 ? null : { size: Number(row.checkpoint_size), note: row.checkpoint };
    },

    saveCheckpoint(size, tiles, note) {
      return db.transaction(async (tx) => {
        const changed = await tx.run('UPDATE log_state SET checkpoint_size = ?, checkpoint = ? WHERE id = 1 AND checkpoint_size < ?', [size, note, size]);
        if (changed === 0) return false;
        for (const t of tiles) {
          await tx.run(
            `INSERT INTO log_tiles (level, idx, width, data) VALUES (?, ?, ?, ?)
             ON CONFLICT (level, idx) DO UPDATE SET width = excluded.width, data = excluded.data WHERE excluded.width > log_tiles.width`,
            [t.level, t.index, t.width, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)],
          );
        }
        return true;
      });
    },

    async cosignCheckpoint(size, note) {
      return (await db.run('UPDATE log_state SET checkpoint = ? WHERE id = 1 AND checkpoint_size = ?', [note, size])) > 0;
    },

    backfill() {
      return feed.write(async (tx, w) => {
        await w.serialise();
        return backfillIn(db, tx);
      });
    },
  };
}
