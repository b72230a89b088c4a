-- OAuth 2.0 + PKCE (spec 2.8, 3.4; decisions.md 7; issue 17): a user's consent to an
-- app (the grant), the authorization codes and tokens issued under it. Codes and
-- tokens are kept only as SHA-256 hex of their value. Deleting a grant (the user
-- revokes the app) deletes its shared e-mail copy, codes and tokens. Times: Unix ms.
CREATE TABLE oauth_grants (
  id            TEXT PRIMARY KEY,                              -- UUID
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  app_id        TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  scopes        TEXT NOT NULL,                                 -- JSON array: every scope consented so far
  shared_email  TEXT,                                          -- the verified address shared at consent (scope email)
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  UNIQUE (user_id, app_id)
);
CREATE INDEX oauth_grants_app ON oauth_grants(app_id);

CREATE TABLE oauth_codes (
  hash            TEXT PRIMARY KEY,                            -- SHA-256 hex of the code
  grant_id        TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  redirect_uri    TEXT NOT NULL,
  scopes          TEXT NOT NULL,                               -- JSON array
  code_challenge  TEXT NOT NULL,                               -- S256
  expires_at      INTEGER NOT NULL,
  used_at         INTEGER,                                     -- kept after use: a replay revokes what it issued
  created_at      INTEGER NOT NULL
);
CREATE INDEX oauth_codes_grant ON oauth_codes(grant_id);
CREATE INDEX oauth_codes_expiry ON oauth_codes(expires_at);

CREATE TABLE oauth_refresh_tokens (
  hash        TEXT PRIMARY KEY,                                -- SHA-256 hex of the token
  grant_id    TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  code_hash   TEXT NOT NULL,                                   -- the code it was issued for
  scopes      TEXT NOT NULL,
  expires_at  INTEGER NOT NULL,
  revoked_at  INTEGER,
  created_at  INTEGER NOT NULL
);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens(grant_id);
CREATE INDEX oauth_refresh_code ON oauth_refresh_tokens(code_hash);

CREATE TABLE oauth_access_tokens (
  hash          TEXT PRIMARY KEY,                              -- SHA-256 hex of the token
  refresh_hash  TEXT NOT NULL REFERENCES oauth_refresh_tokens(hash) ON DELETE CASCADE,
  grant_id      TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  scopes        TEXT NOT NULL,
  expires_at    INTEGER NOT NULL,
  created_at    INTEGER NOT NULL
);
CREATE INDEX oauth_access_refresh ON oauth_access_tokens(refresh_hash);
CREATE INDEX oauth_access_grant ON oauth_access_tokens(grant_id);
CREATE INDEX oauth_access_expiry ON oauth_access_tokens(expires_at);
