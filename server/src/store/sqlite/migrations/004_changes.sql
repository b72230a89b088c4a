-- The change feed (issue 15; src/store/types.ts ChangeFeed): every write that changes
-- a verification answer, appended in the transaction of its cause and numbered in
-- commit order (one writer). Readers (the verify cache, the answer cache, the match
-- index) keep the last seq they applied and read the rows after it. Rows are never
-- updated. Writes made before this migration have none: a reader starts from a
-- snapshot of the records and follows the feed from the seq it read before it.
CREATE TABLE changes (
  seq              INTEGER PRIMARY KEY AUTOINCREMENT,
  kind             TEXT NOT NULL CHECK (kind IN ('stored', 'revoked', 'thumbnail', 'profile')),
  file_hash        TEXT,                                   -- stored, revoked, thumbnail
  action_hash      TEXT,                                   -- stored, revoked, thumbnail
  signature_seq    INTEGER,                                -- stored: the record's signatures.seq
  has_fingerprint  INTEGER,                                -- stored: 1 when the record has a perceptual hash
  user_id          TEXT,                                   -- profile: whose public profile changed
  at               INTEGER NOT NULL                        -- when the write was made (Unix ms)
);
