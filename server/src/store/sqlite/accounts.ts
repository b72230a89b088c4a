// The accounts store on SQLite (decisions.md 2, 5): users, agent keys, server-hosted
// cells, organizations, developer apps and vault login challenges.
import type { AccountsStore, Agent, App, Org, User } from '../types.js';
import { toAgent, toApp, toCell, toOrg, toUser, type AgentRow, type AppRow, type CellRow, type OrgRow, type UserRow } from '../rows/accounts.js';
import { StoreConflictError, StoreNotFoundError } from '../types.js';
import type { Db, Queryable } from './db.js';
import type { FeedWriter, SqliteChangeFeed } from './feed.js';
import { recordProfileUpdated } from './oauth.js';

// SQLite stores the rows' flags as 0 or 1: these read them into the shared rows' booleans.
type SqliteUserRow = Omit<UserRow, 'contact_opt_in' | 'email_verified'> & { contact_opt_in: number; email_verified: number };
type SqliteAgentRow = Omit<AgentRow, 'is_primary'> & { is_primary: number };
type SqliteOrgRow = Omit<OrgRow, 'personal'> & { personal: number };
type SqliteAppRow = Omit<AppRow, 'active'> & { active: number };

const toSqliteUser = (r: SqliteUserRow): User => toUser({ ...r, contact_opt_in: r.contact_opt_in === 1, email_verified: r.email_verified === 1 });
const toSqliteAgent = (r: SqliteAgentRow): Agent => toAgent({ ...r, is_primary: r.is_primary === 1 });
const toSqliteOrg = (r: SqliteOrgRow): Org => toOrg({ ...r, personal: r.personal === 1 });
const toSqliteApp = (r: SqliteAppRow): App => toApp({ ...r, active: r.active === 1 });

const AGENT_ORDER = 'ORDER BY is_primary DESC, created_at, agent_key';

/**
 * Links `agentKey` to `userId` in the caller's transaction. Records already signed by a
 * key that was nobody's show the profile of the account that now holds it: their
 * answers change, so a 'profile' change is appended.
 */
async function insertAgent(tx: Queryable, feed: FeedWriter, userId: string, agentKey: string, primary: boolean, now: number): Promise<void> {
  const owner = await tx.get<{ user_id: string }>('SELECT user_id FROM agents WHERE agent_key = ?', [agentKey]);
  if (owner && owner.user_id !== userId) throw new StoreConflictError('agent_key');
  const hasPrimary = await tx.get('SELECT 1 FROM agents WHERE user_id = ? AND is_primary = 1', [userId]);
  const makePrimary = primary || !hasPrimary;
  if (makePrimary) await tx.run('UPDATE agents SET is_primary = 0 WHERE user_id = ? AND agent_key <> ?', [userId, agentKey]);
  if (owner) {
    // the same user's key: linked again (from now) if they had unlinked it
    await tx.run('UPDATE agents SET unlinked_at = NULL, created_at = ? WHERE agent_key = ? AND unlinked_at IS NOT NULL', [now, agentKey]);
    if (makePrimary) await tx.run('UPDATE agents SET is_primary = 1 WHERE agent_key = ?', [agentKey]);
    return;
  }
  await tx.run('INSERT INTO agents (agent_key, user_id, is_primary, created_at) VALUES (?, ?, ?, ?)', [
    agentKey,
    userId,
    makePrimary ? 1 : 0,
    now,
  ]);
  if (await tx.get('SELECT 1 FROM signatures WHERE signer = ? LIMIT 1', [agentKey])) await feed.append({ kind: 'profile', user_id: userId, at: now });
}

/** The columns whose values public answers can show (spec 2.1, gated by public_fields). */
const PROFILE_COLUMNS = new Set(['display_name', 'username', 'profile_picture', 'public_fields']);

