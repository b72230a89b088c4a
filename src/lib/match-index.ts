// The perceptual match index (decisions.md section 3, "Candidates"): stored
// fingerprints of every hash type, looked up by their LSH bands and ranked by
// similarity. Postings and packed hashes live in the matchindex kernel's memory
// (assembly/matchindex/index_core.ts); this class validates shapes, copies the query
// in and reads the ranked ids out.
import { loadKernel, wasmFlavor, type BaseExports, type Kernel, type WasmFlavor } from './wasm-core.js';
import type { Fingerprint, HashType } from './types.js';

interface MatchIndexExports extends BaseExports {
  miCreate(): number;
  miDestroy(ix: number): void;
  miAdd(ix: number, id: number, kind: number, bands: number, hash: number, hashLen: number, hashKnown: number, signedAt: number): number;
  miRemove(ix: number, id: number): number;
  miQuery(ix: number, kind: number, bands: number, hash: number, hashLen: number, threshold: number, limit: number): number;
  miResults(): number;
  miSize(ix: number, kind: number): number;
  miBytes(ix: number, kind: number): number;
  miReserve(ix: number, kind: number, n: number): void;
  miHas(ix: number, id: number): number;
}

/** What a query needs: the type, the 8 bands, and optionally the hash. */
export interface MatchQuery {
  hash_type: HashType | string;
  bands: number[][];
  /** Without it every candidate's similarity is null. */
  hash_value?: ArrayLike<number> | null;
}

/** A stored fingerprint: spec 2.1 perceptual_hash, hash_value optional. */
export interface IndexedFingerprint {
  hash_type: HashType | string;
  bands?: number[][];
  hash_value?: ArrayLike<number> | null;
}

export interface MatchQueryOptions {
  /** Keep candidates with similarity >= threshold (and those with null similarity); null keeps all. Default null. */
  threshold?: number | null;
  /** At most this many results (default 100, as the endpoints return). */
  limit?: number;
}

export interface Match {
  id: number;
  /** 0-100, or null when either side has no comparable hash_value. */
  similarity: number | null;
}

export const HASH_TYPES: readonly HashType[] = ['ImagePHash', 'AudioChromaprint', 'VideoPHash'];
const KIND: Record<HashType, number> = { ImagePHash: 0, AudioChromaprint: 1, VideoPHash: 2 };
/** Bytes per band: images 1, audio and video 4 (spec 2.1). */
const BAND_BYTES: Record<HashType, number> = { ImagePHash: 1, AudioChromaprint: 4, VideoPHash: 4 };
/** Bytes per hash unit: an image hash is one 8-byte unit; audio words 4; video frames 8. */
const UNIT_BYTES: Record<HashType, number> = { ImagePHash: 8, AudioChromaprint: 4, VideoPHash: 8 };
/** The endpoints' cap (decisions.md 3). */
export const MATCH_LIMIT = 100;
const MAX_ID = 0xffff_ffff;
const MAX_LIMIT = 1_000_000;

function kindOf(hashType: unknown): number {
  // own keys only: 'toString' is no hash type
  const k = typeof hashType === 'string' && Object.hasOwn(KIND, hashType) ? KIND[hashType as HashType] : undefined;
  if (k === undefined) throw new RangeError(`hash_type must be one of ${HASH_TYPES.join(', ')}`);
  return k;
}

function isByte(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255;
}

/** Packs the 8 bands (8 or 32 bytes) into `out` at `at`; false unless 8 bands of the type's width holding bytes. */
function packBands(hashType: HashType, bands: unknown, out: Uint8Array, at: number): boolean {
  const width = BAND_BYTES[hashType];
  if (!Array.isArray(bands) || bands.length !== 8) return false;
  for (let i = 0; i < 8; i++) {
    const band: unknown = bands[i];
    if (!Array.isArray(band) || band.length !== width) return false;
    for (let j = 0; j < width; j++) {
      const v: unknown = band[j];
      if (!isByte(v)) return false;
      out[at + i * width + j] = v;
    }
  }
  return true;
}

/** True when `bands` has the layout of `hashType` (spec 2.1): 8 bands of 1 (images) or 4 bytes. */
export function hasBandLayout(hashType: HashType, bands: unknown): bands is number[][] {
  const width = BAND_BYTES[hashType];
  return width !== undefined && Array.isArray(bands) && bands.length === 8
    && bands.every((b) => Array.isArray(b) && b.length === width && b.every(isByte));
}

/** The hash bytes when they are comparable for the type (whole units, non-empty), else null. */
function comparableHash(hashType: HashType, value: unknown): number[] | null {
  const hash = value instanceof Uint8Array ? Array.from(value) : value;
  if (!Array.isArray(hash) || hash.length === 0) return null;
  const unit = UNIT_BYTES[hashType];
  if (hashType === 'ImagePHash' ? hash.length !== 8 : hash.length % unit !== 0) return null;
  for (const v of hash) if (!isByte(v)) return null;
  return hash as number[];
}

