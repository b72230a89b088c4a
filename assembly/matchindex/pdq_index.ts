// The 256-bit PDQ match index (issue 28): multi-index hashing over 16 chunks of 16
// bits, in unmanaged memory of the matchindex module (src/lib/pdq-index.ts is the
// host side).
//
// Why it is exact: if two hashes differ in at most t <= 31 bits, the 16 chunk
// distances sum to at most 31, so some chunk differs in at most 1 bit (16 x 2 = 32 >
// 31); for t <= 15 some chunk is equal. A query therefore probes, for each chunk, the
// bucket of its own value and (t >= 16) of the 16 values one bit away, and computes
// the full distance of every entry found: every entry within t is seen, none is
// returned beyond t. An entry is reported only from the first chunk (in chunk order)
// within the probe radius of the query, so each appears once per query hash.
//
// Layout of one index (pdqCreate):
// - slots in pages of 4096: the hash (32 bytes, in the host's byte order) and the
//   caller's id (u32). A freed slot is linked into a free list through its hash bytes.
// - an id table: open addressing with linear probing over slot + 1 (u32), keyed by
//   the id in the slot; any capacity (multiply-shift range reduction), at most 7/8
//   full, growing by half; deletion shifts the probe run back.
// - buckets: 16 chunks x 65536 values, each (pointer u32, count u32); made on first use.
//   A posting is a slot number in 3 bytes (so at most 2^24 entries per index). A
//   bucket's postings live either in the packed region (exactly `count` postings, laid
//   out bucket after bucket by pdqCompact or a bulk add) or in a block of its own
//   (a u32 capacity, then the postings, growing by an eighth). Appending to a bucket
//   of the region moves it to a block; the region's space it leaves is counted as
//   waste, and when blocks plus waste exceed a quarter of the region the index packs
//   itself again. A bulk add counts the new postings per bucket first and writes the
//   packed region once, so a bulk-loaded index holds no slack.
import { ld, st, idHome, idNext, idPlace, idTableAlloc } from './shared';

const CHUNKS: u32 = 16;
const VALUES: u32 = 65536;
const NBUCKETS: u32 = CHUNKS * VALUES;
const PAGE_SHIFT: u32 = 12;
const PAGE_SLOTS: u32 = 1 << PAGE_SHIFT;
const PAGE_MASK: u32 = PAGE_SLOTS - 1;
const SLOT_BYTES: usize = 36; // hash 32, id 4
const PAGE_BYTES: usize = <usize>PAGE_SLOTS * SLOT_BYTES;
const MAX_SLOTS: u32 = 1 << 24;
const PB: usize = 3; // bytes per posting

// Index fields (u32 each).
const X_PAGES: usize = 0;
const X_PAGECAP: usize = 4;
const X_NPAGES: usize = 8;
const X_HIGH: usize = 12; // slots ever handed out
const X_FREE: usize = 16; // free-list head: slot + 1, 0 = empty
const X_LIVE: usize = 20;
const X_IDTAB: usize = 24;
const X_IDCAP: usize = 28;
const X_BUCKETS: usize = 32; // 0 until the first add
const X_REGION: usize = 36;
const X_REGIONBYTES: usize = 40;
const X_REGIONUSED: usize = 44; // bytes of live postings in the region
const X_BLOCKBYTES: usize = 48; // bytes of bucket blocks
const X_STAGED: usize = 52; // first staged slot + 1 during a bulk add, else 0
const X_SIZE: usize = 56;

// Query results: (id, distance, query index) triples; grow-only.
let results: usize = 0;
let resultsCap: u32 = 0;

// ---- slots ----

@inline function slotPtr(ix: usize, slot: u32): usize {
  const page = <usize>load<u32>(<usize>ld(ix, X_PAGES) + (<usize>(slot >>> PAGE_SHIFT) << 2));
  return page + <usize>(slot & PAGE_MASK) * SLOT_BYTES;
}
@inline function idOf(ix: usize, slot: u32): u32 {
  return load<u32>(slotPtr(ix, slot) + 32);
}

