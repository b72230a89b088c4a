// Accounts (decisions.md 2, 5): users, agent keys, server-hosted cells, organizations,
// developer apps and vault login challenges. `AccountsStore` is the seam: routes and
// services see only these methods; the SQLite implementation below is one of them
// (a PostgreSQL one would implement the same interface).
import type { Db, Queryable } from './db.js';

export const USER_TIERS = ['free', 'premium', 'premium_plus'] as const;
export const ORG_TIERS = ['free', 'starter', 'pro', 'enterprise'] as const;
export const PUBLIC_FIELDS = ['display_name', 'username', 'profile_picture'] as const;

export type UserTier = (typeof USER_TIERS)[number];
export type OrgTier = (typeof ORG_TIERS)[number];
export type PublicField = (typeof PUBLIC_FIELDS)[number];

export interface User {
  id: string;
  email: string | null;
  username: string | null;
  /** `scrypt$N$r$p$salt$hash`; null for device-hosted accounts. */
  passwordHash: string | null;
  displayName: string | null;
  profilePicture: string | null;
  /** The fields the user lets public responses show (decisions.md 5). */
  publicFields: PublicField[];
  contactOptIn: boolean;
  tier: UserTier;
  emailVerified: boolean;
  createdAt: number;
}

export interface NewUser {
  id: string;
  email?: string | null;
  username?: string | null;
  passwordHash?: string | null;
  displayName?: string | null;
  tier?: UserTier;
  createdAt: number;
}

export interface UserPatch {
  displayName?: string | null;
  username?: string | null;
  profilePicture?: string | null;
  publicFields?: PublicField[];
  contactOptIn?: boolean;
}

export interface Agent {
  agentKey: string;
  userId: string;
  primary: boolean;
  createdAt: number;
}

export interface Cell {
  userId: string;
  agentKey: string;
  /** AES-256-GCM ciphertext of the PKCS#8 private key, the 16-byte tag appended. */
  ciphertext: Uint8Array;
  nonce: Uint8Array;
  createdAt: number;
}

export interface Org {
  id: string;
  name: string;
  ownerId: string;
  personal: boolean;
  tier: OrgTier;
  /** Included signs per month for `enterprise` (custom); null = unlimited / tier default. */
  customLimit: number | null;
  createdAt: number;
}

export interface App {
  /** The OAuth `client_id` and the webhook API's `app_id`. */
  id: string;
  orgId: string | null;
  ownerId: string;
  name: string;
  redirectUris: string[];
  scopes: string[];
  active: boolean;
  createdAt: number;
}

/** A unique value already taken (e-mail, username or agent key). */
export class StoreConflictError extends Error {
  constructor(readonly field: 'email' | 'username' | 'agent_key' | 'unknown') {
    super(`${field} is already taken`);
    this.name = 'StoreConflictError';
  }
}

export interface AccountsStore {
  /** A user, their personal organization and (optionally) their first agent key, atomically. */
  createAccount(input: { user: NewUser; personalOrg: { id: string; name: string }; agentKey?: string }): Promise<User>;
  getUser(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** By e-mail or username (both case-insensitive). */
  findUserByLogin(emailOrUsername: string): Promise<User | null>;
  /** The owner of a (canonical `uhCAk...`) agent key. */
  findUserByAgentKey(agentKey: string): Promise<User | null>;
  /** Throws StoreConflictError('username') when the username is taken. Null when no such user. */
  updateUser(id: string, patch: UserPatch): Promise<User | null>;
  setUserTier(id: string, tier: UserTier): Promise<boolean>;

  getAgent(agentKey: string): Promise<Agent | null>;
  /** Primary first, then by link time. */
  listAgents(userId: string): Promise<Agent[]>;
  /**
   * Links an agent key to a user (idempotent for the same user); throws
   * StoreConflictError('agent_key') when another user holds it. `primary` moves the
   * primary flag to this key; a user's first key is always primary.
   */
  linkAgent(userId: string, agentKey: string, opts?: { primary?: boolean; now?: number }): Promise<Agent>;

  /** Stores a cell and links its agent key to the user as primary, atomically. */
  createCell(cell: Omit<Cell, 'createdAt'> & { createdAt?: number }): Promise<Cell>;
  getCell(userId: string): Promise<Cell | null>;

  createOrg(org: Omit<Org, 'createdAt' | 'personal'> & { personal?: boolean; createdAt?: number }): Promise<Org>;
  getOrg(id: string): Promise<Org | null>;
  listOrgs(ownerId: string): Promise<Org[]>;
  personalOrg(userId: string): Promise<Org | null>;
  setOrgTier(id: string, tier: OrgTier, customLimit?: number | null): Promise<boolean>;

  createApp(app: Omit<App, 'createdAt' | 'active'> & { active?: boolean; createdAt?: number }): Promise<App>;
  getApp(id: string): Promise<App | null>;
  listApps(ownerId: string): Promise<App[]>;

  /** Stores a challenge by its hash, for `agentKey`, until `expiresAt` (ms). Purges expired ones. */
  createChallenge(challenge: { hash: string; agentKey: string; expiresAt: number }): Promise<void>;
  /** Marks the challenge used if it exists, was issued to `agentKey`, is unused and unexpired; true if so. */
  consumeChallenge(hash: string, agentKey: string, now: number): Promise<boolean>;
}

// ---- SQLite implementation ----

interface UserRow {
  id: string;
  email: string | null;
  username: string | null;
  password_hash: string | null;
  display_name: string | null;
  profile_picture: string | null;
  public_fields: string;
  contact_opt_in: number;
  tier: UserTier;
  email_verified: number;
  created_at: number;
}

interface AgentRow {
  agent_key: string;
  user_id: string;
  is_primary: number;
  created_at: number;
}

interface CellRow {
  user_id: string;
  agent_key: string;
  ciphertext: Buffer;
  nonce: Buffer;
  created_at: number;
}

interface OrgRow {
  id: string;
  name: string;
  owner_id: string;
  personal: number;
  tier: OrgTier;
  custom_limit: number | null;
  created_at: number;
}

interface AppRow {
  id: string;
  org_id: string | null;
  owner_id: string;
  name: string;
  redirect_uris: string;
  scopes: string;
  active: number;
  created_at: number;
}

function jsonArray<T>(text: string): T[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as T[]) : [];
  } catch {
    return [];
  }
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  username: r.username,
  passwordHash: r.password_hash,
  displayName: r.display_name,
  profilePicture: r.profile_picture,
  publicFields: jsonArray<PublicField>(r.public_fields),
  contactOptIn: r.contact_opt_in === 1,
  tier: r.tier,
  emailVerified: r.email_verified === 1,
  createdAt: r.created_at,
});

