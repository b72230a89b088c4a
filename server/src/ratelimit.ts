// Per-IP rate limits (spec section 8). With PROVENANT_REDIS_URL the windows live in
// the Redis every node shares (koa-ratelimit's Redis driver, a sliding window kept by
// one Lua script per request), so a client's 31st request is refused whichever node it
// reaches. Without it, or while that Redis is away, koa-ratelimit's memory driver over a
// bounded map, so the number of remembered client addresses cannot grow without
// bound. 429 body `{error: "rate_limited", message, retry_after}` with Retry-After
// and X-RateLimit-Limit/Remaining/Reset (epoch seconds) (decisions.md 9).
//
// Limits that count only some outcomes (OAuth token and revoke, the password failure
// windows) reserve a slot before the work instead (RateLimitStores.reserve): checked and
// counted in one atomic step, kept or given back after, so requests at once cannot pass
// the limit (issue 34).
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
import { randomUUID } from 'node:crypto';
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

/** A slot reserved in a window (RateLimitStores.reserve). */
export interface Reservation {
  /** Whether the request got its slot; false: the window was full and nothing was taken. */
  admitted: boolean;
  /** Slots taken in the window, this one included when admitted. */
  count: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
  /** Gives the slot back (once; nothing when not admitted, or when its window has ended since). */
  release(): Promise<void>;
}

// A shared window is a hash {n: slots taken, w: the window's id}, expiring with the
// window. The id is set by the window's first reservation (HSETNX), which also starts
// the expiry, so slots given back to 0 do not restart the window; a release names the
// window it took from, so a late one never frees a slot of the next window.
// KEYS[1] the window; ARGV: max, duration (ms), an id for a new window.
// Answers {admitted 1|0, slots taken, ms left, window id}.
const RESERVE_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'w', ARGV[3]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
local w = redis.call('HGET', KEYS[1], 'w')
local ttl = redis.call('PTTL', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('HINCRBY', KEYS[1], 'n', -1)
  return {0, n - 1, ttl, w}
end
return {1, n, ttl, w}`;

// KEYS[1] the window; ARGV[1] the id of the window the slot was taken from.
const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'w') == ARGV[1] then return redis.call('HINCRBY', KEYS[1], 'n', -1) end
return -1`;

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
   * Reserves one of `limit.max` slots in the client's window before the work it limits
   * runs, for limits that count only some outcomes (/oauth/token and /oauth/revoke, the
   * password windows): the caller keeps the slot or gives it back once the outcome is
   * known. Counting and checking are one step (one Lua script in Redis; in memory, no
   * await between them), so of many requests at once no more than the limit are
   * admitted, and a refused request takes nothing. Shared through Redis when it is
   * there; else, or when Redis fails, this node's own window, as take() falls back.
   */
  async reserve(limit: { name: string; max: number; durationMs: number }, client: string): Promise<Reservation> {
    if (this.redis?.ready) {
      try {
        return await this.reserveShared(this.redis, limit, client);
      } catch {
        // Redis went away mid-command: this node decides alone
      }
      this.fallbacks += 1;
    } else if (this.redis) this.fallbacks += 1;
    return this.reserveLocal(limit, client);
  }

  private async reserveShared(redis: SharedRedis, limit: { name: string; max: number; durationMs: number }, client: string): Promise<Reservation> {
    const key = `window:${limit.name}:${client}`;
    const answer = (await redis.client.eval(RESERVE_SCRIPT, 1, key, limit.max, limit.durationMs, randomUUID())) as [number, number, number, string];
    const [admitted, count, ttl, windowId] = answer;
    const resetAt = Date.now() + Math.max(0, ttl);
    if (admitted !== 1) return { admitted: false, count, resetAt, release: async () => undefined };
    let held = true;
    return {
      admitted: true,
      count,
      resetAt,
      async release() {
        if (!held) return;
        held = false;
        // a slot Redis cannot be told about stays taken until its window ends
        await redis.client.eval(RELEASE_SCRIPT, 1, key, windowId).catch(() => undefined);
      },
    };
  }

  private reserveLocal(limit: { name: string; max: number; durationMs: number }, client: string): Reservation {
    const windows = this.map(limit.name, 100_000);
    const now = Date.now();
    let entry = windows.get(client);
    if (entry === undefined || entry.reset * 1000 <= now) {
      entry = { reset: (now + limit.durationMs) / 1000, remaining: limit.max, total: limit.max };
      windows.set(client, entry);
    }
    const window = entry;
    const resetAt = window.reset * 1000;
    if (window.remaining <= 0) return { admitted: false, count: window.total, resetAt, release: async () => undefined };
    // changed in place: the map stays in expiry order
    window.remaining -= 1;
    let held = true;
    return {
      admitted: true,
      count: window.total - window.remaining,
      resetAt,
      async release() {
        // into the window it was taken from only, not a later one under the same key
        if (held && windows.get(client) === window) window.remaining += 1;
        held = false;
      },
    };
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
    throw rateLimited(`Rate limit of ${options.max} requests per ${formatDuration(options.durationMs)} exceeded`, options.max, Number(ctx.response.get('X-RateLimit-Reset')) * 1000);
  };
}

/**
 * The 429 of a full window (decisions.md 9): `reason` and when to retry in the message,
 * `retry_after` in the body, Retry-After and X-RateLimit-* (Reset in epoch seconds).
 */
export function rateLimited(reason: string, max: number, resetAtMs: number): ApiError {
  const reset = Math.ceil(resetAtMs / 1000);
  const retryAfter = Math.max(1, reset - Math.floor(Date.now() / 1000));
  return new ApiError('rate_limited', `${reason}; retry in ${retryAfter} s.`, { retry_after: retryAfter }, {
    'Retry-After': String(retryAfter),
    'X-RateLimit-Limit': String(max),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(reset),
  });
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
