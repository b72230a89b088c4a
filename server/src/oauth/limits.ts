// Spec 8's 50 a minute per client on /oauth/token and /oauth/revoke, counted so that
// nobody can spend a budget but its owner. The client_id is public, so counting every
// request against it let 50 junk requests a minute from anywhere lock an app out of its
// own code exchange (issue 25 item 2); counting every success against it let one user of
// a public app, refreshing their own token, lock out every other user (issue 34). So a
// request counts in one of two windows, by its outcome:
// - successes (tokens issued, a refresh token revoked) per client and user: the user of
//   the code or refresh token presented (grantHolder), 50 a minute. Only a holder of a
//   valid code or token can make one, and one user's traffic spends only their own
//   window. A client with one user sees exactly spec 8's 50 a minute.
// - failures (an unknown client, grant or code, a bad verifier, a revocation that
//   revoked nothing) per client and caller address, 50 a minute: junk from one address
//   fills only that address's window.
//
// Reserve before the work: a request takes a slot in both windows before it runs (the
// failure window first, so junk beyond its address's limit is refused before anything
// is looked up), and once its outcome is known keeps the slot of its outcome's window
// and gives the other back. Taking a slot is one atomic step (RateLimitStores.reserve,
// one Lua script with Redis), so of many requests at once no more than the limit run;
// a request refused (429) runs nothing and counts nowhere.
import type { Context, Next } from 'koa';
import type { ServerDeps } from '../deps.js';
import { grantHolder } from '../domain/oauth.js';
import { clientKey, rateLimited, type Reservation } from '../ratelimit.js';
import type { Params } from './rules.js';
import { rateLimitOf } from '../rate-limits.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a handler tells the limit about its request when the status alone does not (a 200 revocation that revoked nothing). */
export type LimitOutcome = 'success' | 'failure';

/** Spec 8 "per client": the client_id sent (a well-formed one), else the caller's address. */
export function perClient(deps: Pick<ServerDeps, 'config'>, ctx: Context): string {
  const clientId = (ctx.request.body as Params | undefined)?.client_id;
  return typeof clientId === 'string' && UUID.test(clientId) ? `client:${clientId.toLowerCase()}` : `ip:${clientKey(ctx, deps.config)}`;
}

/** Marks the request's outcome for the limit (default: a status below 400 is a success). */
export function recordOutcome(ctx: Context, outcome: LimitOutcome): void {
  ctx.state.limitOutcome = outcome;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The grant a token request presents: its code or its refresh token, by grant_type. */
function tokenRequestGrant(params: Params): { code?: string; refreshToken?: string } {
  if (params.grant_type === 'authorization_code') return { code: text(params.code) };
  if (params.grant_type === 'refresh_token') return { refreshToken: text(params.refresh_token) };
  return {};
}

/** The grant a revocation presents: the (refresh) token to revoke. */
function revocationGrant(params: Params): { refreshToken?: string } {
  return { refreshToken: text(params.token) };
}

/**
 * The middleware of one endpoint (`name`: oauth:token or oauth:revoke): reserves a
 * slot in the request's failure and success windows (429 when either is full), runs
 * the request, then keeps the slot its outcome names and gives the other back.
 * X-RateLimit-* headers describe the fuller window.
 */
export function perClientOutcomeLimit(deps: ServerDeps, limitName: 'oauth:token' | 'oauth:revoke') {
  const { name, max, durationMs } = rateLimitOf(limitName);
  const successes = { name, max, durationMs };
  const failures = { name: `${name}:failures`, max, durationMs };
  const presented = limitName === 'oauth:token' ? tokenRequestGrant : revocationGrant;
  const refusal = (full: Reservation) => rateLimited(`Rate limit of ${max} requests per minute for this client exceeded`, max, full.resetAt);
  return async function perClientOutcomeLimitMiddleware(ctx: Context, next: Next): Promise<void> {
    if (!deps.config.rateLimit) return next();
    const client = perClient(deps, ctx);
    const address = `ip:${clientKey(ctx, deps.config)}`;
    const failure = await deps.rateLimits.reserve(failures, `${client}|${address}`);
    if (!failure.admitted) throw refusal(failure);
    let success: Reservation;
    try {
      const params = (ctx.request.body ?? {}) as Params;
      const holder = typeof params === 'object' ? await grantHolder(deps, presented(params)) : null;
      // a grant that names no user fails; its success slot is its address's until then
      success = await deps.rateLimits.reserve(successes, `${client}|${holder === null ? address : `user:${holder}`}`);
    } catch (err) {
      await failure.release();
      throw err;
    }
    if (!success.admitted) {
      await failure.release();
      throw refusal(success);
    }
    let failed = true;
    try {
      await next();
      failed = ctx.state.limitOutcome === 'failure' || (ctx.state.limitOutcome !== 'success' && ctx.status >= 400);
    } finally {
      const [kept, returned] = failed ? [failure, success] : [success, failure];
      await returned.release();
      const [count, resetAt] = kept.count >= returned.count - 1 ? [kept.count, kept.resetAt] : [returned.count - 1, returned.resetAt];
      ctx.set('X-RateLimit-Limit', String(max));
      ctx.set('X-RateLimit-Remaining', String(Math.max(0, max - count)));
      ctx.set('X-RateLimit-Reset', String(Math.ceil(resetAt / 1000)));
    }
  };
}