function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError('an id is an integer from 0 to 2^32 - 1');
}

/**
 * An in-memory index of perceptual fingerprints, by LSH band, for candidate lookup
 * and ranking per decisions.md section 3. Ids are the caller's (integers 0..2^32-1);
 * adding an id again replaces its entry. Memory is held in WebAssembly until `free()`.
 *
 * ```ts
 * const index = new MatchIndex();
 * index.add(1, fingerprint, signedAt);
 * index.query(other, { threshold: 70 }); // [{ id: 1, similarity: 92 }]
 * ```
 */
export class MatchIndex {
  private readonly kernel: Kernel<MatchIndexExports>;
  private handle: number;
  /** Held ids whose bands have no valid layout (never candidates), with their type. */
  private readonly unindexed = new Map<number, HashType>();

  constructor(options: { flavor?: WasmFlavor } = {}) {
    this.kernel = loadKernel<MatchIndexExports>('matchindex', options.flavor ?? wasmFlavor);
    this.handle = this.kernel.exports.miCreate();
  }

  private live(): number {
    if (this.handle === 0) throw new Error('MatchIndex was freed');
    return this.handle;
  }

  /**
   * Adds (or replaces) entry `id`; true when it is indexed. A fingerprint whose bands
   * do not have its type's layout (images: 8 of 1 byte; audio and video: 8 of 4 bytes)
   * is held under its id but never matches (false), as decisions.md 3 says of queries.
   * A hash_value that cannot be compared (empty, not whole units, or an image hash that
   * is not its own bands) is kept as unknown: the entry matches with similarity null.
   * RangeError for a bad id, hash type or signedAt.
   */
  add(id: number, fp: IndexedFingerprint, signedAt = 0): boolean {
    const ix = this.live();
    checkId(id);
    if (fp === null || typeof fp !== 'object') throw new TypeError('a fingerprint is an object');
    const kind = kindOf(fp.hash_type);
    if (typeof signedAt !== 'number' || !Number.isFinite(signedAt)) throw new RangeError('signedAt must be a finite number');
    const hashType = fp.hash_type as HashType;
    const bandLen = 8 * BAND_BYTES[hashType];
    const e = this.kernel.exports;
    const hash = comparableHash(hashType, fp.hash_value);
    const hashLen = kind === 0 || hash === null ? 0 : hash.length;
    const p = e.scratch(bandLen + hashLen);
    const u8 = this.kernel.u8;
    if (!packBands(hashType, fp.bands, u8, p)) {
      e.miRemove(ix, id);
      this.unindexed.set(id, hashType);
      return false;
    }
    this.unindexed.delete(id);
    let hashKnown = 0;
    if (kind === 0) {
      if (hash !== null) {
        hashKnown = 1;
        for (let i = 0; i < 8; i++) if (u8[p + i] !== hash[i]) hashKnown = 0;
      }
    } else if (hash !== null) {
      u8.set(hash, p + bandLen);
    }
    e.miAdd(ix, id, kind, p, p + bandLen, hashLen, hashKnown, signedAt);
    return true;
  }

