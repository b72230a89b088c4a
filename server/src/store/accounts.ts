// Accounts (decisions.md 2, 5): users, agent keys, server-hosted cells, organizations,
// developer apps and vault login challenges. The interface, its values, the rows as
// both engines read them and the queries, written once for every engine (./sql.ts).
//
// Concurrent writes: linking a key reads its owner and then inserts, inside a feed
// write (./feed.ts), whose lock (PostgreSQL) or one writer (SQLite) lets no other link
// run in between; a challenge is consumed by one UPDATE, so of two consumers one wins.
import { StoreConflictError, StoreNotFoundError } from './errors.js';
import type { Feed, FeedWriter } from './feed.js';
import { recordProfileUpdated } from './oauth.js';
import { flag, jsonArray, type Db, type Queryable } from './sql.js';

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
  /**
   * Session tokens issued before this time (Unix ms) are void: set by "sign out
   * everywhere" and a password change (issue 25); null when never set.
   */
  sessionsValidAfter: number | null;
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
  /** Never true for an unlinked key. */
  primary: boolean;
  createdAt: number;
  /**
   * When the user unlinked the key (Unix ms), null while linked. An unlinked key stays
   * the user's (its records keep their signer's profile; no other account can take it)
   * but can no longer sign in, publish or be shown as the user's key.
   */
  unlinkedAt: number | null;
}

/** What unlinkAgent did: or why not (the key is not the user's linked key; the only one left; its server-hosted cell's). */
export type UnlinkOutcome = 'unlinked' | 'not_linked' | 'only_key' | 'cell_key';

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

export interface AccountsStore {
  /**
   * A user, their personal organization and (optionally) their first agent key, atomically.
   * StoreConflictError 'email', 'username' or 'agent_key' when one is taken.
   */
  createAccount(input: { user: NewUser; personalOrg: { id: string; name: string }; agentKey?: string }): Promise<User>;
  getUser(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** By e-mail or username (both case-insensitive). */
  findUserByLogin(emailOrUsername: string): Promise<User | null>;
  /** The owner of a (canonical `uhCAk...`) agent key. */
  findUserByAgentKey(agentKey: string): Promise<User | null>;
  /**
   * Null when no such user; StoreConflictError('username') when the username is taken.
   * A change to a field public answers can show (display name, username, picture, public
   * fields) appends a 'profile' change. A changed display name writes
   * `user.profile.updated` to the outbox, in the same transaction, for every app holding
   * an unrevoked, unexpired refresh token of the user (spec 6).
   */
  updateUser(id: string, patch: UserPatch): Promise<User | null>;
  setUserTier(id: string, tier: UserTier): Promise<boolean>;
  /**
   * Voids the user's session tokens issued before `before` (Unix ms): the cut-off only
   * moves forward (a later call with an earlier time changes nothing). False when no such user.
   */
  revokeSessions(userId: string, before: number): Promise<boolean>;
  /** A new password hash, and the sessions cut-off moved to `sessionsBefore`, in one transaction. False when no such user. */
  setPassword(userId: string, passwordHash: string, sessionsBefore: number): Promise<boolean>;

  getAgent(agentKey: string): Promise<Agent | null>;
  /** Every key the user holds, unlinked ones too (their `unlinkedAt` set): primary first, then by link time. */
  listAgents(userId: string): Promise<Agent[]>;
  /**
   * Links an agent key to a user (idempotent for the same user; a key the same user
   * unlinked is linked again, its createdAt the new link time); StoreConflictError ('agent_key') when another user holds
   * it, linked or not, StoreNotFoundError('user') when the user does not exist.
   * `primary` moves the primary flag to this key; a user's first linked key is always
   * primary. Linking a key that already signed stored records changes whose profile
   * their answers show: it appends a 'profile' change.
   */
  linkAgent(userId: string, agentKey: string, opts?: { primary?: boolean; now?: number }): Promise<Agent>;
  /**
   * Unlinks one of the user's linked keys at `now`, keeping its row (the records it
   * signed keep their signer). Refused: 'only_key' for the user's last linked key,
   * 'cell_key' for the key of their server-hosted cell; 'not_linked' when the key is
   * not a linked key of this user. The primary flag moves to the oldest key left.
   * Serialised per user, so two unlinks at once cannot leave none.
   */
  unlinkAgent(userId: string, agentKey: string, now: number): Promise<UnlinkOutcome>;

  /**
   * Stores a cell and links its agent key to the user as primary, atomically.
   * StoreConflictError 'cell' (the user has one) or 'agent_key'; StoreNotFoundError('user').
   */
  createCell(cell: Omit<Cell, 'createdAt'> & { createdAt?: number }): Promise<Cell>;
  getCell(userId: string): Promise<Cell | null>;

  /** StoreConflictError 'org' (the id) or 'personal_org' (the owner has one); StoreNotFoundError('user'). */
  createOrg(org: Omit<Org, 'createdAt' | 'personal'> & { personal?: boolean; createdAt?: number }): Promise<Org>;
  getOrg(id: string): Promise<Org | null>;
  personalOrg(userId: string): Promise<Org | null>;
  setOrgTier(id: string, tier: OrgTier, customLimit?: number | null): Promise<boolean>;

  /** StoreConflictError('app') when the id is taken; StoreNotFoundError 'user' or 'org'. */
  createApp(app: Omit<App, 'createdAt' | 'active'> & { active?: boolean; createdAt?: number }): Promise<App>;
  getApp(id: string): Promise<App | null>;
  listApps(ownerId: string): Promise<App[]>;

  /** Stores a challenge by its hash, for `agentKey`, until `expiresAt` (ms). Purges expired ones. */
  createChallenge(challenge: { hash: string; agentKey: string; expiresAt: number }): Promise<void>;
  /** Marks the challenge used if it exists, was issued to `agentKey`, is unused and unexpired; true if so. */
  consumeChallenge(hash: string, agentKey: string, now: number): Promise<boolean>;
}
// ---------------------------------------------------------------- rows

interface UserRow {
  id: string;
  email: string | null;
  username: string | null;
  password_hash: string | null;
  display_name: string | null;
  profile_picture: string | null;
  public_fields: string;
  contact_opt_in: boolean | number;
  tier: UserTier;
  email_verified: boolean | number;
  created_at: number;
  sessions_valid_after: number | null;
}

interface AgentRow {
  agent_key: string;
  user_id: string;
  is_primary: boolean | number;
  created_at: number;
  unlinked_at: number | null;
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
  personal: boolean | number;
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
  active: boolean | number;
  created_at: number;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  username: r.username,
  passwordHash: r.password_hash,
  displayName: r.display_name,
  profilePicture: r.profile_picture,
  publicFields: jsonArray<PublicField>(r.public_fields),
  contactOptIn: flag(r.contact_opt_in),
  tier: r.tier,
  emailVerified: flag(r.email_verified),
  createdAt: r.created_at,
  sessionsValidAfter: r.sessions_valid_after ?? null,
});

