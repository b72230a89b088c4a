// The match index (decisions.md section 3, "Candidates"): per hash type, a posting
// list per band bucket and the packed fingerprints, all in unmanaged memory.
//
// Layout of one index (miCreate):
// - a table per hash type (0 ImagePHash, 1 AudioChromaprint, 2 VideoPHash), made on
//   first use. Entries live in slots; slot fields sit in pages of 4096 slots (no
//   growth slack, no copying): the bands (8 bytes for images, 8 x 4 for sequences),
//   signed_at (f64), the caller's id (u32), flags, and for sequences a pointer to the
//   hash bytes in a block of their own. An image's hash_value is its bands (band i =
//   hash byte i), so it is stored once.
// - buckets: images have one per (position, byte value) = 8 x 256; sequences hash
//   (position, 32-bit value) into 65536. A bucket is a list of chunks of slot numbers
//   (u32); a new chunk holds an eighth of the list so far (at least 32, or 4 for
//   sequences, at most 2048), so the slack stays under 1/8 and chunks are never
//   copied; freed chunks come back at the same sizes (memory stays flat under churn).
// - an id table: open addressing with linear probing over u32 references
//   (kind << 30 | slot) + 1, keyed by the id stored in the slot, at most 7/8 full,
//   any capacity (multiply-shift range reduction), growing by half.
// A query walks the query's 8 buckets; removals take a slot out of its buckets at
// once, so every posting is live. Images: the postings mark their slots in per-page
// bitmaps, which are then swept in slot order (each candidate once, its hash read in
// ascending addresses; see queryImages). Sequences: a slot in a bucket is taken only
// when the first position at which its bands equal the query's lands in this bucket,
// so each candidate is seen once without a "seen" set.
import { alignedSimilarity } from '../hamming';
import { ld, st, mix32, idHome, idNext, idPlace, idTableAlloc } from './shared';

const PAGE_SHIFT: u32 = 12;
const PAGE_SLOTS: u32 = 1 << PAGE_SHIFT;
const PAGE_MASK: u32 = PAGE_SLOTS - 1;
const MAX_CHUNK: u32 = 2048;
const CHUNK_HEADER: u32 = 8; // next u32, capacity u32

// Table fields (u32 each).
const T_W: usize = 0; // band bytes per entry: 8 or 32
const T_NB: usize = 4; // number of buckets (a power of two)
const T_BUCKETS: usize = 8; // bucket headers: head, tail, count, tailUsed (16 bytes each)
const T_PAGES: usize = 12; // page table (u32 pointers)
const T_PAGECAP: usize = 16;
const T_NPAGES: usize = 20;
const T_HIGH: usize = 24; // slots ever handed out
const T_FREE: usize = 28; // free-list head: slot + 1, 0 = empty
const T_LIVE: usize = 32;
const T_BYTES: usize = 36; // bytes held by this table
const T_MINCHUNK: usize = 40;
const T_KIND: usize = 44;
const T_SIZE: usize = 48;

// Index fields.
const X_TABLES: usize = 0; // 3 x u32
const X_IDTAB: usize = 12;
const X_IDCAP: usize = 16;
const X_IDCOUNT: usize = 20;
const X_SIZE: usize = 24;

// Slot flags.
const F_HASH: u8 = 1;
const F_LIVE: u8 = 2;

// Query results and the top-k heap: grow-only blocks.
let results: usize = 0;
let resultsCap: usize = 0;
let heapBuf: usize = 0;
let heapCap: usize = 0;
let heapSize: i32 = 0;

// ---- pages and slot fields ----

// An image page ends with two bitmaps of 1 bit per slot that a query uses to visit its
// candidates in slot order (see queryImages): 0.25 bytes per entry.
const MARKS_BYTES: usize = PAGE_SLOTS >>> 3;
/** Offset of the bitmaps in an image page: after bands (8), signedAt (8), id (4), flags (1). */
const IMAGE_MARKS: usize = <usize>21 << PAGE_SHIFT;

@inline function pageBytes(w: u32, kind: u32): usize {
  return kind == 0 ? (<usize>(w + 13) << PAGE_SHIFT) + 2 * MARKS_BYTES : <usize>(w + 21) << PAGE_SHIFT;
}

@inline function pageOf(t: usize, slot: u32): usize {
  return <usize>load<u32>(<usize>ld(t, T_PAGES) + (<usize>(slot >>> PAGE_SHIFT) << 2));
}

