-- Webhooks (spec 2.7, 3.2, 4.15; decisions.md 8; issue 18) and their deliveries: one
-- row per event and webhook, queued when the dispatcher routes an outbox row, leased
-- while it is being sent, finished once with its outcome. Times are Unix milliseconds.
CREATE TABLE webhooks (
  id                 TEXT PRIMARY KEY,                       -- UUID
  app_id             TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  org_id             TEXT NOT NULL,                          -- the org its count is charged to (the app's or the owner's personal one)
  url                TEXT NOT NULL,
  events             TEXT NOT NULL,                          -- JSON array of event types
  filters            TEXT NOT NULL,                          -- JSON object (spec 2.7: file_hash only)
  sealed_secret      TEXT NOT NULL,                          -- the HMAC key, sealed by the domain (AES-256-GCM)
  active             INTEGER NOT NULL DEFAULT 1,
  active_since       INTEGER NOT NULL,                       -- its creation, or the PUT that re-enabled it: older events are not its
  failure_count      INTEGER NOT NULL DEFAULT 0,             -- consecutive failures
  last_triggered_at  INTEGER,
  last_failure_at    INTEGER,                                -- kept, never returned (spec 2.7)
  created_at         INTEGER NOT NULL
);
CREATE INDEX webhooks_app ON webhooks(app_id);
CREATE INDEX webhooks_org ON webhooks(org_id);

CREATE TABLE webhook_deliveries (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,            -- queue order
  id           TEXT NOT NULL UNIQUE,                         -- UUID: X-Service-Delivery
  event_id     INTEGER NOT NULL REFERENCES event_outbox(id),
  webhook_id   TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  due_at       INTEGER NOT NULL,                             -- due from this instant (a claim leases it forward)
  attempts     INTEGER NOT NULL DEFAULT 0,                   -- claims so far
  finished_at  INTEGER,
  outcome      TEXT CHECK (outcome IN ('delivered', 'failed', 'dropped')),
  UNIQUE (event_id, webhook_id)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(webhook_id, seq) WHERE finished_at IS NULL;
