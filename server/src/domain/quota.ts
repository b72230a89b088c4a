// Signing quotas (spec 2.5, 3.3, 8; decisions.md 6): the tiers, the period, which quota
// a sign draws on, and the quota state shown to clients. Pure rules over counts; the
// store counts inside the insert transaction and calls `decideCharge` with the counts.
// (The spec's "org pool" is an org quota here: "pool" in this code base is the worker pool.)
import { DomainError } from '../errors.js';
import type { ChargeDecision, OrgTier, QuotaSource, QuotaUsage, UserTier } from '../store/index.js';
import type { QuotaState } from 'provenant/api';

/** Personal signs per month (spec 8); a hard block. */
export const PERSONAL_LIMITS: Record<UserTier, number> = { free: 2, premium: 100, premium_plus: 1000 };

/**
 * Org quotas per month (spec 8). `included` null = the org's custom limit (enterprise).
 * `overageCentsPer100` null: no overage (free is a hard cap) or custom (enterprise).
 */
export const ORG_QUOTAS: Record<OrgTier, { included: number | null; overageCentsPer100: number | null; hardCap: boolean }> = {
  free: { included: 250, overageCentsPer100: null, hardCap: true },
  starter: { included: 2500, overageCentsPer100: 100, hardCap: false },
  pro: { included: 25000, overageCentsPer100: 50, hardCap: false },
  enterprise: { included: null, overageCentsPer100: null, hardCap: false },
};

/** The tier a blocked caller is pointed to (spec 2.5 upgrade_tier). */
export const UPGRADE_TIER: Record<string, string> = {
  'community:free': 'premium',
  'community:premium': 'premium_plus',
  'community:premium_plus': 'starter',
  'org:free': 'starter',
};

/** Spec 2.5, the quota state: the one definition is provenant/api's (what the SDK and GET /openapi.json use). */
export type { QuotaState };

/** A calendar month in UTC (decisions.md 6): [start, end) in Unix ms. */
export interface QuotaPeriod {
  start: number;
  end: number;
}

export function quotaPeriod(now: number): QuotaPeriod {
  const d = new Date(now);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** The sponsoring quota of an app: its organization's. */
export interface OrgQuota {
  orgId: string;
  tier: OrgTier;
  customLimit: number | null;
  appName: string;
}

/** Everything a charge depends on, resolved before the transaction. */
export interface QuotaPlan {
  userId: string;
  personalTier: UserTier;
  /** The org quota of the app the sign goes through (active app with an org), else null. */
  org: OrgQuota | null;
  /** The sign goes through an app that has no organization (spec 2.5 tier `unknown`). */
  appWithoutOrg: boolean;
}

export function orgLimit(org: OrgQuota): number | null {
  return ORG_QUOTAS[org.tier].included ?? org.customLimit;
}

export function personalState(tier: UserTier, used: number, period: QuotaPeriod, requested = 1): QuotaState {
  const limit = PERSONAL_LIMITS[tier];
  const allowed = used + requested <= limit;
  const state: QuotaState = { allowed, scope: 'community', tier, used, limit, resets_at: new Date(period.end).toISOString() };
  if (!allowed) state.upgrade_tier = UPGRADE_TIER[`community:${tier}`];
  return state;
}

export function orgState(org: OrgQuota, used: number, overage: number, period: QuotaPeriod, requested = 1): QuotaState {
  const rules = ORG_QUOTAS[org.tier];
  const limit = orgLimit(org);
  const allowed = !rules.hardCap || limit === null || used + requested <= limit;
  const state: QuotaState = { allowed, scope: 'org', tier: org.tier, used, limit, resets_at: new Date(period.end).toISOString() };
  if (!allowed) state.upgrade_tier = UPGRADE_TIER[`org:${org.tier}`];
  if (org.tier !== 'free') {
    state.overage_signs = overage;
    // spec 2.5: a number; an enterprise's custom overage has none, so the field is left out
    if (rules.overageCentsPer100 !== null) state.overage_cents_per_100 = rules.overageCentsPer100;
  }
  return state;
}

/**
 * The quota a sign of `requested` records would draw on, and its state (decisions.md 6):
 * the app's org quota while it has room (paid tiers always have), else the personal
 * quota; `sponsorExhausted` when an org quota was there but full.
 */
export function chooseQuota(
  plan: QuotaPlan,
  usage: QuotaUsage,
  period: QuotaPeriod,
  requested = 1,
): { quota: QuotaSource; state: QuotaState; sponsorExhausted: boolean } {
  if (plan.org !== null) {
    const org = orgState(plan.org, usage.orgUsed ?? 0, usage.orgOverage ?? 0, period, requested);
    if (org.allowed) return { quota: 'org', state: org, sponsorExhausted: false };
  }
  const personal = personalState(plan.personalTier, usage.personalUsed, period, requested);
  if (plan.appWithoutOrg) {
    // Spec 2.5: an OAuth app with no organization reports tier `unknown`, resets_at null;
    // its signs draw on the personal quota.
    return { quota: 'personal', state: { ...personal, tier: 'unknown', resets_at: null }, sponsorExhausted: false };
  }
  return { quota: 'personal', state: personal, sponsorExhausted: plan.org !== null };
}

/**
 * A refused sign (spec 4.7): the body fields scope, tier, used, limit, resets_at,
 * upgrade_tier; a batch adds remaining and requested (spec 4.8). REST signing answers
 * it with 402, vault publishing with 403 (decisions.md 2): the route's to say.
 */
export class QuotaExceededError extends DomainError {
  constructor(state: QuotaState, opts: { requested?: number; batch?: boolean } = {}) {
    const extra: Record<string, unknown> = {
      scope: state.scope,
      tier: state.tier,
      used: state.used,
      limit: state.limit,
      resets_at: state.resets_at,
      upgrade_tier: state.upgrade_tier ?? null,
    };
    if (opts.batch) {
      extra.remaining = state.limit === null ? null : Math.max(0, state.limit - state.used);
      extra.requested = opts.requested ?? 1;
    }
    const message = opts.batch
      ? `The batch of ${opts.requested} signs does not fit the remaining quota (${extra.remaining}).`
      : `The ${state.scope === 'org' ? 'organization pool' : 'personal'} signing quota for this period is used up (${state.used} of ${state.limit}).`;
    super('quota_exceeded', message, extra);
  }
}

/**
 * The `decide` callback for SignaturesStore.insertSignatures: picks the quota from the
 * counts made inside the transaction, flags overage records, or throws
 * QuotaExceededError (the transaction then writes nothing).
 */
export function decideCharge(plan: QuotaPlan, period: QuotaPeriod, opts: { batch?: boolean } = {}): (usage: QuotaUsage, requested: number) => ChargeDecision {
  return (usage, requested) => {
    const choice = chooseQuota(plan, usage, period, requested);
    if (!choice.state.allowed) throw new QuotaExceededError(choice.state, { ...opts, requested });
    const overage: boolean[] = [];
    if (choice.quota === 'org' && plan.org !== null) {
      const limit = orgLimit(plan.org);
      const used = usage.orgUsed ?? 0;
      for (let i = 0; i < requested; i++) overage.push(limit !== null && used + i >= limit);
    } else {
      for (let i = 0; i < requested; i++) overage.push(false);
    }
    return { quota: choice.quota, orgId: choice.quota === 'org' ? plan.org!.orgId : null, overage };
  };
}
