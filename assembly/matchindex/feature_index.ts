// The local-features retrieval index (issue 32; src/lib/feature-index.ts is the host
// side): which stored images share enough local features with a query to be worth the
// geometric check. An inverted multi-index (Babenko and Lempitsky, 2012) over the
// 256-bit descriptors, filtered by a Hamming embedding (Jegou, Douze and Schmid, 2008):
//
// - Each 128-bit half of a descriptor is quantized to the nearest of 256 codewords (one
//   codebook for both halves, trained on real descriptors: scripts/train-feature-
//   codebook.mjs); the pair of codewords is the descriptor's word, one of 65,536 cells.
//   Two small codebooks give a fine partition at the cost of 512 half-distances per
//   descriptor, where one codebook of 65,536 full descriptors would cost 65,536.
// - A posting is (slot, 64 bits of the descriptor: its bytes 0-3 and 16-19). A query
//   descriptor probes its three best cells (best x best, best x second, second x best)
//   and counts a posting only within `maxHe` bits of its own 64: the embedding keeps a
//   true match at some 10-18 bits of 64 and passes a random descriptor with a chance of
//   about 1 in 4,000 (P[Binomial(64, 1/2) <= 18]).
// - Mirrored copies (issue 32: as PDQ's dihedral hashes do): the features kernel's
//   descriptor of a mirrored keypoint is its two halves swapped (assembly/features/
//   descriptor.ts), so a mirrored query descriptor probes the swapped cells with its 64
//   bits swapped, from the same half-distances: no second extraction, no second pass.
// - A stored image gets one vote per query descriptor that finds any of its features
//   (direct and mirrored counted apart); the images with the most votes go to the
//   geometric check, which decides (src/lib/features.ts matchFeatures).
//
// Layout of one index (fiCreate): a record of u32 fields; heads: 65,536 cells x (first
// block, last block, count); postings in blocks of BLOCK_POSTINGS (next u32, count u32,
// postings of 12 bytes: slot, he_lo, he_hi), bump-allocated from arenas of ARENA_BYTES
// (records are never removed: a revoked signature still matches); per slot its id and
// 8 bytes of query scratch (votes and the last query descriptor that voted, direct and
// mirrored); an id table (open addressing over slot + 1, as pdq_index.ts's).
import { ld, st, idHome, idNext, idPlace, idTableAlloc } from './shared';

const CELLS: u32 = 65536;
const HEAD_BYTES: usize = 12;
const BLOCK_POSTINGS: u32 = 32;
const POSTING_BYTES: usize = 12;
const BLOCK_BYTES: usize = 8 + <usize>BLOCK_POSTINGS * POSTING_BYTES;
const ARENA_BYTES: usize = 1 << 20;
const CODEWORDS: u32 = 256;
/** Bytes of the codebook: 256 codewords of 16 bytes (one 128-bit half each). */
const CODEBOOK_BYTES: u32 = CODEWORDS * 16;
/** Query descriptors one query takes at most (the last-voter fields are u16). */
const MAX_QUERY: u32 = 16384;

// Ids are below 2^31 (a result carries the mirrored flag in the top bit while sorting).

// Index fields (u32 each).
const X_HEADS: usize = 0;
const X_IDS: usize = 4; // slot -> id (u32 each)
const X_SCRATCH: usize = 8; // slot -> votes u16, last u16, mirrored votes u16, mirrored last u16
const X_SLOTCAP: usize = 12;
const X_SLOTS: usize = 16;
const X_IDTAB: usize = 20;
const X_IDCAP: usize = 24;
const X_ARENA: usize = 28; // next free byte of the current arena
const X_ARENA_END: usize = 32;
const X_ARENAS: usize = 36; // arenas made
const X_POSTINGS: usize = 40;
const X_CODEBOOK: usize = 44;
const X_TOUCHED: usize = 48; // slots voted for by the query running (u32 each)
const X_TOUCHEDCAP: usize = 52;
const X_SIZE: usize = 56;

// Query results: (id, votes, mirrored) triples; grow-only.
let results: usize = 0;
let resultsCap: u32 = 0;