@inline function bandsAt(t: usize, slot: u32): usize {
  return pageOf(t, slot) + <usize>((slot & PAGE_MASK) * ld(t, T_W));
}
@inline function signedAtPtr(t: usize, slot: u32): usize {
  return pageOf(t, slot) + (<usize>ld(t, T_W) << PAGE_SHIFT) + (<usize>(slot & PAGE_MASK) << 3);
}
@inline function idPtr(t: usize, slot: u32): usize {
  return pageOf(t, slot) + (<usize>(ld(t, T_W) + 8) << PAGE_SHIFT) + (<usize>(slot & PAGE_MASK) << 2);
}
@inline function flagsPtr(t: usize, slot: u32): usize {
  return pageOf(t, slot) + (<usize>(ld(t, T_W) + 12) << PAGE_SHIFT) + <usize>(slot & PAGE_MASK);
}
@inline function hashPtrPtr(t: usize, slot: u32): usize {
  return pageOf(t, slot) + (<usize>(ld(t, T_W) + 13) << PAGE_SHIFT) + (<usize>(slot & PAGE_MASK) << 2);
}
@inline function hashLenPtr(t: usize, slot: u32): usize {
  return pageOf(t, slot) + (<usize>(ld(t, T_W) + 17) << PAGE_SHIFT) + (<usize>(slot & PAGE_MASK) << 2);
}

function addBytes(t: usize, delta: i32): void {
  st(t, T_BYTES, <u32>(<i32>ld(t, T_BYTES) + delta));
}

function newTable(kind: u32): usize {
  const t = heap.alloc(T_SIZE);
  memory.fill(t, 0, T_SIZE);
  const w: u32 = kind == 0 ? 8 : 32;
  const nb: u32 = kind == 0 ? 2048 : 65536;
  st(t, T_W, w);
  st(t, T_NB, nb);
  st(t, T_KIND, kind);
  st(t, T_MINCHUNK, kind == 0 ? 32 : 4);
  const buckets = heap.alloc(<usize>nb << 4);
  memory.fill(buckets, 0, <usize>nb << 4);
  st(t, T_BUCKETS, <u32>buckets);
  const pages = heap.alloc(16 << 2);
  st(t, T_PAGES, <u32>pages);
  st(t, T_PAGECAP, 16);
  st(t, T_BYTES, <u32>(T_SIZE + (<usize>nb << 4) + (16 << 2)));
  return t;
}

function addPage(t: usize): void {
  const n = ld(t, T_NPAGES);
  let cap = ld(t, T_PAGECAP);
  if (n == cap) {
    const next = heap.alloc(<usize>cap << 3);
    memory.copy(next, <usize>ld(t, T_PAGES), <usize>cap << 2);
    heap.free(<usize>ld(t, T_PAGES));
    st(t, T_PAGES, <u32>next);
    st(t, T_PAGECAP, cap << 1);
    addBytes(t, <i32>(cap << 2));
  }
  const bytes = pageBytes(ld(t, T_W), ld(t, T_KIND));
  const page = heap.alloc(bytes);
  memory.fill(page, 0, bytes);
  store<u32>(<usize>ld(t, T_PAGES) + (<usize>n << 2), <u32>page);
  st(t, T_NPAGES, n + 1);
  addBytes(t, <i32>bytes);
}

function allocSlot(t: usize): u32 {
  const free = ld(t, T_FREE);
  if (free != 0) {
    const slot = free - 1;
    st(t, T_FREE, load<u32>(idPtr(t, slot)));
    return slot;
  }
  const slot = ld(t, T_HIGH);
  if ((slot >>> PAGE_SHIFT) >= ld(t, T_NPAGES)) addPage(t);
  st(t, T_HIGH, slot + 1);
  return slot;
}

// ---- buckets ----

@inline function bucketOf(t: usize, kind: u32, bands: usize, pos: u32): u32 {
  if (kind == 0) return (pos << 8) | <u32>load<u8>(bands + <usize>pos);
  const v = load<u32>(bands + (<usize>pos << 2));
  return mix32(v ^ ((pos + 1) * 0x9e3779b9)) & (ld(t, T_NB) - 1);
}

/** The 8 buckets of `bands` into `out` (u32 each); returns a bit mask of positions whose bucket is new. */
function bucketsOf(t: usize, kind: u32, bands: usize, out: usize): u32 {
  let fresh: u32 = 0;
  for (let p: u32 = 0; p < 8; p++) {
    const b = bucketOf(t, kind, bands, p);
    store<u32>(out + (<usize>p << 2), b);
    let dup = false;
    for (let q: u32 = 0; q < p; q++) {
      if (load<u32>(out + (<usize>q << 2)) == b) {
        dup = true;
        break;
      }
    }
    if (!dup) fresh |= 1 << p;
  }
  return fresh;
}

