// The local-features retrieval index (issue 32; src/lib/feature-index.ts is the host
// side): which stored images share enough local features with a query to be worth the
// geometric check. An inverted multi-index (Babenko and Lempitsky, 2012) over the
// 256-bit descriptors, filtered by a Hamming embedding (Jegou, Douze and Schmid, 2008):
//
// - Each 128-bit half of a descriptor is quantized to the nearest of 256 codewords (one
//   codebook for both halves, trained on real descriptors: scripts/train-feature-
//   codebook.ts); the pair of codewords is the descriptor's word, one of 65,536 cells.
//   Two small codebooks give a fine partition at the cost of 512 half-distances per
//   descriptor, where one codebook of 65,536 full descriptors would cost 65,536.
// - A posting is (slot, 64 bits of the descriptor: its Hamming embedding). A query
//   descriptor probes its three best cells (best x best, best x second, second x best)
//   and counts a posting only within `maxHe` bits of its own 64. Which 64: each codeword
//   names the 32 bits of a half that are most balanced among the halves nearest to it
//   (trained with the codebook), and a descriptor's embedding in cell (a, b) is its first
//   half's bits at codeword a's places (in ascending order of place) and its second
//   half's at b's. A bit that nearly every half of a cell has alike says nothing there:
//   with the first 32 bits of each half, 98 % of the same-cell descriptors of other
//   photos passed 18 bits (the crowded cells hold faint, nearly uniform patches, alike in
//   most bits); with the balanced bits, 37 %, keeping 97 % of true matches
//   (docs/features.md).
// - Mirrored copies (issue 32: as PDQ's dihedral hashes do): the features kernel's
//   descriptor of a mirrored keypoint is its two halves swapped (assembly/features/
//   descriptor.ts), so a mirrored query descriptor probes the swapped cells with its 64
//   bits swapped, from the same half-distances: no second extraction, no second pass.
// - A stored image's votes are how many of its features (at most FEATURES_PER_IMAGE)
//   any query descriptor found, direct and mirrored counted apart: a set of 64 bits per
//   image and channel. A generic feature, which in a crowded cell many query descriptors
//   reach, counts once, where a vote per query descriptor let such features give a
//   stranger more votes than the copy (at 20,000 images, 50-300 votes each; the copies
//   ranked below the top 20 for 53 of 94 crops).
// - Its score weighs each found feature by how rare its cell is (an inverse document
//   frequency, Sivic and Zisserman, 2003): fiWeight() = 4 log2(images / postings of the
//   cell), at least 1, in quarter steps computed in integers. Real descriptors crowd
//   a few cells (a query probe meets about 70 times the mean cell), and pictures made of
//   such generic features otherwise outrank the copy for every query. The images with
//   the best scores go to the geometric check, which decides (src/lib/features.ts
//   matchFeatures).
//
// Layout of one index (fiCreate): a record of u32 fields; heads: 65,536 cells x (first
// block, last block, count); postings in blocks (next u32, count u32, capacity u32, a pad
// u32; then the capacity's embeddings, u64 each, then their slot | feature << 26, u32
// each: a scan reads the embeddings alone, and a posting's slot only when it passes)
// whose capacity grows with the cell (its postings so far, from MIN_BLOCK_POSTINGS to
// MAX_BLOCK_POSTINGS: a crowded cell is a few long runs to scan, not a chain of small
// blocks, each a cache miss away from the last), bump-allocated from arenas of
// ARENA_BYTES (records are never removed: a revoked signature still matches); per slot
// its id and SCRATCH_BYTES of query scratch (the features found, direct and mirrored, as
// two u64 sets, then their two u32 scores); an id table (open addressing over slot + 1,
// as pdq_index.ts's).
import { ld, st, idHome, idNext, idPlace, idTableAlloc } from './shared';

