-- E-mail address verification links (spec 2.8), as SQLite migration 009: tokens kept
-- only as SHA-256 hex, bound to the address they were sent to, single use, 24 hours.
CREATE TABLE email_verifications (
  hash        text CONSTRAINT email_verifications_hash PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email       text NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL,
  used_at     bigint
);
CREATE INDEX email_verifications_user ON email_verifications (user_id, expires_at);