function addPage(ix: usize): void {
  const n = ld(ix, X_NPAGES);
  let cap = ld(ix, X_PAGECAP);
  if (n == cap) {
    const ncap: u32 = cap < 16 ? 16 : cap << 1;
    const np = heap.alloc(<usize>ncap << 2);
    const old = <usize>ld(ix, X_PAGES);
    if (old != 0) {
      memory.copy(np, old, <usize>n << 2);
      heap.free(old);
    }
    st(ix, X_PAGES, <u32>np);
    st(ix, X_PAGECAP, ncap);
  }
  store<u32>(<usize>ld(ix, X_PAGES) + (<usize>n << 2), <u32>heap.alloc(PAGE_BYTES));
  st(ix, X_NPAGES, n + 1);
}

/** A free slot, or -1 when the index holds 2^24 entries. */
// While staging a bulk add, slots come from the high mark only (see pdqStage).
let staging = false;

function allocSlot(ix: usize): i32 {
  const head = ld(ix, X_FREE);
  if (head != 0 && !staging) {
    const slot = head - 1;
    st(ix, X_FREE, load<u32>(slotPtr(ix, slot)));
    return <i32>slot;
  }
  const high = ld(ix, X_HIGH);
  if (high >= MAX_SLOTS) return -1;
  if ((high >>> PAGE_SHIFT) >= ld(ix, X_NPAGES)) addPage(ix);
  st(ix, X_HIGH, high + 1);
  return <i32>high;
}

function freeSlot(ix: usize, slot: u32): void {
  store<u32>(slotPtr(ix, slot), ld(ix, X_FREE));
  st(ix, X_FREE, slot + 1);
}

// ---- id table ----

function idFind(ix: usize, id: u32): i32 {
  const tab = <usize>ld(ix, X_IDTAB);
  const cap = ld(ix, X_IDCAP);
  let i = idHome(id, cap);
  for (;;) {
    const e = load<u32>(tab + (<usize>i << 2));
    if (e == 0) return -1;
    if (idOf(ix, e - 1) == id) return <i32>i;
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
    if (e != 0) idPlace(tab, cap, idOf(ix, e - 1), e);
  }
  heap.free(old);
  st(ix, X_IDTAB, <u32>tab);
  st(ix, X_IDCAP, cap);
}

/** Room for `count` ids at most 7/8 full. */
function idReserve(ix: usize, count: u32): void {
  const cap = ld(ix, X_IDCAP);
  if (<u64>count * 8 > <u64>cap * 7) {
    let ncap = cap + (cap >>> 1);
    const need = <u32>((<u64>count * 8 + 6) / 7);
    if (ncap < need) ncap = need;
    idResize(ix, ncap);
  }
}

function idDelete(ix: usize, i: u32): void {
  const tab = <usize>ld(ix, X_IDTAB);
  const cap = ld(ix, X_IDCAP);
  let j = i;
  for (;;) {
    j = idNext(j, cap);
    const e = load<u32>(tab + (<usize>j << 2));
    if (e == 0) break;
    const k = idHome(idOf(ix, e - 1), cap);
    const inRange = i <= j ? k > i && k <= j : k > i || k <= j;
    if (!inRange) {
      store<u32>(tab + (<usize>i << 2), e);
      i = j;
    }
  }
  store<u32>(tab + (<usize>i << 2), 0);
}

// ---- buckets ----