/** A new empty index whose codebook (CODEBOOK_BYTES at `codebook`) is copied in. */
export function fiCreate(codebook: usize): usize {
  const ix = heap.alloc(X_SIZE);
  memory.fill(ix, 0, X_SIZE);
  const heads = heap.alloc(<usize>CELLS * HEAD_BYTES);
  memory.fill(heads, 0, <usize>CELLS * HEAD_BYTES);
  st(ix, X_HEADS, <u32>heads);
  const book = heap.alloc(<usize>CODEBOOK_BYTES);
  memory.copy(book, codebook, <usize>CODEBOOK_BYTES);
  st(ix, X_CODEBOOK, <u32>book);
  st(ix, X_IDCAP, 64);
  st(ix, X_IDTAB, <u32>idTableAlloc(64));
  return ix;
}

export function fiDestroy(ix: usize): void {
  heap.free(<usize>ld(ix, X_HEADS));
  heap.free(<usize>ld(ix, X_CODEBOOK));
  heap.free(<usize>ld(ix, X_IDTAB));
  if (ld(ix, X_IDS) != 0) heap.free(<usize>ld(ix, X_IDS));
  if (ld(ix, X_SCRATCH) != 0) heap.free(<usize>ld(ix, X_SCRATCH));
  if (ld(ix, X_TOUCHED) != 0) heap.free(<usize>ld(ix, X_TOUCHED));
  // the arenas: each begins with the address of the one made before it
  let arena = ld(ix, X_ARENA_END);
  while (arena != 0) {
    const start = <usize>arena - ARENA_BYTES;
    arena = load<u32>(start);
    heap.free(start);
  }
  heap.free(ix);
}

// ---- ids ----

function idFind(ix: usize, id: u32): i32 {
  const tab = <usize>ld(ix, X_IDTAB);
  const cap = ld(ix, X_IDCAP);
  const ids = <usize>ld(ix, X_IDS);
  let i = idHome(id, cap);
  for (;;) {
    const e = load<u32>(tab + (<usize>i << 2));
    if (e == 0) return -1;
    if (load<u32>(ids + (<usize>(e - 1) << 2)) == id) return <i32>(e - 1);
    i = idNext(i, cap);
  }
  return -1;
}

function idReserve(ix: usize, count: u32): void {
  const cap = ld(ix, X_IDCAP);
  if (<u64>count * 8 <= <u64>cap * 7) return;
  let ncap = cap + (cap >>> 1);
  const need = <u32>((<u64>count * 8 + 6) / 7);
  if (ncap < need) ncap = need;
  const old = <usize>ld(ix, X_IDTAB);
  const tab = idTableAlloc(ncap);
  const ids = <usize>ld(ix, X_IDS);
  for (let i: u32 = 0; i < cap; i++) {
    const e = load<u32>(old + (<usize>i << 2));
    if (e != 0) idPlace(tab, ncap, load<u32>(ids + (<usize>(e - 1) << 2)), e);
  }
  heap.free(old);
  st(ix, X_IDTAB, <u32>tab);
  st(ix, X_IDCAP, ncap);
}

/** A new slot for `id` (the id table, the id and its zeroed scratch). */
function newSlot(ix: usize, id: u32): u32 {
  const slot = ld(ix, X_SLOTS);
  const cap = ld(ix, X_SLOTCAP);
  if (slot == cap) {
    const ncap: u32 = cap < 1024 ? 1024 : cap + (cap >>> 1);
    st(ix, X_IDS, <u32>grow(<usize>ld(ix, X_IDS), <usize>cap << 2, <usize>ncap << 2));
    st(ix, X_SCRATCH, <u32>grow(<usize>ld(ix, X_SCRATCH), <usize>cap << 3, <usize>ncap << 3));
    st(ix, X_SLOTCAP, ncap);
  }
  store<u32>(<usize>ld(ix, X_IDS) + (<usize>slot << 2), id);
  st(ix, X_SLOTS, slot + 1);
  idReserve(ix, slot + 1);
  idPlace(<usize>ld(ix, X_IDTAB), ld(ix, X_IDCAP), id, slot + 1);
  return slot;
}

/** A zero-filled block of `bytes` holding the `had` bytes of `old` (freed). */
function grow(old: usize, had: usize, bytes: usize): usize {
  const p = heap.alloc(bytes);
  memory.fill(p, 0, bytes);
  if (old != 0) {
    memory.copy(p, old, had);
    heap.free(old);
  }
  return p;
}

// ---- postings ----

