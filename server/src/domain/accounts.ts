// Accounts (decisions.md 5): the one way to create one (register, vault login and the
// admin CLI all come through createUserAccount, so every user gets a personal
// organization), what an account holds, profile changes, and what the operator sets
// (tiers, organizations).
import { randomUUID } from 'node:crypto';
import { hashPassword } from './passwords.js';
import { DomainError } from '../errors.js';
import { StoreConflictError, type Agent, type Org, type OrgTier, type PublicField, type User, type UserTier } from '../store/index.js';
import type { DomainDeps } from './deps.js';

export interface NewAccount {
  email?: string | null;
  password?: string | null;
  username?: string | null;
  displayName?: string | null;
  tier?: UserTier;
  /** A device key to link as primary (vault accounts). */
  agentKey?: string;
}

/** Creates a user with a personal organization. DomainError email_taken or username_taken on a duplicate. */
export async function createUserAccount(deps: DomainDeps, input: NewAccount): Promise<User> {
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  try {
    return await deps.store.accounts.createAccount({
      user: {
        id: randomUUID(),
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
    if (err instanceof StoreConflictError && (err.what === 'email' || err.what === 'username')) {
      throw new DomainError(err.what === 'email' ? 'email_taken' : 'username_taken', undefined, { field: err.what });
    }
    throw err;
  }
}

/** A user with what their account holds besides the user row. */
export interface Account {
  user: User;
  /** Linked keys (unlinked ones are not the user's to show), primary first, then by link time. */
  agents: Agent[];
  hasServerCell: boolean;
  personalOrgId: string | null;
}

export async function accountOf(deps: DomainDeps, user: User): Promise<Account> {
  const [agents, cell, org] = await Promise.all([
    deps.store.accounts.listAgents(user.id),
    deps.store.accounts.getCell(user.id),
    deps.store.accounts.personalOrg(user.id),
  ]);
  return { user, agents: agents.filter((a) => a.unlinkedAt === null), hasServerCell: cell !== null, personalOrgId: org?.id ?? null };
}

/** The invalid_token message of sign-it calls whose token outlived its account. */
export const ACCOUNT_GONE = 'The account of this token no longer exists.';

/** The user a token names: invalid_token (with `message`) when the account no longer exists. */
export async function userOfToken(deps: DomainDeps, userId: string, message?: string): Promise<User> {
  const user = await deps.store.accounts.getUser(userId);
  if (!user) throw new DomainError('invalid_token', message);
  return user;
}

export interface ProfilePatch {
  display_name?: string | null;
  username?: string | null;
  profile_picture?: string | null;
  public_fields?: PublicField[];
  contact_opt_in?: boolean;
}

/**
 * Profile changes (decisions.md 5); `changed` names the profile fields whose value
 * changed (a changed display name is what fires `user.profile.updated`, with webhooks).
 * The store's change feed tells the verify answers about it.
 */
export async function updateProfile(deps: DomainDeps, userId: string, patch: ProfilePatch): Promise<{ account: Account; changed: string[] }> {
  const before = await userOfToken(deps, userId);
  let after: User | null;
  try {
    after = await deps.store.accounts.updateUser(userId, {
      displayName: patch.display_name,
      username: patch.username,
      profilePicture: patch.profile_picture,
      publicFields: patch.public_fields,
      contactOptIn: patch.contact_opt_in,
    });
  } catch (err) {
    if (err instanceof StoreConflictError && err.what === 'username') throw new DomainError('username_taken', undefined, { field: 'username' });
    throw err;
  }
  if (!after) throw new DomainError('invalid_token');
  const changed: string[] = [];
  if (after.displayName !== before.displayName) changed.push('display_name');
  if (after.username !== before.username) changed.push('username');
  if (after.profilePicture !== before.profilePicture) changed.push('profile_picture');
  return { account: await accountOf(deps, after), changed };
}

/** The user with this e-mail (in any case): not_found naming it. */
export async function userByEmail(deps: DomainDeps, email: string): Promise<User> {
  const user = await deps.store.accounts.findUserByEmail(email.toLowerCase());
  if (!user) throw new DomainError('not_found', `no user with e-mail ${email}`);
  return user;
}

/** decisions.md 5: tiers are set by the operator (there is no billing system). */
export async function setUserTier(deps: DomainDeps, userId: string, tier: UserTier): Promise<void> {
  if (!(await deps.store.accounts.setUserTier(userId, tier))) throw new DomainError('not_found', `no user ${userId}`);
}

export async function createOrg(deps: DomainDeps, input: { name: string; ownerId: string; tier: OrgTier; customLimit: number | null }): Promise<Org> {
  return deps.store.accounts.createOrg({ id: randomUUID(), ...input });
}

export async function setOrgTier(deps: DomainDeps, orgId: string, tier: OrgTier): Promise<void> {
  if (!(await deps.store.accounts.setOrgTier(orgId, tier))) throw new DomainError('not_found', `no organization ${orgId}`);
}
