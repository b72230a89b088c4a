// Change-feed rows as both engines read them, and their mapping to the store's value.
// No SQL here: the queries stay in each engine (SQLite turns its 0/1 flag into a boolean first).
import type { Change } from '../types.js';

/** Changes deleted per transaction when the feed's window is pruned (ChangeFeed.prune). */
export const PRUNE_BATCH = 10_000;

export interface ChangeRow {
  seq: number;
  kind: Change['kind'];
  file_hash: string | null;
  action_hash: string | null;
  signature_seq: number | null;
  has_fingerprint: boolean | null;
  user_id: string | null;
  at: number;
}

export function changeFromRow(r: ChangeRow): Change {
  switch (r.kind) {
    case 'stored':
      return { seq: r.seq, kind: 'stored', file_hash: r.file_hash!, action_hash: r.action_hash!, signature_seq: r.signature_seq!, has_fingerprint: r.has_fingerprint === true, at: r.at };
    case 'revoked':
    case 'thumbnail':
      return { seq: r.seq, kind: r.kind, file_hash: r.file_hash!, action_hash: r.action_hash!, at: r.at };
    case 'profile':
      return { seq: r.seq, kind: 'profile', user_id: r.user_id!, at: r.at };
  }
}
