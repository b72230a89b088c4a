-- OAuth 2.0 + PKCE (spec 2.8, 3.4; decisions.md 7; issue 17), as SQLite 006: a user's
-- consent to an app (the grant), the codes and tokens issued under it, kept only as
-- SHA-256 hex of their value. Deleting a grant deletes its shared e-mail copy, codes
-- and tokens. Times are Unix milliseconds.
CREATE TABLE oauth_grants (
  id            text CONSTRAINT oauth_grants_id PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  app_id        text NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  scopes        text NOT NULL,
  shared_email  text,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  CONSTRAINT oauth_grants_user_app UNIQUE (user_id, app_id)
);
CREATE INDEX oauth_grants_app ON oauth_grants (app_id);

CREATE TABLE oauth_codes (
  hash            text CONSTRAINT oauth_codes_hash PRIMARY KEY,
  grant_id        text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  redirect_uri    text NOT NULL,
  scopes          text NOT NULL,
  code_challenge  text NOT NULL,
  expires_at      bigint NOT NULL,
  used_at         bigint,
  created_at      bigint NOT NULL
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
  hash        text CONSTRAINT oauth_refresh_tokens_hash PRIMARY KEY,
  grant_id    text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  scopes      text NOT NULL,
  expires_at  bigint NOT NULL,
  revoked_at  bigint,
  created_at  bigint NOT NULL
);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_code ON oauth_refresh_tokens (code_hash);

CREATE TABLE oauth_access_tokens (
  hash          text CONSTRAINT oauth_access_tokens_hash PRIMARY KEY,
  refresh_hash  text NOT NULL REFERENCES oauth_refresh_tokens(hash) ON DELETE CASCADE,
  grant_id      text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  scopes        text NOT NULL,
  expires_at    bigint NOT NULL,
  created_at    bigint NOT NULL
);
CREATE INDEX oauth_access_refresh ON oauth_access_tokens (refresh_hash);
CREATE INDEX oauth_access_grant ON oauth_access_tokens (grant_id);
CREATE INDEX oauth_access_expiry ON oauth_access_tokens (expires_at);
