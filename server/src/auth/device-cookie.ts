// Device cookies (OWASP, "Slow down online guessing attacks with device cookies"): a
// browser that signs in to an account with its password is given a cookie naming that
// account, with a MAC under a key derived from jwt.key. While the account is locked to
// devices it does not know (auth/password-attempts.ts), a browser holding its cookie
// keeps signing in; the cookie's own failures have a window of their own, so a stolen
// cookie guesses no faster than that window allows. Nothing is stored: the cookie is
// the user id, a random id and the MAC over both, and proves itself by the MAC
// (compared in constant time); the failure window is keyed by the cookie's SHA-256.
//
// HttpOnly (no script reads it), SameSite=Strict (another site's form does not carry
// it; the sign-in form is our own page, so its POST does), Secure over https, and sent
// only where a password is tried.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { setCookie, type PageDeps } from '../oauth/pages.js';
import type { Secrets } from '../secrets.js';

export const DEVICE_COOKIE = 'provenant_device';
/** POST /api/v1/auth/login and the OAuth sign-in form: the cookie goes nowhere else. */
export const DEVICE_COOKIE_PATHS = ['/api/v1/auth/login', '/oauth/authorize'] as const;
/** A browser is remembered for 180 days after its last sign-in (each sign-in gives a fresh cookie). */
export const DEVICE_COOKIE_TTL_SECONDS = 180 * 24 * 60 * 60;

const NONCE = /^[A-Za-z0-9_-]{22}$/;

/** A browser that signed in to the account before, by its cookie. */
export interface KnownDevice {
  userId: string;
  /** The cookie's SHA-256 (hex): the key of its failure window. */
  key: string;
}

/** HKDF of jwt.key: device cookies never share a key with session tokens or the CSRF MACs. */
function deviceKey(secrets: Secrets): Buffer {
  return Buffer.from(hkdfSync('sha256', secrets.key('jwt.key'), '', 'provenant device cookie v1', 32));
}

function deviceMac(secrets: Secrets, userId: string, nonce: string): Buffer {
  return createHmac('sha256', deviceKey(secrets)).update(`${userId}\n${nonce}`).digest();
}

/** Gives the browser a fresh device cookie for `userId` (after a sign-in with the right password). */
export function rememberDevice(ctx: Context, deps: PageDeps, userId: string): void {
  const nonce = randomBytes(16).toString('base64url');
  const value = `${Buffer.from(userId, 'utf8').toString('base64url')}.${nonce}.${deviceMac(deps.secrets, userId, nonce).toString('base64url')}`;
  for (const path of DEVICE_COOKIE_PATHS) setCookie(ctx, deps.config, DEVICE_COOKIE, value, path, DEVICE_COOKIE_TTL_SECONDS, 'Strict');
}

/** The request's device when its cookie is one this server made for `userId`; null for none, a forged one or another account's. */
export function knownDevice(ctx: Pick<Context, 'cookies'>, secrets: Secrets, userId: string): KnownDevice | null {
  const value = ctx.cookies.get(DEVICE_COOKIE);
  const parts = value?.split('.') ?? [];
  if (parts.length !== 3 || !NONCE.test(parts[1])) return null;
  const [encodedUser, nonce, mac] = parts;
  const cookieUser = Buffer.from(encodedUser, 'base64url').toString('utf8');
  const expected = deviceMac(secrets, cookieUser, nonce);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected) || cookieUser !== userId) return null;
  return { userId, key: createHash('sha256').update(value!).digest('hex') };
}