const BUCKETS_A: usize = memory.data(32);

function bucketPush(t: usize, b: u32, slot: u32): void {
  const hdr = <usize>ld(t, T_BUCKETS) + (<usize>b << 4);
  let tail = <usize>ld(hdr, 4);
  let used = ld(hdr, 12);
  if (tail == 0 || used == ld(tail, 4)) {
    // a new chunk holds an eighth of the list so far: slack stays under 1/8 of the list
    let cap = ld(hdr, 8) >>> 3;
    const minChunk = ld(t, T_MINCHUNK);
    if (cap < minChunk) cap = minChunk;
    if (cap > MAX_CHUNK) cap = MAX_CHUNK;
    const bytes = <usize>CHUNK_HEADER + (<usize>cap << 2);
    const c = heap.alloc(bytes);
    st(c, 0, 0);
    st(c, 4, cap);
    if (tail == 0) st(hdr, 0, <u32>c);
    else st(tail, 0, <u32>c);
    st(hdr, 4, <u32>c);
    tail = c;
    used = 0;
    addBytes(t, <i32>bytes);
  }
  store<u32>(tail + CHUNK_HEADER + (<usize>used << 2), slot);
  st(hdr, 12, used + 1);
  st(hdr, 8, ld(hdr, 8) + 1);
}

/**
 * A bucket entry: the slot, with bit 31 set when the entry has no comparable hash,
 * so that the query knows it without touching the slot's flags (slots are < 2^30).
 */
@inline function postingOf(slot: u32, flags: u8): u32 {
  return (flags & F_HASH) != 0 ? slot : slot | 0x80000000;
}

/** Index of `slot` among the `n` u32 at `p`, or -1. */
function findU32(p: usize, n: u32, slot: u32): i32 {
  let i: u32 = 0;
  if (ASC_FEATURE_SIMD) {
    const sv = i32x4.splat(slot);
    for (; i + 4 <= n; i += 4) {
      const m = i32x4.bitmask(i32x4.eq(v128.load(p + (<usize>i << 2)), sv));
      if (m != 0) return <i32>(i + ctz<u32>(m));
    }
  }
  for (; i < n; i++) if (load<u32>(p + (<usize>i << 2)) == slot) return <i32>i;
  return -1;
}

function bucketRemove(t: usize, b: u32, slot: u32): void {
  const hdr = <usize>ld(t, T_BUCKETS) + (<usize>b << 4);
  const tail = <usize>ld(hdr, 4);
  const used = ld(hdr, 12);
  let at: usize = 0;
  for (let c = <usize>ld(hdr, 0); c != 0; c = <usize>ld(c, 0)) {
    const n = c == tail ? used : ld(c, 4);
    const i = findU32(c + CHUNK_HEADER, n, slot);
    if (i >= 0) {
      at = c + CHUNK_HEADER + (<usize>i << 2);
      break;
    }
  }
  if (at == 0) return;
  store<u32>(at, load<u32>(tail + CHUNK_HEADER + (<usize>(used - 1) << 2)));
  st(hdr, 8, ld(hdr, 8) - 1);
  if (used > 1) {
    st(hdr, 12, used - 1);
    return;
  }
  // The tail chunk is empty: free it; its predecessor (full) becomes the tail.
  const head = <usize>ld(hdr, 0);
  const bytes = <usize>CHUNK_HEADER + (<usize>ld(tail, 4) << 2);
  if (head == tail) {
    st(hdr, 0, 0);
    st(hdr, 4, 0);
    st(hdr, 12, 0);
  } else {
    let prev = head;
    while (<usize>ld(prev, 0) != tail) prev = <usize>ld(prev, 0);
    st(prev, 0, 0);
    st(hdr, 4, <u32>prev);
    st(hdr, 12, ld(prev, 4));
  }
  heap.free(tail);
  addBytes(t, -<i32>bytes);
}

// ---- the id table ----

@inline function tableOf(ix: usize, kind: u32): usize {
  return <usize>ld(ix, X_TABLES + (<usize>kind << 2));
}

@inline function idOfRef(ix: usize, ref: u32): u32 {
  const r = ref - 1;
  return load<u32>(idPtr(tableOf(ix, r >>> 30), r & 0x3fffffff));
}

