// Hamming distance and similarity search over hashes (decisions.md section 3).
//
// - hammingDistance: bits that differ between two byte ranges of any length;
// - hammingScan: every index of a packed array of 8-byte hashes within a distance
//   (hammingScanBytewise: the same with i8x16.popcnt, for comparison);
// - hammingDistancesAt: distances to the hashes at a list of indexes;
// - hammingTopK: the k nearest hashes (smallest distance, ties by lower index);
// - alignedSimilarity: the best similarity of two frame sequences over shifts.
// Results of the scans go to one grow-only block the host reads (hammingResults).

let results: usize = 0;
let resultsCap: usize = 0;

/** Distance histogram (65 x u32) and per-distance write positions for top-k. */
const HIST: usize = memory.data(65 * 4);
const NEXT: usize = memory.data(65 * 4);

function ensureResults(bytes: usize): void {
  if (bytes <= resultsCap) return;
  if (results != 0) heap.free(results);
  let cap = resultsCap << 1;
  if (cap < bytes) cap = bytes;
  if (cap < 4096) cap = 4096;
  results = heap.alloc(cap);
  resultsCap = cap;
}

/** Where the last hammingScan / hammingTopK wrote its results. */
export function hammingResults(): usize {
  return results;
}

@inline
function dist64(a: u64, b: u64): i32 {
  return <i32>popcnt<u64>(a ^ b);
}

/** Number of differing bits between `len` bytes at `a` and at `b`. */
export function hammingDistance(a: usize, b: usize, len: i32): i32 {
  let d: i32 = 0;
  let i: i32 = 0;
  for (; len - i >= 8; i += 8) {
    d += dist64(load<u64>(a + <usize>i), load<u64>(b + <usize>i));
  }
  for (; i < len; i++) {
    d += <i32>popcnt<u32>(<u32>(load<u8>(a + <usize>i) ^ load<u8>(b + <usize>i)));
  }
  return d;
}

/**
 * Indexes of the `n` packed 8-byte hashes at `packed` whose distance to the hash at
 * `query` is at most `maxDist`, ascending, as u32 at hammingResults(); returns how many.
 *
 * Both builds use i64.popcnt here, eight hashes per step: on x86-64 V8 it is one
 * instruction per hash, while i8x16.popcnt plus the byte reductions cost several per
 * hash, and the SIMD variant (hammingScanBytewise) measured slower (docs/image-hash.md).
 */
export function hammingScan(query: usize, packed: usize, n: i32, maxDist: i32): i32 {
  ensureResults(<usize>(n > 0 ? n : 1) << 2);
  if (maxDist < 0) return 0;
  const out = results;
  const q = load<u64>(query);
  const m = <u64>maxDist;
  let count: i32 = 0;
  let i: i32 = 0;
  for (; i + 8 <= n; i += 8) {
    const p = packed + (<usize>i << 3);
    const d0 = popcnt<u64>(load<u64>(p) ^ q);
    const d1 = popcnt<u64>(load<u64>(p, 8) ^ q);
    const d2 = popcnt<u64>(load<u64>(p, 16) ^ q);
    const d3 = popcnt<u64>(load<u64>(p, 24) ^ q);
    const d4 = popcnt<u64>(load<u64>(p, 32) ^ q);
    const d5 = popcnt<u64>(load<u64>(p, 40) ^ q);
    const d6 = popcnt<u64>(load<u64>(p, 48) ^ q);
    const d7 = popcnt<u64>(load<u64>(p, 56) ^ q);
    // the rare step holding a match is re-examined hash by hash
    if (min(min(min(d0, d1), min(d2, d3)), min(min(d4, d5), min(d6, d7))) <= m) {
      for (let j = 0; j < 8; j++) {
        if (popcnt<u64>(load<u64>(p + (<usize>j << 3)) ^ q) <= m) {
          store<u32>(out + (<usize>count << 2), <u32>(i + j));
          count++;
        }
      }
    }
  }
  return scanTail(q, packed, i, n, maxDist, count);
}

/** hammingScan for indexes from..n-1, appending after `count` results. */
function scanTail(q: u64, packed: usize, from: i32, n: i32, maxDist: i32, count: i32): i32 {
  const out = results;
  for (let i = from; i < n; i++) {
    if (dist64(load<u64>(packed + (<usize>i << 3)), q) <= maxDist) {
      store<u32>(out + (<usize>count << 2), <u32>i);
      count++;
    }
  }
  return count;
}

/** Byte popcounts of (16 bytes at p + offset) XOR the query in both i64 lanes. */
@inline
function bytePopcnt(p: usize, qv: v128, offset: usize): v128 {
  return i8x16.popcnt(v128.xor(v128.load(p + offset), qv));
}

/** Byte lanes a0+a1, a2+a3, ..., b14+b15 (a's sums then b's), for sums below 256. */
@inline
function pairSums(a: v128, b: v128): v128 {
  return i8x16.narrow_i16x8_u(i16x8.extadd_pairwise_i8x16_u(a), i16x8.extadd_pairwise_i8x16_u(b));
}

/**
 * hammingScan with i8x16.popcnt, sixteen hashes per step (same results). In the scalar
 * build it is hammingScan. Kept so the bench can show which is faster on an engine.
 */
