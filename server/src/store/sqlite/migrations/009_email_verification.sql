-- E-mail address verification links (spec 2.8: the email scope shares only verified
-- addresses). A link's token is kept only as its SHA-256 hex; each is bound to the
-- address it was sent to, used once and valid 24 hours. Used and expired links stay a
-- while (purged when the user is sent a new one) so that a second use is told apart
-- from a mistyped link. Times: Unix ms.
CREATE TABLE email_verifications (
  hash        TEXT PRIMARY KEY,                                -- SHA-256 hex of the token
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email       TEXT NOT NULL,                                   -- the address it was sent to (lowercase)
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);
CREATE INDEX email_verifications_user ON email_verifications(user_id, expires_at);
