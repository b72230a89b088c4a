// OAuth grants, codes and tokens on PostgreSQL (spec 2.8, 3.4; decisions.md 7), as
// ../sqlite/oauth.ts, for several nodes: a code is redeemed under its row lock (FOR
// UPDATE), so of two exchanges racing for it one issues tokens and the other finds it
// used; a consent creates the grant with ON CONFLICT and then updates it under its lock.
import { StoreNotFoundError, type OAuthStore, type OutboxEvent } from '../types.js';
import { toCode, toGrant, toRefresh, type CodeRow, type GrantRow, type RefreshRow } from '../rows/oauth.js';
import type { PgDb, Queryable } from './db.js';
import { insertEvents } from './signatures.js';

const REFRESH_SELECT = `SELECT r.hash, r.grant_id, g.user_id, g.app_id, r.scopes, r.expires_at, r.revoked_at
  FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.hash = $1`;

async function insertCode(q: Queryable, grantId: string, code: { hash: string; redirectUri: string; scopes: string[]; codeChallenge: string; expiresAt: number }, now: number): Promise<void> {
  await q.run(
    'INSERT INTO oauth_codes (hash, grant_id, redirect_uri, scopes, code_challenge, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [code.hash, grantId, code.redirectUri, JSON.stringify(code.scopes), code.codeChallenge, code.expiresAt, now],
  );
}

/** As SQLite's: expired tokens, and expired codes except a used one whose refresh token still exists. */
async function purgeExpired(q: Queryable, now: number): Promise<void> {
  await q.run('DELETE FROM oauth_access_tokens WHERE expires_at <= $1', [now]);
  await q.run('DELETE FROM oauth_refresh_tokens WHERE expires_at <= $1', [now]);
  await q.run(
    `DELETE FROM oauth_codes c WHERE c.expires_at <= $1
       AND (c.used_at IS NULL OR NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.code_hash = c.hash))`,
    [now],
  );
}

/** Spec 6 `user.profile.updated` inside the caller's transaction (accounts.ts updateUser), as SQLite's. */
export async function recordProfileUpdated(q: Queryable, userId: string, now: number): Promise<void> {
  const apps = await q.all<{ app_id: string }>(
    `SELECT DISTINCT g.app_id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
     WHERE g.user_id = $1 AND r.revoked_at IS NULL AND r.expires_at > $2 ORDER BY g.app_id`,
    [userId, now],
  );
  const payload = { user_id: userId, fields_changed: ['display_name'] };
  await insertEvents(q, apps.map((a): OutboxEvent => ({ appId: a.app_id, type: 'user.profile.updated', payload })), now);
}

