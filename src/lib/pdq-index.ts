// The 256-bit PDQ match index (issue 28): multi-index hashing over 16 chunks of 16
// bits in the matchindex kernel's memory (assembly/matchindex/pdq_index.ts). Exact:
// a query returns every stored hash within the threshold (at most 31 bits) of any of
// its hashes and nothing beyond it (the pigeonhole argument is in the kernel's header).
import { loadKernel, wasmFlavor, type BaseExports, type Kernel, type WasmFlavor } from './wasm-core.js';
import { PDQ_BYTES, pdqFromHex } from './pdq.js';

interface PdqIndexExports extends BaseExports {
  pdqCreate(): number;
  pdqDestroy(ix: number): void;
  pdqAdd(ix: number, id: number, hash: number): number;
  pdqStage(ix: number, ids: number, hashes: number, n: number): number;
  pdqFinish(ix: number): void;
  pdqRemove(ix: number, id: number): number;
  pdqHas(ix: number, id: number): number;
  pdqGet(ix: number, id: number, out: number): number;
  pdqSize(ix: number): number;
  pdqBytes(ix: number): number;
  pdqCompact(ix: number): void;
  pdqQuery(ix: number, queries: number, nq: number, threshold: number): number;
  pdqResults(): number;
}

/** Meta's match threshold for PDQ: distance at most 31 (of 256 bits). */
export const PDQ_MATCH_DISTANCE = 31;
/** Meta's quality floor: hashes under it are neither indexed nor matched. */
export const PDQ_MIN_QUALITY = 50;
/** Entries one index holds at most (a posting is a 24-bit slot number). */
export const PDQ_INDEX_MAX_ENTRIES = 1 << 24;

const MAX_ID = 0xffff_ffff;
/** Entries a bulk add copies into the kernel at a time. */
const BATCH = 32768;

export interface PdqMatch {
  id: number;
  /** The smallest Hamming distance to any of the query's hashes. */
  distance: number;
  /** Index, among the query's hashes, of the one at that distance (the first such). */
  variant: number;
}

function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError('an id is an integer from 0 to 2^32 - 1');
}

function hashBytes(hash: Uint8Array | string): Uint8Array {
  if (typeof hash === 'string') return pdqFromHex(hash);
  if (!(hash instanceof Uint8Array) || hash.length !== PDQ_BYTES) throw new RangeError('a PDQ hash is 32 bytes or 64 hex digits');
  return hash;
}

/**
 * An in-memory index of PDQ hashes under the caller's ids (integers 0..2^32-1);
 * adding an id again replaces its hash. Memory is held in WebAssembly until `free()`.
 *
 * ```ts
 * const index = new PdqIndex();
 * index.add(7, pdq.hash);
 * index.query(pdqDihedral(pixels, w, h).hashes); // [{ id: 7, distance: 4, variant: 5 }]
 * ```
 */
export class PdqIndex {
  private readonly kernel: Kernel<PdqIndexExports>;
  private handle: number;

  constructor(options: { flavor?: WasmFlavor } = {}) {
    this.kernel = loadKernel<PdqIndexExports>('matchindex', options.flavor ?? wasmFlavor);
    this.handle = this.kernel.exports.pdqCreate();
  }

  private live(): number {
    if (this.handle === 0) throw new Error('PdqIndex was freed');
    return this.handle;
  }

  /** Adds (or replaces) entry `id`. RangeError for a bad id or hash, or when the index is full. */
  add(id: number, hash: Uint8Array | string): void {
    const ix = this.live();
    checkId(id);
    const bytes = hashBytes(hash);
    const p = this.kernel.writeScratch(bytes);
    if (this.kernel.exports.pdqAdd(ix, id, p) !== 1) throw new RangeError(`a PdqIndex holds at most ${PDQ_INDEX_MAX_ENTRIES} entries`);
  }