export function createSqliteAccountsStore(db: Db, feed: SqliteChangeFeed): AccountsStore {
  const userBy = async (where: string, params: (string | number)[]): Promise<User | null> => {
    const row = await db.get<SqliteUserRow>(`SELECT * FROM users WHERE ${where}`, params);
    return row ? toSqliteUser(row) : null;
  };

  return {
    async createAccount({ user, personalOrg, agentKey }) {
      await feed.write(async (tx, changes) => {
        await tx.run(
          `INSERT INTO users (id, email, username, password_hash, display_name, tier, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [
            user.id,
            user.email ?? null,
            user.username ?? null,
            user.passwordHash ?? null,
            user.displayName ?? null,
            user.tier ?? 'free',
            user.createdAt,
          ],
        );
        await tx.run(
          `INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at)
           VALUES (?, ?, ?, 1, 'free', NULL, ?)`,
          [personalOrg.id, personalOrg.name, user.id, user.createdAt],
        );
        if (agentKey) await insertAgent(tx, changes, user.id, agentKey, true, user.createdAt);
      });
      return (await userBy('id = ?', [user.id]))!;
    },

    getUser: (id) => userBy('id = ?', [id]),
    findUserByEmail: (email) => userBy('email = ?', [email]),
    findUserByLogin: (login) => userBy('email = ? OR username = ? ORDER BY email = ? DESC LIMIT 1', [login, login, login]),
    findUserByAgentKey: (agentKey) =>
      userBy('id = (SELECT user_id FROM agents WHERE agent_key = ?)', [agentKey]),

    async updateUser(id, patch) {
      const columns: string[] = [];
      const sets: string[] = [];
      const params: (string | number | null)[] = [];
      const set = (column: string, value: string | number | null) => {
        columns.push(column);
        sets.push(`${column} = ?`);
        params.push(value);
      };
      if (patch.displayName !== undefined) set('display_name', patch.displayName);
      if (patch.username !== undefined) set('username', patch.username);
      if (patch.profilePicture !== undefined) set('profile_picture', patch.profilePicture);
      if (patch.publicFields !== undefined) set('public_fields', JSON.stringify([...new Set(patch.publicFields)]));
      if (patch.contactOptIn !== undefined) set('contact_opt_in', patch.contactOptIn ? 1 : 0);
      if (sets.length > 0) {
        await feed.write(async (tx, changes) => {
        const before = await tx.get<{ display_name: string | null }>('SELECT display_name FROM users WHERE id = ?', [id]);
        const { changes: updated } = await tx.run(`UPDATE users SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
        if (updated === 1 && columns.some((c) => PROFILE_COLUMNS.has(c))) await changes.append({ kind: 'profile', user_id: id, at: Date.now() });
        if (updated === 1 && patch.displayName !== undefined && patch.displayName !== before?.display_name) await recordProfileUpdated(tx, id, Date.now());
      });
      }
      return userBy('id = ?', [id]);
    },

    async setUserTier(id, tier) {
      return (await db.run('UPDATE users SET tier = ? WHERE id = ?', [tier, id])).changes === 1;
    },

    async revokeSessions(userId, before) {
      const sql = 'UPDATE users SET sessions_valid_after = MAX(COALESCE(sessions_valid_after, 0), ?) WHERE id = ?';
      return (await db.run(sql, [before, userId])).changes === 1;
    },

    async setPassword(userId, passwordHash, sessionsBefore) {
      const sql = 'UPDATE users SET password_hash = ?, sessions_valid_after = MAX(COALESCE(sessions_valid_after, 0), ?) WHERE id = ?';
      return (await db.run(sql, [passwordHash, sessionsBefore, userId])).changes === 1;
    },

    async getAgent(agentKey) {
      const row = await db.get<SqliteAgentRow>('SELECT * FROM agents WHERE agent_key = ?', [agentKey]);
      return row ? toSqliteAgent(row) : null;
    },

    async listAgents(userId) {
      return (await db.all<SqliteAgentRow>(`SELECT * FROM agents WHERE user_id = ? ${AGENT_ORDER}`, [userId])).map(toSqliteAgent);
    },

    async linkAgent(userId, agentKey, opts = {}) {
      await feed.write((tx, changes) => insertAgent(tx, changes, userId, agentKey, opts.primary ?? false, opts.now ?? Date.now()), 'user');
      const row = await db.get<SqliteAgentRow>('SELECT * FROM agents WHERE agent_key = ?', [agentKey]);
      return toSqliteAgent(row!);
    },

    async unlinkAgent(userId, agentKey, now) {
      // one transaction on SQLite's single writer: two unlinks at once run one after the other
      return db.transaction(async (tx) => {
        const linked = await tx.all<{ agent_key: string }>('SELECT agent_key FROM agents WHERE user_id = ? AND unlinked_at IS NULL ORDER BY created_at, agent_key', [userId]);
        if (!linked.some((a) => a.agent_key === agentKey)) return 'not_linked';
        if (linked.length === 1) return 'only_key';
        if (await tx.get('SELECT 1 FROM cells WHERE user_id = ? AND agent_key = ?', [userId, agentKey])) return 'cell_key';
        await tx.run('UPDATE agents SET unlinked_at = ?, is_primary = 0 WHERE agent_key = ?', [now, agentKey]);
        if (!(await tx.get('SELECT 1 FROM agents WHERE user_id = ? AND is_primary = 1', [userId]))) {
          const next = linked.find((a) => a.agent_key !== agentKey)!;
          await tx.run('UPDATE agents SET is_primary = 1 WHERE agent_key = ?', [next.agent_key]);
        }
        return 'unlinked';
      });
    },

    async createCell(cell) {
      const createdAt = cell.createdAt ?? Date.now();
      await feed.write(async (tx, changes) => {
        await insertAgent(tx, changes, cell.userId, cell.agentKey, true, createdAt);
        await tx.run('INSERT INTO cells (user_id, agent_key, ciphertext, nonce, created_at) VALUES (?, ?, ?, ?, ?)', [
          cell.userId,
          cell.agentKey,
          cell.ciphertext,
          cell.nonce,
          createdAt,
        ]);
      }, 'user');
      return { ...cell, createdAt };
    },

    async getCell(userId) {
      const row = await db.get<CellRow>('SELECT * FROM cells WHERE user_id = ?', [userId]);
      return row ? toCell(row) : null;
    },

    async createOrg(org) {
      const createdAt = org.createdAt ?? Date.now();
      await db.transaction(
        (tx) =>
          tx.run('INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
            org.id, org.name, org.ownerId, org.personal ? 1 : 0, org.tier, org.customLimit, createdAt,
          ]),
        'user',
      );
      return { ...org, personal: org.personal ?? false, createdAt };
    },

    async getOrg(id) {
      const row = await db.get<SqliteOrgRow>('SELECT * FROM orgs WHERE id = ?', [id]);
      return row ? toSqliteOrg(row) : null;
    },

    async listOrgs(ownerId) {
      return (await db.all<SqliteOrgRow>('SELECT * FROM orgs WHERE owner_id = ? ORDER BY personal DESC, created_at, id', [ownerId])).map(
        toSqliteOrg,
      );
    },

    async personalOrg(userId) {
      const row = await db.get<SqliteOrgRow>('SELECT * FROM orgs WHERE owner_id = ? AND personal = 1', [userId]);
      return row ? toSqliteOrg(row) : null;
    },

    async setOrgTier(id, tier, customLimit) {
      const result =
        customLimit === undefined
          ? await db.run('UPDATE orgs SET tier = ? WHERE id = ?', [tier, id])
          : await db.run('UPDATE orgs SET tier = ?, custom_limit = ? WHERE id = ?', [tier, customLimit, id]);
      return result.changes === 1;
    },

    async createApp(app) {
      const createdAt = app.createdAt ?? Date.now();
      const active = app.active ?? true;
      await db.transaction(async (tx) => {
        // two references: the org is checked here so that a failed foreign key means the owner
        if (app.orgId !== null && !(await tx.get('SELECT 1 FROM orgs WHERE id = ?', [app.orgId]))) throw new StoreNotFoundError('org');
        await tx.run(
          `INSERT INTO apps (id, org_id, owner_id, name, redirect_uris, scopes, active, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [app.id, app.orgId, app.ownerId, app.name, JSON.stringify(app.redirectUris), JSON.stringify(app.scopes), active ? 1 : 0, createdAt],
        );
      }, 'user');
      return { ...app, active, createdAt };
    },

    async getApp(id) {
      const row = await db.get<SqliteAppRow>('SELECT * FROM apps WHERE id = ?', [id]);
      return row ? toSqliteApp(row) : null;
    },

    async listApps(ownerId) {
      return (await db.all<SqliteAppRow>('SELECT * FROM apps WHERE owner_id = ? ORDER BY created_at, id', [ownerId])).map(toSqliteApp);
    },

    async createChallenge({ hash, agentKey, expiresAt }) {
      await db.transaction(async (tx) => {
        // Expired challenges are useless; dropping them here keeps the table small.
        await tx.run('DELETE FROM challenges WHERE expires_at < ?', [Date.now() - 60_000]);
        await tx.run('INSERT INTO challenges (hash, agent_key, expires_at, used) VALUES (?, ?, ?, 0)', [hash, agentKey, expiresAt]);
      });
    },

    async consumeChallenge(hash, agentKey, now) {
      const result = await db.run(
        'UPDATE challenges SET used = 1 WHERE hash = ? AND agent_key = ? AND used = 0 AND expires_at > ?',
        [hash, agentKey, now],
      );
      return result.changes === 1;
    },
  };
}