const toAgent = (r: AgentRow): Agent => ({
  agentKey: r.agent_key,
  userId: r.user_id,
  primary: flag(r.is_primary),
  createdAt: r.created_at,
  unlinkedAt: r.unlinked_at ?? null,
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
  personal: flag(r.personal),
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
  active: flag(r.active),
  createdAt: r.created_at,
});

// ---------------------------------------------------------------- queries

/**
 * Links `agentKey` to `userId` in the caller's feed write (which holds the feed lock, so
 * no other link runs between the owner check and the insert). Records already signed
 * by a key that was nobody's show the profile of the account that now holds it: their
 * answers change, so a 'profile' change is appended.
 */
async function insertAgent(db: Db, tx: Queryable, feed: FeedWriter, userId: string, agentKey: string, primary: boolean, now: number): Promise<void> {
  const { true: TRUE, false: FALSE } = db.dialect;
  const owner = await tx.get<{ user_id: string }>('SELECT user_id FROM agents WHERE agent_key = ?', [agentKey]);
  if (owner && owner.user_id !== userId) throw new StoreConflictError('agent_key');
  const hasPrimary = await tx.get(`SELECT 1 FROM agents WHERE user_id = ? AND is_primary = ${TRUE}`, [userId]);
  const makePrimary = primary || !hasPrimary;
  if (makePrimary) await tx.run(`UPDATE agents SET is_primary = ${FALSE} WHERE user_id = ? AND agent_key <> ?`, [userId, agentKey]);
  if (owner) {
    // the same user's key: linked again (from now) if they had unlinked it
    await tx.run('UPDATE agents SET unlinked_at = NULL, created_at = ? WHERE agent_key = ? AND unlinked_at IS NOT NULL', [now, agentKey]);
    if (makePrimary) await tx.run(`UPDATE agents SET is_primary = ${TRUE} WHERE agent_key = ?`, [agentKey]);
    return;
  }
  await tx.run('INSERT INTO agents (agent_key, user_id, is_primary, created_at) VALUES (?, ?, ?, ?)', [agentKey, userId, makePrimary, now]);
  if (await tx.get('SELECT 1 FROM signatures WHERE signer = ? LIMIT 1', [agentKey])) await feed.append({ kind: 'profile', user_id: userId, at: now });
}

