// Accounts as the API shows them, and the one way to create one (register, vault
// login and the admin CLI all come through createUserAccount), so every user gets
// a personal organization (decisions.md 5).
import { randomUUID } from 'node:crypto';
import { didFromAgentKey } from 'provenant';
import { StoreConflictError, type User, type UserTier } from '../store/accounts.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { hashPassword } from '../auth/passwords.js';

export interface UserView {
  id: string;
  email: string | null;
  username: string | null;
  display_name: string | null;
  profile_picture: string | null;
  public_fields: string[];
  contact_opt_in: boolean;
  tier: UserTier;
  /** The primary agent key, null until one is linked. */
  agent_pub_key: string | null;
  did: string | null;
  agents: { agent_pub_key: string; did: string | null; primary: boolean; linked_at: string }[];
  server_cell: boolean;
  personal_org_id: string | null;
  created_at: string;
}

export async function userView(deps: Pick<ServerDeps, 'store'>, user: User): Promise<UserView> {
  const [agents, cell, org] = await Promise.all([
    deps.store.accounts.listAgents(user.id),
    deps.store.accounts.getCell(user.id),
    deps.store.accounts.personalOrg(user.id),
  ]);
  const primary = agents.find((a) => a.primary) ?? null;
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    display_name: user.displayName,
    profile_picture: user.profilePicture,
    public_fields: user.publicFields,
    contact_opt_in: user.contactOptIn,
    tier: user.tier,
    agent_pub_key: primary?.agentKey ?? null,
    did: primary ? didFromAgentKey(primary.agentKey) : null,
    agents: agents.map((a) => ({
      agent_pub_key: a.agentKey,
      did: didFromAgentKey(a.agentKey),
      primary: a.primary,
      linked_at: new Date(a.createdAt).toISOString(),
    })),
    server_cell: cell !== null,
    personal_org_id: org?.id ?? null,
    created_at: new Date(user.createdAt).toISOString(),
  };
}

export interface NewAccount {
  email?: string | null;
  password?: string | null;
  username?: string | null;
  displayName?: string | null;
  tier?: UserTier;
  /** A device key to link as primary (vault accounts). */
  agentKey?: string;
}

/** Creates a user with a personal organization. Throws ApiError email_taken or username_taken on a duplicate. */
export async function createUserAccount(deps: Pick<ServerDeps, 'store'>, input: NewAccount): Promise<User> {
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const id = randomUUID();
  try {
    return await deps.store.accounts.createAccount({
      user: {
        id,
        email: input.email ? input.email.toLowerCase() : null,
        username: input.username ?? null,
        passwordHash,
        displayName: input.displayName ?? null,
        tier: input.tier ?? 'free',
        createdAt: Date.now(),
      },
      personalOrg: { id: randomUUID(), name: 'Personal' },
      agentKey: input.agentKey,
    });
  } catch (err) {
    if (err instanceof StoreConflictError && (err.field === 'email' || err.field === 'username')) {
      throw new ApiError(err.field === 'email' ? 'email_taken' : 'username_taken', undefined, { field: err.field });
    }
    throw err;
  }
}
