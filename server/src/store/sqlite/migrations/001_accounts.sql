-- Accounts (decisions.md 2, 5): users, their agent keys and server-hosted cells,
-- organizations, developer apps, and vault login challenges.
-- Ids are UUID text; times are Unix milliseconds. OAuth grants/codes/tokens and
-- webhooks arrive in their own later migrations and reference users(id), apps(id)
-- and orgs(id) declared here.

CREATE TABLE users (
  id              TEXT PRIMARY KEY,                        -- UUID; OAuth `sub`
  email           TEXT COLLATE NOCASE UNIQUE,              -- null for device-hosted accounts
  username        TEXT COLLATE NOCASE UNIQUE,
  password_hash   TEXT,                                    -- scrypt$N$r$p$salt$hash; null without e-mail login
  display_name    TEXT,
  profile_picture TEXT,
  public_fields   TEXT NOT NULL DEFAULT '[]',              -- JSON array of display_name|username|profile_picture
  contact_opt_in  INTEGER NOT NULL DEFAULT 0,
  tier            TEXT NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'premium', 'premium_plus')),
  email_verified  INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
);

CREATE TABLE agents (
  agent_key   TEXT PRIMARY KEY,                            -- canonical uhCAk... form
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  is_primary  INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL
);
CREATE INDEX agents_user ON agents(user_id);
CREATE UNIQUE INDEX agents_one_primary ON agents(user_id) WHERE is_primary = 1;

-- A server-hosted cell: the private key (PKCS#8) sealed with AES-256-GCM under
-- $DATA_DIR/secrets/cell.key; ciphertext carries the 16-byte tag at its end.
CREATE TABLE cells (
  user_id     TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  agent_key   TEXT NOT NULL UNIQUE REFERENCES agents(agent_key) ON DELETE CASCADE,
  ciphertext  BLOB NOT NULL,
  nonce       BLOB NOT NULL,                               -- 12 bytes
  created_at  INTEGER NOT NULL
);

CREATE TABLE orgs (
  id            TEXT PRIMARY KEY,                          -- UUID
  name          TEXT NOT NULL,
  owner_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  personal      INTEGER NOT NULL DEFAULT 0,                -- the user's own organization
  tier          TEXT NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'starter', 'pro', 'enterprise')),
  custom_limit  INTEGER,                                   -- signs per month for enterprise; null = unlimited
  created_at    INTEGER NOT NULL
);
CREATE INDEX orgs_owner ON orgs(owner_id);
CREATE UNIQUE INDEX orgs_one_personal ON orgs(owner_id) WHERE personal = 1;

CREATE TABLE apps (
  id             TEXT PRIMARY KEY,                         -- UUID; the OAuth client_id and webhook app_id
  org_id         TEXT REFERENCES orgs(id) ON DELETE SET NULL,
  owner_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name           TEXT NOT NULL,
  redirect_uris  TEXT NOT NULL DEFAULT '[]',               -- JSON array of exact URIs
  scopes         TEXT NOT NULL DEFAULT '[]',               -- JSON array of enabled scopes
  active         INTEGER NOT NULL DEFAULT 1,
  created_at     INTEGER NOT NULL
);
CREATE INDEX apps_owner ON apps(owner_id);
CREATE INDEX apps_org ON apps(org_id);

-- Vault login challenges (decisions.md 5): stored as SHA-256 hex, single use, 5 minutes.
CREATE TABLE challenges (
  hash        TEXT PRIMARY KEY,
  agent_key   TEXT NOT NULL,                               -- the key it was issued to
  expires_at  INTEGER NOT NULL,
  used        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX challenges_expiry ON challenges(expires_at);
