// The ISCC Content-Code index (issue 33 part 2: the Soft Binding Resolution API's
// byBinding for io.iscc.v0, and a candidate source of verify-file): every stored record's
// 64-bit Content-Code body, packed 8 bytes apiece in the core kernel's memory, one table
// per content type, searched by an exact scan (assembly/hamming.ts hammingScan: i64
// popcounts, eight hashes a step; 1M codes are 8 MB, about half a millisecond).
// Exact and simple: no candidate is missed and nothing beyond the distance is answered.
//
// The rules, as isccDistance's: codes of different content types (or versions) never
// match; a longer code is compared over the shorter body, so a 128- or 256-bit query is
// compared by its first 64 bits (the stored units of an ISCC-CODE are 64-bit); a code with
// fewer than 16 or more than 48 of its 64 bits set carries too little content to tell
// files apart and is neither indexed nor matched. An Image-Code splits 64 DCT coefficients
// at their median, so a picture's code has 32 bits set; flat and near-flat pictures (tied
// coefficients) give codes like 0x8000000000000000, which 56 different wallpapers of the dev
// corpus share; an Audio-Code of a clip too short for Chromaprint words is all zeros
// (docs/iscc.md, Thresholds).
import { decodeIscc, IsccError, MT } from './iscc-codec.js';
import { loadKernel, wasmFlavor, type Kernel, type WasmFlavor } from './wasm-core.js';
import type { HammingExports } from './hamming.js';

/** The bits of a Content-Code the index compares (the ISCC-CODE's units are 64-bit). */
export const ISCC_INDEX_BITS = 64;

export interface IsccMatch {
  id: number;
  /** Hamming distance over the 64 bits compared. */
  distance: number;
}

/** One content type's codes: bodies packed in kernel memory, ids beside them in the same order. */
interface Table {
  ptr: number;
  capacity: number;
  count: number;
  ids: Uint32Array;
}

const MAX_ID = 0xffff_ffff;

/**
 * The match thresholds, measured on the dev corpus (bench/iscc-threshold.ts;
 * docs/iscc.md): byBinding answers, and a recovered manifest's soft binding
 * matches an upload, within 8 bits (no false match among 655,000 pairs of pictures from
 * different packages; 10 bits admit the first); verify-file's ISCC candidate source, which
 * nothing confirms, takes 4 (the copies it adds to the other sources', framed and bordered
 * pictures, are nearly all within it).
 */
export const ISCC_BINDING_MAX_DISTANCE = 8;
export const ISCC_SOURCE_MAX_DISTANCE = 4;

/** 0-100 similarity of two Content-Codes `distance` bits apart over the 64 compared (decisions.md 3's rule). */
export function isccSimilarity(distance: number): number {
  return Math.floor((100 * (ISCC_INDEX_BITS - distance)) / ISCC_INDEX_BITS);
}

/** Fewest bits of the 64 compared a code must have set, and most (64 less it), to be indexed or matched. */
export const ISCC_MIN_SET_BITS = 16;

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, i) => {
  let c = 0;
  for (let v = i; v; v &= v - 1) c++;
  return c;
});

/** The table key and the 8 compared bytes of a Content-Code string; null for a code that never matches (too few or too many bits set). Throws IsccError for what is not a Content-Code of at least 64 bits. */
export function isccIndexKey(code: string): { key: string; body: Uint8Array } | null {
  const unit = decodeIscc(code);
  if (unit.mainType !== MT.CONTENT) throw new IsccError('not a Content-Code (MainType CONTENT)');
  if (unit.bits < ISCC_INDEX_BITS) throw new IsccError(`a ${unit.bits}-bit Content-Code is shorter than the ${ISCC_INDEX_BITS} bits compared`);
  const body = unit.body.subarray(0, 8);
  let set = 0;
  for (const b of body) set += POPCOUNT[b];
  if (set < ISCC_MIN_SET_BITS || set > ISCC_INDEX_BITS - ISCC_MIN_SET_BITS) return null;
  return { key: `${unit.subType}.${unit.version}`, body };
}

/**
 * Content-Codes under the caller's ids (integers 0..2^32-1); adding an id again replaces
 * its code. Memory is held in the core kernel until `free()`.
 *
 * ```ts
 * const index = new IsccIndex();
 * index.add(7, 'ISCC:EEA...');
 * index.query('ISCC:EEA...', 8);   // [{ id: 7, distance: 2 }]
 * ```
 */
export class IsccIndex {
  private readonly kernel: Kernel<HammingExports>;
  private readonly tables = new Map<string, Table>();
  /** id -> its table and slot. */
  private readonly where = new Map<number, { table: Table; slot: number }>();
  private freed = false;