function newBlock(ix: usize): usize {
  let at = <usize>ld(ix, X_ARENA);
  if (at == 0 || at + BLOCK_BYTES > <usize>ld(ix, X_ARENA_END)) {
    const arena = heap.alloc(ARENA_BYTES);
    store<u32>(arena, ld(ix, X_ARENA_END)); // the previous arena, for fiDestroy
    at = arena + 8;
    st(ix, X_ARENA_END, <u32>(arena + ARENA_BYTES));
    st(ix, X_ARENAS, ld(ix, X_ARENAS) + 1);
  }
  st(ix, X_ARENA, <u32>(at + BLOCK_BYTES));
  store<u32>(at, 0);
  store<u32>(at, 0, 4);
  return at;
}

function append(ix: usize, cell: u32, slot: u32, lo: u32, hi: u32): void {
  const head = <usize>ld(ix, X_HEADS) + <usize>cell * HEAD_BYTES;
  let block = <usize>load<u32>(head, 4);
  if (block == 0 || load<u32>(block, 4) == BLOCK_POSTINGS) {
    const fresh = newBlock(ix);
    if (block == 0) store<u32>(head, <u32>fresh);
    else store<u32>(block, <u32>fresh);
    store<u32>(head, <u32>fresh, 4);
    block = fresh;
  }
  const n = load<u32>(block, 4);
  const p = block + 8 + <usize>n * POSTING_BYTES;
  store<u32>(p, slot);
  store<u32>(p, lo, 4);
  store<u32>(p, hi, 8);
  store<u32>(block, n + 1, 4);
  store<u32>(head, load<u32>(head, 8) + 1, 8);
  st(ix, X_POSTINGS, ld(ix, X_POSTINGS) + 1);
}

// ---- quantizing ----

@inline function halfDistance(book: usize, word: u32, lo: u64, hi: u64): u32 {
  const c = book + (<usize>word << 4);
  return <u32>(popcnt<u64>(lo ^ load<u64>(c)) + popcnt<u64>(hi ^ load<u64>(c, 8)));
}

/** The nearest codeword of the 128-bit half at `h` (lowest index on ties). */
function nearestCodeword(book: usize, h: usize): u32 {
  const lo = load<u64>(h);
  const hi = load<u64>(h, 8);
  let best: u32 = 0;
  let bestD: u32 = 129;
  for (let w: u32 = 0; w < CODEWORDS; w++) {
    const d = halfDistance(book, w, lo, hi);
    if (d < bestD) {
      bestD = d;
      best = w;
    }
  }
  return best;
}

// The two nearest codewords of a half, set by nearestTwo.
let first: u32 = 0;
let second: u32 = 0;

function nearestTwo(book: usize, h: usize): void {
  const lo = load<u64>(h);
  const hi = load<u64>(h, 8);
  let a: u32 = 0;
  let da: u32 = 129;
  let b: u32 = 0;
  let db: u32 = 130;
  for (let w: u32 = 0; w < CODEWORDS; w++) {
    const d = halfDistance(book, w, lo, hi);
    if (d < da) {
      b = a;
      db = da;
      a = w;
      da = d;
    } else if (d < db) {
      b = w;
      db = d;
    }
  }
  first = a;
  second = b;
}

/** The cell of the descriptor at `d` (32 bytes), as the index files it. */
export function fiCell(ix: usize, d: usize): u32 {
  const book = <usize>ld(ix, X_CODEBOOK);
  return (nearestCodeword(book, d) << 8) | nearestCodeword(book, d + 16);
}

/**
 * Adds the `n` descriptors (32 bytes each, at `descriptors`) of the image `id`. An id
 * already held is left as it is (records never change) and answers 0; else 1.
 */
export function fiAdd(ix: usize, id: u32, descriptors: usize, n: u32): u32 {
  if (ld(ix, X_SLOTS) != 0 && idFind(ix, id) >= 0) return 0;
  const slot = newSlot(ix, id);
  const book = <usize>ld(ix, X_CODEBOOK);
  for (let i: u32 = 0; i < n; i++) {
    const d = descriptors + (<usize>i << 5);
    const cell = (nearestCodeword(book, d) << 8) | nearestCodeword(book, d + 16);
    append(ix, cell, slot, load<u32>(d), load<u32>(d, 16));
  }
  return 1;
}

export function fiHas(ix: usize, id: u32): u32 {
  return ld(ix, X_SLOTS) != 0 && idFind(ix, id) >= 0 ? 1 : 0;
}

