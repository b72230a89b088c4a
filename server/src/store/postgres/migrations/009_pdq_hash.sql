-- Issue 28, as SQLite migration 013: a record's pdq_hash (PDQ or vPDQ; JSON text, NULL
-- without one) beside the record; a record with one counts as fingerprinted. Records
-- stored before keep theirs inside `record`: copied out here.
ALTER TABLE signatures ADD COLUMN pdq_hash text;
UPDATE signatures SET pdq_hash = (record::jsonb -> 'pdq_hash')::text, has_fingerprint = true
  WHERE record LIKE '%"pdq_hash":{%' AND jsonb_typeof(record::jsonb -> 'pdq_hash') = 'object';
