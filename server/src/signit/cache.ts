// The read-through cache of `GET /verify` answers (one per server, keyed by file hash).
//
// Values are the serialized response bodies, as UTF-8 bytes (nothing to encode per
// request). The cache follows the store's change feed (feed-follower.ts): a stored
// record, a revocation or a thumbnail drops its file's answer, a signer's profile
// change drops them all (answers show granted profile fields). Between a write's
// commit and the feed read that names it the cache is bypassed, so a caller that
// wrote and then reads never gets the answer from before. A generation counter closes
// the race where a read started before a write would put the old answer back after
// the write dropped it. The TTL bounds staleness from writes this node is not woken
// for (another process writing the same database). A follower that fell behind the
// feed's window drops every answer (they are reloaded from the tables on demand).
import NodeCache from 'node-cache';
import { FeedFollower } from '../feed-follower.js';
import type { Logger } from '../log.js';
import type { Change, ChangeFeed } from '../store/index.js';

export const VERIFY_CACHE_TTL_SECONDS = 60;
export const VERIFY_CACHE_MAX_KEYS = 20_000;

/** An answer served but not cached (see VerifyCache.get). */
export interface Provisional {
  body: Buffer;
  provisional: true;
}

function bodyOf(loaded: Buffer | Provisional): Buffer {
  return Buffer.isBuffer(loaded) ? loaded : loaded.body;
}

export class VerifyCache {
  private readonly cache: NodeCache;
  private generation = 0;
  private readonly follower: FeedFollower;

  /**
   * Follows `feed` from its latest change: call start() before serving. Other answers
   * keyed by file hash reuse it with their own TTL and name (the content-rights cache).
   */
  constructor(feed: ChangeFeed, log: Logger, options: { ttlSeconds?: number; name?: string } = {}) {
    this.cache = new NodeCache({
      stdTTL: options.ttlSeconds ?? VERIFY_CACHE_TTL_SECONDS,
      checkperiod: 120,
      useClones: false,
      maxKeys: VERIFY_CACHE_MAX_KEYS,
    });
    // behind the feed's window: every answer may be old, and the next ones come from the tables
    this.follower = new FeedFollower(feed, (changes) => this.applyChanges(changes), log, options.name ?? 'verify cache', () => this.dropAll());
  }

  /** Reads the feed's position; answers are cached from then on. */
  async start(): Promise<void> {
    await this.follower.start();
  }

  /**
   * The cached body for `fileHash`, or the one `load` makes (cached unless a write raced
   * it, or `load` said it is provisional: `{ body, provisional: true }`, an answer that
   * changes without a write to tell the feed, e.g. a `log_index` still null).
   */
  async get(fileHash: string, load: () => Promise<Buffer | Provisional>): Promise<Buffer> {
    // a write was committed that the feed has not told us about yet: any answer may be old
    if (this.follower.behind) return bodyOf(await load());
    const hit = this.cache.get<Buffer>(fileHash);
    if (hit !== undefined) return hit;
    const before = this.generation;
    const loaded = await load();
    const body = bodyOf(loaded);
    if (this.generation === before && !this.follower.behind && body === loaded) {
      try {
        this.cache.set(fileHash, body);
      } catch {
        // ECACHEFULL: serve uncached rather than evicting under load
      }
    }
    return body;
  }

  private dropAll(): void {
    this.generation += 1;
    this.cache.flushAll();
  }

  private applyChanges(changes: readonly Change[]): void {
    this.generation += 1;
    for (const change of changes) {
      if (change.kind === 'profile') {
        this.cache.flushAll();
        return;
      }
      this.cache.del(change.file_hash);
    }
  }

  /** Resolves once every change committed before the call is applied (tests wait on it before reading a cached answer). */
  caughtUp(): Promise<void> {
    return this.follower.caughtUp();
  }

  /** Answers held, and the seq of the last change applied (for /healthz). */
  get size(): number {
    return this.cache.getStats().keys;
  }

  get seq(): number {
    return this.follower.seq;
  }

  /** Times it fell behind the feed's window and dropped every answer. */
  get reloads(): number {
    return this.follower.reloads;
  }

  /** Stops following the feed and the cache's expiry timer. */
  close(): void {
    this.follower.close();
    this.cache.close();
  }
}
