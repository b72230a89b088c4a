// The accounts store on PostgreSQL (decisions.md 2, 5): users, agent keys, server-hosted
// cells, organizations, developer apps and vault login challenges. Same behaviour as
// ../sqlite/accounts.ts; e-mail and username compare case-insensitively through lower().
import type { AccountsStore, User } from '../types.js';
import { toAgent, toApp, toCell, toOrg, toUser, type AgentRow, type AppRow, type CellRow, type OrgRow, type UserRow } from '../rows/accounts.js';
import { StoreConflictError, StoreNotFoundError } from '../types.js';
import type { PgDb, Queryable } from './db.js';
import type { FeedWriter, PgChangeFeed } from './feed.js';
import { recordProfileUpdated } from './oauth.js';

const AGENT_ORDER = 'ORDER BY is_primary DESC, created_at, agent_key';

/**
 * Links `agentKey` to `userId` in the caller's transaction (which holds the feed lock, so
 * no other link runs between the owner check and the insert). Records already signed
 * by a key that was nobody's show the profile of the account that now holds it: their
 * answers change, so a 'profile' change is appended.
 */
async function insertAgent(tx: Queryable, feed: FeedWriter, userId: string, agentKey: string, primary: boolean, now: number): Promise<void> {
  const owner = await tx.get<{ user_id: string }>('SELECT user_id FROM agents WHERE agent_key = $1', [agentKey]);
  if (owner && owner.user_id !== userId) throw new StoreConflictError('agent_key');
  const hasPrimary = await tx.get('SELECT 1 FROM agents WHERE user_id = $1 AND is_primary', [userId]);
  const makePrimary = primary || !hasPrimary;
  if (makePrimary) await tx.run('UPDATE agents SET is_primary = false WHERE user_id = $1 AND agent_key <> $2', [userId, agentKey]);
  if (owner) {
    // the same user's key: linked again (from now) if they had unlinked it
    await tx.run('UPDATE agents SET unlinked_at = NULL, created_at = $1 WHERE agent_key = $2 AND unlinked_at IS NOT NULL', [now, agentKey]);
    if (makePrimary) await tx.run('UPDATE agents SET is_primary = true WHERE agent_key = $1', [agentKey]);
    return;
  }
  await tx.run('INSERT INTO agents (agent_key, user_id, is_primary, created_at) VALUES ($1, $2, $3, $4)', [agentKey, userId, makePrimary, now]);
  if (await tx.get('SELECT 1 FROM signatures WHERE signer = $1 LIMIT 1', [agentKey])) await feed.append({ kind: 'profile', user_id: userId, at: now });
}

/** The columns whose values public answers can show (spec 2.1, gated by public_fields). */
const PROFILE_COLUMNS = new Set(['display_name', 'username', 'profile_picture', 'public_fields']);

