// Account rows (users, agent keys, cells, organizations, apps) as both engines read them,
// and their mapping to the store's values. Flags are booleans here as on PostgreSQL;
// SQLite, which stores 0/1, converts them in its engine. No SQL here.
import type { Agent, App, Cell, Org, OrgTier, PublicField, User, UserTier } from '../types.js';

export interface UserRow {
  id: string;
  email: string | null;
  username: string | null;
  password_hash: string | null;
  display_name: string | null;
  profile_picture: string | null;
  public_fields: string;
  contact_opt_in: boolean;
  tier: UserTier;
  email_verified: boolean;
  created_at: number;
  sessions_valid_after: number | null;
}

export interface AgentRow {
  agent_key: string;
  user_id: string;
  is_primary: boolean;
  created_at: number;
  unlinked_at: number | null;
}

export interface CellRow {
  user_id: string;
  agent_key: string;
  ciphertext: Buffer;
  nonce: Buffer;
  created_at: number;
}

export interface OrgRow {
  id: string;
  name: string;
  owner_id: string;
  personal: boolean;
  tier: OrgTier;
  custom_limit: number | null;
  created_at: number;
}

export interface AppRow {
  id: string;
  org_id: string | null;
  owner_id: string;
  name: string;
  redirect_uris: string;
  scopes: string;
  active: boolean;
  created_at: number;
}

export function jsonArray<T>(text: string): T[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as T[]) : [];
  } catch {
    return [];
  }
}

export const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  username: r.username,
  passwordHash: r.password_hash,
  displayName: r.display_name,
  profilePicture: r.profile_picture,
  publicFields: jsonArray<PublicField>(r.public_fields),
  contactOptIn: r.contact_opt_in,
  tier: r.tier,
  emailVerified: r.email_verified,
  createdAt: r.created_at,
  sessionsValidAfter: r.sessions_valid_after ?? null,
});

export const toAgent = (r: AgentRow): Agent => ({
  agentKey: r.agent_key,
  userId: r.user_id,
  primary: r.is_primary,
  createdAt: r.created_at,
  unlinkedAt: r.unlinked_at ?? null,
});

export const toCell = (r: CellRow): Cell => ({
  userId: r.user_id,
  agentKey: r.agent_key,
  ciphertext: new Uint8Array(r.ciphertext),
  nonce: new Uint8Array(r.nonce),
  createdAt: r.created_at,
});

export const toOrg = (r: OrgRow): Org => ({
  id: r.id,
  name: r.name,
  ownerId: r.owner_id,
  personal: r.personal,
  tier: r.tier,
  customLimit: r.custom_limit,
  createdAt: r.created_at,
});

export const toApp = (r: AppRow): App => ({
  id: r.id,
  orgId: r.org_id,
  ownerId: r.owner_id,
  name: r.name,
  redirectUris: jsonArray<string>(r.redirect_uris),
  scopes: jsonArray<string>(r.scopes),
  active: r.active,
  createdAt: r.created_at,
});
