// Password guessing (spec 8's login limit; issue 25 item 6). A password can be tried
// through two forms: POST /api/v1/auth/login and the OAuth sign-in form (POST
// /oauth/authorize). Both spend the same two windows, whichever form an attempt comes
// through:
// - per address (clientKey: an IPv6 client's /64), 30 a minute, spec 8's login limit;
// - per account (the e-mail address or username tried, case-folded and hashed, so no
//   address is kept in memory or Redis), 30 a minute: many addresses guessing one
//   account's password share one window.
// Every attempt counts, right or wrong, before the password is checked, so the answer
// over the limit says nothing about the password. The price of the account window: a
// flood of wrong passwords holds that account's password sign-in shut for its minute
// (sessions already issued and the vault's key sign-in keep working).
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import type { ServerDeps } from '../deps.js';
import { clientKey, rateLimit } from '../ratelimit.js';
import { rateLimitOf } from '../rate-limits.js';


/** Spec 8: password attempts per client address (an IPv6 client's network) and per account, a minute. */
export const PASSWORD_ATTEMPTS = {
  perAddress: rateLimitOf('auth:password:address'),
  perAccount: rateLimitOf('auth:password:account'),
} as const;

/** The account an attempt names (`email_or_username` of either form), as a window key; the address when it names none. */
function accountKey(deps: Pick<ServerDeps, 'config'>, ctx: Context): string {
  const login = (ctx.request.body as { email_or_username?: unknown } | undefined)?.email_or_username;
  if (typeof login !== 'string' || login.trim() === '') return `address:${clientKey(ctx, deps.config)}`;
  return `account:${createHash('sha256').update(login.trim().toLowerCase()).digest('hex')}`;
}

/**
 * The two windows as one middleware, for the body-parsed request of either form: over
 * either limit it throws ApiError rate_limited (429, Retry-After, X-RateLimit-*), which
 * /login answers as JSON and the sign-in form as its page.
 */
export function passwordAttempts(deps: Pick<ServerDeps, 'config' | 'rateLimits'>): Middleware {
  const byAddress = rateLimit(deps, PASSWORD_ATTEMPTS.perAddress);
  const byAccount = rateLimit(deps, { ...PASSWORD_ATTEMPTS.perAccount, key: (ctx) => accountKey(deps, ctx) });
  return async function passwordAttemptsMiddleware(ctx: Context, next: Next): Promise<void> {
    await byAddress(ctx, () => byAccount(ctx, next));
  };
}