export function createPgAccountsStore(db: PgDb, feed: PgChangeFeed): AccountsStore {
  const userBy = async (where: string, params: unknown[]): Promise<User | null> => {
    const row = await db.get<UserRow>(`SELECT * FROM users WHERE ${where}`, params);
    return row ? toUser(row) : null;
  };

  return {
    async createAccount({ user, personalOrg, agentKey }) {
      await feed.write(async (tx, changes) => {
        await tx.run(
          `INSERT INTO users (id, email, username, password_hash, display_name, tier, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [user.id, user.email ?? null, user.username ?? null, user.passwordHash ?? null, user.displayName ?? null, user.tier ?? 'free', user.createdAt],
        );
        await tx.run(
          `INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES ($1, $2, $3, true, 'free', NULL, $4)`,
          [personalOrg.id, personalOrg.name, user.id, user.createdAt],
        );
        if (agentKey) await insertAgent(tx, changes, user.id, agentKey, true, user.createdAt);
      });
      return (await userBy('id = $1', [user.id]))!;
    },

    getUser: (id) => userBy('id = $1', [id]),
    findUserByEmail: (email) => userBy('lower(email) = lower($1)', [email]),
    findUserByLogin: (login) =>
      userBy('lower(email) = lower($1) OR lower(username) = lower($1) ORDER BY COALESCE(lower(email) = lower($1), false) DESC LIMIT 1', [login]),
    findUserByAgentKey: (agentKey) => userBy('id = (SELECT user_id FROM agents WHERE agent_key = $1)', [agentKey]),

    async updateUser(id, patch) {
      const columns: string[] = [];
      const params: unknown[] = [];
      const set = (column: string, value: unknown) => {
        columns.push(column);
        params.push(value);
      };
      if (patch.displayName !== undefined) set('display_name', patch.displayName);
      if (patch.username !== undefined) set('username', patch.username);
      if (patch.profilePicture !== undefined) set('profile_picture', patch.profilePicture);
      if (patch.publicFields !== undefined) set('public_fields', JSON.stringify([...new Set(patch.publicFields)]));
      if (patch.contactOptIn !== undefined) set('contact_opt_in', patch.contactOptIn);
      if (columns.length > 0) {
        const sets = columns.map((c, i) => `${c} = $${i + 1}`).join(', ');
        const update = `UPDATE users SET ${sets} WHERE id = $${columns.length + 1}`;
        if (columns.some((c) => PROFILE_COLUMNS.has(c))) {
          await feed.write(async (tx, changes) => {
            const before = await tx.get<{ display_name: string | null }>('SELECT display_name FROM users WHERE id = $1 FOR UPDATE', [id]);
            if ((await tx.run(update, [...params, id])) !== 1) return;
            await changes.append({ kind: 'profile', user_id: id, at: Date.now() });
            if (patch.displayName !== undefined && patch.displayName !== before?.display_name) await recordProfileUpdated(tx, id, Date.now());
          });
        } else {
          await db.run(update, [...params, id]);
        }
      }
      return userBy('id = $1', [id]);
    },

    async setUserTier(id, tier) {
      return (await db.run('UPDATE users SET tier = $1 WHERE id = $2', [tier, id])) === 1;
    },

    async revokeSessions(userId, before) {
      const sql = 'UPDATE users SET sessions_valid_after = GREATEST(COALESCE(sessions_valid_after, 0), $1) WHERE id = $2';
      return (await db.run(sql, [before, userId])) === 1;
    },

    async setPassword(userId, passwordHash, sessionsBefore) {
      const sql = 'UPDATE users SET password_hash = $1, sessions_valid_after = GREATEST(COALESCE(sessions_valid_after, 0), $2) WHERE id = $3';
      return (await db.run(sql, [passwordHash, sessionsBefore, userId])) === 1;
    },

    async getAgent(agentKey) {
      const row = await db.get<AgentRow>('SELECT * FROM agents WHERE agent_key = $1', [agentKey]);
      return row ? toAgent(row) : null;
    },

    async listAgents(userId) {
      return (await db.all<AgentRow>(`SELECT * FROM agents WHERE user_id = $1 ${AGENT_ORDER}`, [userId])).map(toAgent);
    },

    async linkAgent(userId, agentKey, opts = {}) {
      await feed.write((tx, changes) => insertAgent(tx, changes, userId, agentKey, opts.primary ?? false, opts.now ?? Date.now()), { missing: 'user' });
      const row = await db.get<AgentRow>('SELECT * FROM agents WHERE agent_key = $1', [agentKey]);
      return toAgent(row!);
    },

    async unlinkAgent(userId, agentKey, now) {
      return db.transaction(async (tx) => {
        // the user's row locked: two unlinks at once cannot each see the other's key still linked
        if (!(await tx.get('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]))) return 'not_linked';
        const linked = await tx.all<{ agent_key: string }>('SELECT agent_key FROM agents WHERE user_id = $1 AND unlinked_at IS NULL ORDER BY created_at, agent_key', [userId]);
        if (!linked.some((a) => a.agent_key === agentKey)) return 'not_linked';
        if (linked.length === 1) return 'only_key';
        if (await tx.get('SELECT 1 FROM cells WHERE user_id = $1 AND agent_key = $2', [userId, agentKey])) return 'cell_key';
        await tx.run('UPDATE agents SET unlinked_at = $1, is_primary = false WHERE agent_key = $2', [now, agentKey]);
        if (!(await tx.get('SELECT 1 FROM agents WHERE user_id = $1 AND is_primary', [userId]))) {
          const next = linked.find((a) => a.agent_key !== agentKey)!;
          await tx.run('UPDATE agents SET is_primary = true WHERE agent_key = $1', [next.agent_key]);
        }
        return 'unlinked';
      });
    },

    async createCell(cell) {
      const createdAt = cell.createdAt ?? Date.now();
      await feed.write(async (tx, changes) => {
        await insertAgent(tx, changes, cell.userId, cell.agentKey, true, createdAt);
        await tx.run('INSERT INTO cells (user_id, agent_key, ciphertext, nonce, created_at) VALUES ($1, $2, $3, $4, $5)', [
          cell.userId,
          cell.agentKey,
          Buffer.from(cell.ciphertext),
          Buffer.from(cell.nonce),
          createdAt,
        ]);
      }, { missing: 'user' });
      return { ...cell, createdAt };
    },

    async getCell(userId) {
      const row = await db.get<CellRow>('SELECT * FROM cells WHERE user_id = $1', [userId]);
      return row ? toCell(row) : null;
    },

    async createOrg(org) {
      const createdAt = org.createdAt ?? Date.now();
      await db.transaction(
        (tx) =>
          tx.run('INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
            org.id, org.name, org.ownerId, org.personal ?? false, org.tier, org.customLimit, createdAt,
          ]),
        'user',
      );
      return { ...org, personal: org.personal ?? false, createdAt };
    },

    async getOrg(id) {
      const row = await db.get<OrgRow>('SELECT * FROM orgs WHERE id = $1', [id]);
      return row ? toOrg(row) : null;
    },

    async listOrgs(ownerId) {
      return (await db.all<OrgRow>('SELECT * FROM orgs WHERE owner_id = $1 ORDER BY personal DESC, created_at, id', [ownerId])).map(toOrg);
    },

    async personalOrg(userId) {
      const row = await db.get<OrgRow>('SELECT * FROM orgs WHERE owner_id = $1 AND personal', [userId]);
      return row ? toOrg(row) : null;
    },

    async setOrgTier(id, tier, customLimit) {
      const changed =
        customLimit === undefined
          ? await db.run('UPDATE orgs SET tier = $1 WHERE id = $2', [tier, id])
          : await db.run('UPDATE orgs SET tier = $1, custom_limit = $2 WHERE id = $3', [tier, customLimit, id]);
      return changed === 1;
    },

    async createApp(app) {
      const createdAt = app.createdAt ?? Date.now();
      const active = app.active ?? true;
      await db.transaction(async (tx) => {
        // two references: the org is checked here so that a failed foreign key means the owner
        if (app.orgId !== null && !(await tx.get('SELECT 1 FROM orgs WHERE id = $1', [app.orgId]))) throw new StoreNotFoundError('org');
        await tx.run(
          `INSERT INTO apps (id, org_id, owner_id, name, redirect_uris, scopes, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [app.id, app.orgId, app.ownerId, app.name, JSON.stringify(app.redirectUris), JSON.stringify(app.scopes), active, createdAt],
        );
      }, 'user');
      return { ...app, active, createdAt };
    },

    async getApp(id) {
      const row = await db.get<AppRow>('SELECT * FROM apps WHERE id = $1', [id]);
      return row ? toApp(row) : null;
    },

    async listApps(ownerId) {
      return (await db.all<AppRow>('SELECT * FROM apps WHERE owner_id = $1 ORDER BY created_at, id', [ownerId])).map(toApp);
    },

    async createChallenge({ hash, agentKey, expiresAt }) {
      await db.transaction(async (tx) => {
        // Expired challenges are useless; dropping them here keeps the table small.
        await tx.run('DELETE FROM challenges WHERE expires_at < $1', [Date.now() - 60_000]);
        await tx.run('INSERT INTO challenges (hash, agent_key, expires_at, used) VALUES ($1, $2, $3, false)', [hash, agentKey, expiresAt]);
      });
    },

    async consumeChallenge(hash, agentKey, now) {
      // one statement: a second consumer waits for the first one's row lock, then finds it used
      const changed = await db.run('UPDATE challenges SET used = true WHERE hash = $1 AND agent_key = $2 AND NOT used AND expires_at > $3', [hash, agentKey, now]);
      return changed === 1;
    },
  };
}
