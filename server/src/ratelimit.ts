// Per-IP rate limits (spec section 8). With PROVENANT_REDIS_URL the windows live in
// the Redis every node shares (koa-ratelimit's Redis driver, a sliding window kept by
// one Lua script per request), so a client's 31st request is refused whichever node it
// reaches. Without it, or while that Redis is away, koa-ratelimit's memory driver over a
// bounded map, so the number of remembered client addresses cannot grow without
// bound. 429 body `{error: "rate_limited", message, retry_after}` with Retry-After
// and X-RateLimit-Limit/Remaining/Reset (epoch seconds) (decisions.md 9).
//
// Redis away: fail to the node's own windows, neither open nor closed. Closed would
// turn a Redis outage into an outage of every rate-limited endpoint on every node;
// open would drop the limits exactly when nobody watches them. Each node still
// enforces the limit alone (a client gets at most N x the limit across N nodes), and
// the first request after Redis is back uses the shared windows again.
//
// A client is its address, but an IPv6 client is its network: one /64 (the size of a
// single subnet, which one household or one virtual machine commonly gets whole) would
// otherwise give its holder 2^64 fresh windows. PROVENANT_RATE_LIMIT_IPV6_PREFIX sets
// the prefix (default 64; 48 or 56 where providers hand out bigger blocks, 128 to key
// each address alone). clientKey() is that key; every limit uses it.
import type { Context, Middleware, Next } from 'koa';
import koaRatelimit from 'koa-ratelimit';
import ipaddr from 'ipaddr.js';
import type { Config } from './config.js';
import { ApiError } from './errors.js';
import type { SharedRedis } from './redis.js';

/** A limiter entry as koa-ratelimit's memory driver keeps it (`reset` in epoch seconds). */
interface LimitEntry {
  reset: number;
  remaining: number;
  total: number;
}

/**
 * A Map that keeps at most `maxEntries` keys: every set moves its key to the end, expired
 * entries (reset in the past) are dropped from the front, and past the bound the oldest
 * window is evicted. With one duration per map, insertion order is expiry order, so
 * both sweeps only ever look at the front. Eviction under a flood of addresses gives the
 * evicted (oldest) client a fresh window: the price of bounded memory.
 */
export class BoundedLimitMap<V extends { reset?: number } = LimitEntry> extends Map<string, V> {
  constructor(
    readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    super();
    if (!(maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
  }

  override set(key: string, value: V): this {
    // Map's constructor calls set before fields exist; nothing to bound yet then.
    if (this.maxEntries === undefined) return super.set(key, value);
    super.delete(key);
    super.set(key, value);
    this.sweep();
    return this;
  }

  /** Drops expired entries from the front, then the oldest beyond the bound. */
  sweep(): void {
    const nowSeconds = this.now() / 1000;
    for (const [key, entry] of this) {
      if (this.size > this.maxEntries || (typeof entry.reset === 'number' && entry.reset < nowSeconds)) super.delete(key);
      else break;
    }
  }
}

/** The client address: the socket's, or with `trustProxy` hops the Nth X-Forwarded-For entry from the right. */
export function clientIp(ctx: Pick<Context, 'get' | 'socket'>, trustProxy: number): string {
  const socketIp = normalizeIp(ctx.socket.remoteAddress ?? '');
  if (trustProxy <= 0) return socketIp;
  const forwarded = ctx
    .get('x-forwarded-for')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (forwarded.length === 0) return socketIp;
  // Hop 1 is the entry our own proxy appended (rightmost); fewer entries than hops: the leftmost.
  const entry = forwarded[Math.max(0, forwarded.length - trustProxy)];
  return ipaddr.isValid(entry) ? normalizeIp(entry) : socketIp;
}

/**
 * The key a rate limit counts a client under: its IPv4 address, or its IPv6 network of
 * `config.rateLimitIpv6Prefix` bits (e.g. `2001:db8:1:2::/64`). IPv4-mapped IPv6 is the
 * IPv4 address.
 */
export function clientKey(ctx: Pick<Context, 'get' | 'socket'>, config: Pick<Config, 'trustProxy' | 'rateLimitIpv6Prefix'>): string {
  const ip = clientIp(ctx, config.trustProxy);
  if (!ipaddr.IPv6.isValid(ip) || config.rateLimitIpv6Prefix >= 128) return ip;
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip}/${config.rateLimitIpv6Prefix}`).toString()}/${config.rateLimitIpv6Prefix}`;
}

function normalizeIp(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address().toString();
  }
  return parsed.toString();
}