export function fiSize(ix: usize): u32 {
  return ld(ix, X_SLOTS);
}

export function fiPostings(ix: usize): u32 {
  return ld(ix, X_POSTINGS);
}

/** Bytes the index holds: cells, arenas, slots, id table, codebook. */
export function fiBytes(ix: usize): u32 {
  return <u32>(<usize>CELLS * HEAD_BYTES + <usize>ld(ix, X_ARENAS) * ARENA_BYTES + (<usize>ld(ix, X_SLOTCAP) * 12)
    + (<usize>ld(ix, X_IDCAP) << 2) + <usize>CODEBOOK_BYTES + (<usize>ld(ix, X_TOUCHEDCAP) << 2));
}

// ---- querying ----

let touchedCount: u32 = 0;

/** One vote of query descriptor `q` (1-based) for `slot` in a channel (0 direct, 4 mirrored), once per descriptor. */
@inline function vote(ix: usize, scratch: usize, slot: u32, q: u32, channel: usize): void {
  const base = scratch + (<usize>slot << 3);
  const e = base + channel;
  if (<u32>load<u16>(e, 2) == q) return;
  if (load<u64>(base) == 0) addTouched(ix, slot); // its first vote of this query
  store<u16>(e, load<u16>(e) + 1);
  store<u16>(e, <u16>q, 2);
}

function addTouched(ix: usize, slot: u32): void {
  const cap = ld(ix, X_TOUCHEDCAP);
  if (touchedCount == cap) {
    const ncap: u32 = cap < 4096 ? 4096 : cap << 1;
    st(ix, X_TOUCHED, <u32>grow(<usize>ld(ix, X_TOUCHED), <usize>cap << 2, <usize>ncap << 2));
    st(ix, X_TOUCHEDCAP, ncap);
  }
  store<u32>(<usize>ld(ix, X_TOUCHED) + (<usize>touchedCount << 2), slot);
  touchedCount++;
}

/** Counts, for every posting of `cell` within `maxHe` bits of (lo, hi), a vote of descriptor `q`. */
function scanCell(ix: usize, scratch: usize, cell: u32, lo: u32, hi: u32, maxHe: u32, maxList: u32, q: u32, channel: usize): void {
  const head = <usize>ld(ix, X_HEADS) + <usize>cell * HEAD_BYTES;
  if (load<u32>(head, 8) > maxList) return; // a cell this crowded says nothing (a stop word)
  let block = <usize>load<u32>(head);
  while (block != 0) {
    const n = load<u32>(block, 4);
    let p = block + 8;
    const end = p + <usize>n * POSTING_BYTES;
    for (; p < end; p += POSTING_BYTES) {
      const d = popcnt<u32>(load<u32>(p, 4) ^ lo) + popcnt<u32>(load<u32>(p, 8) ^ hi);
      if (d <= maxHe) vote(ix, scratch, load<u32>(p), q, channel);
    }
    block = <usize>load<u32>(block);
  }
}

/**
 * The stored images that `n` query descriptors (32 bytes each at `descriptors`) vote
 * for, with `mirror` their mirrored descriptors too: those with at least `minVotes`
 * votes in one channel, the `limit` with the most (ties: the lower slot, the earlier
 * stored), as (id, votes, mirrored) triples at fiResults(); returns how many. Cells of
 * more than `maxList` postings are skipped.
 */
export function fiQuery(ix: usize, descriptors: usize, n: u32, mirror: u32, maxHe: u32, minVotes: u32, limit: u32, maxList: u32): u32 {
  if (n > MAX_QUERY) n = MAX_QUERY;
  if (ld(ix, X_SLOTS) == 0 || limit == 0) return 0;
  const book = <usize>ld(ix, X_CODEBOOK);
  const scratch = <usize>ld(ix, X_SCRATCH);
  touchedCount = 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = descriptors + (<usize>i << 5);
    nearestTwo(book, d);
    const a1 = first;
    const a2 = second;
    nearestTwo(book, d + 16);
    const b1 = first;
    const b2 = second;
    const lo = load<u32>(d);
    const hi = load<u32>(d, 16);
    const q = i + 1;
    scanCell(ix, scratch, (a1 << 8) | b1, lo, hi, maxHe, maxList, q, 0);
    scanCell(ix, scratch, (a1 << 8) | b2, lo, hi, maxHe, maxList, q, 0);
    scanCell(ix, scratch, (a2 << 8) | b1, lo, hi, maxHe, maxList, q, 0);
    if (mirror != 0) {
      // the mirrored descriptor is the halves swapped: cells and bits swapped too
      scanCell(ix, scratch, (b1 << 8) | a1, hi, lo, maxHe, maxList, q, 4);
      scanCell(ix, scratch, (b1 << 8) | a2, hi, lo, maxHe, maxList, q, 4);
      scanCell(ix, scratch, (b2 << 8) | a1, hi, lo, maxHe, maxList, q, 4);
    }
  }
  return collect(ix, scratch, minVotes, limit);
}

