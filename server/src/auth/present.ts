// /api/v1/auth answers (decisions.md 5): the account as the API shows it, and sessions.
import { didFromAgentKey } from 'provenant';
import type { Account } from '../domain/accounts.js';
import type { Session } from '../domain/sessions.js';
import type { Agent, UserTier } from '../store/index.js';

export interface UserView {
  id: string;
  email: string | null;
  /** The address was confirmed by a link mailed to it (apps see only a verified one). */
  email_verified: boolean;
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

export function userView({ user, agents, hasServerCell, personalOrgId }: Account): UserView {
  const primary = agents.find((a) => a.primary) ?? null;
  return {
    id: user.id,
    email: user.email,
    email_verified: user.emailVerified,
    username: user.username,
    display_name: user.displayName,
    profile_picture: user.profilePicture,
    public_fields: user.publicFields,
    contact_opt_in: user.contactOptIn,
    tier: user.tier,
    agent_pub_key: primary?.agentKey ?? null,
    did: primary ? didFromAgentKey(primary.agentKey) : null,
    agents: agents.map(agentView),
    server_cell: hasServerCell,
    personal_org_id: personalOrgId,
    created_at: new Date(user.createdAt).toISOString(),
  };
}

/** A linked device key as the API shows it. */
export function agentView(a: Agent): UserView['agents'][number] {
  return { agent_pub_key: a.agentKey, did: didFromAgentKey(a.agentKey), primary: a.primary, linked_at: new Date(a.createdAt).toISOString() };
}

/** GET and DELETE agents: the linked keys, primary first. */
export function agentsAnswer(agents: readonly Agent[]): { agents: UserView['agents'] } {
  return { agents: agents.map(agentView) };
}

/** sessions/revoke: session tokens issued before `sessions_valid_after` no longer work; sign in again. */
export function sessionsRevokedAnswer(cutoff: number): { success: true; sessions_valid_after: string } {
  return { success: true, sessions_valid_after: new Date(cutoff).toISOString() };
}

/** register, login and vault/token: `{token, user}`. */
export function sessionAnswer(session: Session): { token: string; user: UserView } {
  return { token: session.token, user: userView(session.account) };
}

/** me, PATCH me and agents: `{user}`. */
export function userAnswer(account: Account): { user: UserView } {
  return { user: userView(account) };
}

/** vault/challenge. */
export function challengeAnswer({ challenge, expiresAt }: { challenge: string; expiresAt: number }) {
  return { challenge, expires_at: new Date(expiresAt).toISOString() };
}

/** POST email/verification: the address, whether it is verified, whether a link was sent now. */
export function emailVerificationAnswer({ email, queued }: { email: string; queued: boolean }) {
  return { email, email_verified: !queued, verification_sent: queued };
}
