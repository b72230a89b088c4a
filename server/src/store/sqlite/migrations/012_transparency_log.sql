-- The transparency log (issue 27, docs/transparency-log.md). One row per entry, its index
-- handed out under the change feed's lock in the transaction of its event (store/log.ts);
-- `entry` is the entry's bytes (RFC 8785 JSON, UTF-8) as text. The tiles the checkpoint
-- signer computed, each at its widest (a full tile never changes), and the one latest
-- checkpoint (size -1: none yet). log_state.backfilled: the records, revocations and
-- thumbnails stored before this migration have been appended (done once, before the first
-- new entry).
CREATE TABLE log_entries (
  idx          INTEGER PRIMARY KEY,
  kind         TEXT NOT NULL CHECK (kind IN ('record', 'revocation', 'thumbnail')),
  action_hash  TEXT NOT NULL,
  entry        TEXT NOT NULL
);
CREATE INDEX log_entries_record ON log_entries(action_hash) WHERE kind = 'record';

CREATE TABLE log_tiles (
  level  INTEGER NOT NULL,
  idx    INTEGER NOT NULL,
  width  INTEGER NOT NULL CHECK (width BETWEEN 1 AND 256),
  data   BLOB NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE log_state (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  backfilled       INTEGER NOT NULL,
  checkpoint_size  INTEGER NOT NULL,
  checkpoint       TEXT NOT NULL
);
INSERT INTO log_state (id, backfilled, checkpoint_size, checkpoint) VALUES (1, 0, -1, '');