  constructor(options: { flavor?: WasmFlavor } = {}) {
    this.kernel = loadKernel<HammingExports>('core', options.flavor ?? wasmFlavor);
  }

  private live(): void {
    if (this.freed) throw new Error('IsccIndex was freed');
  }

  private table(key: string): Table {
    let t = this.tables.get(key);
    if (t === undefined) this.tables.set(key, (t = { ptr: this.kernel.exports.alloc(1024 * 8), capacity: 1024, count: 0, ids: new Uint32Array(1024) }));
    return t;
  }

  private grow(t: Table, capacity: number): void {
    const e = this.kernel.exports;
    const next = e.alloc(capacity * 8);
    this.kernel.u8.copyWithin(next, t.ptr, t.ptr + t.count * 8);
    e.release(t.ptr);
    t.ptr = next;
    const ids = new Uint32Array(capacity);
    ids.set(t.ids.subarray(0, t.count));
    t.ids = ids;
    t.capacity = capacity;
  }

  /**
   * Adds (or replaces) `id`'s code. True when indexed; false (and `id` held by no code)
   * for a code that never matches (too few or too many bits set). RangeError for a bad id; IsccError for
   * what is not a Content-Code of at least 64 bits.
   */
  add(id: number, code: string): boolean {
    this.live();
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError('an id is an integer from 0 to 2^32 - 1');
    const found = isccIndexKey(code);
    this.remove(id);
    if (found === null) return false;
    const t = this.table(found.key);
    if (t.count === t.capacity) this.grow(t, t.capacity * 2);
    this.kernel.u8.set(found.body, t.ptr + t.count * 8);
    t.ids[t.count] = id;
    this.where.set(id, { table: t, slot: t.count });
    t.count++;
    return true;
  }

  /** Removes `id` (the table's last code takes its slot); false when it was not there. */
  remove(id: number): boolean {
    this.live();
    const at = this.where.get(id);
    if (at === undefined) return false;
    this.where.delete(id);
    const { table: t, slot } = at;
    const last = t.count - 1;
    if (slot !== last) {
      this.kernel.u8.copyWithin(t.ptr + slot * 8, t.ptr + last * 8, t.ptr + last * 8 + 8);
      t.ids[slot] = t.ids[last];
      this.where.set(t.ids[slot], { table: t, slot });
    }
    t.count = last;
    return true;
  }

  has(id: number): boolean {
    return this.where.has(id);
  }

  /** Codes held (of every type). */
  size(): number {
    return this.where.size;
  }

  /** Bytes of kernel memory the tables hold. */
  bytes(): number {
    let n = 0;
    for (const t of this.tables.values()) n += t.capacity * 8;
    return n;
  }

  /**
   * The held codes of `code`'s type within `maxDistance` bits of it (0-64), nearest first,
   * then by id; at most `limit`. [] for a code that never matches. IsccError as add().
   */
  query(code: string, maxDistance: number, limit = Infinity): IsccMatch[] {
    this.live();
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > ISCC_INDEX_BITS) throw new RangeError(`maxDistance is an integer from 0 to ${ISCC_INDEX_BITS}`);
    const found = isccIndexKey(code);
    const t = found === null ? undefined : this.tables.get(found.key);
    if (t === undefined || t.count === 0 || limit <= 0) return [];
    const e = this.kernel.exports;
    const q = this.kernel.writeScratch(found!.body);
    const n = e.hammingScan(q, t.ptr, t.count, maxDistance);
    if (n === 0) return [];
    // the indexes hammingScan wrote are the input of hammingDistancesAt, which overwrites the results block: copied first
    const slots = this.kernel.view(Uint32Array, e.hammingResults(), n).slice();
    const p = e.scratch(8 + n * 4);
    this.kernel.u8.set(found!.body, p);
    this.kernel.view(Uint32Array, p + 8, n).set(slots);
    e.hammingDistancesAt(p, t.ptr, p + 8, n);
    const distances = this.kernel.view(Uint32Array, e.hammingResults(), n);
    const out: IsccMatch[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = { id: t.ids[slots[i]], distance: distances[i] };
    out.sort((a, b) => a.distance - b.distance || a.id - b.id);
    return out.length > limit ? out.slice(0, limit) : out;
  }

  /** Hands the memory back; the index is unusable afterwards. */
  free(): void {
    if (this.freed) return;
    for (const t of this.tables.values()) this.kernel.exports.release(t.ptr);
    this.tables.clear();
    this.where.clear();
    this.freed = true;
  }
}