const toAgent = (r: AgentRow): Agent => ({
  agentKey: r.agent_key,
  userId: r.user_id,
  primary: r.is_primary === 1,
  createdAt: r.created_at,
});

const toCell = (r: CellRow): Cell => ({
  userId: r.user_id,
  agentKey: r.agent_key,
  ciphertext: new Uint8Array(r.ciphertext),
  nonce: new Uint8Array(r.nonce),
  createdAt: r.created_at,
});

const toOrg = (r: OrgRow): Org => ({
  id: r.id,
  name: r.name,
  ownerId: r.owner_id,
  personal: r.personal === 1,
  tier: r.tier,
  customLimit: r.custom_limit,
  createdAt: r.created_at,
});

const toApp = (r: AppRow): App => ({
  id: r.id,
  orgId: r.org_id,
  ownerId: r.owner_id,
  name: r.name,
  redirectUris: jsonArray<string>(r.redirect_uris),
  scopes: jsonArray<string>(r.scopes),
  active: r.active === 1,
  createdAt: r.created_at,
});

/** Maps SQLite's UNIQUE violations to StoreConflictError; rethrows anything else. */
function conflict(err: unknown): never {
  const message = err instanceof Error ? err.message : '';
  if (/UNIQUE constraint failed/.test(message)) {
    if (/users\.email/.test(message)) throw new StoreConflictError('email');
    if (/users\.username/.test(message)) throw new StoreConflictError('username');
    if (/agents\.agent_key|cells\.agent_key/.test(message)) throw new StoreConflictError('agent_key');
    throw new StoreConflictError('unknown');
  }
  throw err;
}

const AGENT_ORDER = 'ORDER BY is_primary DESC, created_at, agent_key';

async function insertAgent(tx: Queryable, userId: string, agentKey: string, primary: boolean, now: number): Promise<void> {
  const owner = await tx.get<{ user_id: string }>('SELECT user_id FROM agents WHERE agent_key = ?', [agentKey]);
  if (owner && owner.user_id !== userId) throw new StoreConflictError('agent_key');
  const hasPrimary = await tx.get('SELECT 1 FROM agents WHERE user_id = ? AND is_primary = 1', [userId]);
  const makePrimary = primary || !hasPrimary;
  if (makePrimary) await tx.run('UPDATE agents SET is_primary = 0 WHERE user_id = ? AND agent_key <> ?', [userId, agentKey]);
  if (owner) {
    if (makePrimary) await tx.run('UPDATE agents SET is_primary = 1 WHERE agent_key = ?', [agentKey]);
    return;
  }
  await tx.run('INSERT INTO agents (agent_key, user_id, is_primary, created_at) VALUES (?, ?, ?, ?)', [
    agentKey,
    userId,
    makePrimary ? 1 : 0,
    now,
  ]);
}