export interface RateLimitOptions {
  /** Limits with the same name share one window per client (per app). */
  name: string;
  max: number;
  durationMs: number;
  /** Bound on remembered clients for this limit (default 100,000). */
  maxClients?: number;
  /** The client key; default clientKey (the address; an IPv6 client's network). */
  key?: (ctx: Context) => string;
}

/** The windows of every named limit of one server (the composition root builds it; rateLimit fills it). */
export class RateLimitStores {
  private readonly maps = new Map<string, BoundedLimitMap>();
  /** Requests decided by the node's own windows because Redis was away (for /healthz). */
  fallbacks = 0;

  /** `redis`: the shared windows (null: this node's memory only). */
  constructor(readonly redis: SharedRedis | null = null) {}

  /** The map of a named limit, made on its first route. */
  map(name: string, maxClients: number): BoundedLimitMap {
    let map = this.maps.get(name);
    if (!map) this.maps.set(name, (map = new BoundedLimitMap(maxClients)));
    return map;
  }

  /**
   * Takes one of `limit.max` requests in the client's window without answering for it,
   * for routes that must answer alike over the limit (POST /contact): false once the
   * window is used up. Shared through Redis when it is there (one INCR with the window's
   * expiry set by its first request, in one transaction, so a window always ends); else,
   * or when Redis fails, this node's own window, as rateLimit() falls back.
   */
  async take(limit: { name: string; max: number; durationMs: number }, client: string): Promise<boolean> {
    if (this.redis?.ready) {
      try {
        const key = `take:${limit.name}:${client}`;
        const result = await this.redis.client.multi().incr(key).pexpire(key, limit.durationMs, 'NX').exec();
        const count = result?.[0]?.[1];
        if (typeof count === 'number') return count <= limit.max;
      } catch {
        // Redis went away mid-command: this node decides alone
      }
      this.fallbacks += 1;
    } else if (this.redis) this.fallbacks += 1;
    return this.takeLocal(limit, client);
  }

  private takeLocal(limit: { name: string; max: number; durationMs: number }, client: string): boolean {
    const windows = this.map(limit.name, 100_000);
    const now = Date.now();
    const entry = windows.get(client);
    if (entry === undefined || entry.reset * 1000 <= now) {
      windows.set(client, { reset: (now + limit.durationMs) / 1000, remaining: limit.max - 1, total: limit.max });
      return true;
    }
    if (entry.remaining <= 0) return false;
    // changed in place: the map stays in expiry order
    entry.remaining -= 1;
    return true;
  }

