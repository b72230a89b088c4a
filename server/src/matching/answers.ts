// The cache of perceptual-match answers (verify-fuzzy and verify-file bodies, as
// UTF-8 bytes), keyed by the query: the same picture checked again costs a map look-up
// instead of an index query and a record fetch.
//
// An answer can change only when a fingerprint that could be one of its candidates is
// indexed: stored records never change, revocations are not part of the reduced shape
// and nothing leaves the index. So each answer remembers the index's write tick from
// before it was computed and is stale once a write has touched its candidates since:
// for images, any of the query's 8 band buckets (position, byte); for audio and video,
// anything of its hash types. Writes elsewhere leave it valid. Once their bytes or
// their count pass the budget, the oldest answers go first, except that one served
// since it was stored moves to the back once (second chance).
import type { HashType } from 'provenant';

/** Bytes of answers kept (each is at most about 30 KB: 100 reduced records). */
export const ANSWER_CACHE_BYTES = 32 << 20;
/**
 * Answers kept at most, whatever their size: evicting the oldest of a Map walks the
 * slots its earlier deletions left, so the cost of an eviction grows with the count.
 */
export const ANSWER_CACHE_COUNT = 10_000;
/** Longer keys (long audio or video hash values) are not cached: rarely repeated, costly to key. */
const MAX_KEY_LENGTH = 1024;

const IMAGE_BUCKETS = 8 * 256;

interface Answer {
  /** The write tick the answer was computed after. */
  tick: number;
  /** Image answers: their 8 bucket numbers (position * 256 + byte); else null. */
  buckets: Uint16Array | null;
  types: readonly HashType[];
  body: Buffer;
  /** Served since it was stored or last spared by an eviction. */
  used: boolean;
}

export class AnswerCache {
  private readonly answers = new Map<string, Answer>();
  private bytes = 0;
  /** Incremented by every indexed write. */
  private tick = 0;
  /** The tick of the last write into each image band bucket. */
  private readonly imageTicks = new Float64Array(IMAGE_BUCKETS);
  /** The tick of the last write of each sequence type. */
  private readonly typeTicks = new Map<HashType, number>();
  /** Look-ups answered from the cache, and not. */
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes = ANSWER_CACHE_BYTES,
    private readonly maxCount = ANSWER_CACHE_COUNT,
  ) {}

  /** The key of a query, or null when it is not cached. */
  static key(types: readonly HashType[], threshold: number, bands: readonly (readonly number[])[], hashValue: ArrayLike<number> | null | undefined): string | null {
    if (hashValue != null && hashValue.length > MAX_KEY_LENGTH) return null;
    // built by appending (a few times cheaper than join on the nested arrays)
    let key = types.length === 1 ? types[0] : types.join(',');
    key += `|${threshold}|`;
    for (const band of bands) {
      for (let i = 0; i < band.length; i++) key += i === 0 ? `${band[i]}` : `,${band[i]}`;
      key += ';';
    }
    if (hashValue != null) {
      key += '|#'; // an empty hash_value differs from none
      for (let i = 0; i < hashValue.length; i++) key += `${hashValue[i]},`;
    }
    return key.length <= MAX_KEY_LENGTH ? key : null;
  }

  /** The write tick now: an answer computed from here on is stored with it. */
  now(): number {
    return this.tick;
  }

  /** Notes an indexed fingerprint (its type and 8 bands): answers that could include it are stale. */
  written(type: HashType, bands: readonly (readonly number[])[]): void {
    this.tick += 1;
    if (type === 'ImagePHash') {
      for (let p = 0; p < 8; p++) this.imageTicks[(p << 8) | (bands[p][0] & 255)] = this.tick;
    } else {
      this.typeTicks.set(type, this.tick);
    }
  }

  /** A fresh cached answer, or undefined. */
  get(key: string): Buffer | undefined {
    const a = this.answers.get(key);
    if (a === undefined || !this.fresh(a)) {
      if (a !== undefined) this.drop(key, a);
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    a.used = true;
    return a.body;
  }

  /** Keeps an answer computed after write tick `tick` (dropped at once when a write has already made it stale). */
  set(key: string, tick: number, types: readonly HashType[], bands: readonly (readonly number[])[], body: Buffer): void {
    if (body.length > this.maxBytes) return;
    const buckets = types.length === 1 && types[0] === 'ImagePHash' ? Uint16Array.from(bands, (b, p) => (p << 8) | (b[0] & 255)) : null;
    const a: Answer = { tick, buckets, types, body, used: false };
    if (!this.fresh(a)) return;
    const old = this.answers.get(key);
    if (old !== undefined) this.drop(key, old);
    this.answers.set(key, a);
    this.bytes += body.length + key.length;
    this.evict();
  }

  /**
   * Drops the oldest answers (a Map iterates in insertion order) until the budget
   * holds; one used since it was stored or last spared goes to the back instead, once
   * (second chance: a hit only sets a flag instead of moving its answer).
   */
  private evict(): void {
    while (this.bytes > this.maxBytes || this.answers.size > this.maxCount) {
      const [k, v] = this.answers.entries().next().value as [string, Answer];
      if (v.used) {
        v.used = false;
        this.answers.delete(k);
        this.answers.set(k, v);
      } else this.drop(k, v);
    }
  }

  /** Forgets every answer (the index was rebuilt). */
  clear(): void {
    this.answers.clear();
    this.bytes = 0;
  }

  /** Whether an answer is kept under `key`, fresh or not (no hit counted, no use noted). */
  has(key: string): boolean {
    return this.answers.has(key);
  }

  get size(): number {
    return this.answers.size;
  }

  private fresh(a: Answer): boolean {
    if (a.buckets !== null) {
      for (const b of a.buckets) if (this.imageTicks[b] > a.tick) return false;
      return true;
    }
    for (const t of a.types) if ((this.typeTicks.get(t) ?? 0) > a.tick) return false;
    return true;
  }

  private drop(key: string, a: Answer): void {
    this.answers.delete(key);
    this.bytes -= a.body.length + key.length;
  }
}
