-- The reduced shape's stored fields (spec 2.3) of every fingerprinted record, as the
-- JSON text a perceptual match answers with (up to 100 per answer). Read from this
-- compact table (about 270 bytes a row), they cost about half as much as building
-- them from `record` on every answer. Kept by a trigger in the inserting transaction
-- (and gone with its record, should one ever be deleted by hand);
-- like the records, rows are never updated. A record SQLite cannot read (nested over
-- its 1,000 levels, which older versions could store) gets no row, instead of failing
-- this migration or its insert: a match answers without it.
CREATE VIEW signature_reduced_source AS
  SELECT seq, signed_at, json_object(
    'file_hash', record->'$.file_hash', 'signer', record->'$.signer', 'signed_at', record->'$.signed_at',
    'intent', record->'$.intent', 'ai_generation', record->'$.ai_generation', 'content_rights', record->'$.content_rights'
  ) AS reduced
  FROM signatures WHERE has_fingerprint = 1 AND json_valid(record);

CREATE TABLE signature_reduced (
  seq        INTEGER PRIMARY KEY REFERENCES signatures(seq) ON DELETE CASCADE,
  signed_at  INTEGER NOT NULL,
  reduced    TEXT NOT NULL
);

CREATE TRIGGER signature_reduced_insert AFTER INSERT ON signatures WHEN NEW.has_fingerprint = 1
BEGIN
  INSERT INTO signature_reduced (seq, signed_at, reduced)
    SELECT seq, signed_at, reduced FROM signature_reduced_source WHERE seq = NEW.seq;
END;

-- Records stored before this migration.
INSERT INTO signature_reduced (seq, signed_at, reduced)
  SELECT seq, signed_at, reduced FROM signature_reduced_source;