  /**
   * Adds entries in bulk: entry i has id `ids[i]` and hash `hashes[32i..32i+32]`.
   * The buckets are laid out once with no slack (the way to load a large index).
   */
  addMany(ids: ArrayLike<number>, hashes: Uint8Array): void {
    const ix = this.live();
    const n = ids.length;
    if (!(hashes instanceof Uint8Array) || hashes.length !== n * PDQ_BYTES) throw new RangeError('addMany needs n ids and 32n hash bytes');
    for (let i = 0; i < n; i++) checkId(ids[i]);
    const e = this.kernel.exports;
    let added = 0;
    try {
      // staged in batches through the scratch block, packed once
      for (let at = 0; at < n; at += BATCH) {
        const m = Math.min(BATCH, n - at);
        const p = e.scratch(m * (4 + PDQ_BYTES));
        const idView = this.kernel.view(Uint32Array, p, m);
        for (let i = 0; i < m; i++) idView[i] = ids[at + i];
        this.kernel.u8.set(hashes.subarray(at * PDQ_BYTES, (at + m) * PDQ_BYTES), p + m * 4);
        const placed = e.pdqStage(ix, p, p + m * 4, m);
        added += placed;
        if (placed !== m) break;
      }
    } finally {
      e.pdqFinish(ix);
    }
    if (added !== n) throw new RangeError(`a PdqIndex holds at most ${PDQ_INDEX_MAX_ENTRIES} entries (${added} of ${n} added)`);
  }

  /** Removes entry `id`; false when it was not there. */
  remove(id: number): boolean {
    const ix = this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) return false;
    return this.kernel.exports.pdqRemove(ix, id) === 1;
  }

  has(id: number): boolean {
    const ix = this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) return false;
    return this.kernel.exports.pdqHas(ix, id) === 1;
  }

  /** The stored hash of `id`, or null. */
  get(id: number): Uint8Array | null {
    const ix = this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) return null;
    const p = this.kernel.exports.scratch(PDQ_BYTES);
    return this.kernel.exports.pdqGet(ix, id, p) === 1 ? this.kernel.read(p, PDQ_BYTES) : null;
  }

  /**
   * Every entry within `maxDistance` (0-31, default 31) bits of any of the query
   * hashes (one to eight: a hash, or its dihedral variants from pdqDihedral), each
   * once with its smallest distance; sorted by distance, then id.
   */
  query(hashes: Uint8Array | string | readonly (Uint8Array | string)[], maxDistance = PDQ_MATCH_DISTANCE): PdqMatch[] {
    const ix = this.live();
    const list = typeof hashes === 'string' || hashes instanceof Uint8Array ? [hashes] : hashes;
    if (!Array.isArray(list) || list.length < 1 || list.length > 8) throw new RangeError('a query is one to eight PDQ hashes');
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 31) throw new RangeError('maxDistance is an integer from 0 to 31');
    const e = this.kernel.exports;
    const p = e.scratch(list.length * PDQ_BYTES);
    const bytes = list.map(hashBytes);
    const u8 = this.kernel.u8;
    bytes.forEach((b, i) => u8.set(b, p + i * PDQ_BYTES));
    const n = e.pdqQuery(ix, p, list.length, maxDistance);
    if (n === 0) return [];
    const triples = this.kernel.view(Uint32Array, e.pdqResults(), n * 3);
    const best = new Map<number, PdqMatch>();
    for (let i = 0; i < n; i++) {
      const id = triples[3 * i];
      const distance = triples[3 * i + 1];
      const variant = triples[3 * i + 2];
      const had = best.get(id);
      if (had === undefined || distance < had.distance || (distance === had.distance && variant < had.variant)) best.set(id, { id, distance, variant });
    }
    return [...best.values()].sort((a, b) => a.distance - b.distance || a.id - b.id);
  }

  size(): number {
    return this.kernel.exports.pdqSize(this.live());
  }

  /** Bytes of WebAssembly memory the index holds (its pages, tables, buckets and postings). */
  bytes(): number {
    return this.kernel.exports.pdqBytes(this.live());
  }

  /** bytes() over size(); 0 when empty. */
  bytesPerEntry(): number {
    const n = this.size();
    return n === 0 ? 0 : this.bytes() / n;
  }

  /** Lays the postings out again with no slack (after many adds one at a time). */
  compact(): void {
    this.kernel.exports.pdqCompact(this.live());
  }

  free(): void {
    if (this.handle !== 0) this.kernel.exports.pdqDestroy(this.handle);
    this.handle = 0;
  }

  dispose(): void {
    this.free();
  }
}