const CELLS: u32 = 65536;
const HEAD_BYTES: usize = 12;
const MIN_BLOCK_POSTINGS: u32 = 16;
const MAX_BLOCK_POSTINGS: u32 = 8192;
const POSTING_BYTES: usize = 12;
const BLOCK_HEADER: usize = 16;
const ARENA_BYTES: usize = 1 << 20;
const CODEWORDS: u32 = 256;
/** Bits of a half each codeword embeds (its places: distinct u8 0-127, the host checks). */
const EMBED_BITS: u32 = 32;
/** Bytes of the codebook: 256 codewords of 16 bytes (one 128-bit half each), then each codeword's EMBED_BITS places. */
const CODEBOOK_BYTES: u32 = CODEWORDS * 16 + CODEWORDS * EMBED_BITS;
/** Query descriptors one query takes at most. */
const MAX_QUERY: u32 = 16384;
/** Features of one image the index holds (its first; the found-sets are u64). */
export const FEATURES_PER_IMAGE: u32 = 64;
/** Images one index holds at most (a posting keeps the slot in 26 bits, the feature in 6). */
export const MAX_IMAGES: u32 = 1 << 26;
const SLOT_MASK: u32 = MAX_IMAGES - 1;
/** Per slot: found-sets direct and mirrored (u64 each), scores direct and mirrored (u32 each). */
const SCRATCH_BYTES: usize = 24;
const RESULT_BYTES: usize = 16;

// Ids are below 2^31 (a result carries the mirrored flag in the top bit while sorting).

// Index fields (u32 each).
const X_HEADS: usize = 0;
const X_IDS: usize = 4; // slot -> id (u32 each)
const X_SCRATCH: usize = 8; // slot -> features found and scores (SCRATCH_BYTES)
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
const X_EMBED: usize = 56; // each codeword's compress steps (EMBED_BYTES)
const X_SIZE: usize = 60;

// Query results: (id, votes, mirrored, score) quadruples; grow-only.
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
  st(ix, X_EMBED, <u32>embedSteps(book));
  st(ix, X_IDCAP, 64);
  st(ix, X_IDTAB, <u32>idTableAlloc(64));
  return ix;
}