function idFind(ix: usize, id: u32): i32 {
  const tab = <usize>ld(ix, X_IDTAB);
  const cap = ld(ix, X_IDCAP);
  let i = idHome(id, cap);
  for (;;) {
    const e = load<u32>(tab + (<usize>i << 2));
    if (e == 0) return -1;
    if (idOfRef(ix, e) == id) return <i32>i;
    i = idNext(i, cap);
  }
  return -1;
}

function idResize(ix: usize, cap: u32): void {
  const old = <usize>ld(ix, X_IDTAB);
  const oldCap = ld(ix, X_IDCAP);
  const tab = idTableAlloc(cap);
  for (let i: u32 = 0; i < oldCap; i++) {
    const e = load<u32>(old + (<usize>i << 2));
    if (e != 0) idPlace(tab, cap, idOfRef(ix, e), e);
  }
  heap.free(old);
  st(ix, X_IDTAB, <u32>tab);
  st(ix, X_IDCAP, cap);
}

function idInsert(ix: usize, id: u32, ref: u32): void {
  const count = ld(ix, X_IDCOUNT) + 1;
  let cap = ld(ix, X_IDCAP);
  // Load factor at most 7/8.
  if (<u64>count * 8 > <u64>cap * 7) idResize(ix, cap + (cap >>> 1));
  cap = ld(ix, X_IDCAP);
  idPlace(<usize>ld(ix, X_IDTAB), cap, id, ref);
  st(ix, X_IDCOUNT, count);
}

/** Removes the entry at position `i` by shifting later entries of its probe run back. */
function idDelete(ix: usize, i: u32): void {
  const tab = <usize>ld(ix, X_IDTAB);
  const cap = ld(ix, X_IDCAP);
  let j = i;
  for (;;) {
    j = idNext(j, cap);
    const e = load<u32>(tab + (<usize>j << 2));
    if (e == 0) break;
    const k = idHome(idOfRef(ix, e), cap);
    // Move e into the hole at i unless its home k lies cyclically in (i, j].
    const inRange = i <= j ? k > i && k <= j : k > i || k <= j;
    if (!inRange) {
      store<u32>(tab + (<usize>i << 2), e);
      i = j;
    }
  }
  store<u32>(tab + (<usize>i << 2), 0);
  st(ix, X_IDCOUNT, ld(ix, X_IDCOUNT) - 1);
}

// ---- exports ----

/** A new empty index; returns its handle. */
export function miCreate(): usize {
  const ix = heap.alloc(X_SIZE);
  memory.fill(ix, 0, X_SIZE);
  const cap: u32 = 1024;
  const tab = idTableAlloc(cap);
  st(ix, X_IDTAB, <u32>tab);
  st(ix, X_IDCAP, cap);
  return ix;
}

function destroyTable(t: usize): void {
  const kind = ld(t, T_KIND);
  if (kind != 0) {
    const high = ld(t, T_HIGH);
    for (let s: u32 = 0; s < high; s++) {
      if ((load<u8>(flagsPtr(t, s)) & F_LIVE) != 0) {
        const hp = <usize>load<u32>(hashPtrPtr(t, s));
        if (hp != 0) heap.free(hp);
      }
    }
  }
  const buckets = <usize>ld(t, T_BUCKETS);
  const nb = ld(t, T_NB);
  for (let b: u32 = 0; b < nb; b++) {
    let c = <usize>ld(buckets + (<usize>b << 4), 0);
    while (c != 0) {
      const next = <usize>ld(c, 0);
      heap.free(c);
      c = next;
    }
  }
  heap.free(buckets);
  const pages = <usize>ld(t, T_PAGES);
  const np = ld(t, T_NPAGES);
  for (let i: u32 = 0; i < np; i++) heap.free(<usize>load<u32>(pages + (<usize>i << 2)));
  heap.free(pages);
  heap.free(t);
}

/** Frees everything the index holds; the handle is invalid afterwards. */
export function miDestroy(ix: usize): void {
  for (let k: u32 = 0; k < 3; k++) {
    const t = tableOf(ix, k);
    if (t != 0) destroyTable(t);
  }
  heap.free(<usize>ld(ix, X_IDTAB));
  heap.free(ix);
}

function ensureTable(ix: usize, kind: u32): usize {
  let t = tableOf(ix, kind);
  if (t == 0) {
    t = newTable(kind);
    st(ix, X_TABLES + (<usize>kind << 2), <u32>t);
  }
  return t;
}

