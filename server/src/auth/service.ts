// Sign-up, sign-in and vault challenge login (decisions.md 5), as an ordered list of
// checks per operation; each check says what it throws.
import { createHash } from 'node:crypto';
import { authChallenge, isAuthChallenge, normalizeAgentKey, parseAgentKey, parseSignatureBase64, verifyBytes } from 'provenant';
import { StoreConflictError, type User } from '../store/accounts.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { createUserAccount, userView, type UserView } from '../accounts/service.js';
import { invalidateVerifyCache } from '../signit/cache.js';
import { verifyNothing, verifyPassword } from './passwords.js';
import { issueSessionToken } from './tokens.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export interface Session {
  token: string;
  user: UserView;
}

async function session(deps: ServerDeps, user: User): Promise<Session> {
  return { token: await issueSessionToken(deps, user.id), user: await userView(deps, user) };
}

export async function register(
  deps: ServerDeps,
  input: { email: string; password: string; display_name?: string; username?: string },
): Promise<Session> {
  const user = await createUserAccount(deps, {
    email: input.email,
    password: input.password,
    displayName: input.display_name,
    username: input.username,
  });
  return session(deps, user);
}

/** invalid_credentials (401) for an unknown login, a wrong password or an account without one. */
export async function login(deps: ServerDeps, input: { email_or_username: string; password: string }): Promise<Session> {
  const user = await deps.store.accounts.findUserByLogin(input.email_or_username.trim());
  const ok = user?.passwordHash ? await verifyPassword(input.password, user.passwordHash) : await verifyNothing(input.password);
  if (!user || !ok) throw new ApiError('invalid_credentials');
  return session(deps, user);
}

function challengeHash(challenge: string): string {
  return createHash('sha256').update(challenge, 'utf8').digest('hex');
}

/** The canonical agent key, or 400 invalid_agent_pub_key. */
function agentKeyOf(input: unknown): string {
  const key = typeof input === 'string' ? normalizeAgentKey(input) : null;
  if (!key) throw new ApiError('invalid_agent_pub_key');
  return key;
}

/** A fresh single-use challenge for `agent_pub_key`, valid 5 minutes, stored only as its hash. */
export async function issueChallenge(deps: ServerDeps, agentPubKey: unknown): Promise<{ challenge: string; expires_at: string }> {
  const agentKey = agentKeyOf(agentPubKey);
  const challenge = authChallenge();
  const expiresAt = Date.now() + CHALLENGE_TTL_MS;
  await deps.store.accounts.createChallenge({ hash: challengeHash(challenge), agentKey, expiresAt });
  return { challenge, expires_at: new Date(expiresAt).toISOString() };
}

/**
 * Checks a signed challenge and uses it up: the key must parse (invalid_agent_pub_key),
 * the challenge have the issued shape and the signature verify (invalid_signature),
 * and the challenge be one we issued to this key, unused and unexpired (invalid_challenge).
 */
async function consumeSignedChallenge(
  deps: ServerDeps,
  input: { challenge: string; agent_pub_key: string; signature: string },
): Promise<string> {
  const agentKey = agentKeyOf(input.agent_pub_key);
  if (!isAuthChallenge(input.challenge)) throw new ApiError('invalid_challenge');
  const signature = parseSignatureBase64(input.signature);
  const publicKey = parseAgentKey(agentKey)!;
  if (!signature || !verifyBytes(publicKey, Buffer.from(input.challenge, 'utf8'), signature)) {
    throw new ApiError('invalid_signature', 'signature: not a valid base64 Ed25519 signature of the challenge by agent_pub_key.');
  }
  if (!(await deps.store.accounts.consumeChallenge(challengeHash(input.challenge), agentKey, Date.now()))) {
    throw new ApiError('invalid_challenge');
  }
  return agentKey;
}

/** Vault login: the key's account, or a new device-hosted one (tier free, no e-mail or password). */
export async function vaultLogin(
  deps: ServerDeps,
  input: { challenge: string; agent_pub_key: string; signature: string },
): Promise<Session & { created: boolean }> {
  const agentKey = await consumeSignedChallenge(deps, input);
  let user = await deps.store.accounts.findUserByAgentKey(agentKey);
  let created = false;
  if (!user) {
    try {
      user = await createUserAccount(deps, { agentKey });
      created = true;
    } catch (err) {
      // Two first logins of one key at once: the other created the account.
      if (!(err instanceof StoreConflictError && err.field === 'agent_key')) throw err;
      user = await deps.store.accounts.findUserByAgentKey(agentKey);
      if (!user) throw err;
    }
  }
  return { ...(await session(deps, user)), created };
}

/** Links another device key to the signed-in user; agent_taken (409) if another account holds it. */
export async function linkAgent(
  deps: ServerDeps,
  userId: string,
  input: { challenge: string; agent_pub_key: string; signature: string },
): Promise<UserView> {
  const agentKey = await consumeSignedChallenge(deps, input);
  try {
    await deps.store.accounts.linkAgent(userId, agentKey);
  } catch (err) {
    if (err instanceof StoreConflictError) throw new ApiError('agent_taken');
    throw err;
  }
  const user = await deps.store.accounts.getUser(userId);
  return userView(deps, user!);
}

export async function me(deps: ServerDeps, userId: string): Promise<UserView> {
  const user = await deps.store.accounts.getUser(userId);
  if (!user) throw new ApiError('invalid_token');
  return userView(deps, user);
}

/** Profile changes; a changed display name is what fires `user.profile.updated` (with webhooks). */
export async function updateMe(
  deps: ServerDeps,
  userId: string,
  patch: {
    display_name?: string | null;
    username?: string | null;
    profile_picture?: string | null;
    public_fields?: ('display_name' | 'username' | 'profile_picture')[];
    contact_opt_in?: boolean;
  },
): Promise<{ user: UserView; changed: string[] }> {
  const before = await deps.store.accounts.getUser(userId);
  if (!before) throw new ApiError('invalid_token');
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
    if (err instanceof StoreConflictError && err.field === 'username') throw new ApiError('username_taken', undefined, { field: 'username' });
    throw err;
  }
  const changed: string[] = [];
  if (after!.displayName !== before.displayName) changed.push('display_name');
  if (after!.username !== before.username) changed.push('username');
  if (after!.profilePicture !== before.profilePicture) changed.push('profile_picture');
  const grantChanged = JSON.stringify(after!.publicFields) !== JSON.stringify(before.publicFields);
  // Public signature responses show granted profile fields; cached ones are now stale.
  if (changed.length > 0 || grantChanged) invalidateVerifyCache(deps);
  return { user: await userView(deps, after!), changed };
}
