-- Issue 32: a record's local feature set (the bytes its signed `features.digest` is the
-- SHA-256 of), beside the record in a table of its own so that the match index loads
-- them at start without reading whole records. Issue 33: the Content-Code unit of a
-- record's signed ISCC-CODE (`iscc`), its canonical string, for the ISCC index (the Soft
-- Binding Resolution API's byBinding). Rows are written with the record, never updated;
-- records stored before have neither.
CREATE TABLE record_features (
  seq   INTEGER PRIMARY KEY REFERENCES signatures(seq) ON DELETE CASCADE,
  data  BLOB NOT NULL
);
CREATE TABLE record_iscc (
  seq      INTEGER PRIMARY KEY REFERENCES signatures(seq) ON DELETE CASCADE,
  content  TEXT NOT NULL
);