@inline function bucketAt(ix: usize, b: u32): usize {
  return <usize>ld(ix, X_BUCKETS) + (<usize>b << 3);
}
@inline function chunkOf(h: usize, c: u32): u32 {
  return <u32>load<u16>(h + (<usize>c << 1));
}
@inline function inRegion(ix: usize, p: usize): bool {
  const r = <usize>ld(ix, X_REGION);
  return p >= r && p < r + <usize>ld(ix, X_REGIONBYTES);
}
/** Where bucket `bk`'s postings start (the region's pointer, or past a block's capacity). */
@inline function postingsOf(ix: usize, p: usize): usize {
  return inRegion(ix, p) ? p : p + 4;
}
@inline function postingAt(p: usize, i: u32): u32 {
  // every postings area has at least one byte after its last posting
  return load<u32>(p + <usize>i * PB) & 0xffffff;
}
@inline function setPosting(p: usize, i: u32, slot: u32): void {
  const q = p + <usize>i * PB;
  store<u16>(q, <u16>slot);
  store<u8>(q, <u8>(slot >>> 16), 2);
}
@inline function blockBytes(cap: u32): usize {
  return 4 + <usize>cap * PB + 1;
}

function ensureBuckets(ix: usize): void {
  if (ld(ix, X_BUCKETS) != 0) return;
  const bytes = <usize>NBUCKETS << 3;
  const b = heap.alloc(bytes);
  memory.fill(b, 0, bytes);
  st(ix, X_BUCKETS, <u32>b);
}

function bucketPush(ix: usize, b: u32, slot: u32): void {
  const bk = bucketAt(ix, b);
  const p = <usize>load<u32>(bk);
  const n = load<u32>(bk, 4);
  let post: usize;
  if (p == 0 || inRegion(ix, p) || load<u32>(p) == n) {
    // a new block: the postings so far and room to grow by an eighth
    let cap = n + 1 + ((n + 1) >>> 3);
    if (cap < n + 4) cap = n + 4;
    const blk = heap.alloc(blockBytes(cap));
    store<u32>(blk, cap);
    if (n > 0) memory.copy(blk + 4, postingsOf(ix, p), <usize>n * PB);
    if (p != 0) {
      if (inRegion(ix, p)) {
        st(ix, X_REGIONUSED, ld(ix, X_REGIONUSED) - n * <u32>PB);
      } else {
        st(ix, X_BLOCKBYTES, ld(ix, X_BLOCKBYTES) - <u32>blockBytes(load<u32>(p)));
        heap.free(p);
      }
    }
    st(ix, X_BLOCKBYTES, ld(ix, X_BLOCKBYTES) + <u32>blockBytes(cap));
    store<u32>(bk, <u32>blk);
    post = blk + 4;
  } else {
    post = p + 4;
  }
  setPosting(post, n, slot);
  store<u32>(bk, n + 1, 4);
}

function bucketRemove(ix: usize, b: u32, slot: u32): void {
  const bk = bucketAt(ix, b);
  const p = <usize>load<u32>(bk);
  const n = load<u32>(bk, 4);
  const post = postingsOf(ix, p);
  for (let i: u32 = 0; i < n; i++) {
    if (postingAt(post, i) == slot) {
      if (i + 1 < n) setPosting(post, i, postingAt(post, n - 1));
      store<u32>(bk, n - 1, 4);
      if (inRegion(ix, p)) {
        st(ix, X_REGIONUSED, ld(ix, X_REGIONUSED) - <u32>PB);
      } else if (n == 1) {
        st(ix, X_BLOCKBYTES, ld(ix, X_BLOCKBYTES) - <u32>blockBytes(load<u32>(p)));
        heap.free(p);
        store<u32>(bk, 0);
      }
      return;
    }
  }
}

/**
 * Packs every bucket into one new region of exactly its postings, plus `extra[b]`
 * postings of room after bucket b's when `extra` is not 0 (a bulk add fills them);
 * frees the old region and every block.
 */
