-- Sign-it (decisions.md 2, 6, 8): immutable signature records, revocations and
-- thumbnails as separate rows linked by action hash, and the event outbox.
-- Times are Unix milliseconds.

-- One row per published record. `record` is the canonical JSON (RFC 8785) of the
-- twelve signed fields exactly as signed; the columns beside it copy the fields that
-- are queried. Nothing here is ever updated.
CREATE TABLE signatures (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,        -- insertion order; cursor for the match index
  action_hash    TEXT NOT NULL UNIQUE,                     -- 64 lowercase hex
  file_hash      TEXT NOT NULL,                            -- 64 lowercase hex
  signer         TEXT NOT NULL,                            -- agent key, uhCAk form
  signed_at      INTEGER NOT NULL,
  intent         TEXT NOT NULL,
  supersedes     TEXT,
  has_fingerprint INTEGER NOT NULL DEFAULT 0,              -- perceptual_hash present
  record         TEXT NOT NULL,                            -- canonical JSON of the twelve fields
  signature      TEXT NOT NULL,                            -- base64 Ed25519 over the canonical record
  user_id        TEXT NOT NULL REFERENCES users(id),       -- the account the signer belonged to
  app_id         TEXT,                                     -- the app whose token or client_id made it
  source         TEXT NOT NULL CHECK (source IN ('rest', 'vault')),
  published_at   INTEGER NOT NULL,                         -- when this server stored it; quota period
  pool           TEXT NOT NULL CHECK (pool IN ('personal', 'org')),
  org_id         TEXT,                                     -- charged org when pool = 'org'
  overage        INTEGER NOT NULL DEFAULT 0                -- 1: beyond a paid org tier's included signs
);
CREATE INDEX signatures_file ON signatures(file_hash);
CREATE INDEX signatures_signer ON signatures(signer, signed_at);
CREATE INDEX signatures_user ON signatures(user_id, signed_at);
CREATE INDEX signatures_personal_period ON signatures(user_id, published_at) WHERE pool = 'personal';
CREATE INDEX signatures_org_period ON signatures(org_id, published_at) WHERE pool = 'org';
CREATE INDEX signatures_fingerprinted ON signatures(seq) WHERE has_fingerprint = 1;

-- At most one revocation per record; `signature` signs {action_hash, reason, revoked_at, signer}.
CREATE TABLE revocations (
  action_hash  TEXT PRIMARY KEY REFERENCES signatures(action_hash),
  signer       TEXT NOT NULL,
  reason       TEXT,
  revoked_at   INTEGER NOT NULL,
  signature    TEXT NOT NULL,
  source       TEXT NOT NULL CHECK (source IN ('rest', 'vault')),
  app_id       TEXT,
  created_at   INTEGER NOT NULL
);

-- The latest thumbnail per record (a data:image/ URI); setting it again replaces it.
CREATE TABLE thumbnails (
  action_hash  TEXT PRIMARY KEY REFERENCES signatures(action_hash),
  data         TEXT NOT NULL,
  set_at       INTEGER NOT NULL
);

-- Durable event outbox (decisions.md 8): written in the same transaction as its cause;
-- a dispatcher delivers each row once to the app's matching webhooks and stamps
-- dispatched_at. `payload` holds the event-specific fields (spec 6) as JSON.
CREATE TABLE event_outbox (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id         TEXT NOT NULL,
  type           TEXT NOT NULL,
  payload        TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  dispatched_at  INTEGER
);
CREATE INDEX event_outbox_pending ON event_outbox(id) WHERE dispatched_at IS NULL;