  /** Whether entry `id` is held (indexed or not). */
  has(id: number): boolean {
    const ix = this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) return false;
    if (this.unindexed.has(id)) return true;
    return this.kernel.exports.miHas(ix, id) === 1;
  }

  /**
   * Bulk form for ImagePHash: entry i has id `ids[i]`, hash (= bands) bytes
   * `hashes[8i..8i+8]` and `signedAt[i]`.
   */
  addImageHashes(ids: ArrayLike<number>, hashes: Uint8Array, signedAt: ArrayLike<number>): void {
    const ix = this.live();
    const n = ids.length;
    if (!(hashes instanceof Uint8Array) || hashes.length !== n * 8 || signedAt.length !== n) {
      throw new RangeError('addImageHashes needs n ids, 8n hash bytes and n signedAt values');
    }
    const e = this.kernel.exports;
    e.miReserve(ix, 0, n);
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      checkId(id);
      const at = signedAt[i];
      if (!Number.isFinite(at)) throw new RangeError('signedAt must be finite');
      this.unindexed.delete(id);
      const p = e.scratch(8);
      this.kernel.u8.set(hashes.subarray(i * 8, i * 8 + 8), p);
      e.miAdd(ix, id, 0, p, 0, 0, 1, at);
    }
  }

  /** Makes room for `n` more entries of `hashType` (fewer growth steps during a bulk load). */
  reserve(hashType: HashType, n: number): void {
    if (!Number.isInteger(n) || n < 0 || n > 0x3fff_ffff) throw new RangeError('n must be a non-negative integer below 2^30');
    this.kernel.exports.miReserve(this.live(), kindOf(hashType), n);
  }

  /** Removes entry `id`; false when it was not there. */
  remove(id: number): boolean {
    const ix = this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) return false;
    if (this.unindexed.delete(id)) return true;
    return this.kernel.exports.miRemove(ix, id) === 1;
  }

  /**
   * The stored entries of the query's type sharing at least one band at the same
   * position, each with its similarity (Hamming for images; best alignment for audio,
   * +-120 words with >= 32 overlapping, and video, +-30 frames with >= 4) or null when
   * either side has no comparable hash; those below `threshold` dropped (null kept);
   * sorted by similarity (null last), then signedAt, newest first, then id; at most `limit`.
   */
  query(fp: MatchQuery, options: MatchQueryOptions = {}): Match[] {
    const ix = this.live();
    if (fp === null || typeof fp !== 'object') throw new TypeError('a query is an object');
    const threshold = options.threshold ?? null;
    if (threshold !== null && (typeof threshold !== 'number' || Number.isNaN(threshold))) throw new RangeError('threshold must be a number or null');
    const limit = options.limit ?? MATCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_LIMIT) throw new RangeError('limit must be an integer from 0 to 1000000');
    const kind = typeof fp.hash_type === 'string' && Object.hasOwn(KIND, fp.hash_type) ? KIND[fp.hash_type as HashType] : undefined;
    if (kind === undefined) return []; // no such type: nothing matches
    const hashType = fp.hash_type as HashType;
    const bandLen = 8 * BAND_BYTES[hashType];
    const hash = comparableHash(hashType, fp.hash_value);
    const hashLen = hash === null ? 0 : hash.length;
    const e = this.kernel.exports;
    const p = e.scratch(bandLen + hashLen);
    const u8 = this.kernel.u8;
    if (!packBands(hashType, fp.bands, u8, p)) return []; // another band layout: nothing matches (spec 4.3)
    if (hash !== null) u8.set(hash, p + bandLen);
    // similarity is an integer 0..100: a fractional threshold rounds up; <= 0 keeps everything
    const t = threshold === null || threshold <= 0 ? -1 : threshold > 100 ? 101 : Math.ceil(threshold);
    const n = e.miQuery(ix, kind, p, hash === null ? 0 : p + bandLen, hashLen, t, limit);
    const pairs = this.kernel.view(Int32Array, e.miResults(), n * 2);
    const out: Match[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const sim = pairs[2 * i + 1];
      out[i] = { id: pairs[2 * i] >>> 0, similarity: sim < 0 ? null : sim };
    }
    return out;
  }

  /** Entries held, of one type or in all (counting held, unindexable ones). */
  size(hashType?: HashType): number {
    const ix = this.live();
    if (hashType === undefined) return this.kernel.exports.miSize(ix, 3) + this.unindexed.size;
    let held = 0;
    for (const t of this.unindexed.values()) if (t === hashType) held++;
    return this.kernel.exports.miSize(ix, kindOf(hashType)) + held;
  }

  /** Indexed entries (those that can match) of one type or in all. */
  indexedSize(hashType?: HashType): number {
    return this.kernel.exports.miSize(this.live(), hashType === undefined ? 3 : kindOf(hashType));
  }

  /** Bytes of WebAssembly memory the index holds, for one type (its table) or in all (with the id table). */
  bytes(hashType?: HashType): number {
    const ix = this.live();
    const e = this.kernel.exports;
    if (hashType !== undefined) return e.miBytes(ix, kindOf(hashType)) >>> 0;
    return (e.miBytes(ix, 0) >>> 0) + (e.miBytes(ix, 1) >>> 0) + (e.miBytes(ix, 2) >>> 0) + (e.miBytes(ix, 3) >>> 0);
  }

  /**
   * Bytes held per stored fingerprint of `hashType` (default ImagePHash): its table
   * plus its share of the id table, over its live entries; 0 when empty.
   */
  bytesPerEntry(hashType: HashType = 'ImagePHash'): number {
    const n = this.indexedSize(hashType);
    if (n === 0) return 0;
    const total = this.indexedSize();
    const idShare = (this.kernel.exports.miBytes(this.live(), 3) >>> 0) * (n / total);
    return (this.bytes(hashType) + idShare) / n;
  }

  /** Returns the index's memory to the kernel; the index cannot be used afterwards. */
  free(): void {
    if (this.handle !== 0) this.kernel.exports.miDestroy(this.handle);
    this.handle = 0;
    this.unindexed.clear();
  }

  /** Same as free(). */
  dispose(): void {
    this.free();
  }
}
