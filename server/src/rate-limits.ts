// Every rate limit of the server, once (spec 8, decisions.md 5, 7, 9), shaped like
// ERRORS: name -> [limit, window, key]. The routes take their limit from here
// (rateLimitOf), GET /openapi.json describes each operation's limit from here
// (describeLimit), and docs/server.md lists this table. Limits that share a name share
// one window per client.

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/**
 * Who a window counts: the client's address (an IPv6 client's network), the signed-in
 * user, the app named by client_id, the access token, the account a login names, that
 * account from one address, a browser's device cookie (auth/password-attempts.ts).
 */
export type LimitKey = 'ip' | 'user' | 'client' | 'token' | 'account' | 'account-ip' | 'device';

export const RATE_LIMITS = {
  // spec 8
  'sign-it:verify': [30, MINUTE, 'ip'],
  'sign-it:verify-file': [30, MINUTE, 'ip'],
  'sign-it:verify-fuzzy': [30, MINUTE, 'ip'],
  'sign-it:creator': [30, MINUTE, 'ip'],
  'sign-it:quota-by-agent': [60, MINUTE, 'ip'],
  'sign-it:quota-sync': [60, MINUTE, 'ip'],
  'sign-it:badge': [60, MINUTE, 'ip'],
  'sign-it:content-rights': [60, MINUTE, 'ip'],
  'sign-it:contact': [3, HOUR, 'ip'],
  'webhooks:create': [30, MINUTE, 'user'],
  'oauth:authorize': [100, MINUTE, 'ip'],
  'oauth:token': [50, MINUTE, 'client'],
  'oauth:userinfo': [500, MINUTE, 'token'],
  'oauth:revoke': [50, MINUTE, 'client'],
  // ours (decisions.md 5): accounts
  'auth:register': [30, MINUTE, 'ip'],
  'auth:vault': [60, MINUTE, 'ip'],
  // password guessing (issue 34): every attempt per address; failures per account from
  // devices that never signed in to it, per account and address, per known device
  'auth:password:address': [30, MINUTE, 'ip'],
  'auth:password:account': [30, MINUTE, 'account'],
  'auth:password:account-address': [10, MINUTE, 'account-ip'],
  'auth:password:device': [10, MINUTE, 'device'],
  'auth:email-verification': [3, HOUR, 'user'],
  'auth:email-verify': [30, MINUTE, 'ip'],
  // issue 33: the Soft Binding Resolution API as verify-file (byContent) and as GET /verify's lookups; the repository's intake
  'c2pa:supported-algorithms': [60, MINUTE, 'ip'],
  'c2pa:by-binding': [60, MINUTE, 'ip'],
  'c2pa:by-content': [30, MINUTE, 'ip'],
  'c2pa:manifests': [60, MINUTE, 'ip'],
  'sign-it:manifests': [30, MINUTE, 'ip'],
} as const satisfies Record<string, readonly [limit: number, windowMs: number, key: LimitKey]>;

export type RateLimitName = keyof typeof RATE_LIMITS;

/** The window of a named limit, as rateLimit() and RateLimitStores take it. */
export function rateLimitOf(name: RateLimitName): { name: RateLimitName; max: number; durationMs: number } {
  const [max, durationMs] = RATE_LIMITS[name];
  return { name, max, durationMs };
}

const WINDOW_WORDS: Record<number, string> = { [MINUTE]: 'min', [HOUR]: 'hour' };
const KEY_WORDS: Record<LimitKey, string> = {
  ip: 'IP',
  user: 'user',
  client: 'client',
  token: 'access token',
  account: 'account',
  'account-ip': 'account and IP',
  device: 'device cookie',
};

/** `30/min per IP`: a limit in the words of spec 8. */
export function describeLimit(name: RateLimitName): string {
  const [max, windowMs, key] = RATE_LIMITS[name];
  return `${max}/${WINDOW_WORDS[windowMs] ?? `${windowMs} ms`} per ${KEY_WORDS[key]}`;
}
