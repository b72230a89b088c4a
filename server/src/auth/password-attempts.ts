// Password guessing (spec 8's login limit; issue 25 item 6, issue 34). A password can be
// tried through two forms, POST /api/v1/auth/login and the OAuth sign-in form (POST
// /oauth/authorize); both go through this one middleware, so each window below counts
// the attempts of both:
// - per address (clientKey: an IPv6 client's /64), 30 a minute: every attempt, right
//   or wrong, spec 8's login limit. It stops that address only.
// - per account, 30 a minute: wrong passwords from devices that have not signed in to
//   the account before. The account is the user the login names, so its e-mail address
//   and its username are one window; a login naming no one has a window of its own (its
//   string case-folded and hashed), so an unknown login is answered as a known one. Once
//   full, such devices are refused for that account until the window ends.
// - per account and address, 10 a minute: one address's wrong passwords against one
//   account. So one address puts at most 10 failures into the account's window and can
//   never lock the account alone (it takes three): the right password from anywhere
//   else still signs in.
// - per known device, 10 a minute: a browser holding the account's device cookie
//   (device-cookie.ts, given on each sign-in with the right password) skips the two
//   windows above and keeps signing in while the account is locked to others; its own
//   wrong passwords lock that cookie alone.
// Every window takes its slot before the password is checked (RateLimitStores.reserve,
// atomic: attempts at once cannot pass a limit), so the answer over a limit (429) says
// nothing about the password. The failure windows give the slot back when the password
// was right, or when the attempt failed for another reason (a malformed body).
// The vault signs in by its device key (POST /api/v1/auth/vault/token), which none of
// this touches: a linked vault proves its device by signing.
import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import type { ServerDeps } from '../deps.js';
import { DomainError } from '../errors.js';
import { clientKey, rateLimit, rateLimited, type Reservation } from '../ratelimit.js';
import { rateLimitOf } from '../rate-limits.js';
import { knownDevice, rememberDevice } from './device-cookie.js';

/** The windows of password attempts (rate-limits.ts). */
export const PASSWORD_ATTEMPTS = {
  perAddress: rateLimitOf('auth:password:address'),
  perAccount: rateLimitOf('auth:password:account'),
  perAccountAddress: rateLimitOf('auth:password:account-address'),
  perDevice: rateLimitOf('auth:password:device'),
} as const;

type PasswordDeps = Pick<ServerDeps, 'config' | 'rateLimits' | 'store' | 'secrets'>;

/** The longest login schema.ts takes: a longer one names no account. */
const LOGIN_MAX = 254;

/** The account an attempt names: its window key, and its user when the login names one. */
interface NamedAccount {
  key: string;
  userId: string | null;
}

/** The account of `email_or_username` (either form's field), resolved to its user; the address when the attempt names none. */
async function namedAccount(deps: PasswordDeps, ctx: Context): Promise<NamedAccount> {
  const login = (ctx.request.body as { email_or_username?: unknown } | undefined)?.email_or_username;
  const name = typeof login === 'string' ? login.trim() : '';
  if (name === '') return { key: `address:${clientKey(ctx, deps.config)}`, userId: null };
  const user = name.length <= LOGIN_MAX && !name.includes('\0') ? await deps.store.accounts.findUserByLogin(name) : null;
  if (user) return { key: `user:${user.id}`, userId: user.id };
  return { key: `login:${createHash('sha256').update(name.toLowerCase()).digest('hex')}`, userId: null };
}

type Window = { name: string; max: number; durationMs: number };

/** A slot in each window, in order; over a limit, the slots taken are given back and `reason` is thrown as 429. */
async function reserveAll(deps: PasswordDeps, windows: readonly [Window, string, string][]): Promise<Reservation[]> {
  const held: Reservation[] = [];
  for (const [window, key, reason] of windows) {
    const slot = await deps.rateLimits.reserve(window, key);
    if (!slot.admitted) {
      await Promise.all(held.map((r) => r.release()));
      throw rateLimited(reason, window.max, slot.resetAt);
    }
    held.push(slot);
  }
  return held;
}

/** The failure windows of one attempt: the known device's own, or the account's and the account's from this address. */
async function failureSlots(deps: PasswordDeps, ctx: Context, account: NamedAccount): Promise<Reservation[]> {
  const device = account.userId === null ? null : knownDevice(ctx, deps.secrets, account.userId);
  if (device !== null) return reserveAll(deps, [[PASSWORD_ATTEMPTS.perDevice, `device:${device.key}`, 'Too many wrong passwords from this browser for this account']]);
  return reserveAll(deps, [
    [PASSWORD_ATTEMPTS.perAccountAddress, `${account.key}|ip:${clientKey(ctx, deps.config)}`, 'Too many wrong passwords for this account from this address'],
    [PASSWORD_ATTEMPTS.perAccount, account.key, 'Too many wrong passwords for this account from devices that have not signed in to it before'],
  ]);
}

/**
 * The windows as one middleware, for the body-parsed request of either form: over a
 * limit it throws ApiError rate_limited (429, Retry-After, X-RateLimit-*), which /login
 * answers as JSON and the sign-in form as its page; a wrong password is `next` throwing
 * invalid_credentials; after a sign-in the browser gets the account's device cookie.
 */
export function passwordAttempts(deps: PasswordDeps): Middleware {
  const byAddress = rateLimit(deps, PASSWORD_ATTEMPTS.perAddress);
  return async function passwordAttemptsMiddleware(ctx: Context, next: Next): Promise<void> {
    await byAddress(ctx, () => countFailures(deps, ctx, next));
  };
}

async function countFailures(deps: PasswordDeps, ctx: Context, next: Next): Promise<void> {
  if (!deps.config.rateLimit) return next();
  const account = await namedAccount(deps, ctx);
  const slots = await failureSlots(deps, ctx, account);
  let wrongPassword = false;
  try {
    await next();
  } catch (err) {
    wrongPassword = err instanceof DomainError && err.code === 'invalid_credentials';
    throw err;
  } finally {
    if (!wrongPassword) await Promise.all(slots.map((slot) => slot.release()));
  }
  if (account.userId !== null) rememberDevice(ctx, deps, account.userId);
}