function pack(ix: usize, extra: usize): void {
  ensureBuckets(ix);
  let total: usize = 0;
  for (let b: u32 = 0; b < NBUCKETS; b++) {
    total += <usize>load<u32>(bucketAt(ix, b), 4);
    if (extra != 0) total += <usize>load<u32>(extra + (<usize>b << 2));
  }
  const bytes = total * PB + 4;
  const region = heap.alloc(bytes);
  let at = region;
  const oldRegion = <usize>ld(ix, X_REGION);
  for (let b: u32 = 0; b < NBUCKETS; b++) {
    const bk = bucketAt(ix, b);
    const p = <usize>load<u32>(bk);
    const n = load<u32>(bk, 4);
    const room = <usize>n + (extra != 0 ? <usize>load<u32>(extra + (<usize>b << 2)) : 0);
    if (n > 0) {
      memory.copy(at, postingsOf(ix, p), <usize>n * PB);
      if (!inRegion(ix, p)) heap.free(p);
    }
    store<u32>(bk, room > 0 ? <u32>at : 0);
    at += room * PB;
  }
  store<u32>(at, 0);
  if (oldRegion != 0) heap.free(oldRegion);
  st(ix, X_REGION, <u32>region);
  st(ix, X_REGIONBYTES, <u32>bytes);
  st(ix, X_REGIONUSED, <u32>(total * PB));
  st(ix, X_BLOCKBYTES, 0);
}

/** Packs again when blocks and the region's waste exceed a quarter of the region (and 1 MiB). */
function maybePack(ix: usize): void {
  const regionBytes = ld(ix, X_REGIONBYTES);
  const waste = (regionBytes > 4 ? regionBytes - 4 : 0) - ld(ix, X_REGIONUSED);
  const loose = <u64>ld(ix, X_BLOCKBYTES) + <u64>waste;
  if (loose > (1 << 20) && loose * 4 > <u64>regionBytes) pack(ix, 0);
}

// ---- add / remove ----

function removeSlot(ix: usize, slot: u32): void {
  const h = slotPtr(ix, slot);
  for (let c: u32 = 0; c < CHUNKS; c++) bucketRemove(ix, c * VALUES + chunkOf(h, c), slot);
  freeSlot(ix, slot);
  st(ix, X_LIVE, ld(ix, X_LIVE) - 1);
}

/** Takes a slot for `id` with hash `hash` (removing an older entry of the id); -1 when full. */
function place(ix: usize, id: u32, hash: usize): i32 {
  const at = idFind(ix, id);
  if (at >= 0) {
    const tab = <usize>ld(ix, X_IDTAB);
    const old = load<u32>(tab + (<usize>at << 2)) - 1;
    idDelete(ix, <u32>at);
    removeSlot(ix, old);
  }
  const s = allocSlot(ix);
  if (s < 0) return -1;
  const slot = <u32>s;
  const p = slotPtr(ix, slot);
  memory.copy(p, hash, 32);
  store<u32>(p, id, 32);
  idReserve(ix, ld(ix, X_LIVE) + 1);
  idPlace(<usize>ld(ix, X_IDTAB), ld(ix, X_IDCAP), id, slot + 1);
  st(ix, X_LIVE, ld(ix, X_LIVE) + 1);
  return s;
}

// ---- exports ----

export function pdqCreate(): usize {
  const ix = heap.alloc(X_SIZE);
  memory.fill(ix, 0, X_SIZE);
  const cap: u32 = 1024;
  const tab = idTableAlloc(cap);
  st(ix, X_IDTAB, <u32>tab);
  st(ix, X_IDCAP, cap);
  return ix;
}

export function pdqDestroy(ix: usize): void {
  const b = <usize>ld(ix, X_BUCKETS);
  if (b != 0) {
    for (let i: u32 = 0; i < NBUCKETS; i++) {
      const p = <usize>load<u32>(b + (<usize>i << 3));
      if (p != 0 && !inRegion(ix, p)) heap.free(p);
    }
    heap.free(b);
  }
  if (ld(ix, X_REGION) != 0) heap.free(<usize>ld(ix, X_REGION));
  const pages = <usize>ld(ix, X_PAGES);
  for (let i: u32 = 0; i < ld(ix, X_NPAGES); i++) heap.free(<usize>load<u32>(pages + (<usize>i << 2)));
  if (pages != 0) heap.free(pages);
  heap.free(<usize>ld(ix, X_IDTAB));
  heap.free(ix);
}