export function hammingScanBytewise(query: usize, packed: usize, n: i32, maxDist: i32): i32 {
  if (!ASC_FEATURE_SIMD) return hammingScan(query, packed, n, maxDist);
  ensureResults(<usize>(n > 0 ? n : 1) << 2);
  if (maxDist < 0) return 0;
  const out = results;
  const q = load<u64>(query);
  let count: i32 = 0;
  let i: i32 = 0;
  // XOR and byte popcounts of eight v128s, then three rounds of pairwise widening adds
  // narrowed back to bytes leave each hash's distance in one byte lane (every partial
  // sum is <= 64, so the saturating narrows are exact).
  const qv = i64x2.splat(q);
  const below = i8x16.splat(<i8>(maxDist >= 64 ? 65 : maxDist + 1));
  for (; i + 16 <= n; i += 16) {
    const p = packed + (<usize>i << 3);
    const h01 = pairSums(bytePopcnt(p, qv, 0), bytePopcnt(p, qv, 16));
    const h23 = pairSums(bytePopcnt(p, qv, 32), bytePopcnt(p, qv, 48));
    const h45 = pairSums(bytePopcnt(p, qv, 64), bytePopcnt(p, qv, 80));
    const h67 = pairSums(bytePopcnt(p, qv, 96), bytePopcnt(p, qv, 112));
    let mask = i8x16.bitmask(i8x16.lt_u(pairSums(pairSums(h01, h23), pairSums(h45, h67)), below));
    while (mask != 0) {
      store<u32>(out + (<usize>count << 2), <u32>(i + ctz<i32>(mask)));
      count++;
      mask &= mask - 1;
    }
  }
  return scanTail(q, packed, i, n, maxDist, count);
}

/**
 * Distances from the 8-byte hash at `query` to the packed hashes at the `count` u32
 * indexes at `indexes`, as u32 at hammingResults() in the same order.
 */
export function hammingDistancesAt(query: usize, packed: usize, indexes: usize, count: i32): void {
  ensureResults(<usize>(count > 0 ? count : 1) << 2);
  const out = results;
  const q = load<u64>(query);
  for (let i = 0; i < count; i++) {
    const at = <usize>load<u32>(indexes + (<usize>i << 2));
    store<u32>(out + (<usize>i << 2), <u32>dist64(load<u64>(packed + (at << 3)), q));
  }
}

/**
 * The min(k, n) packed 8-byte hashes nearest to `query`, by distance then index, as
 * (u32 index, u32 distance) pairs at hammingResults(); returns how many.
 * Two passes: a distance histogram fixes the cut-off distance, then a counting sort.
 */
export function hammingTopK(query: usize, packed: usize, n: i32, k: i32): i32 {
  if (k > n) k = n;
  if (k <= 0) return 0;
  ensureResults(<usize>k << 3);
  const out = results;
  const q = load<u64>(query);
  memory.fill(HIST, 0, 65 * 4);
  for (let i = 0; i < n; i++) {
    const h = HIST + (<usize>dist64(load<u64>(packed + (<usize>i << 3)), q) << 2);
    store<u32>(h, load<u32>(h) + 1);
  }
  // cut: the distance at which the k-th nearest lies; below it everything is taken.
  let cut: i32 = 0;
  let below: i32 = 0;
  for (; cut <= 64; cut++) {
    const c = <i32>load<u32>(HIST + (<usize>cut << 2));
    store<u32>(NEXT + (<usize>cut << 2), <u32>below);
    if (below + c >= k) break;
    below += c;
  }
  let atCut: i32 = k - below;
  for (let i = 0; i < n; i++) {
    const d = dist64(load<u64>(packed + (<usize>i << 3)), q);
    if (d > cut) continue;
    if (d == cut) {
      if (atCut == 0) continue;
      atCut--;
    }
    const slot = NEXT + (<usize>d << 2);
    const pos = load<u32>(slot);
    store<u32>(slot, pos + 1);
    store<u32>(out + (<usize>pos << 3), <u32>i);
    store<u32>(out + (<usize>pos << 3), <u32>d, 4);
  }
  return k;
}

/**
 * Similarity (0-100) of two sequences of `unitBytes`-byte units (na units at `a`, nb at
 * `b`) at their best alignment: for each shift o in -maxShift..maxShift, unit i of a
 * against unit i + o of b over the overlapping units, if at least minOverlap overlap;
 * floor(100 (bits - d) / bits) over those. With no such shift, the whole shorter
 * sequence at shift 0. Empty input: 0.
 */
export function alignedSimilarity(a: usize, na: i32, b: usize, nb: i32, unitBytes: i32, maxShift: i32, minOverlap: i32): i32 {
  if (na <= 0 || nb <= 0) return 0;
  if (minOverlap < 1) minOverlap = 1;
  let best: i32 = -1;
  for (let o = -maxShift; o <= maxShift; o++) {
    // overlap: i in [max(0, -o), min(na, nb - o))
    const lo = o < 0 ? -o : 0;
    const hi = na < nb - o ? na : nb - o;
    const overlap = hi - lo;
    if (overlap < minOverlap) continue;
    const bytes = overlap * unitBytes;
    const d = hammingDistance(a + <usize>(lo * unitBytes), b + <usize>((lo + o) * unitBytes), bytes);
    const bits = <i64>bytes << 3;
    const sim = <i32>((<i64>100 * (bits - <i64>d)) / bits);
    if (sim > best) best = sim;
  }
  if (best >= 0) return best;
  const overlap = na < nb ? na : nb;
  const bytes = overlap * unitBytes;
  const d = hammingDistance(a, b, bytes);
  const bits = <i64>bytes << 3;
  return <i32>((<i64>100 * (bits - <i64>d)) / bits);
}
