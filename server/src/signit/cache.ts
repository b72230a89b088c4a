// The read-through cache of `GET /verify` answers (one per server, keyed by file hash).
//
// Values are the serialized response bodies, as UTF-8 bytes (nothing to encode per request). Every write that changes an answer on
// this node drops it: the store tells us about signs, publishes and revocations
// (SignatureObserver); profile changes call `invalidateVerifyCache(deps)`. A
// generation counter closes the race where a read started before a write would put
// the old answer back after the write dropped it. The TTL bounds staleness from
// anything else (another process writing the same database).
import NodeCache from 'node-cache';
import type { ServerDeps } from '../deps.js';

export const VERIFY_CACHE_TTL_SECONDS = 60;
export const VERIFY_CACHE_MAX_KEYS = 20_000;

export class VerifyCache {
  private readonly cache = new NodeCache({
    stdTTL: VERIFY_CACHE_TTL_SECONDS,
    checkperiod: 120,
    useClones: false,
    maxKeys: VERIFY_CACHE_MAX_KEYS,
  });
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(deps: ServerDeps) {
    this.unsubscribe = deps.store.signatures.subscribe({
      stored: (list) => {
        for (const s of list) this.invalidate(s.record.file_hash);
      },
      revoked: (_actionHash, fileHash) => this.invalidate(fileHash),
    });
  }

  /** The cached body for `fileHash`, or the one `load` makes (cached unless a write raced it). */
  async get(fileHash: string, load: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.cache.get<Buffer>(fileHash);
    if (hit !== undefined) return hit;
    const before = this.generation;
    const body = await load();
    if (this.generation === before) {
      try {
        this.cache.set(fileHash, body);
      } catch {
        // ECACHEFULL: serve uncached rather than evicting under load
      }
    }
    return body;
  }

  /** Drops one hash's answer, or every answer when no hash is given (profile changes). */
  invalidate(fileHash?: string): void {
    this.generation += 1;
    if (fileHash === undefined) this.cache.flushAll();
    else this.cache.del(fileHash);
  }

  close(): void {
    this.unsubscribe();
    this.cache.close();
  }

  get size(): number {
    return this.cache.keys().length;
  }
}

const caches = new WeakMap<ServerDeps, VerifyCache>();

/** The verify cache of a server (made on first use). */
export function verifyCacheOf(deps: ServerDeps): VerifyCache {
  let cache = caches.get(deps);
  if (cache === undefined) {
    cache = new VerifyCache(deps);
    caches.set(deps, cache);
  }
  return cache;
}

/**
 * Drops cached verify answers after a change the store does not see, such as a
 * profile or public_fields change (PATCH /auth/me): all of them, or one file's.
 */
export function invalidateVerifyCache(deps: ServerDeps, fileHash?: string): void {
  caches.get(deps)?.invalidate(fileHash);
}

/** Stops the cache's timer (server shutdown). */
export function closeVerifyCache(deps: ServerDeps): void {
  caches.get(deps)?.close();
  caches.delete(deps);
}