/** Adds (or replaces) entry `id` with the 32-byte hash at `hash`; 0 when the index is full (2^24 entries). */
export function pdqAdd(ix: usize, id: u32, hash: usize): u32 {
  ensureBuckets(ix);
  const s = place(ix, id, hash);
  if (s < 0) return 0;
  const h = slotPtr(ix, <u32>s);
  for (let c: u32 = 0; c < CHUNKS; c++) bucketPush(ix, c * VALUES + chunkOf(h, c), <u32>s);
  maybePack(ix);
  return 1;
}

/**
 * Bulk add, first step: places `n` entries (ids u32 at `ids`, 32-byte hashes at
 * `hashes`) without postings, in fresh slots (the free list is left for later), so
 * the staged slots are those from the first call's high mark on. Returns how many
 * were placed (fewer when the index is full). No query may run before pdqFinish.
 */
export function pdqStage(ix: usize, ids: usize, hashes: usize, n: u32): u32 {
  ensureBuckets(ix);
  if (ld(ix, X_STAGED) == 0) st(ix, X_STAGED, ld(ix, X_HIGH) + 1);
  idReserve(ix, ld(ix, X_LIVE) + n);
  staging = true;
  let added: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    if (place(ix, load<u32>(ids + (<usize>i << 2)), hashes + (<usize>i << 5)) < 0) break;
    added++;
  }
  staging = false;
  return added;
}

/**
 * Bulk add, second step: counts the staged entries' postings per bucket, packs every
 * bucket once with exactly that room, and writes them. An id staged twice keeps its
 * last hash: a staged slot gets postings only while its id still names it.
 */
export function pdqFinish(ix: usize): void {
  const first = ld(ix, X_STAGED);
  if (first == 0) return;
  st(ix, X_STAGED, 0);
  const high = ld(ix, X_HIGH);
  const extraBytes = <usize>NBUCKETS << 2;
  const extra = heap.alloc(extraBytes);
  memory.fill(extra, 0, extraBytes);
  for (let s: u32 = first - 1; s < high; s++) {
    if (!staysStaged(ix, s)) continue;
    const p = slotPtr(ix, s);
    for (let c: u32 = 0; c < CHUNKS; c++) {
      const e = extra + (<usize>(c * VALUES + chunkOf(p, c)) << 2);
      store<u32>(e, load<u32>(e) + 1);
    }
  }
  pack(ix, extra);
  heap.free(extra);
  for (let s: u32 = first - 1; s < high; s++) {
    if (!staysStaged(ix, s)) continue;
    const p = slotPtr(ix, s);
    for (let c: u32 = 0; c < CHUNKS; c++) {
      const bk = bucketAt(ix, c * VALUES + chunkOf(p, c));
      const cnt = load<u32>(bk, 4);
      setPosting(<usize>load<u32>(bk), cnt, s);
      store<u32>(bk, cnt + 1, 4);
    }
  }
}

/** Whether staged slot `s` is live: its id's table entry names it. */
function staysStaged(ix: usize, s: u32): bool {
  const at = idFind(ix, idOf(ix, s));
  return at >= 0 && load<u32>(<usize>ld(ix, X_IDTAB) + (<usize>at << 2)) == s + 1;
}

/** Removes entry `id`; 0 when it was not there. */
export function pdqRemove(ix: usize, id: u32): u32 {
  const at = idFind(ix, id);
  if (at < 0) return 0;
  const slot = load<u32>(<usize>ld(ix, X_IDTAB) + (<usize>at << 2)) - 1;
  idDelete(ix, <u32>at);
  removeSlot(ix, slot);
  return 1;
}

export function pdqHas(ix: usize, id: u32): u32 {
  return idFind(ix, id) >= 0 ? 1 : 0;
}

