// Hamming distance, similarity and search over hashes (decisions.md section 3):
// similarity = floor(100 * (bits - d) / bits). The loops run in the core kernel
// (assembly/hamming.ts); a HashTable keeps many 8-byte hashes resident in wasm
// memory so repeated scans copy only the query.
import { loadKernel, wasmFlavor, type BaseExports, type Kernel, type WasmFlavor } from './wasm-core.js';
import type { Fingerprint, HashType } from './types.js';

export interface HammingExports extends BaseExports {
  hammingDistance(a: number, b: number, len: number): number;
  hammingScan(query: number, packed: number, n: number, maxDist: number): number;
  hammingScanBytewise(query: number, packed: number, n: number, maxDist: number): number;
  hammingDistancesAt(query: number, packed: number, indexes: number, count: number): void;
  hammingTopK(query: number, packed: number, n: number, k: number): number;
  hammingResults(): number;
  alignedSimilarity(a: number, na: number, b: number, nb: number, unitBytes: number, maxShift: number, minOverlap: number): number;
}

const core = (flavor: WasmFlavor = wasmFlavor) => loadKernel<HammingExports>('core', flavor);

export interface HashMatch {
  index: number;
  distance: number;
}

function checkBytes(name: string, v: unknown): asserts v is Uint8Array {
  if (!(v instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
}

function checkSameLength(a: Uint8Array, b: Uint8Array): void {
  checkBytes('a', a);
  checkBytes('b', b);
  if (a.length !== b.length) throw new RangeError(`hashes differ in length (${a.length} and ${b.length} bytes)`);
}

/** floor(100 * (bits - d) / bits) for d differing bits out of `bits`. */
export function similarityFromDistance(distance: number, bits: number): number {
  return Math.floor((100 * (bits - distance)) / bits);
}

/** The largest distance out of `bits` whose similarity is at least `minSimilarity`; -1 if none. */
export function maxDistanceFor(minSimilarity: number, bits = 64): number {
  if (typeof minSimilarity !== 'number' || Number.isNaN(minSimilarity)) throw new RangeError('minSimilarity must be a number');
  for (let d = bits; d >= 0; d--) if (similarityFromDistance(d, bits) >= minSimilarity) return d;
  return -1;
}

/** Number of differing bits between two byte arrays of the same length. */
export function hammingDistance(a: Uint8Array, b: Uint8Array): number {
  checkSameLength(a, b);
  const k = core();
  const pa = k.exports.scratch(a.length * 2);
  const u8 = k.u8;
  u8.set(a, pa);
  u8.set(b, pa + a.length);
  return k.exports.hammingDistance(pa, pa + a.length, a.length);
}

/** 0-100 similarity of two non-empty byte arrays of the same length. */
export function hammingSimilarity(a: Uint8Array, b: Uint8Array): number {
  checkSameLength(a, b);
  if (a.length === 0) throw new RangeError('cannot compare empty hashes');
  return similarityFromDistance(hammingDistance(a, b), a.length * 8);
}

function checkQuery(query: Uint8Array): void {
  checkBytes('query', query);
  if (query.length !== 8) throw new RangeError('the query must be one 8-byte hash');
}

function checkPacked(packed: Uint8Array): void {
  checkBytes('packed', packed);
  if (packed.length % 8 !== 0) throw new RangeError('packed must hold whole 8-byte hashes');
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 0) throw new RangeError('k must be a non-negative integer');
}

function scanIn(kernel: Kernel<HammingExports>, queryPtr: number, packedPtr: number, n: number, minSimilarity: number): Uint32Array {
  const count = kernel.exports.hammingScan(queryPtr, packedPtr, n, maxDistanceFor(minSimilarity, 64));
  return kernel.view(Uint32Array, kernel.exports.hammingResults(), count).slice();
}

function topKIn(kernel: Kernel<HammingExports>, queryPtr: number, packedPtr: number, n: number, k: number): HashMatch[] {
  const count = kernel.exports.hammingTopK(queryPtr, packedPtr, n, Math.min(k, n));
  const pairs = kernel.view(Uint32Array, kernel.exports.hammingResults(), count * 2);
  const out: HashMatch[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = { index: pairs[2 * i], distance: pairs[2 * i + 1] };
  return out;
}

/** Checks a query and a packed array, and copies them into scratch: query at the pointer, hashes 8 bytes on. */
function writeQueryAndPacked(k: ReturnType<typeof core>, query: Uint8Array, packed: Uint8Array): number {
  checkQuery(query);
  checkPacked(packed);
  const p = k.exports.scratch(8 + packed.length);
  const u8 = k.u8;
  u8.set(query, p);
  u8.set(packed, p + 8);
  return p;
}

/** Indexes (ascending) of the 8-byte hashes in `packed` whose similarity to `query` is at least `minSimilarity`. */
export function scanHashes(query: Uint8Array, packed: Uint8Array, minSimilarity: number): Uint32Array {
  const k = core();
  const p = writeQueryAndPacked(k, query, packed);
  return scanIn(k, p, p + 8, packed.length / 8, minSimilarity);
}

/** The k hashes of `packed` nearest to `query`: smallest distance first, ties by lower index. */
export function topKHashes(query: Uint8Array, packed: Uint8Array, k: number): HashMatch[] {
  checkK(k);
  const kernel = core();
  const p = writeQueryAndPacked(kernel, query, packed);
  return topKIn(kernel, p, p + 8, packed.length / 8, k);
}

/**
 * Many 8-byte hashes kept in one block of wasm memory, for repeated scans: each
 * scan copies only the query. Indexes are insertion order. Call `free()` when done
 * (the block is not garbage-collected).
 */
export class HashTable {
  private readonly kernel: Kernel<HammingExports>;
  private ptr = 0;
  private capacity = 0;
  private count = 0;

  constructor(options: { capacity?: number; flavor?: WasmFlavor } = {}) {
    this.kernel = core(options.flavor);
    this.reserve(Math.max(16, options.capacity ?? 1024));
  }

  /** Number of hashes held. */
  get size(): number {
    return this.count;
  }

  /** Where the hashes start in the core kernel's memory (moves when the table grows). */
  get pointer(): number {
    return this.ptr;
  }

  /** Bytes of wasm memory held. */
  get byteCapacity(): number {
    return this.capacity * 8;
  }

  private reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    const e = this.kernel.exports;
    const next = e.alloc(capacity * 8);
    if (this.ptr !== 0) {
      this.kernel.u8.copyWithin(next, this.ptr, this.ptr + this.count * 8);
      e.release(this.ptr);
    }
    this.ptr = next;
    this.capacity = capacity;
  }

  private live(): void {
    if (this.ptr === 0) throw new Error('HashTable was freed');
  }

  /** Appends one 8-byte hash; returns its index. */
  add(hash: Uint8Array | ArrayLike<number>): number {
    this.live();
    if (hash.length !== 8) throw new RangeError('a hash has 8 bytes');
    if (this.count === this.capacity) this.reserve(this.capacity * 2);
    const at = this.ptr + this.count * 8;
    const u8 = this.kernel.u8;
    for (let i = 0; i < 8; i++) u8[at + i] = hash[i];
    return this.count++;
  }

  /** Appends many hashes packed 8 bytes each; returns the index of the first. */
  addPacked(packed: Uint8Array): number {
    this.live();
    checkPacked(packed);
    const n = packed.length / 8;
    if (this.count + n > this.capacity) this.reserve(Math.max(this.capacity * 2, this.count + n));
    this.kernel.u8.set(packed, this.ptr + this.count * 8);
    const first = this.count;
    this.count += n;
    return first;
  }

  /** Overwrites the hash at `index`. */
  set(index: number, hash: Uint8Array | ArrayLike<number>): void {
    this.live();
    if (!Number.isInteger(index) || index < 0 || index >= this.count) throw new RangeError('index out of range');
    if (hash.length !== 8) throw new RangeError('a hash has 8 bytes');
    const u8 = this.kernel.u8;
    for (let i = 0; i < 8; i++) u8[this.ptr + index * 8 + i] = hash[i];
  }

  /** A copy of the hash at `index`. */
  get(index: number): Uint8Array {
    this.live();
    if (!Number.isInteger(index) || index < 0 || index >= this.count) throw new RangeError('index out of range');
    return this.kernel.read(this.ptr + index * 8, 8);
  }

  private putQuery(query: Uint8Array): number {
    checkQuery(query);
    const q = this.kernel.exports.scratch(8);
    this.kernel.u8.set(query, q);
    return q;
  }

  /** Indexes (ascending) of held hashes whose similarity to `query` is at least `minSimilarity`. */
  scan(query: Uint8Array, minSimilarity: number): Uint32Array {
    this.live();
    return scanIn(this.kernel, this.putQuery(query), this.ptr, this.count, minSimilarity);
  }

  /** The k held hashes nearest to `query`, by distance then index. */
  topK(query: Uint8Array, k: number): HashMatch[] {
    this.live();
    checkK(k);
    return topKIn(this.kernel, this.putQuery(query), this.ptr, this.count, k);
  }

  /** Forgets every hash (keeps the block). */
  clear(): void {
    this.count = 0;
  }

  /** Returns the block to the kernel; the table cannot be used afterwards. */
  free(): void {
    if (this.ptr !== 0) this.kernel.exports.release(this.ptr);
    this.ptr = 0;
    this.capacity = 0;
    this.count = 0;
  }
}

/**
 * 0-100 similarity of two sequences of `unitBytes`-byte units (audio words: 4, video
 * frames: 8) at their best alignment: shifts -maxShift..+maxShift with at least
 * `minOverlap` units overlapping, computed over the overlap; if no shift overlaps that
 * much, the whole shorter sequence at shift 0 (decisions.md section 3). 0 when either is empty.
 */
export function alignedSimilarity(a: Uint8Array, b: Uint8Array, unitBytes: 4 | 8, maxShift: number, minOverlap: number): number {
  checkBytes('a', a);
  checkBytes('b', b);
  if (unitBytes !== 4 && unitBytes !== 8) throw new RangeError('unitBytes must be 4 or 8');
  if (a.length % unitBytes !== 0 || b.length % unitBytes !== 0) throw new RangeError(`sequences must hold whole ${unitBytes}-byte units`);
  if (!Number.isInteger(maxShift) || maxShift < 0) throw new RangeError('maxShift must be a non-negative integer');
  if (!Number.isInteger(minOverlap) || minOverlap < 1) throw new RangeError('minOverlap must be a positive integer');
  const k = core();
  const p = k.exports.scratch(a.length + b.length);
  const u8 = k.u8;
  u8.set(a, p);
  u8.set(b, p + a.length);
  return k.exports.alignedSimilarity(p, a.length / unitBytes, p + a.length, b.length / unitBytes, unitBytes, maxShift, minOverlap);
}

/** Section 3's alignment per sequence type: unit size, shifts and minimum overlap. */
export const SEQUENCE_ALIGNMENT = {
  AudioChromaprint: { unitBytes: 4, maxShift: 120, minOverlap: 32 },
  VideoPHash: { unitBytes: 8, maxShift: 30, minOverlap: 4 },
} as const satisfies Partial<Record<HashType, { unitBytes: 4 | 8; maxShift: number; minOverlap: number }>>;

/**
 * Similarity (0-100) of two fingerprints' hash values per decisions.md section 3:
 * Hamming similarity for ImagePHash, best alignment for audio and video; null when the
 * types differ or either value is empty (not comparable).
 */
export function fingerprintSimilarity(a: Pick<Fingerprint, 'hash_type' | 'hash_value'>, b: Pick<Fingerprint, 'hash_type' | 'hash_value'>): number | null {
  if (a.hash_type !== b.hash_type) return null;
  const x = Uint8Array.from(a.hash_value);
  const y = Uint8Array.from(b.hash_value);
  if (x.length === 0 || y.length === 0) return null;
  if (a.hash_type === 'ImagePHash') return x.length === y.length ? hammingSimilarity(x, y) : null;
  const rule = SEQUENCE_ALIGNMENT[a.hash_type];
  if (x.length % rule.unitBytes !== 0 || y.length % rule.unitBytes !== 0) return null;
  return alignedSimilarity(x, y, rule.unitBytes, rule.maxShift, rule.minOverlap);
}
