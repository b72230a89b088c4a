-- Issue 33, as SQLite migration 015: the manifest repository's stores, by manifest id,
-- for the record they were published for, with the reader's verdict and the io.iscc.v0
-- soft binding beside them. Never updated.
CREATE TABLE c2pa_manifests (
  manifest_id       text PRIMARY KEY,
  seq               bigint NOT NULL REFERENCES signatures(seq) ON DELETE CASCADE,
  store             bytea NOT NULL,
  active            bytea NOT NULL,
  validation_state  text NOT NULL,
  validation_codes  text NOT NULL,
  soft_binding      text,
  stored_at         bigint NOT NULL
);
CREATE INDEX c2pa_manifests_seq ON c2pa_manifests (seq, stored_at);
