// Sign-up, sign-in and vault challenge login (decisions.md 5), as an ordered list of
// checks per operation; each check says what it throws. Each gives the account and a
// JWT session token. What a session token stands for, and ending sessions: "sign out
// everywhere" and a password change void every session token issued up to then, on
// every node (a per-user cut-off in the database, compared with the token's iat_ms).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { authChallenge, isAuthChallenge, normalizeAgentKey, parseAgentKey, parseSignatureBase64, verifyBytes } from 'provenant';
import { hashPassword, verifyNothing, verifyPassword } from './passwords.js';
import { issueSessionToken, verifySessionToken } from './tokens.js';
import { DomainError } from '../errors.js';
import { StoreConflictError, type User } from '../store/index.js';
import { accountOf, createUserAccount, userOfToken, type Account } from './accounts.js';
import { linkedOwner } from './agents.js';
import type { DomainDeps } from './deps.js';
import type { VerificationMailQueue } from './email-verification.js';

/** decisions.md 5: a challenge is single use and valid 5 minutes. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export interface Session {
  token: string;
  account: Account;
}

async function sessionOf(deps: DomainDeps, user: User, agentKey: string | null = null): Promise<Session> {
  return { token: await issueSessionToken(deps, user.id, null, agentKey), account: await accountOf(deps, user) };
}

/** What a valid session token stands for. */
export interface SessionCaller {
  user: User;
  /** The app a developer token carries (still the user's). */
  appId: string | null;
}

/**
 * The caller of a session token, or null when it is not one of ours, expired, issued
 * before the user's sessions cut-off, of a user who is gone, signed in with a device
 * key since unlinked, or carrying an app the user no longer owns.
 */
export async function sessionOfToken(deps: DomainDeps, token: string): Promise<SessionCaller | null> {
  const claims = await verifySessionToken(deps, token);
  if (!claims) return null;
  const user = await deps.store.accounts.getUser(claims.userId);
  if (!user) return null;
  if (user.sessionsValidAfter !== null && claims.issuedAt < user.sessionsValidAfter) return null;
  if (claims.agentKey) {
    // the key still linked, and linked since before the token (a key unlinked and linked again does not revive its old sessions)
    const agent = await deps.store.accounts.getAgent(claims.agentKey);
    if (!agent || agent.userId !== user.id || agent.unlinkedAt !== null || claims.issuedAt < agent.createdAt) return null;
  }
  if (claims.appId) {
    const app = await deps.store.accounts.getApp(claims.appId);
    if (!app || app.ownerId !== user.id) return null;
  }
  return { user, appId: claims.appId };
}

/**
 * Voids every session token of the user issued up to now (the cut-off is the next
 * millisecond, so a token issued in the same millisecond, before or after, is void as
 * well), and returns the cut-off. Resolves once the clock has passed it, so that a token
 * issued afterwards is valid.
 */
async function endSessions(setCutoff: (cutoff: number) => Promise<boolean>): Promise<number> {
  const cutoff = Date.now() + 1;
  if (!(await setCutoff(cutoff))) throw new DomainError('invalid_token');
  while (Date.now() < cutoff) await sleep(1);
  return cutoff;
}

/**
 * "Sign out everywhere": every session token of the user issued up to now stops
 * working on every node, the caller's own included (it gets no new one: whoever holds
 * a stolen token cannot use this to stay in). Developer tokens are session tokens and
 * end too; apps' OAuth tokens do not (revoke an app under /api/v1/account/apps).
 */
export async function signOutEverywhere(deps: DomainDeps, userId: string): Promise<number> {
  return endSessions((cutoff) => deps.store.accounts.revokeSessions(userId, cutoff));
}

/**
 * A password change: the current password must verify (invalid_credentials, also for
 * an account without one), then the new hash is stored and every session token issued
 * up to now ends, in one transaction; the answer is a fresh session.
 */
export async function changePassword(deps: DomainDeps, userId: string, input: { current_password: string; new_password: string }): Promise<Session> {
  const user = await userOfToken(deps, userId);
  const ok = user.passwordHash ? await verifyPassword(input.current_password, user.passwordHash) : await verifyNothing(input.current_password);
  if (!ok) throw new DomainError('invalid_credentials', 'The current password is wrong.');
  const passwordHash = await hashPassword(input.new_password);
  await endSessions((cutoff) => deps.store.accounts.setPassword(userId, passwordHash, cutoff));
  return sessionOf(deps, await userOfToken(deps, userId));
}