  /**
   * The client's window of a named limit, for limits that count a request only once its
   * outcome is known (/oauth/token and /oauth/revoke: failures and successes in windows
   * of their own): the count after adding `add` (0: a look that counts nothing) and when
   * the window ends (epoch ms). Shared through Redis when it is there (INCRBY, the
   * expiry set by the window's first request, and its time left, in one transaction);
   * else, or when Redis fails, this node's own window, as take() falls back.
   */
  async window(limit: { name: string; max: number; durationMs: number }, client: string, add: 0 | 1): Promise<{ count: number; resetAt: number }> {
    if (this.redis?.ready) {
      try {
        const key = `window:${limit.name}:${client}`;
        const result = await this.redis.client.multi().incrby(key, add).pexpire(key, limit.durationMs, 'NX').pttl(key).exec();
        const count = result?.[0]?.[1];
        const ttl = result?.[2]?.[1];
        if (typeof count === 'number' && typeof ttl === 'number') return { count, resetAt: Date.now() + Math.max(0, ttl) };
      } catch {
        // Redis went away mid-command: this node decides alone
      }
      this.fallbacks += 1;
    } else if (this.redis) this.fallbacks += 1;
    const windows = this.map(limit.name, 100_000);
    const now = Date.now();
    const entry = windows.get(client);
    if (entry === undefined || entry.reset * 1000 <= now) {
      if (add === 0) return { count: 0, resetAt: now + limit.durationMs };
      windows.set(client, { reset: (now + limit.durationMs) / 1000, remaining: limit.max - 1, total: limit.max });
      return { count: 1, resetAt: now + limit.durationMs };
    }
    // changed in place: the map stays in expiry order
    entry.remaining -= add;
    return { count: entry.total - entry.remaining, resetAt: entry.reset * 1000 };
  }

  /** The map behind a named limit, if a route uses it (tests). */
  get(name: string): BoundedLimitMap | undefined {
    return this.maps.get(name);
  }

  /** Named limits, and client windows remembered across them (for /healthz). */
  get limits(): number {
    return this.maps.size;
  }

  get clients(): number {
    let n = 0;
    for (const map of this.maps.values()) n += map.size;
    return n;
  }
}

/** Per-client rate limit middleware for a feature route; a no-op when PROVENANT_RATE_LIMIT=off. */
export function rateLimit(deps: { config: Config; rateLimits: RateLimitStores }, options: RateLimitOptions): Middleware {
  if (!deps.config.rateLimit) return async (_ctx: Context, next: Next) => next();
  const db = deps.rateLimits.map(options.name, options.maxClients ?? 100_000);
  const key = options.key ?? ((ctx: Context) => clientKey(ctx, deps.config));
  const window = { duration: options.durationMs, max: options.max, id: key };
  const local = koaRatelimit({ driver: 'memory', db, namespace: options.name, ...window });
  const redis = deps.rateLimits.redis;
  const shared = redis && koaRatelimit({ driver: 'redis', db: redis.client, namespace: `ratelimit:${options.name}`, ...window });
  return async function rateLimitMiddleware(ctx: Context, next: Next): Promise<void> {
    let passed = false;
    const pass = async () => {
      passed = true;
      fixResetHeader(ctx);
      await next();
    };
    if (shared && redis.ready) {
      try {
        await shared(ctx, pass);
      } catch (err) {
        if (passed) throw err; // the route's own failure, not the limiter's
        deps.rateLimits.fallbacks += 1;
        await local(ctx, pass);
      }
    } else {
      if (shared) deps.rateLimits.fallbacks += 1;
      await local(ctx, pass);
    }
    if (passed) return;
    fixResetHeader(ctx);
    const reset = Number(ctx.response.get('X-RateLimit-Reset'));
    const retryAfter = Math.max(1, Math.ceil(reset - Date.now() / 1000));
    throw new ApiError(
      'rate_limited',
      `Rate limit of ${options.max} requests per ${formatDuration(options.durationMs)} exceeded; retry in ${retryAfter} s.`,
      { retry_after: retryAfter },
      {
        'Retry-After': String(retryAfter),
        'X-RateLimit-Limit': String(options.max),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(reset),
      },
    );
  };
}

// koa-ratelimit's memory driver reports fractional seconds; the contract says epoch seconds (the Redis driver's are whole).
function fixResetHeader(ctx: Context): void {
  const reset = Number(ctx.response.get('X-RateLimit-Reset'));
  if (Number.isFinite(reset) && reset > 0) ctx.set('X-RateLimit-Reset', String(Math.ceil(reset)));
}

function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} hours`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} minutes`;
  return `${ms / 1000} s`;
}