/** The stored hash of `id` copied to `out` (32 bytes); 0 when absent. */
export function pdqGet(ix: usize, id: u32, out: usize): u32 {
  const at = idFind(ix, id);
  if (at < 0) return 0;
  memory.copy(out, slotPtr(ix, load<u32>(<usize>ld(ix, X_IDTAB) + (<usize>at << 2)) - 1), 32);
  return 1;
}

export function pdqSize(ix: usize): u32 {
  return ld(ix, X_LIVE);
}

/** Bytes the index holds: pages, page table, id table, buckets, region and blocks. */
export function pdqBytes(ix: usize): f64 {
  let b: f64 = X_SIZE;
  b += <f64>ld(ix, X_NPAGES) * <f64>PAGE_BYTES + <f64>(ld(ix, X_PAGECAP) << 2);
  b += <f64>(<u64>ld(ix, X_IDCAP) << 2);
  if (ld(ix, X_BUCKETS) != 0) b += <f64>(<u64>NBUCKETS << 3);
  b += <f64>ld(ix, X_REGIONBYTES) + <f64>ld(ix, X_BLOCKBYTES);
  return b;
}

/** Packs the buckets (no slack, no blocks). */
export function pdqCompact(ix: usize): void {
  pack(ix, 0);
}

@inline function distance(a: usize, b: usize): u32 {
  return <u32>(popcnt<u64>(load<u64>(a) ^ load<u64>(b)) + popcnt<u64>(load<u64>(a, 8) ^ load<u64>(b, 8))
    + popcnt<u64>(load<u64>(a, 16) ^ load<u64>(b, 16)) + popcnt<u64>(load<u64>(a, 24) ^ load<u64>(b, 24)));
}

function pushResult(n: u32, id: u32, d: u32, q: u32): void {
  if (n == resultsCap) {
    const ncap: u32 = resultsCap < 256 ? 256 : resultsCap << 1;
    const nb = heap.alloc(<usize>ncap * 12);
    if (results != 0) {
      memory.copy(nb, results, <usize>n * 12);
      heap.free(results);
    }
    results = nb;
    resultsCap = ncap;
  }
  const p = results + <usize>n * 12;
  store<u32>(p, id);
  store<u32>(p, d, 4);
  store<u32>(p, q, 8);
}

/**
 * Every entry within `threshold` (0..31) bits of any of the `nq` query hashes (32
 * bytes each, at `queries`): (id, distance, query index) triples at pdqResults(),
 * each entry once per query hash; returns their number.
 */
export function pdqQuery(ix: usize, queries: usize, nq: u32, threshold: u32): u32 {
  if (ld(ix, X_BUCKETS) == 0 || ld(ix, X_LIVE) == 0 || threshold > 31) return 0;
  const radius: u32 = threshold >= 16 ? 1 : 0;
  let n: u32 = 0;
  for (let qi: u32 = 0; qi < nq; qi++) {
    const q = queries + (<usize>qi << 5);
    for (let c: u32 = 0; c < CHUNKS; c++) {
      const v = chunkOf(q, c);
      const probes: u32 = radius == 0 ? 1 : 17;
      for (let k: u32 = 0; k < probes; k++) {
        const pv = k == 0 ? v : v ^ (1 << (k - 1));
        const bk = bucketAt(ix, c * VALUES + pv);
        const cnt = load<u32>(bk, 4);
        if (cnt == 0) continue;
        const post = postingsOf(ix, <usize>load<u32>(bk));
        for (let i: u32 = 0; i < cnt; i++) {
          const slot = postingAt(post, i);
          const h = slotPtr(ix, slot);
          const d = distance(q, h);
          if (d > threshold) continue;
          // reported from the first chunk within the radius only
          let first = true;
          for (let e: u32 = 0; e < c; e++) {
            if (<u32>popcnt<u32>(chunkOf(q, e) ^ chunkOf(h, e)) <= radius) {
              first = false;
              break;
            }
          }
          if (first) pushResult(n++, load<u32>(h, 32), d, qi);
        }
      }
    }
  }
  return n;
}

export function pdqResults(): usize {
  return results;
}
