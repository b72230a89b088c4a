// Quota rules (spec 2.5, 3.3, 8; decisions.md 6) as pure functions over counts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chooseQuota, decideCharge, quotaPeriod, QuotaExceededError, type QuotaPlan } from '../../../server/src/domain/quota.js';

const period = quotaPeriod(Date.UTC(2026, 11, 31, 23, 59, 59, 999));
const personal = (tier: QuotaPlan['personalTier']): QuotaPlan => ({ userId: 'u', personalTier: tier, org: null, appWithoutOrg: false });
const withOrg = (tier: 'free' | 'starter' | 'pro' | 'enterprise', customLimit: number | null = null): QuotaPlan => ({
  userId: 'u', personalTier: 'free', org: { orgId: 'o', tier, customLimit, appName: 'App' }, appWithoutOrg: false,
});
const usage = (personalUsed: number, orgUsed: number | null = null, orgOverage: number | null = null) => ({ personalUsed, orgUsed, orgOverage });

test('the period is the UTC calendar month; resets_at is the first instant of the next', () => {
  assert.equal(period, { start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
  assert.equal(quotaPeriod(Date.UTC(2027, 0, 1)), { start: Date.UTC(2027, 0, 1), end: Date.UTC(2027, 1, 1) });
  assert.equal(quotaPeriod(Date.UTC(2028, 1, 29, 12)), { start: Date.UTC(2028, 1, 1), end: Date.UTC(2028, 2, 1) });
  assert.is(chooseQuota(personal('free'), usage(0), period).state.resets_at, '2027-01-01T00:00:00.000Z');
});

test('personal limits 2 / 100 / 1000 are hard blocks with an upgrade tier', () => {
  for (const [tier, limit, next] of [['free', 2, 'premium'], ['premium', 100, 'premium_plus'], ['premium_plus', 1000, 'starter']] as const) {
    const open = chooseQuota(personal(tier), usage(limit - 1), period).state;
    assert.equal(open, { allowed: true, scope: 'community', tier, used: limit - 1, limit, resets_at: '2027-01-01T00:00:00.000Z' });
    const full = chooseQuota(personal(tier), usage(limit), period).state;
    assert.equal(full, { allowed: false, scope: 'community', tier, used: limit, limit, resets_at: '2027-01-01T00:00:00.000Z', upgrade_tier: next });
    assert.throws(() => decideCharge(personal(tier), period)(usage(limit), 1), (e: unknown) => e instanceof QuotaExceededError && e.code === 'quota_exceeded');
  }
});

test('free org quota of 250: org while room, then the personal quota with the sponsor exhausted', () => {
  const room = chooseQuota(withOrg('free'), usage(0, 249, 0), period);
  assert.is(room.quota, 'org');
  assert.equal(room.state, { allowed: true, scope: 'org', tier: 'free', used: 249, limit: 250, resets_at: '2027-01-01T00:00:00.000Z' });
  const full = chooseQuota(withOrg('free'), usage(1, 250, 0), period);
  assert.is(full.quota, 'personal');
  assert.ok(full.sponsorExhausted);
  assert.equal(full.state, { allowed: true, scope: 'community', tier: 'free', used: 1, limit: 2, resets_at: '2027-01-01T00:00:00.000Z' });
  assert.equal(decideCharge(withOrg('free'), period)(usage(1, 250, 0), 1), { quota: 'personal', orgId: null, overage: [false] });
  // both full: the personal hard block answers
  try {
    decideCharge(withOrg('free'), period)(usage(2, 250, 0), 1);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, QuotaExceededError);
    assert.is((e as QuotaExceededError).code, 'quota_exceeded');
    assert.equal((e as QuotaExceededError).extra, {
      scope: 'community', tier: 'free', used: 2, limit: 2, resets_at: '2027-01-01T00:00:00.000Z', upgrade_tier: 'premium',
    });
  }
});

test('paid org tiers never block and meter overage', () => {
  const starter = chooseQuota(withOrg('starter'), usage(0, 2600, 100), period).state;
  assert.equal(starter, {
    allowed: true, scope: 'org', tier: 'starter', used: 2600, limit: 2500, resets_at: '2027-01-01T00:00:00.000Z',
    overage_signs: 100, overage_cents_per_100: 100,
  });
  assert.is(chooseQuota(withOrg('pro'), usage(0, 0, 0), period).state.overage_cents_per_100, 50);
  assert.is(chooseQuota(withOrg('pro'), usage(0, 0, 0), period).state.limit, 25000);
  assert.equal(decideCharge(withOrg('pro'), period)(usage(0, 24999, 0), 3).overage, [false, true, true]);
  const ent = chooseQuota(withOrg('enterprise', 10), usage(0, 12, 2), period).state;
  assert.equal([ent.allowed, ent.limit, ent.overage_signs], [true, 10, 2]);
  assert.is(chooseQuota(withOrg('enterprise'), usage(0, 1e6, 0), period).state.limit, null);
  assert.equal(decideCharge(withOrg('enterprise'), period)(usage(0, 1e6, 0), 2).overage, [false, false]);
});

test('a batch must fit the remaining quota: refused whole, with remaining and requested', () => {
  try {
    decideCharge(personal('premium'), period, { batch: true })(usage(95), 10);
    assert.unreachable();
  } catch (e) {
    const extra = (e as QuotaExceededError).extra;
    assert.equal([extra.remaining, extra.requested, extra.used, extra.limit, extra.upgrade_tier], [5, 10, 95, 100, 'premium_plus']);
  }
  assert.equal(decideCharge(personal('premium'), period, { batch: true })(usage(95), 5).overage.length, 5);
});

test('an app without an organization: tier unknown, resets_at null, personal counts', () => {
  const plan = { ...personal('free'), appWithoutOrg: true };
  assert.equal(chooseQuota(plan, usage(1), period).state, { allowed: true, scope: 'community', tier: 'unknown', used: 1, limit: 2, resets_at: null });
});

test.run();