/** A new account; the mail verifying its address is queued, never waited for. */
export async function register(
  deps: DomainDeps & { verificationMail: VerificationMailQueue },
  input: { email: string; password: string; display_name?: string; username?: string },
): Promise<Session> {
  const user = await createUserAccount(deps, {
    email: input.email,
    password: input.password,
    displayName: input.display_name,
    username: input.username,
  });
  deps.verificationMail.queue(user);
  return sessionOf(deps, user);
}

/** invalid_credentials for an unknown login, a wrong password or an account without one. */
export async function login(deps: DomainDeps, input: { email_or_username: string; password: string }): Promise<Session> {
  const user = await deps.store.accounts.findUserByLogin(input.email_or_username.trim());
  const ok = user?.passwordHash ? await verifyPassword(input.password, user.passwordHash) : await verifyNothing(input.password);
  if (!user || !ok) throw new DomainError('invalid_credentials');
  return sessionOf(deps, user);
}

/** The account of a session's user (invalid_token once it is gone). */
export async function accountOfSession(deps: DomainDeps, userId: string): Promise<Account> {
  return accountOf(deps, await userOfToken(deps, userId));
}

function challengeHash(challenge: string): string {
  return createHash('sha256').update(challenge, 'utf8').digest('hex');
}

/** The canonical agent key, or invalid_agent_pub_key. */
function agentKeyOf(input: unknown): string {
  const key = typeof input === 'string' ? normalizeAgentKey(input) : null;
  if (!key) throw new DomainError('invalid_agent_pub_key');
  return key;
}

/** A fresh single-use challenge for `agentPubKey`, valid 5 minutes, stored only as its hash. */
export async function issueChallenge(deps: DomainDeps, agentPubKey: unknown, now = Date.now()): Promise<{ challenge: string; expiresAt: number }> {
  const agentKey = agentKeyOf(agentPubKey);
  const challenge = authChallenge();
  const expiresAt = now + CHALLENGE_TTL_MS;
  await deps.store.accounts.createChallenge({ hash: challengeHash(challenge), agentKey, expiresAt });
  return { challenge, expiresAt };
}

/** A challenge as the vault signed it: base64 Ed25519 over its UTF-8 bytes by `agent_pub_key`. */
export interface SignedChallenge {
  challenge: string;
  agent_pub_key: string;
  signature: string;
}

/**
 * Checks a signed challenge and uses it up: the key must parse (invalid_agent_pub_key),
 * the challenge have the issued shape and the signature verify (invalid_signature),
 * and the challenge be one we issued to this key, unused and unexpired (invalid_challenge).
 */
async function consumeSignedChallenge(deps: DomainDeps, input: SignedChallenge, now: number): Promise<string> {
  const agentKey = agentKeyOf(input.agent_pub_key);
  if (!isAuthChallenge(input.challenge)) throw new DomainError('invalid_challenge');
  const signature = parseSignatureBase64(input.signature);
  const publicKey = parseAgentKey(agentKey)!;
  if (!signature || !verifyBytes(publicKey, Buffer.from(input.challenge, 'utf8'), signature)) {
    throw new DomainError('invalid_signature', 'signature: not a valid base64 Ed25519 signature of the challenge by agent_pub_key.');
  }
  if (!(await deps.store.accounts.consumeChallenge(challengeHash(input.challenge), agentKey, now))) {
    throw new DomainError('invalid_challenge');
  }
  return agentKey;
}

/**
 * Vault login: the key's account, or a new device-hosted one (tier free, no e-mail or
 * password); agent_unlinked for a key its user unlinked (it neither signs in as them
 * nor starts an account of its own). The token carries the key, so unlinking it ends
 * the session.
 */
export async function vaultLogin(deps: DomainDeps, input: SignedChallenge, now = Date.now()): Promise<Session & { created: boolean }> {
  const agentKey = await consumeSignedChallenge(deps, input, now);
  let user = await linkedOwner(deps, agentKey);
  let created = false;
  if (!user) {
    try {
      user = await createUserAccount(deps, { agentKey });
      created = true;
    } catch (err) {
      // Two first logins of one key at once: the other created the account.
      if (!(err instanceof StoreConflictError && err.what === 'agent_key')) throw err;
      user = await linkedOwner(deps, agentKey);
      if (!user) throw err;
    }
  }
  return { ...(await sessionOf(deps, user, agentKey)), created };
}

/** Links another device key to the signed-in user; agent_taken if another account holds it. */
export async function linkAgent(deps: DomainDeps, userId: string, input: SignedChallenge, now = Date.now()): Promise<Account> {
  const agentKey = await consumeSignedChallenge(deps, input, now);
  try {
    await deps.store.accounts.linkAgent(userId, agentKey);
  } catch (err) {
    if (err instanceof StoreConflictError) throw new DomainError('agent_taken');
    throw err;
  }
  return accountOfSession(deps, userId);
}