/** The columns whose values public answers can show (spec 2.1, gated by public_fields). */
const PROFILE_COLUMNS = new Set(['display_name', 'username', 'profile_picture', 'public_fields']);

export function createAccountsStore(db: Db, feed: Feed): AccountsStore {
  const d = db.dialect;
  const userBy = async (where: string, params: unknown[]): Promise<User | null> => {
    const row = await db.get<UserRow>(`SELECT * FROM users WHERE ${where}`, params);
    return row ? toUser(row) : null;
  };
  const agentBy = async (agentKey: string): Promise<Agent | null> => {
    const row = await db.get<AgentRow>('SELECT * FROM agents WHERE agent_key = ?', [agentKey]);
    return row ? toAgent(row) : null;
  };
  const orgBy = async (where: string, params: unknown[]): Promise<Org | null> => {
    const row = await db.get<OrgRow>(`SELECT * FROM orgs WHERE ${where}`, params);
    return row ? toOrg(row) : null;
  };

  return {
    async createAccount({ user, personalOrg, agentKey }) {
      await feed.write(async (tx, changes) => {
        await tx.run(
          'INSERT INTO users (id, email, username, password_hash, display_name, tier, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          [user.id, user.email ?? null, user.username ?? null, user.passwordHash ?? null, user.displayName ?? null, user.tier ?? 'free', user.createdAt],
        );
        await tx.run(
          `INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES (?, ?, ?, ${d.true}, 'free', NULL, ?)`,
          [personalOrg.id, personalOrg.name, user.id, user.createdAt],
        );
        if (agentKey) await insertAgent(db, tx, changes, user.id, agentKey, true, user.createdAt);
      });
      return (await userBy('id = ?', [user.id]))!;
    },

    getUser: (id) => userBy('id = ?', [id]),
    findUserByEmail: (email) => userBy(d.equalsIgnoringCase('email'), [email]),
    findUserByLogin: (login) =>
      userBy(
        `${d.equalsIgnoringCase('email')} OR ${d.equalsIgnoringCase('username')} ORDER BY COALESCE(${d.equalsIgnoringCase('email')}, ${d.false}) DESC LIMIT 1`,
        [login, login, login],
      ),
    findUserByAgentKey: (agentKey) => userBy('id = (SELECT user_id FROM agents WHERE agent_key = ?)', [agentKey]),

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
        const update = `UPDATE users SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
        if (columns.some((c) => PROFILE_COLUMNS.has(c))) {
          await feed.write(async (tx, changes) => {
            const before = await tx.get<{ display_name: string | null }>(`SELECT display_name FROM users WHERE id = ? ${d.lock('update')}`, [id]);
            if ((await tx.run(update, [...params, id])) !== 1) return;
            await changes.append({ kind: 'profile', user_id: id, at: Date.now() });
            if (patch.displayName !== undefined && patch.displayName !== before?.display_name) await recordProfileUpdated(db, tx, id, Date.now());
          });
        } else {
          await db.run(update, [...params, id]);
        }
      }
      return userBy('id = ?', [id]);
    },

    async setUserTier(id, tier) {
      return (await db.run('UPDATE users SET tier = ? WHERE id = ?', [tier, id])) === 1;
    },

    async revokeSessions(userId, before) {
      const sql = `UPDATE users SET sessions_valid_after = ${d.greatest('COALESCE(sessions_valid_after, 0)', '?')} WHERE id = ?`;
      return (await db.run(sql, [before, userId])) === 1;
    },

    async setPassword(userId, passwordHash, sessionsBefore) {
      const sql = `UPDATE users SET password_hash = ?, sessions_valid_after = ${d.greatest('COALESCE(sessions_valid_after, 0)', '?')} WHERE id = ?`;
      return (await db.run(sql, [passwordHash, sessionsBefore, userId])) === 1;
    },

    getAgent: agentBy,

    async listAgents(userId) {
      return (await db.all<AgentRow>('SELECT * FROM agents WHERE user_id = ? ORDER BY is_primary DESC, created_at, agent_key', [userId])).map(toAgent);
    },

    async linkAgent(userId, agentKey, opts = {}) {
      await feed.write((tx, changes) => insertAgent(db, tx, changes, userId, agentKey, opts.primary ?? false, opts.now ?? Date.now()), { missing: 'user' });
      return (await agentBy(agentKey))!;
    },

    unlinkAgent(userId, agentKey, now) {
      return db.transaction(async (tx) => {
        // the user's row locked: two unlinks at once cannot each see the other's key still linked
        if (!(await tx.get(`SELECT 1 FROM users WHERE id = ? ${d.lock('update')}`, [userId]))) return 'not_linked';
        const linked = await tx.all<{ agent_key: string }>('SELECT agent_key FROM agents WHERE user_id = ? AND unlinked_at IS NULL ORDER BY created_at, agent_key', [userId]);
        if (!linked.some((a) => a.agent_key === agentKey)) return 'not_linked';
        if (linked.length === 1) return 'only_key';
        if (await tx.get('SELECT 1 FROM cells WHERE user_id = ? AND agent_key = ?', [userId, agentKey])) return 'cell_key';
        await tx.run(`UPDATE agents SET unlinked_at = ?, is_primary = ${d.false} WHERE agent_key = ?`, [now, agentKey]);
        if (!(await tx.get(`SELECT 1 FROM agents WHERE user_id = ? AND is_primary = ${d.true}`, [userId]))) {
          const next = linked.find((a) => a.agent_key !== agentKey)!;
          await tx.run(`UPDATE agents SET is_primary = ${d.true} WHERE agent_key = ?`, [next.agent_key]);
        }
        return 'unlinked';
      });
    },

    async createCell(cell) {
      const createdAt = cell.createdAt ?? Date.now();
      await feed.write(async (tx, changes) => {
        await insertAgent(db, tx, changes, cell.userId, cell.agentKey, true, createdAt);
        await tx.run('INSERT INTO cells (user_id, agent_key, ciphertext, nonce, created_at) VALUES (?, ?, ?, ?, ?)', [
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
      const row = await db.get<CellRow>('SELECT * FROM cells WHERE user_id = ?', [userId]);
      return row ? toCell(row) : null;
    },

    async createOrg(org) {
      const createdAt = org.createdAt ?? Date.now();
      const personal = org.personal ?? false;
      await db.transaction(
        (tx) =>
          tx.run('INSERT INTO orgs (id, name, owner_id, personal, tier, custom_limit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
            org.id, org.name, org.ownerId, personal, org.tier, org.customLimit, createdAt,
          ]),
        'user',
      );
      return { ...org, personal, createdAt };
    },

    getOrg: (id) => orgBy('id = ?', [id]),
    personalOrg: (userId) => orgBy(`owner_id = ? AND personal = ${d.true}`, [userId]),

    async setOrgTier(id, tier, customLimit) {
      const changed =
        customLimit === undefined
          ? await db.run('UPDATE orgs SET tier = ? WHERE id = ?', [tier, id])
          : await db.run('UPDATE orgs SET tier = ?, custom_limit = ? WHERE id = ?', [tier, customLimit, id]);
      return changed === 1;
    },

    async createApp(app) {
      const createdAt = app.createdAt ?? Date.now();
      const active = app.active ?? true;
      await db.transaction(async (tx) => {
        // two references: the org is checked here so that a failed foreign key means the owner
        if (app.orgId !== null && !(await tx.get('SELECT 1 FROM orgs WHERE id = ?', [app.orgId]))) throw new StoreNotFoundError('org');
        await tx.run(
          'INSERT INTO apps (id, org_id, owner_id, name, redirect_uris, scopes, active, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [app.id, app.orgId, app.ownerId, app.name, JSON.stringify(app.redirectUris), JSON.stringify(app.scopes), active, createdAt],
        );
      }, 'user');
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
        await tx.run(`INSERT INTO challenges (hash, agent_key, expires_at, used) VALUES (?, ?, ?, ${d.false})`, [hash, agentKey, expiresAt]);
      });
    },

    async consumeChallenge(hash, agentKey, now) {
      // one statement: a second consumer waits for the first one's write, then finds it used
      const changed = await db.run(`UPDATE challenges SET used = ${d.true} WHERE hash = ? AND agent_key = ? AND used = ${d.false} AND expires_at > ?`, [hash, agentKey, now]);
      return changed === 1;
    },
  };
}
