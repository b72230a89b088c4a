-- Issue 28: a record's pdq_hash (PDQ or vPDQ; its RFC 8785 JSON text, NULL without one),
-- so the match index and `admin export-hashes` read it without parsing whole records.
-- A record with one counts as fingerprinted (has_fingerprint), perceptual_hash or not.
-- Records stored before keep theirs inside `record`: copied out here.
ALTER TABLE signatures ADD COLUMN pdq_hash TEXT;
UPDATE signatures SET pdq_hash = record->'$.pdq_hash', has_fingerprint = 1
  WHERE json_valid(record) AND json_type(record, '$.pdq_hash') = 'object';