export function createSqliteAccountsStore(db: Db): AccountsStore {
  const userBy = async (where: string, params: (string | number)[]): Promise<User | null> => {
    const row = await db.get<UserRow>(`SELECT * FROM users WHERE ${where}`, params);
    return row ? toUser(row) : null;
  };

  return {
    async createAccount({ user, personalOrg, agentKey }) {
      try {
        await db.transaction(async (tx) => {
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
          if (agentKey) await insertAgent(tx, user.id, agentKey, true, user.createdAt);
        });
      } catch (err) {
        conflict(err);
      }
      return (await userBy('id = ?', [user.id]))!;
    },

    getUser: (id) => userBy('id = ?', [id]),
    findUserByEmail: (email) => userBy('email = ?', [email]),
    findUserByLogin: (login) => userBy('email = ? OR username = ? ORDER BY email = ? DESC LIMIT 1', [login, login, login]),
    findUserByAgentKey: (agentKey) =>
      userBy('id = (SELECT user_id FROM agents WHERE agent_key = ?)', [agentKey]),

    async updateUser(id, patch) {
      const sets: string[] = [];
      const params: (string | number | null)[] = [];
      const set = (column: string, value: string | number | null) => {
        sets.push(`${column} = ?`);
        params.push(value);
      };
      if (patch.displayName !== undefined) set('display_name', patch.displayName);
      if (patch.username !== undefined) set('username', patch.username);
      if (patch.profilePicture !== undefined) set('profile_picture', patch.profilePicture);
      if (patch.publicFields !== undefined) set('public_fields', JSON.stringify([...new Set(patch.publicFields)]));
      if (patch.contactOptIn !== undefined) set('contact_opt_in', patch.contactOptIn ? 1 : 0);
      if (sets.length > 0) {
        try {
          await db.run(`UPDATE users SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
        } catch (err) {
          conflict(err);
        }
      }
      return userBy('id = ?', [id]);
    },

    async setUserTier(id, tier) {
      return (await db.run('UPDATE users SET tier = ? WHERE id = ?', [tier, id])).changes === 1;
    },

    async getAgent(agentKey) {
      const row = await db.get<AgentRow>('SELECT * FROM agents WHERE agent_key = ?', [agentKey]);
      return row ? toAgent(row) : null;
    },

    async listAgents(userId) {
      return (await db.all<AgentRow>(`SELECT * FROM agents WHERE user_id = ? ${AGENT_ORDER}`, [userId])).map(toAgent);
    },

    async linkAgent(userId, agentKey, opts = {}) {
      await db.transaction((tx) => insertAgent(tx, userId, agentKey, opts.primary ?? false, opts.now ?? Date.now()));
      const row = await db.get<AgentRow>('SELECT * FROM agents WHERE agent_key = ?', [agentKey]);
      return toAgent(row!);
    },

    async createCell(cell) {
      const createdAt = cell.createdAt ?? Date.now();
      try {
        await db.transaction(async (tx) => {
          await insertAgent(tx, cell.userId, cell.agentKey, true, createdAt);
          await tx.run('INSERT INTO cells (user_id, agent_key, ciphertext, nonce, created_at) VALUES (?, ?, ?, ?, ?)', [
            cell.userId,
            cell.agentKey,
            cell.ciphertext,
            cell.nonce,
            createdAt,
          ]);
        });
      } catch (err) {
        if (err instanceof StoreConflictError) throw err;
        if (err instanceof Error && /UNIQUE constraint failed: cells\.user_id/.test(err.message)) {
          throw new StoreConflictError('unknown');
        }
        conflict(err);
      }
      return { ...cell, createdAt };
    },

    async getCell(userId) {
      const row = await db.get<CellRow>('SELECT * FROM cells WHERE user_id = ?', [userId]);
      return row ? toCell(row) : null;
    },

    async createOrg(org) {
      const createdAt = org.createdAt ?? Date.now();
      await db.run(
        'INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [org.id, org.name, org.ownerId, org.personal ? 1 : 0, org.tier, org.customLimit, createdAt],
      );
      return { ...org, personal: org.personal ?? false, createdAt };
    },

    async getOrg(id) {
      const row = await db.get<OrgRow>('SELECT * FROM orgs WHERE id = ?', [id]);
      return row ? toOrg(row) : null;
    },

    async listOrgs(ownerId) {
      return (await db.all<OrgRow>('SELECT * FROM orgs WHERE owner_id = ? ORDER BY personal DESC, created_at, id', [ownerId])).map(
        toOrg,
      );
    },

    async personalOrg(userId) {
      const row = await db.get<OrgRow>('SELECT * FROM orgs WHERE owner_id = ? AND personal = 1', [userId]);
      return row ? toOrg(row) : null;
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
      await db.run(
        `INSERT INTO apps (id, org_id, owner_id, name, redirect_uris, scopes, active, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [app.id, app.orgId, app.ownerId, app.name, JSON.stringify(app.redirectUris), JSON.stringify(app.scopes), active ? 1 : 0, createdAt],
      );
      return { ...app, active, createdAt };
    },

    async getApp(id) {
      const row = await db.get<AppRow>('SELECT * FROM apps WHERE id = ?', [id]);
      return row ? toApp(row) : null;
    },

    async listApps(ownerId) {
      return (await db.all<AppRow>('SELECT * FROM apps WHERE owner_id = ? ORDER BY created_at, id', [ownerId])).map(toApp);
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
