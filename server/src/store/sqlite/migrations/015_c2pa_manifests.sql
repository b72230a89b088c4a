-- Issue 33: the manifest repository. A detached C2PA manifest store (application/c2pa)
-- a record's signer published, by its active manifest's id (the manifest's label, a URN),
-- for the record its provenant.record assertion names; `active` is a store of the
-- active manifest alone (GET /c2pa/v1/manifests/{id}?returnActiveManifest=true). What the
-- reference reader said of the store when it was stored (validation_state, the failure
-- codes as a JSON array) and its io.iscc.v0 soft binding (null: none) are kept beside it.
-- Rows are written once, never updated.
CREATE TABLE c2pa_manifests (
  manifest_id       TEXT PRIMARY KEY,
  seq               INTEGER NOT NULL REFERENCES signatures(seq) ON DELETE CASCADE,
  store             BLOB NOT NULL,
  active            BLOB NOT NULL,
  validation_state  TEXT NOT NULL,
  validation_codes  TEXT NOT NULL,
  soft_binding      TEXT,
  stored_at         INTEGER NOT NULL
);
CREATE INDEX c2pa_manifests_seq ON c2pa_manifests (seq, stored_at);