/** The best `limit` touched slots (a min-heap of result triples), their scratch reset. */
function collect(ix: usize, scratch: usize, minVotes: u32, limit: u32): u32 {
  if (limit > resultsCap) {
    if (results != 0) heap.free(results);
    results = heap.alloc(<usize>limit * 12);
    resultsCap = limit;
  }
  const touched = <usize>ld(ix, X_TOUCHED);
  const ids = <usize>ld(ix, X_IDS);
  let count: u32 = 0;
  for (let t: u32 = 0; t < touchedCount; t++) {
    const slot = load<u32>(touched + (<usize>t << 2));
    const e = scratch + (<usize>slot << 3);
    const direct = <u32>load<u16>(e);
    const mirrored = <u32>load<u16>(e, 4);
    store<u64>(e, 0);
    const votes = direct >= mirrored ? direct : mirrored;
    if (votes < minVotes) continue;
    // key: more votes first, then the lower slot
    const key = (<u64>votes << 32) | <u64>(0xffffffff - slot);
    if (count < limit) {
      siftUp(count, key, ids, slot, mirrored > direct ? 1 : 0);
      count++;
    } else if (key > keyAt(0)) {
      replaceRoot(count, key, ids, slot, mirrored > direct ? 1 : 0);
    }
  }
  // heap -> descending order, in place
  for (let end = count; end > 1; end--) {
    swap(0, end - 1);
    siftDown(0, end - 1);
  }
  // each (key, id | mirrored << 31) entry becomes (id, votes, mirrored)
  for (let i: u32 = 0; i < count; i++) {
    const r = results + <usize>i * 12;
    const key = load<u64>(r);
    const idm = load<u32>(r, 8);
    store<u32>(r, idm & 0x7fffffff);
    store<u32>(r, <u32>(key >>> 32), 4);
    store<u32>(r, idm >>> 31, 8);
  }
  touchedCount = 0;
  return count;
}

// The heap holds (key u64 as votes and slot, id u32 with the mirrored flag in bit 31) in
// 12 bytes; collect rewrites each entry to (id, votes, mirrored) at the end. Min-heap on key.
@inline function keyAt(i: u32): u64 {
  return load<u64>(results + <usize>i * 12);
}

function swap(i: u32, j: u32): void {
  const a = results + <usize>i * 12;
  const b = results + <usize>j * 12;
  const k = load<u64>(a);
  const v = load<u32>(a, 8);
  store<u64>(a, load<u64>(b));
  store<u32>(a, load<u32>(b, 8), 8);
  store<u64>(b, k);
  store<u32>(b, v, 8);
}

function siftUp(n: u32, key: u64, ids: usize, slot: u32, mirrored: u32): void {
  const r = results + <usize>n * 12;
  store<u64>(r, key);
  store<u32>(r, load<u32>(ids + (<usize>slot << 2)) | (mirrored << 31), 8);
  let i = n;
  while (i > 0) {
    const parent = (i - 1) >>> 1;
    if (keyAt(parent) <= keyAt(i)) break;
    swap(i, parent);
    i = parent;
  }
}

function siftDown(i: u32, n: u32): void {
  for (;;) {
    const l: u32 = 2 * i + 1;
    if (l >= n) return;
    let m = l;
    if (l + 1 < n && keyAt(l + 1) < keyAt(l)) m = l + 1;
    if (keyAt(i) <= keyAt(m)) return;
    swap(i, m);
    i = m;
  }
}

function replaceRoot(n: u32, key: u64, ids: usize, slot: u32, mirrored: u32): void {
  store<u64>(results, key);
  store<u32>(results, load<u32>(ids + (<usize>slot << 2)) | (mirrored << 31), 8);
  siftDown(0, n);
}

export function fiResults(): usize {
  return results;
}