/** Makes room for `n` more entries of `kind` without further growth of pages or the id table. */
export function miReserve(ix: usize, kind: u32, n: u32): void {
  const t = ensureTable(ix, kind);
  const want = ld(t, T_HIGH) + n;
  while (<u64>ld(t, T_NPAGES) << PAGE_SHIFT < <u64>want) addPage(t);
  // room for the total at a load of 0.85
  const total = <u64>ld(ix, X_IDCOUNT) + <u64>n;
  if (total * 8 > <u64>ld(ix, X_IDCAP) * 7) idResize(ix, <u32>(total * 20 / 17) + 1);
}

/**
 * Adds (or replaces) entry `id` of `kind`: its bands (8 or 32 bytes at `bands`), its
 * hash (`hashLen` bytes at `hash` for sequences; for images `hashKnown` says that the
 * bands are the hash) and signed_at. Returns 1 when an entry with this id was replaced.
 */
export function miAdd(ix: usize, id: u32, kind: u32, bands: usize, hash: usize, hashLen: u32, hashKnown: u32, signedAt: f64): i32 {
  const replaced = miRemove(ix, id);
  const t = ensureTable(ix, kind);
  const slot = allocSlot(t);
  const w = ld(t, T_W);
  const bp = bandsAt(t, slot);
  memory.copy(bp, bands, <usize>w);
  store<f64>(signedAtPtr(t, slot), signedAt);
  store<u32>(idPtr(t, slot), id);
  let flags: u8 = F_LIVE;
  if (kind == 0) {
    if (hashKnown != 0) flags |= F_HASH;
  } else {
    let hp: usize = 0;
    if (hashLen > 0) {
      hp = heap.alloc(<usize>hashLen);
      memory.copy(hp, hash, <usize>hashLen);
      flags |= F_HASH;
      addBytes(t, <i32>hashLen);
    }
    store<u32>(hashPtrPtr(t, slot), <u32>hp);
    store<u32>(hashLenPtr(t, slot), hp != 0 ? hashLen : 0);
  }
  store<u8>(flagsPtr(t, slot), flags);
  const posting = postingOf(slot, flags);
  const fresh = bucketsOf(t, kind, bp, BUCKETS_A);
  for (let p: u32 = 0; p < 8; p++) {
    if ((fresh & (1 << p)) != 0) bucketPush(t, load<u32>(BUCKETS_A + (<usize>p << 2)), posting);
  }
  idInsert(ix, id, ((kind << 30) | slot) + 1);
  st(t, T_LIVE, ld(t, T_LIVE) + 1);
  return replaced;
}

/** Removes entry `id`; returns 1 when it was present. */
export function miRemove(ix: usize, id: u32): i32 {
  const at = idFind(ix, id);
  if (at < 0) return 0;
  const ref = load<u32>(<usize>ld(ix, X_IDTAB) + (<usize>at << 2)) - 1;
  const kind = ref >>> 30;
  const slot = ref & 0x3fffffff;
  const t = tableOf(ix, kind);
  const posting = postingOf(slot, load<u8>(flagsPtr(t, slot)));
  const fresh = bucketsOf(t, kind, bandsAt(t, slot), BUCKETS_A);
  for (let p: u32 = 0; p < 8; p++) {
    if ((fresh & (1 << p)) != 0) bucketRemove(t, load<u32>(BUCKETS_A + (<usize>p << 2)), posting);
  }
  if (kind != 0) {
    const hp = <usize>load<u32>(hashPtrPtr(t, slot));
    if (hp != 0) {
      addBytes(t, -<i32>load<u32>(hashLenPtr(t, slot)));
      heap.free(hp);
    }
    store<u32>(hashPtrPtr(t, slot), 0);
    store<u32>(hashLenPtr(t, slot), 0);
  }
  store<u8>(flagsPtr(t, slot), 0);
  store<u32>(idPtr(t, slot), ld(t, T_FREE));
  st(t, T_FREE, slot + 1);
  st(t, T_LIVE, ld(t, T_LIVE) - 1);
  idDelete(ix, <u32>at);
  return 1;
}

/** 1 when entry `id` is held. */
export function miHas(ix: usize, id: u32): i32 {
  return idFind(ix, id) >= 0 ? 1 : 0;
}

/** Live entries of `kind` (all kinds for kind > 2). */
export function miSize(ix: usize, kind: u32): u32 {
  if (kind > 2) return ld(ix, X_IDCOUNT);
  const t = tableOf(ix, kind);
  return t == 0 ? 0 : ld(t, T_LIVE);
}

