// OAuth grants, codes and tokens (spec 2.8, 3.4; decisions.md 7). Values of codes and
// tokens never reach here: only their SHA-256. A code is redeemed under its row lock
// (SQLite: its one writer), so of two exchanges racing for it, on any node, one issues
// tokens and the other finds it used; a consent creates the grant if missing (ON
// CONFLICT) and then updates it under its lock. The interface, its values, the rows and
// the queries, written once for every engine (./sql.ts).
import { StoreNotFoundError } from './errors.js';
import { jsonArray, type Db, type Queryable } from './sql.js';
import { insertEvents, type OutboxEvent } from './webhooks.js';

/**
 * A user's consent to an app: the scopes granted so far (a union over consents) and,
 * with `email`, the verified address the user shared (spec 2.8; deleted with the grant).
 * Codes and tokens hang off a grant; deleting it (the user revokes the app) ends them.
 */
export interface OAuthGrant {
  id: string;
  userId: string;
  appId: string;
  scopes: string[];
  sharedEmail: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A grant as the user's list of apps shows it. */
export interface OAuthGrantListing extends OAuthGrant {
  appName: string;
}

/** An authorization code to store: only its SHA-256 (hex) is kept. */
export interface NewOAuthCode {
  hash: string;
  redirectUri: string;
  scopes: string[];
  /** BASE64URL(SHA-256(verifier)) (RFC 7636 S256). */
  codeChallenge: string;
  expiresAt: number;
}

export interface StoredOAuthCode extends NewOAuthCode {
  grantId: string;
  userId: string;
  appId: string;
  createdAt: number;
}

/** A token to store: only its SHA-256 (hex) is kept. */
export interface NewOAuthToken {
  hash: string;
  expiresAt: number;
}

export interface StoredRefreshToken {
  hash: string;
  grantId: string;
  userId: string;
  appId: string;
  scopes: string[];
  expiresAt: number;
  revokedAt: number | null;
}

/** What a valid access token stands for. */
export interface OAuthAccess {
  userId: string;
  appId: string;
  scopes: string[];
  grantId: string;
  expiresAt: number;
}

/** How a code redemption ended (redeemCode). */
export type CodeRedemption =
  | { outcome: 'issued'; code: StoredOAuthCode }
  /** No code with this hash. */
  | { outcome: 'unknown' }
  /** Used before: every token issued from it was revoked now (RFC 6749 4.1.2, RFC 9700 4.5). */
  | { outcome: 'replayed'; code: StoredOAuthCode }
  /** `decide` refused it (the code is used up all the same). */
  | { outcome: 'refused'; code: StoredOAuthCode; problem: string };

export interface OAuthStore {
  getGrant(userId: string, appId: string): Promise<OAuthGrant | null>;
  /**
   * The user's consent, in one transaction: creates the grant or adds `scopes` to its
   * own, sets the shared e-mail when `sharedEmail` is given (a string, or null to drop
   * it), stores `code` under it and writes `events` (oauth.authorized) to the outbox.
   * StoreNotFoundError 'user' or 'app'.
   */
  consent(input: { grantId: string; userId: string; appId: string; scopes: string[]; sharedEmail?: string | null; code: NewOAuthCode; events: readonly OutboxEvent[]; now: number }): Promise<OAuthGrant>;
  /** Stores a code under an existing grant (scopes granted before: no consent, no event); false when the grant is gone. */
  createCode(grantId: string, code: NewOAuthCode, now: number): Promise<boolean>;
  /**
   * Redeems a code in one transaction: unknown; used before (replayed: then deletes
   * every refresh and access token issued from it); otherwise marks it used, asks
   * `decide` (a problem string refuses, the code stays used) and stores `tokens`
   * (the refresh token remembers the code, the access token its refresh token).
   */
  redeemCode(codeHash: string, now: number, decide: (code: StoredOAuthCode) => string | null, tokens: { access: NewOAuthToken; refresh: NewOAuthToken }): Promise<CodeRedemption>;
  /** The user whose grant a code (used or not, expired or not) was issued under; null for an unknown code. Uses nothing up. */
  userOfCode(codeHash: string): Promise<string | null>;
  getRefreshToken(hash: string): Promise<StoredRefreshToken | null>;
  /** Stores an access token issued from a refresh token (scopes already narrowed); false when the refresh token is gone or revoked. */
  addAccessToken(refreshHash: string, access: NewOAuthToken & { scopes: string[] }, now: number): Promise<boolean>;
  /** The unexpired access token with this hash, whose grant and app still stand (an inactive app's tokens are void). */
  findAccessToken(hash: string, now: number): Promise<OAuthAccess | null>;
  /**
   * Revokes the refresh token if it is `appId`'s and not revoked yet, deletes the access
   * tokens issued from it and writes `events(token)` to the outbox, in one transaction.
   * False (nothing written) otherwise.
   */
  revokeRefreshToken(hash: string, appId: string, now: number, events: (token: StoredRefreshToken) => readonly OutboxEvent[]): Promise<boolean>;
  /** The user's grants, oldest first. */
  listGrants(userId: string): Promise<OAuthGrantListing[]>;
  /** Deletes the grant (its shared e-mail, codes and tokens with it); false when there is none. */
  deleteGrant(userId: string, appId: string): Promise<boolean>;
}
// ---------------------------------------------------------------- rows

interface GrantRow {
  id: string;
  user_id: string;
  app_id: string;
  scopes: string;
  shared_email: string | null;
  created_at: number;
  updated_at: number;
}

const toGrant = (r: GrantRow): OAuthGrant => ({
  id: r.id,
  userId: r.user_id,
  appId: r.app_id,
  scopes: jsonArray<string>(r.scopes),
  sharedEmail: r.shared_email,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface CodeRow {
  hash: string;
  grant_id: string;
  user_id: string;
  app_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

const toCode = (r: CodeRow): StoredOAuthCode => ({
  hash: r.hash,
  grantId: r.grant_id,
  userId: r.user_id,
  appId: r.app_id,
  redirectUri: r.redirect_uri,
  scopes: jsonArray<string>(r.scopes),
  codeChallenge: r.code_challenge,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
});

interface RefreshRow {
  hash: string;
  grant_id: string;
  user_id: string;
  app_id: string;
  scopes: string;
  expires_at: number;
  revoked_at: number | null;
}

const toRefresh = (r: RefreshRow): StoredRefreshToken => ({
  hash: r.hash,
  grantId: r.grant_id,
  userId: r.user_id,
  appId: r.app_id,
  scopes: jsonArray<string>(r.scopes),
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

// ---------------------------------------------------------------- queries

const REFRESH_SELECT = `SELECT r.hash, r.grant_id, g.user_id, g.app_id, r.scopes, r.expires_at, r.revoked_at
  FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.hash = ?`;

async function insertCode(q: Queryable, grantId: string, code: NewOAuthCode, now: number): Promise<void> {
  await q.run(
    'INSERT INTO oauth_codes (hash, grant_id, redirect_uri, scopes, code_challenge, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [code.hash, grantId, code.redirectUri, JSON.stringify(code.scopes), code.codeChallenge, code.expiresAt, now],
  );
}

/**
 * Drops what can no longer be used: expired tokens, and expired codes, except a used
 * code whose refresh token still exists (a replay of it must still find what to revoke).
 */
async function purgeExpired(q: Queryable, now: number): Promise<void> {
  await q.run('DELETE FROM oauth_access_tokens WHERE expires_at <= ?', [now]);
  await q.run('DELETE FROM oauth_refresh_tokens WHERE expires_at <= ?', [now]);
  await q.run(
    `DELETE FROM oauth_codes WHERE expires_at <= ?
       AND (used_at IS NULL OR NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.code_hash = oauth_codes.hash))`,
    [now],
  );
}

/**
 * Spec 6 `user.profile.updated`, inside the caller's transaction (accounts.ts updateUser,
 * on a changed display name): one outbox row per app holding an unrevoked, unexpired
 * refresh token of the user.
 */
export async function recordProfileUpdated(db: Db, q: Queryable, userId: string, now: number): Promise<void> {
  const apps = await q.all<{ app_id: string }>(
    `SELECT DISTINCT g.app_id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
     WHERE g.user_id = ? AND r.revoked_at IS NULL AND r.expires_at > ? ORDER BY g.app_id`,
    [userId, now],
  );
  const payload = { user_id: userId, fields_changed: ['display_name'] };
  await insertEvents(db, q, apps.map((a): OutboxEvent => ({ appId: a.app_id, type: 'user.profile.updated', payload })), now);
}

export function createOAuthStore(db: Db): OAuthStore {
  const d = db.dialect;
  const grantOf = async (q: Queryable, userId: string, appId: string, lock = '') => {
    const row = await q.get<GrantRow>(`SELECT * FROM oauth_grants WHERE user_id = ? AND app_id = ? ${lock}`, [userId, appId]);
    return row ? toGrant(row) : null;
  };

  return {
    getGrant: (userId, appId) => grantOf(db, userId, appId),

    consent(input) {
      return db.transaction(async (tx) => {
        if (!(await tx.get('SELECT 1 FROM users WHERE id = ?', [input.userId]))) throw new StoreNotFoundError('user');
        if (!(await tx.get('SELECT 1 FROM apps WHERE id = ?', [input.appId]))) throw new StoreNotFoundError('app');
        await tx.run(
          `INSERT INTO oauth_grants (id, user_id, app_id, scopes, shared_email, created_at, updated_at) VALUES (?, ?, ?, '[]', NULL, ?, ?)
           ON CONFLICT (user_id, app_id) DO NOTHING`,
          [input.grantId, input.userId, input.appId, input.now, input.now],
        );
        const before = (await grantOf(tx, input.userId, input.appId, d.lock('update')))!;
        const scopes = [...new Set([...before.scopes, ...input.scopes])];
        const email = input.sharedEmail !== undefined ? input.sharedEmail : before.sharedEmail;
        await tx.run('UPDATE oauth_grants SET scopes = ?, shared_email = ?, updated_at = ? WHERE id = ?', [JSON.stringify(scopes), email, input.now, before.id]);
        await insertCode(tx, before.id, input.code, input.now);
        await insertEvents(db, tx, input.events, input.now);
        return (await grantOf(tx, input.userId, input.appId))!;
      });
    },

    createCode(grantId, code, now) {
      return db.transaction(async (tx) => {
        if (!(await tx.get(`SELECT 1 FROM oauth_grants WHERE id = ? ${d.lock('share')}`, [grantId]))) return false;
        await insertCode(tx, grantId, code, now);
        return true;
      });
    },

    async redeemCode(codeHash, now, decide, tokens) {
      const redemption = await db.transaction(async (tx) => {
        const row = await tx.get<CodeRow>(
          `SELECT c.*, g.user_id, g.app_id FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE c.hash = ? ${d.lock('update', { of: 'c' })}`,
          [codeHash],
        );
        if (!row) return { outcome: 'unknown' as const };
        const code = toCode(row);
        if (row.used_at !== null) {
          // the access tokens go with their refresh token (ON DELETE CASCADE)
          await tx.run('DELETE FROM oauth_refresh_tokens WHERE code_hash = ?', [codeHash]);
          return { outcome: 'replayed' as const, code };
        }
        await tx.run('UPDATE oauth_codes SET used_at = ? WHERE hash = ?', [now, codeHash]);
        const problem = decide(code);
        if (problem !== null) return { outcome: 'refused' as const, code, problem };
        const scopes = JSON.stringify(code.scopes);
        await tx.run('INSERT INTO oauth_refresh_tokens (hash, grant_id, code_hash, scopes, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
          tokens.refresh.hash, code.grantId, codeHash, scopes, tokens.refresh.expiresAt, now,
        ]);
        await tx.run('INSERT INTO oauth_access_tokens (hash, refresh_hash, grant_id, scopes, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
          tokens.access.hash, tokens.refresh.hash, code.grantId, scopes, tokens.access.expiresAt, now,
        ]);
        return { outcome: 'issued' as const, code };
      });
      // after the redemption (so that an expired code is still found, and answered as
      // expired) and on its own: purges racing inside redemptions could deadlock; a
      // failed one is retried by the next
      await db.transaction((tx) => purgeExpired(tx, now)).catch(() => undefined);
      return redemption;
    },

    async userOfCode(codeHash) {
      const row = await db.get<{ user_id: string }>('SELECT g.user_id FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE c.hash = ?', [codeHash]);
      return row?.user_id ?? null;
    },

    async getRefreshToken(hash) {
      const row = await db.get<RefreshRow>(REFRESH_SELECT, [hash]);
      return row ? toRefresh(row) : null;
    },

    addAccessToken(refreshHash, access, now) {
      return db.transaction(async (tx) => {
        const refresh = await tx.get<{ grant_id: string }>(
          `SELECT grant_id FROM oauth_refresh_tokens WHERE hash = ? AND revoked_at IS NULL AND expires_at > ? ${d.lock('share')}`,
          [refreshHash, now],
        );
        if (!refresh) return false;
        await tx.run('DELETE FROM oauth_access_tokens WHERE expires_at <= ?', [now]);
        await tx.run('INSERT INTO oauth_access_tokens (hash, refresh_hash, grant_id, scopes, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
          access.hash, refreshHash, refresh.grant_id, JSON.stringify(access.scopes), access.expiresAt, now,
        ]);
        return true;
      });
    },

    async findAccessToken(hash, now) {
      const row = await db.get<{ user_id: string; app_id: string; scopes: string; grant_id: string; expires_at: number }>(
        `SELECT g.user_id, g.app_id, t.scopes, t.grant_id, t.expires_at
         FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN apps a ON a.id = g.app_id
         WHERE t.hash = ? AND t.expires_at > ? AND a.active = ${d.true}`,
        [hash, now],
      );
      return row ? { userId: row.user_id, appId: row.app_id, scopes: jsonArray<string>(row.scopes), grantId: row.grant_id, expiresAt: row.expires_at } : null;
    },

    revokeRefreshToken(hash, appId, now, events) {
      return db.transaction(async (tx) => {
        const row = await tx.get<RefreshRow>(`${REFRESH_SELECT} ${d.lock('update', { of: 'r' })}`, [hash]);
        if (!row || row.app_id !== appId || row.revoked_at !== null) return false;
        await tx.run('UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE hash = ?', [now, hash]);
        await tx.run('DELETE FROM oauth_access_tokens WHERE refresh_hash = ?', [hash]);
        await insertEvents(db, tx, events(toRefresh(row)), now);
        return true;
      });
    },

    async listGrants(userId) {
      const rows = await db.all<GrantRow & { app_name: string }>(
        'SELECT g.*, a.name AS app_name FROM oauth_grants g JOIN apps a ON a.id = g.app_id WHERE g.user_id = ? ORDER BY g.created_at, g.id',
        [userId],
      );
      return rows.map((r) => ({ ...toGrant(r), appName: r.app_name }));
    },

    async deleteGrant(userId, appId) {
      return (await db.run('DELETE FROM oauth_grants WHERE user_id = ? AND app_id = ?', [userId, appId])) > 0;
    },
  };
}
