// A user's device keys (issue 25, item 1): listing them, unlinking one, and the rule
// every key-authenticated path follows (vault login, vault publishing, the quota by
// key): an unlinked key no longer acts for its user. Its row stays, so the records it
// signed keep their signer (they are immutable) and no other account can take it.
import { normalizeAgentKey } from 'provenant';
import { DomainError } from '../errors.js';
import type { Agent, User } from '../store/index.js';
import type { DomainDeps } from './deps.js';

/** The user's linked keys, primary first, then by link time. */
export async function linkedAgents(deps: DomainDeps, userId: string): Promise<Agent[]> {
  return (await deps.store.accounts.listAgents(userId)).filter((a) => a.unlinkedAt === null);
}

/**
 * The account a key acts for: null for a key no account holds; agent_unlinked for a
 * key its user unlinked (it must not sign in, publish or start a new account).
 */
export async function linkedOwner(deps: DomainDeps, agentKey: string): Promise<User | null> {
  const agent = await deps.store.accounts.getAgent(agentKey);
  if (agent === null) return null;
  if (agent.unlinkedAt !== null) throw new DomainError('agent_unlinked');
  return deps.store.accounts.getUser(agent.userId);
}

/**
 * Unlinks one of the user's device keys: invalid_agent_pub_key for a malformed key,
 * not_found for a key that is not a linked key of theirs, agent_required for their
 * only key or their server-hosted cell's. Session tokens the key signed in with end
 * with it (domain/sessions.ts sessionOfToken checks the key of a vault login).
 */
export async function unlinkDeviceKey(deps: DomainDeps, userId: string, agentPubKey: string, now = Date.now()): Promise<void> {
  const agentKey = normalizeAgentKey(agentPubKey);
  if (!agentKey) throw new DomainError('invalid_agent_pub_key');
  switch (await deps.store.accounts.unlinkAgent(userId, agentKey, now)) {
    case 'unlinked':
      return;
    case 'not_linked':
      throw new DomainError('not_found', 'No device key linked to your account has this agent_pub_key.');
    case 'only_key':
      throw new DomainError('agent_required', 'This is the only device key of your account; link another before unlinking it.');
    case 'cell_key':
      throw new DomainError('agent_required', 'This key is your server-hosted cell\'s; it cannot be unlinked.');
  }
}