/** Bytes held for `kind` (its table); kind > 2: the id table and the index header. */
export function miBytes(ix: usize, kind: u32): u32 {
  if (kind > 2) return (ld(ix, X_IDCAP) << 2) + <u32>X_SIZE;
  const t = tableOf(ix, kind);
  return t == 0 ? 0 : ld(t, T_BYTES);
}

// ---- the query ----

/** Result order: similarity (null = -1 last), then signed_at, both descending, then id ascending. */
@inline function better(simA: i32, atA: f64, idA: u32, simB: i32, atB: f64, idB: u32): bool {
  if (simA != simB) return simA > simB;
  if (atA != atB) return atA > atB;
  return idA < idB;
}

// Heap entries: signedAt f64, sim i32, id u32 (16 bytes). The root is the worst kept.
@inline function hAt(i: i32): f64 {
  return load<f64>(heapBuf + (<usize>i << 4));
}
@inline function hSim(i: i32): i32 {
  return load<i32>(heapBuf + (<usize>i << 4), 8);
}
@inline function hId(i: i32): u32 {
  return load<u32>(heapBuf + (<usize>i << 4), 12);
}
@inline function hSet(i: i32, at: f64, sim: i32, id: u32): void {
  const p = heapBuf + (<usize>i << 4);
  store<f64>(p, at);
  store<i32>(p, sim, 8);
  store<u32>(p, id, 12);
}
@inline function hBetter(i: i32, j: i32): bool {
  return better(hSim(i), hAt(i), hId(i), hSim(j), hAt(j), hId(j));
}

function hSwap(i: i32, j: i32): void {
  const pi = heapBuf + (<usize>i << 4);
  const pj = heapBuf + (<usize>j << 4);
  const a0 = load<u64>(pi);
  const a1 = load<u64>(pi, 8);
  store<u64>(pi, load<u64>(pj));
  store<u64>(pi, load<u64>(pj, 8), 8);
  store<u64>(pj, a0);
  store<u64>(pj, a1, 8);
}

function siftDown(i: i32, n: i32): void {
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) return;
    // the worse child
    let c = l;
    if (l + 1 < n && hBetter(l, l + 1)) c = l + 1;
    if (hBetter(i, c)) {
      hSwap(i, c);
      i = c;
    } else return;
  }
}

function offer(limit: i32, sim: i32, at: f64, id: u32): void {
  if (heapSize < limit) {
    let i = heapSize++;
    hSet(i, at, sim, id);
    // sift up: the root must be the worst
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (hBetter(p, i)) {
        hSwap(p, i);
        i = p;
      } else break;
    }
    return;
  }
  if (better(sim, at, id, hSim(0), hAt(0), hId(0))) {
    hSet(0, at, sim, id);
    siftDown(0, heapSize);
  }
}

function ensureHeap(limit: i32): void {
  const bytes = (<usize>(limit > 0 ? limit : 1)) << 4;
  if (bytes > heapCap) {
    if (heapBuf != 0) heap.free(heapBuf);
    heapBuf = heap.alloc(bytes);
    heapCap = bytes;
  }
  const rb = (<usize>(limit > 0 ? limit : 1)) << 3;
  if (rb > resultsCap) {
    if (results != 0) heap.free(results);
    results = heap.alloc(rb);
    resultsCap = rb;
  }
}

/** Where the last miQuery wrote its (id u32, similarity i32) pairs. */
export function miResults(): usize {
  return results;
}

const Q_BUCKETS: usize = memory.data(32);

/** Grow-only list of the candidate slots of the current image query (u32 each). */
let cands: usize = 0;
let candsCap: u32 = 0;

function ensureCands(n: u32): void {
  if (n <= candsCap) return;
  if (cands != 0) heap.free(cands);
  candsCap = n + (n >>> 2);
  cands = heap.alloc(<usize>candsCap << 2);
}

/**
 * Image candidates in three passes, so that each candidate's 8 bytes are read in
 * ascending addresses by a loop with no unpredictable branch, which lets the CPU keep
 * many reads in flight. Scoring in posting order (a random read per candidate behind
 * a data-dependent "first shared position" test) was 1.7x slower at 1M stored
 * (~31,000 candidates per query); the score pass is bound by these reads.
 * 1. Mark: each posting of the query's 8 lists sets its slot's bit in its page's
 *    candidate bitmap (and, for an entry with no comparable hash, in the page's
 *    hash-less bitmap); a slot listed in several of the 8 lists is marked once.
 * 2. Gather: sweep the bitmaps in slot order, clearing them, into a list of slots;
 *    hash-less entries (similarity null, always kept) are offered right away.
 * 3. Score: Hamming distance of each listed slot; offer those at or above threshold.
 */