export function fiDestroy(ix: usize): void {
  heap.free(<usize>ld(ix, X_HEADS));
  heap.free(<usize>ld(ix, X_CODEBOOK));
  heap.free(<usize>ld(ix, X_EMBED));
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
    st(ix, X_SCRATCH, <u32>grow(<usize>ld(ix, X_SCRATCH), <usize>cap * SCRATCH_BYTES, <usize>ncap * SCRATCH_BYTES));
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

/** A new empty block of `capacity` postings. */
function newBlock(ix: usize, capacity: u32): usize {
  const bytes = BLOCK_HEADER + <usize>capacity * POSTING_BYTES;
  let at = <usize>ld(ix, X_ARENA);
  if (at == 0 || at + bytes > <usize>ld(ix, X_ARENA_END)) {
    const arena = heap.alloc(ARENA_BYTES);
    store<u32>(arena, ld(ix, X_ARENA_END)); // the previous arena, for fiDestroy
    at = arena + 8;
    st(ix, X_ARENA_END, <u32>(arena + ARENA_BYTES));
    st(ix, X_ARENAS, ld(ix, X_ARENAS) + 1);
  }
  st(ix, X_ARENA, <u32>(at + bytes));
  store<u32>(at, 0);
  store<u32>(at, 0, 4);
  store<u32>(at, capacity, 8);
  return at;
}

function append(ix: usize, cell: u32, slot: u32, embedding: u64): void {
  const head = <usize>ld(ix, X_HEADS) + <usize>cell * HEAD_BYTES;
  let block = <usize>load<u32>(head, 4);
  if (block == 0 || load<u32>(block, 4) == load<u32>(block, 8)) {
    const had = load<u32>(head, 8);
    // an even capacity keeps the next block's embeddings 8-byte aligned
    const fresh = newBlock(ix, had < MIN_BLOCK_POSTINGS ? MIN_BLOCK_POSTINGS : had > MAX_BLOCK_POSTINGS ? MAX_BLOCK_POSTINGS : (had + 1) & ~1);
    if (block == 0) store<u32>(head, <u32>fresh);
    else store<u32>(block, <u32>fresh);
    store<u32>(head, <u32>fresh, 4);
    block = fresh;
  }
  const n = load<u32>(block, 4);
  store<u64>(block + BLOCK_HEADER + (<usize>n << 3), embedding);
  store<u32>(block + BLOCK_HEADER + (<usize>load<u32>(block, 8) << 3) + (<usize>n << 2), slot);
  store<u32>(block, n + 1, 4);
  store<u32>(head, load<u32>(head, 8) + 1, 8);
  st(ix, X_POSTINGS, ld(ix, X_POSTINGS) + 1);
}

// ---- quantizing ----

// The two nearest codewords of each half of a descriptor (lowest index on ties), set by
// nearestTwo: both halves in one pass over the codebook (each codeword read once).
let a1: u32 = 0;
let a2: u32 = 0;
let b1: u32 = 0;
let b2: u32 = 0;

function nearestTwo(book: usize, d: usize): void {
  const alo = load<u64>(d);
  const ahi = load<u64>(d, 8);
  const blo = load<u64>(d, 16);
  const bhi = load<u64>(d, 24);
  let x1: u32 = 0;
  let dx1: u32 = 129;
  let x2: u32 = 0;
  let dx2: u32 = 130;
  let y1: u32 = 0;
  let dy1: u32 = 129;
  let y2: u32 = 0;
  let dy2: u32 = 130;
  for (let w: u32 = 0; w < CODEWORDS; w++) {
    const c = book + (<usize>w << 4);
    const lo = load<u64>(c);
    const hi = load<u64>(c, 8);
    const x = <u32>(popcnt<u64>(alo ^ lo) + popcnt<u64>(ahi ^ hi));
    const y = <u32>(popcnt<u64>(blo ^ lo) + popcnt<u64>(bhi ^ hi));
    if (x < dx1) {
      x2 = x1;
      dx2 = dx1;
      x1 = w;
      dx1 = x;
    } else if (x < dx2) {
      x2 = w;
      dx2 = x;
    }
    if (y < dy1) {
      y2 = y1;
      dy2 = dy1;
      y1 = w;
      dy1 = y;
    } else if (y < dy2) {
      y2 = w;
      dy2 = y;
    }
  }
  a1 = x1;
  a2 = x2;
  b1 = y1;
  b2 = y2;
}

/**
 * The cell of the descriptor at `d` (32 bytes): its halves' nearest codewords (the lowest
 * index on ties), as nearestTwo's first ones, without the seconds (a record's add, the
 * load's hot loop).
 */
function cellOf(book: usize, d: usize): u32 {
  const alo = load<u64>(d);
  const ahi = load<u64>(d, 8);
  const blo = load<u64>(d, 16);
  const bhi = load<u64>(d, 24);
  let a: u32 = 0;
  let da: u32 = 129;
  let b: u32 = 0;
  let db: u32 = 129;
  for (let w: u32 = 0; w < CODEWORDS; w++) {
    const c = book + (<usize>w << 4);
    const lo = load<u64>(c);
    const hi = load<u64>(c, 8);
    const x = <u32>(popcnt<u64>(alo ^ lo) + popcnt<u64>(ahi ^ hi));
    const y = <u32>(popcnt<u64>(blo ^ lo) + popcnt<u64>(bhi ^ hi));
    if (x < da) {
      da = x;
      a = w;
    }
    if (y < db) {
      db = y;
      b = w;
    }
  }
  return (a << 8) | b;
}

// A half's embedding at codeword w: its bits at w's places, in ascending order of place
// (the lowest place's bit the lowest), by the compress of Hacker's Delight (Warren, 7-4)
// on each 64-bit word of the half: 6 mask-and-shift steps whose masks depend on the
// places alone, made once per index (embedSteps), where a bit-by-bit gather of 32 places
// cost a fifth of a record's add.
/** Per codeword: the places' masks of the half's two words, their 6 steps each, and the places in the low word (u64 each). */
const EMBED_BYTES: usize = 15 * 8;

/** Each codeword's compress steps from its places (the codebook's bytes after the codewords). */
function embedSteps(book: usize): usize {
  const steps = heap.alloc(<usize>CODEWORDS * EMBED_BYTES);
  for (let w: u32 = 0; w < CODEWORDS; w++) {
    const places = book + <usize>CODEWORDS * 16 + <usize>w * EMBED_BITS;
    let mlo: u64 = 0;
    let mhi: u64 = 0;
    for (let k: u32 = 0; k < EMBED_BITS; k++) {
      const at = <u64>load<u8>(places + k);
      if (at < 64) mlo |= <u64>1 << at;
      else mhi |= <u64>1 << (at - 64);
    }
    const e = steps + <usize>w * EMBED_BYTES;
    store<u64>(e, mlo);
    store<u64>(e, mhi, 8);
    compressSteps(mlo, e + 16);
    compressSteps(mhi, e + 64);
    store<u64>(e, popcnt<u64>(mlo), 112);
  }
  return steps;
}

/** The 6 move masks of compress(x, m) (Hacker's Delight 7-4) at `out`. */
function compressSteps(m: u64, out: usize): void {
  let mk = ~m << 1;
  for (let i: u64 = 0; i < 6; i++) {
    let mp = mk ^ (mk << 1);
    mp ^= mp << 2;
    mp ^= mp << 4;
    mp ^= mp << 8;
    mp ^= mp << 16;
    mp ^= mp << 32;
    const mv = mp & m;
    store<u64>(out + (<usize>i << 3), mv);
    m = (m ^ mv) | (mv >>> (<u64>1 << i));
    mk = mk & ~mp;
  }
}

@inline function compress(x: u64, steps: usize): u64 {
  let t = x & load<u64>(steps);
  x = (x ^ t) | (t >>> 1);
  t = x & load<u64>(steps, 8);
  x = (x ^ t) | (t >>> 2);
  t = x & load<u64>(steps, 16);
  x = (x ^ t) | (t >>> 4);
  t = x & load<u64>(steps, 24);
  x = (x ^ t) | (t >>> 8);
  t = x & load<u64>(steps, 32);
  x = (x ^ t) | (t >>> 16);
  t = x & load<u64>(steps, 40);
  return (x ^ t) | (t >>> 32);
}

/** The embedding of the half at `h` (16 bytes) at codeword `w` (steps: the index's X_EMBED). */
function embed(steps: usize, w: u32, h: usize): u32 {
  const e = steps + <usize>w * EMBED_BYTES;
  const lo = compress(load<u64>(h) & load<u64>(e), e + 16);
  const hi = compress(load<u64>(h, 8) & load<u64>(e, 8), e + 64);
  return <u32>(lo | (hi << load<u64>(e, 112)));
}

/** The cell of the descriptor at `d` (32 bytes), as the index files it. */
export function fiCell(ix: usize, d: usize): u32 {
  return cellOf(<usize>ld(ix, X_CODEBOOK), d);
}

/**
 * Adds the first FEATURES_PER_IMAGE of the `n` descriptors (32 bytes each, `stride` bytes
 * apart from `descriptors`: 32 packed, 40 in a feature set's features) of the image `id`.
 * An id already held is left as it is (records never change) and answers 0; an index of
 * MAX_IMAGES answers 2; else 1.
 */
export function fiAdd(ix: usize, id: u32, descriptors: usize, n: u32, stride: u32): u32 {
  if (ld(ix, X_SLOTS) != 0 && idFind(ix, id) >= 0) return 0;
  if (ld(ix, X_SLOTS) >= MAX_IMAGES) return 2;
  if (n > FEATURES_PER_IMAGE) n = FEATURES_PER_IMAGE;
  const slot = newSlot(ix, id);
  const book = <usize>ld(ix, X_CODEBOOK);
  const steps = <usize>ld(ix, X_EMBED);
  for (let i: u32 = 0; i < n; i++) {
    const d = descriptors + <usize>i * <usize>stride;
    const cell = cellOf(book, d);
    append(ix, cell, slot | (i << 26), <u64>embed(steps, cell >>> 8, d) | (<u64>embed(steps, cell & 255, d + 16) << 32));
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
  return <u32>(<usize>CELLS * HEAD_BYTES + <usize>ld(ix, X_ARENAS) * ARENA_BYTES + (<usize>ld(ix, X_SLOTCAP) * (4 + SCRATCH_BYTES))
    + (<usize>ld(ix, X_IDCAP) << 2) + <usize>CODEBOOK_BYTES + <usize>CODEWORDS * EMBED_BYTES + (<usize>ld(ix, X_TOUCHEDCAP) << 2));
}

// ---- querying ----

let touchedCount: u32 = 0;
// The last query's work: postings scanned, and those within maxHe bits (fiScanned, fiPassed).
let scanned: u32 = 0;
let passed: u32 = 0;

/**
 * Marks feature `feature` of `slot` found in a channel (0 direct, 1 mirrored), adding
 * `weight` (its cell's) to the channel's score the first time.
 */
@inline function vote(ix: usize, scratch: usize, slot: u32, feature: u32, channel: usize, weight: u32): void {
  const base = scratch + <usize>slot * SCRATCH_BYTES;
  if ((load<u64>(base) | load<u64>(base, 8)) == 0) addTouched(ix, slot); // its first find of this query
  const e = base + (channel << 3);
  const had = load<u64>(e);
  const bit = <u64>1 << <u64>feature;
  if ((had & bit) != 0) return;
  store<u64>(e, had | bit);
  const score = base + 16 + (channel << 2);
  store<u32>(score, load<u32>(score) + weight);
}

/**
 * A cell's weight: 4 log2(images / postings of the cell) in quarter steps (the integer
 * log2 of images x 256 / postings, two bits of fraction from the bits below its top one),
 * at least 1.
 */
export function fiWeight(images: u32, postings: u32): u32 {
  if (postings == 0) return 1;
  const r = (<u64>images << 8) / <u64>postings;
  if (r == 0) return 1;
  const l = <i32>(63 - clz<u64>(r));
  const frac = l >= 2 ? <u32>((r >>> <u64>(l - 2)) & 3) : <u32>((r << <u64>(2 - l)) & 3);
  const w = (l << 2) + <i32>frac - 32;
  return w < 1 ? 1 : <u32>w;
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

/** Marks found every posting of `cell` within `maxHe` bits of (lo, hi). */
function scanCell(ix: usize, scratch: usize, cell: u32, lo: u32, hi: u32, maxHe: u32, maxList: u32, channel: usize): void {
  const head = <usize>ld(ix, X_HEADS) + <usize>cell * HEAD_BYTES;
  const count = load<u32>(head, 8);
  if (count == 0 || count > maxList) return; // a cell this crowded says nothing (a stop word)
  const weight = fiWeight(ld(ix, X_SLOTS), count);
  scanned += count;
  const q = <u64>lo | (<u64>hi << 32);
  const limit = <u64>maxHe;
  let block = <usize>load<u32>(head);
  while (block != 0) {
    const n = load<u32>(block, 4);
    const embeddings = block + BLOCK_HEADER;
    const slots = embeddings + (<usize>load<u32>(block, 8) << 3);
    for (let i: usize = 0; i < <usize>n; i++) {
      if (popcnt<u64>(load<u64>(embeddings + (i << 3)) ^ q) <= limit) {
        passed++;
        const w = load<u32>(slots + (i << 2));
        vote(ix, scratch, w & SLOT_MASK, w >>> 26, channel, weight);
      }
    }
    block = <usize>load<u32>(block);
  }
}

/**
 * The stored images whose features `n` query descriptors (32 bytes each at
 * `descriptors`) find, with `mirror` their mirrored descriptors too: those with at least
 * `minVotes` features found in their better-scored channel, the `limit` with the best
 * scores (ties: the lower slot, the earlier stored), as (id, votes, mirrored, score) u32
 * quadruples at fiResults(); returns how many. Cells of more than `maxList` postings are
 * skipped.
 */
export function fiQuery(ix: usize, descriptors: usize, n: u32, mirror: u32, maxHe: u32, minVotes: u32, limit: u32, maxList: u32, probes: u32): u32 {
  if (n > MAX_QUERY) n = MAX_QUERY;
  if (ld(ix, X_SLOTS) == 0 || limit == 0) return 0;
  const book = <usize>ld(ix, X_CODEBOOK);
  const steps = <usize>ld(ix, X_EMBED);
  const scratch = <usize>ld(ix, X_SCRATCH);
  touchedCount = 0;
  scanned = 0;
  passed = 0;
  for (let i: u32 = 0; i < n; i++) {
    const d = descriptors + (<usize>i << 5);
    nearestTwo(book, d);
    // each half's embedding at its nearest codewords' places
    const ea1 = embed(steps, a1, d);
    const eb1 = embed(steps, b1, d + 16);
    const ea2 = probes > 1 ? embed(steps, a2, d) : 0;
    const eb2 = probes > 1 ? embed(steps, b2, d + 16) : 0;
    scanCell(ix, scratch, (a1 << 8) | b1, ea1, eb1, maxHe, maxList, 0);
    if (probes > 1) {
      scanCell(ix, scratch, (a1 << 8) | b2, ea1, eb2, maxHe, maxList, 0);
      scanCell(ix, scratch, (a2 << 8) | b1, ea2, eb1, maxHe, maxList, 0);
    }
    if (mirror != 0) {
      // the mirrored descriptor is the halves swapped: cells and embeddings swapped too
      scanCell(ix, scratch, (b1 << 8) | a1, eb1, ea1, maxHe, maxList, 1);
      if (probes > 1) {
        scanCell(ix, scratch, (b1 << 8) | a2, eb1, ea2, maxHe, maxList, 1);
        scanCell(ix, scratch, (b2 << 8) | a1, eb2, ea1, maxHe, maxList, 1);
      }
    }
  }
  return collect(ix, scratch, minVotes, limit);
}

/** The best `limit` touched slots (a min-heap of result triples), their scratch reset. */
function collect(ix: usize, scratch: usize, minVotes: u32, limit: u32): u32 {
  if (limit > resultsCap) {
    if (results != 0) heap.free(results);
    results = heap.alloc(<usize>limit * RESULT_BYTES);
    resultsCap = limit;
  }
  const touched = <usize>ld(ix, X_TOUCHED);
  const ids = <usize>ld(ix, X_IDS);
  let count: u32 = 0;
  for (let t: u32 = 0; t < touchedCount; t++) {
    const slot = load<u32>(touched + (<usize>t << 2));
    const e = scratch + <usize>slot * SCRATCH_BYTES;
    const direct = load<u32>(e, 16);
    const mirroredScore = load<u32>(e, 20);
    const m: u32 = mirroredScore > direct ? 1 : 0;
    const votes = <u32>popcnt<u64>(load<u64>(e + (<usize>m << 3)));
    const score = m == 1 ? mirroredScore : direct;
    memory.fill(e, 0, SCRATCH_BYTES);
    if (votes < minVotes) continue;
    // key: the better score first, then the lower slot
    const key = (<u64>score << 32) | <u64>(0xffffffff - slot);
    const idm = load<u32>(ids + (<usize>slot << 2)) | (m << 31);
    if (count < limit) {
      siftUp(count, key, idm, votes);
      count++;
    } else if (key > keyAt(0)) {
      replaceRoot(count, key, idm, votes);
    }
  }
  // heap -> descending order, in place
  for (let end = count; end > 1; end--) {
    swap(0, end - 1);
    siftDown(0, end - 1);
  }
  // each (key, id | mirrored << 31, votes) entry becomes (id, votes, mirrored, score)
  for (let i: u32 = 0; i < count; i++) {
    const r = results + <usize>i * RESULT_BYTES;
    const key = load<u64>(r);
    const idm = load<u32>(r, 8);
    const votes = load<u32>(r, 12);
    store<u32>(r, idm & 0x7fffffff);
    store<u32>(r, votes, 4);
    store<u32>(r, idm >>> 31, 8);
    store<u32>(r, <u32>(key >>> 32), 12);
  }
  touchedCount = 0;
  return count;
}

// The heap holds (key u64 as score and slot, id u32 with the mirrored flag in bit 31,
// votes u32) in 16 bytes; collect rewrites each entry to (id, votes, mirrored, score) at
// the end. Min-heap on key.
@inline function keyAt(i: u32): u64 {
  return load<u64>(results + <usize>i * RESULT_BYTES);
}

function swap(i: u32, j: u32): void {
  const a = results + <usize>i * RESULT_BYTES;
  const b = results + <usize>j * RESULT_BYTES;
  const k = load<u64>(a);
  const v = load<u64>(a, 8);
  store<u64>(a, load<u64>(b));
  store<u64>(a, load<u64>(b, 8), 8);
  store<u64>(b, k);
  store<u64>(b, v, 8);
}

function siftUp(n: u32, key: u64, idm: u32, votes: u32): void {
  const r = results + <usize>n * RESULT_BYTES;
  store<u64>(r, key);
  store<u32>(r, idm, 8);
  store<u32>(r, votes, 12);
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

function replaceRoot(n: u32, key: u64, idm: u32, votes: u32): void {
  store<u64>(results, key);
  store<u32>(results, idm, 8);
  store<u32>(results, votes, 12);
  siftDown(0, n);
}

/** Postings the last query scanned. */
export function fiScanned(): u32 {
  return scanned;
}

/** Postings of the last query within its maxHe bits (each a vote, or a feature found again). */
export function fiPassed(): u32 {
  return passed;
}

export function fiResults(): usize {
  return results;
}