export function createPgOAuthStore(db: PgDb): OAuthStore {
  const grantOf = async (q: Queryable, userId: string, appId: string, lock = '') => {
    const row = await q.get<GrantRow>(`SELECT * FROM oauth_grants WHERE user_id = $1 AND app_id = $2 ${lock}`, [userId, appId]);
    return row ? toGrant(row) : null;
  };

  return {
    getGrant: (userId, appId) => grantOf(db, userId, appId),

    consent(input) {
      return db.transaction(async (tx) => {
        if (!(await tx.get('SELECT 1 FROM users WHERE id = $1', [input.userId]))) throw new StoreNotFoundError('user');
        if (!(await tx.get('SELECT 1 FROM apps WHERE id = $1', [input.appId]))) throw new StoreNotFoundError('app');
        await tx.run(
          `INSERT INTO oauth_grants (id, user_id, app_id, scopes, shared_email, created_at, updated_at) VALUES ($1, $2, $3, '[]', NULL, $4, $4)
           ON CONFLICT ON CONSTRAINT oauth_grants_user_app DO NOTHING`,
          [input.grantId, input.userId, input.appId, input.now],
        );
        const before = (await grantOf(tx, input.userId, input.appId, 'FOR UPDATE'))!;
        const scopes = [...new Set([...before.scopes, ...input.scopes])];
        const email = input.sharedEmail !== undefined ? input.sharedEmail : before.sharedEmail;
        await tx.run('UPDATE oauth_grants SET scopes = $1, shared_email = $2, updated_at = $3 WHERE id = $4', [JSON.stringify(scopes), email, input.now, before.id]);
        await insertCode(tx, before.id, input.code, input.now);
        await insertEvents(tx, input.events, input.now);
        return (await grantOf(tx, input.userId, input.appId))!;
      });
    },

    createCode(grantId, code, now) {
      return db.transaction(async (tx) => {
        if (!(await tx.get('SELECT 1 FROM oauth_grants WHERE id = $1 FOR SHARE', [grantId]))) return false;
        await insertCode(tx, grantId, code, now);
        return true;
      });
    },

    async redeemCode(codeHash, now, decide, tokens) {
      const redemption = await db.transaction(async (tx) => {
        const row = await tx.get<CodeRow>(
          'SELECT c.*, g.user_id, g.app_id FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE c.hash = $1 FOR UPDATE OF c',
          [codeHash],
        );
        if (!row) return { outcome: 'unknown' as const };
        const code = toCode(row);
        if (row.used_at !== null) {
          await tx.run('DELETE FROM oauth_refresh_tokens WHERE code_hash = $1', [codeHash]);
          return { outcome: 'replayed' as const, code };
        }
        await tx.run('UPDATE oauth_codes SET used_at = $1 WHERE hash = $2', [now, codeHash]);
        const problem = decide(code);
        if (problem !== null) return { outcome: 'refused' as const, code, problem };
        const scopes = JSON.stringify(code.scopes);
        await tx.run('INSERT INTO oauth_refresh_tokens (hash, grant_id, code_hash, scopes, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          tokens.refresh.hash, code.grantId, codeHash, scopes, tokens.refresh.expiresAt, now,
        ]);
        await tx.run('INSERT INTO oauth_access_tokens (hash, refresh_hash, grant_id, scopes, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          tokens.access.hash, tokens.refresh.hash, code.grantId, scopes, tokens.access.expiresAt, now,
        ]);
        return { outcome: 'issued' as const, code };
      });
      // after the commit, on its own: purges racing inside redemptions could deadlock; a failed one is retried by the next
      await db.transaction((tx) => purgeExpired(tx, now)).catch(() => undefined);
      return redemption;
    },

    async getRefreshToken(hash) {
      const row = await db.get<RefreshRow>(REFRESH_SELECT, [hash]);
      return row ? toRefresh(row) : null;
    },

    addAccessToken(refreshHash, access, now) {
      return db.transaction(async (tx) => {
        const refresh = await tx.get<{ grant_id: string }>(
          'SELECT grant_id FROM oauth_refresh_tokens WHERE hash = $1 AND revoked_at IS NULL AND expires_at > $2 FOR SHARE',
          [refreshHash, now],
        );
        if (!refresh) return false;
        await tx.run('DELETE FROM oauth_access_tokens WHERE expires_at <= $1', [now]);
        await tx.run('INSERT INTO oauth_access_tokens (hash, refresh_hash, grant_id, scopes, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          access.hash, refreshHash, refresh.grant_id, JSON.stringify(access.scopes), access.expiresAt, now,
        ]);
        return true;
      });
    },

    async findAccessToken(hash, now) {
      const row = await db.get<{ user_id: string; app_id: string; scopes: string; grant_id: string; expires_at: number }>(
        `SELECT g.user_id, g.app_id, t.scopes, t.grant_id, t.expires_at
         FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN apps a ON a.id = g.app_id
         WHERE t.hash = $1 AND t.expires_at > $2 AND a.active`,
        [hash, now],
      );
      return row ? { userId: row.user_id, appId: row.app_id, scopes: JSON.parse(row.scopes) as string[], grantId: row.grant_id, expiresAt: row.expires_at } : null;
    },

    revokeRefreshToken(hash, appId, now, events) {
      return db.transaction(async (tx) => {
        const row = await tx.get<RefreshRow>(`${REFRESH_SELECT} FOR UPDATE OF r`, [hash]);
        if (!row || row.app_id !== appId || row.revoked_at !== null) return false;
        await tx.run('UPDATE oauth_refresh_tokens SET revoked_at = $1 WHERE hash = $2', [now, hash]);
        await tx.run('DELETE FROM oauth_access_tokens WHERE refresh_hash = $1', [hash]);
        await insertEvents(tx, events(toRefresh(row)), now);
        return true;
      });
    },

    async listGrants(userId) {
      const rows = await db.all<GrantRow & { app_name: string }>(
        'SELECT g.*, a.name AS app_name FROM oauth_grants g JOIN apps a ON a.id = g.app_id WHERE g.user_id = $1 ORDER BY g.created_at, g.id',
        [userId],
      );
      return rows.map((r) => ({ ...toGrant(r), appName: r.app_name }));
    },

    async deleteGrant(userId, appId) {
      return (await db.run('DELETE FROM oauth_grants WHERE user_id = $1 AND app_id = $2', [userId, appId])) > 0;
    },
  };
}