function queryImages(t: usize, qb: usize, qh: usize, threshold: i32, limit: i32): void {
  const buckets = <usize>ld(t, T_BUCKETS);
  const pages = <usize>ld(t, T_PAGES);
  let total: u32 = 0;
  for (let p: u32 = 0; p < 8; p++) total += ld(buckets + (<usize>((p << 8) | <u32>load<u8>(qb + <usize>p)) << 4), 8);
  ensureCands(total + 4); // + 4: the gather writes up to 4 entries past the last
  // 1. mark
  let anyHashless = false;
  for (let p: u32 = 0; p < 8; p++) {
    const hdr = buckets + (<usize>((p << 8) | <u32>load<u8>(qb + <usize>p)) << 4);
    const tail = <usize>ld(hdr, 4);
    const tailUsed = ld(hdr, 12);
    for (let c = <usize>ld(hdr, 0); c != 0; c = <usize>ld(c, 0)) {
      const n = c == tail ? tailUsed : ld(c, 4);
      const e = c + CHUNK_HEADER;
      for (let i: u32 = 0; i < n; i++) {
        const posting = load<u32>(e + (<usize>i << 2));
        const slot = posting & 0x7fffffff;
        const word = <usize>load<u32>(pages + (<usize>(slot >>> PAGE_SHIFT) << 2)) + IMAGE_MARKS + (<usize>((slot & PAGE_MASK) >>> 6) << 3);
        const bit = <u64>1 << <u64>(slot & 63);
        store<u64>(word, load<u64>(word) | bit);
        if (<i32>posting < 0) {
          store<u64>(word + MARKS_BYTES, load<u64>(word + MARKS_BYTES) | bit);
          anyHashless = true;
        }
      }
    }
  }
  // 2. gather (without a query hash every candidate is kept with similarity null)
  const hasHash = qh != 0;
  const np = (ld(t, T_HIGH) + PAGE_MASK) >>> PAGE_SHIFT;
  let n: u32 = 0;
  for (let pg: u32 = 0; pg < np; pg++) {
    const page = <usize>load<u32>(pages + (<usize>pg << 2));
    const marks = page + IMAGE_MARKS;
    for (let w: u32 = 0; w < <u32>MARKS_BYTES; w += 8) {
      // no test for an empty word: about one in six is, too many to predict
      let m = load<u64>(marks + w);
      store<u64>(marks + w, 0);
      const first = (pg << PAGE_SHIFT) | (w << 3); // slot of the word's bit 0
      if (anyHashless) {
        const hashless = load<u64>(marks + MARKS_BYTES + w);
        store<u64>(marks + MARKS_BYTES + w, 0);
        const unscored = hasHash ? hashless : m;
        m &= ~unscored;
        for (let u = unscored; u != 0; u &= u - 1) offerImage(page, <usize>((w << 3) + <u32>ctz<u64>(u)), -1, limit);
      } else if (!hasHash) {
        for (; m != 0; m &= m - 1) offerImage(page, <usize>((w << 3) + <u32>ctz<u64>(m)), -1, limit);
      }
      // the first four set bits are written whether set or not (past n they are
      // overwritten or ignored): most words hold one to four, so the loop below
      // rarely runs and its trip count is not mispredicted word after word
      const count = <u32>popcnt<u64>(m);
      const out = cands + (<usize>n << 2);
      store<u32>(out, first + <u32>ctz<u64>(m));
      m &= m - 1;
      store<u32>(out, first + <u32>ctz<u64>(m), 4);
      m &= m - 1;
      store<u32>(out, first + <u32>ctz<u64>(m), 8);
      m &= m - 1;
      store<u32>(out, first + <u32>ctz<u64>(m), 12);
      m &= m - 1;
      for (let k: usize = 16; m != 0; m &= m - 1, k += 4) store<u32>(out + k, first + <u32>ctz<u64>(m));
      n += count;
    }
  }
  // 3. score
  if (!hasHash) return;
  const qhash = load<u64>(qh);
  for (let i: u32 = 0; i < n; i++) {
    const slot = load<u32>(cands + (<usize>i << 2));
    const page = <usize>load<u32>(pages + (<usize>(slot >>> PAGE_SHIFT) << 2));
    const j = <usize>(slot & PAGE_MASK);
    const sim = (100 * (64 - <i32>popcnt<u64>(load<u64>(page + (j << 3)) ^ qhash))) >> 6;
    if (sim >= threshold) offerImage(page, j, sim, limit);
  }
}

