-- The transparency log (issue 27, docs/transparency-log.md): as SQLite's 012. One row per
-- entry, its index handed out under the change feed's advisory lock in the transaction of
-- its event, so indexes are committed in order on every node (store/log.ts).
CREATE TABLE log_entries (
  idx          bigint PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('record', 'revocation', 'thumbnail')),
  action_hash  text NOT NULL,
  entry        text NOT NULL
);
CREATE INDEX log_entries_record ON log_entries(action_hash) WHERE kind = 'record';

CREATE TABLE log_tiles (
  level  integer NOT NULL,
  idx    bigint NOT NULL,
  width  integer NOT NULL CHECK (width BETWEEN 1 AND 256),
  data   bytea NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE log_state (
  id               integer PRIMARY KEY CHECK (id = 1),
  backfilled       boolean NOT NULL,
  checkpoint_size  bigint NOT NULL,
  checkpoint       text NOT NULL
);
INSERT INTO log_state (id, backfilled, checkpoint_size, checkpoint) VALUES (1, false, -1, '');
