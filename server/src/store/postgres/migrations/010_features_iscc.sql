-- Issues 32 and 33, as SQLite migration 014: a record's local feature set (the bytes its
-- signed features.digest is the SHA-256 of), and the Content-Code unit of its signed
-- ISCC-CODE, each in a table of its own beside the record (the match index and the
-- ISCC index load them without reading whole records). Never updated.
CREATE TABLE record_features (
  seq   bigint PRIMARY KEY REFERENCES signatures(seq) ON DELETE CASCADE,
  data  bytea NOT NULL
);
CREATE TABLE record_iscc (
  seq      bigint PRIMARY KEY REFERENCES signatures(seq) ON DELETE CASCADE,
  content  text NOT NULL
);