/** Offers the image entry at index `j` of `page` (signedAt and id from its page). */
@inline function offerImage(page: usize, j: usize, sim: i32, limit: i32): void {
  offer(limit, sim, load<f64>(page + (<usize>8 << PAGE_SHIFT) + (j << 3)), load<u32>(page + (<usize>16 << PAGE_SHIFT) + (j << 2)));
}

function querySequences(t: usize, kind: u32, qb: usize, qh: usize, qlen: u32, threshold: i32, limit: i32): void {
  const buckets = <usize>ld(t, T_BUCKETS);
  const fresh = bucketsOf(t, kind, qb, Q_BUCKETS);
  const unit: i32 = kind == 1 ? 4 : 8;
  const maxShift: i32 = kind == 1 ? 120 : 30;
  const minOverlap: i32 = kind == 1 ? 32 : 4;
  for (let p: u32 = 0; p < 8; p++) {
    if ((fresh & (1 << p)) == 0) continue;
    const b = load<u32>(Q_BUCKETS + (<usize>p << 2));
    const hdr = buckets + (<usize>b << 4);
    const tail = <usize>ld(hdr, 4);
    const tailUsed = ld(hdr, 12);
    for (let c = <usize>ld(hdr, 0); c != 0; c = <usize>ld(c, 0)) {
      const n = c == tail ? tailUsed : ld(c, 4);
      const e = c + CHUNK_HEADER;
      for (let i: u32 = 0; i < n; i++) {
        const slot = load<u32>(e + (<usize>i << 2)) & 0x7fffffff;
        const sb = bandsAt(t, slot);
        // the first position where the bands agree must fall in this bucket
        let m: u32;
        if (ASC_FEATURE_SIMD) {
          const lo = i32x4.bitmask(i32x4.eq(v128.load(sb), v128.load(qb)));
          const hi = i32x4.bitmask(i32x4.eq(v128.load(sb, 16), v128.load(qb, 16)));
          const mask = lo | (hi << 4);
          if (mask == 0) continue;
          m = ctz<u32>(mask);
        } else {
          m = 8;
          for (let k: u32 = 0; k < 8; k++) {
            if (load<u32>(sb + (<usize>k << 2)) == load<u32>(qb + (<usize>k << 2))) {
              m = k;
              break;
            }
          }
          if (m == 8) continue;
        }
        if (load<u32>(Q_BUCKETS + (<usize>m << 2)) != b) continue;
        let sim: i32 = -1;
        const hp = <usize>load<u32>(hashPtrPtr(t, slot));
        if (qh != 0 && hp != 0) {
          const hl = load<u32>(hashLenPtr(t, slot));
          sim = alignedSimilarity(qh, <i32>qlen / unit, hp, <i32>hl / unit, unit, maxShift, minOverlap);
        }
        if (sim >= 0 && sim < threshold) continue;
        offer(limit, sim, load<f64>(signedAtPtr(t, slot)), load<u32>(idPtr(t, slot)));
      }
    }
  }
}

/**
 * Candidates of `kind` for the query bands at `qb` (8 or 32 bytes) and hash at `qh`
 * (`qlen` bytes; qh = 0: none, every similarity null): entries sharing a band at the
 * same position, with similarity >= threshold (threshold < 0: no filter) or null, the
 * best `limit` by similarity then signed_at. Writes (id, similarity or -1) pairs in
 * order at miResults(); returns how many.
 */
export function miQuery(ix: usize, kind: u32, qb: usize, qh: usize, qlen: u32, threshold: i32, limit: i32): i32 {
  heapSize = 0;
  if (limit <= 0 || kind > 2) return 0;
  const t = tableOf(ix, kind);
  if (t == 0) return 0;
  ensureHeap(limit);
  if (kind == 0) queryImages(t, qb, qlen == 8 ? qh : 0, threshold, limit);
  else querySequences(t, kind, qb, qlen > 0 ? qh : 0, qlen, threshold, limit);
  // Heap sort: the worst goes to the end each round, so the best ends up first.
  const n = heapSize;
  for (let end = n - 1; end > 0; end--) {
    hSwap(0, end);
    siftDown(0, end);
  }
  for (let i = 0; i < n; i++) {
    store<u32>(results + (<usize>i << 3), hId(i));
    store<i32>(results + (<usize>i << 3), hSim(i), 4);
  }
  heapSize = 0;
  return n;
}
