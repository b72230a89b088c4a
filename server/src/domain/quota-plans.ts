// Which quota a sign draws on, read from the store (decisions.md 6): the plan of a user
// signing through an app, the charge the store applies inside its writing transaction,
// and the quota state clients see (spec 2.5, 4.4, 4.5). The rules are in quota.ts.
import { normalizeAgentKey, parseAgentKey, parseSignatureHex, quotaSyncMessage, verifyBytes } from 'provenant';
import { DomainError } from '../errors.js';
import type { Charge, User } from '../store/index.js';
import { ACCOUNT_GONE, userOfToken } from './accounts.js';
import { linkedOwner } from './agents.js';
import type { Caller, DomainDeps } from './deps.js';
import { chooseQuota, decideCharge, quotaPeriod, type QuotaPlan, type QuotaState } from './quota.js';

/** decisions.md 2: a quota sync's timestamp must be within 5 minutes. */
export const QUOTA_SYNC_WINDOW_MS = 5 * 60 * 1000;

/** A plan and the name of the app it goes through (an active one), for `sponsor`. */
export type NamedQuotaPlan = QuotaPlan & { appName: string | null };

/**
 * The quotas a sign by `user` through `appId` may draw on (decisions.md 6): the app's
 * org quota when the app is active and has an organization, else the personal quota.
 */
export async function quotaPlan(deps: DomainDeps, user: User, appId: string | null): Promise<NamedQuotaPlan> {
  const plan: NamedQuotaPlan = { userId: user.id, personalTier: user.tier, org: null, appWithoutOrg: false, appName: null };
  if (appId === null) return plan;
  const app = await deps.store.accounts.getApp(appId);
  if (!app || !app.active) return plan;
  plan.appName = app.name;
  const org = app.orgId === null ? null : await deps.store.accounts.getOrg(app.orgId);
  if (org === null) plan.appWithoutOrg = true;
  else plan.org = { orgId: org.id, tier: org.tier, customLimit: org.customLimit, appName: app.name };
  return plan;
}

/** What the store charges a write of records under `plan` at `now` (`batch`: a refusal carries remaining and requested). */
export function chargeOf(plan: QuotaPlan, now: number, opts: { batch?: boolean } = {}): Charge {
  const period = quotaPeriod(now);
  return { userId: plan.userId, orgId: plan.org?.orgId ?? null, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period, opts) };
}

/** The quota state of a plan at `now` (spec 2.5), with `sponsor` when asked for. */
export async function quotaStateOf(deps: DomainDeps, plan: NamedQuotaPlan, withSponsor: boolean, now = Date.now()): Promise<QuotaState> {
  const period = quotaPeriod(now);
  const usage = await deps.store.signatures.countUsage(plan.userId, plan.org?.orgId ?? null, period.start, period.end);
  const choice = chooseQuota(plan, usage, period);
  const state: QuotaState = { ...choice.state };
  if (withSponsor && plan.org !== null) state.sponsor = { app_name: plan.org.appName, exhausted: choice.sponsorExhausted };
  return state;
}

/** Spec 4.4: the quota the caller's next sign would draw on. */
export async function callerQuota(deps: DomainDeps, caller: Caller): Promise<QuotaState> {
  const user = await userOfToken(deps, caller.userId, ACCOUNT_GONE);
  return quotaStateOf(deps, await quotaPlan(deps, user, caller.appId), false);
}

/**
 * Spec 4.5: the quota of the user holding `agentKey` (canonical), through the app
 * `clientId` when given (with `sponsor`). agent_not_found when no user holds the key,
 * agent_unlinked when its user unlinked it (it publishes no more).
 */
export async function agentQuota(deps: DomainDeps, agentKey: string, clientId: string | null): Promise<QuotaState> {
  const user = await linkedOwner(deps, agentKey);
  if (!user) throw new DomainError('agent_not_found');
  const plan = await quotaPlan(deps, user, clientId);
  // `unknown` tier is for an OAuth app's token (spec 2.5); by client_id an app without an org shows the personal quota.
  plan.appWithoutOrg = false;
  return quotaStateOf(deps, plan, clientId !== null);
}

/** decisions.md 2: `{agent_pub_key, count, timestamp, signature (hex), client_id?}`. */
export interface QuotaSync {
  agentPubKey: string;
  count: number;
  timestamp: number;
  signature: string;
  clientId: string | null;
}

/** decisions.md 2: a vault proves it holds the key (a signed, fresh message), then gets its quota recounted from stored records. */
export async function syncAgentQuota(deps: DomainDeps, sync: QuotaSync, now = Date.now()): Promise<QuotaState> {
  const key = parseAgentKey(sync.agentPubKey);
  if (key === null) throw new DomainError('invalid_agent_pub_key');
  const signature = parseSignatureHex(sync.signature);
  const message = new TextEncoder().encode(quotaSyncMessage(sync.agentPubKey, sync.timestamp, sync.count, sync.clientId));
  if (signature === null || !verifyBytes(key, message, signature)) {
    throw new DomainError('invalid_signature', 'The signature does not verify over the quota-sync message.');
  }
  if (Math.abs(now - sync.timestamp) > QUOTA_SYNC_WINDOW_MS) {
    throw new DomainError('invalid_request', 'timestamp (Unix ms) must be within 5 minutes of the server clock.', { field: 'timestamp' });
  }
  return agentQuota(deps, normalizeAgentKey(sync.agentPubKey)!, sync.clientId);
}
