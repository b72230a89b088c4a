-- The blind contact relay's queue (spec 4.13; issue 19): requests as received, until
-- the relay has delivered or dropped them (then the row is deleted: no copy is kept).
-- The signer's address is never stored here; the drainer looks it up at delivery.
CREATE TABLE contact_queue (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  signer_agent_key TEXT NOT NULL,                            -- canonical uhCAk... form
  file_hash        TEXT,                                     -- null: a profile contact
  sender_name      TEXT NOT NULL,
  sender_email     TEXT NOT NULL,
  message          TEXT NOT NULL,
  purpose          TEXT NOT NULL CHECK (purpose IN ('licensing', 'ai_training', 'collaboration', 'other')),
  created_at       INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,               -- failed deliveries so far
  due_at           INTEGER NOT NULL,                         -- due from this instant (a claim leases it forward)
  last_error       TEXT
);
CREATE INDEX contact_queue_due ON contact_queue(due_at, id);
