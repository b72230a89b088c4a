// Spec 8's 50 a minute per client on /oauth/token and /oauth/revoke, counted so that
// nobody can spend a client's budget but the client (issue 25 item 2). The client_id is
// public: counting every request against it, before anything is checked, let 50 junk
// requests a minute from anywhere lock an app out of its own code exchange. So a
// request is counted once its outcome is known, in one of two windows:
// - successes (a token issued, a refresh token revoked) per client, 50 a minute: the
//   client's own traffic, which only a holder of a valid code or token can make;
// - failures (an unknown client, grant or code, a bad verifier, a revocation that
//   revoked nothing) per client and caller address, 50 a minute: junk from one address
//   fills only that address's window.
// A request is refused (429) while either of its windows is full. With Redis the
// windows are shared by every node (RateLimitStores.window).
import type { Context, Next } from 'koa';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { clientKey } from '../ratelimit.js';
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

/**
 * The middleware of one endpoint (`name`: oauth:token or oauth:revoke): refuses a
 * request whose success or failure window is full, runs it, then counts it in the
 * window its outcome names. X-RateLimit-* headers describe the fuller window.
 */
export function perClientOutcomeLimit(deps: Pick<ServerDeps, 'config' | 'rateLimits'>, limitName: 'oauth:token' | 'oauth:revoke') {
  const { name, max, durationMs } = rateLimitOf(limitName);
  const successes = { name, max, durationMs };
  const failures = { name: `${name}:failures`, max, durationMs };
  return async function perClientOutcomeLimitMiddleware(ctx: Context, next: Next): Promise<void> {
    if (!deps.config.rateLimit) return next();
    const client = perClient(deps, ctx);
    const caller = `${client}|ip:${clientKey(ctx, deps.config)}`;
    const [ok, bad] = await Promise.all([deps.rateLimits.window(successes, client, 0), deps.rateLimits.window(failures, caller, 0)]);
    const full = [ok, bad].filter((w) => w.count >= max);
    if (full.length > 0) {
      const reset = Math.ceil(Math.max(...full.map((w) => w.resetAt)) / 1000);
      const retryAfter = Math.max(1, reset - Math.floor(Date.now() / 1000));
      throw new ApiError('rate_limited', `Rate limit of ${max} requests per minute for this client exceeded; retry in ${retryAfter} s.`, { retry_after: retryAfter }, {
        'Retry-After': String(retryAfter),
        'X-RateLimit-Limit': String(max),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(reset),
      });
    }
    let failed = true;
    try {
      await next();
      failed = ctx.state.limitOutcome === 'failure' || (ctx.state.limitOutcome !== 'success' && ctx.status >= 400);
    } finally {
      const counted = failed ? await deps.rateLimits.window(failures, caller, 1) : await deps.rateLimits.window(successes, client, 1);
      const other = failed ? ok : bad;
      const fuller = counted.count >= other.count ? counted : other;
      ctx.set('X-RateLimit-Limit', String(max));
      ctx.set('X-RateLimit-Remaining', String(Math.max(0, max - fuller.count)));
      ctx.set('X-RateLimit-Reset', String(Math.ceil(fuller.resetAt / 1000)));
    }
  };
}
