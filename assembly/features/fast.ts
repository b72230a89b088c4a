// Features stage 3: FAST-9 corners (Rosten and Drummond) with non-maximum suppression,
// defined as OpenCV's FAST (TYPE_9_16) defines them, so that the differential test can
// compare corner sets exactly (test/lib/features.test.ts against cv2.FAST):
//   - the 16 pixels of the Bresenham circle of radius 3 around p;
//   - p is a corner when 9 contiguous ones are all brighter than I(p) + t or all darker
//     than I(p) - t;
//   - its score is the largest t' for which that still holds: over the 16 arcs of 9,
//     max(min(I(p) - ring), min(ring - I(p))) - 1;
//   - a corner is kept when its score is above all 8 neighbours' (0 for non-corners).
// The SIMD build tests 16 pixels at a time (compass points first, then the longest run of
// brighter and darker ring pixels per lane) and scores a corner's ring as 16 lanes; the
// scalar build walks the ring. test/lib/features-fast.test.ts compares both builds'
// corners and scores with cv2.FAST's.

import { Block, staticBlock } from './block';

const RING_X: StaticArray<i32> = [0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1];
const RING_Y: StaticArray<i32> = [3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1, 0, 1, 2, 3];
/** Byte offsets of the ring for the current stride. */
const OFFSETS: usize = memory.data(16 * 4);
let offsetsStride: i32 = -1;

/** Three rows of scores (u8), the rows above, at and below the one being suppressed. */
const SCORES: Block = staticBlock();

function setStride(stride: i32): void {
  if (stride == offsetsStride) return;
  for (let k = 0; k < 16; k++) store<i32>(OFFSETS + (<usize>k << 2), RING_Y[k] * stride + RING_X[k]);
  offsetsStride = stride;
}

@inline
function ringAt(p: usize, k: i32): i32 {
  return <i32>load<u8>(p + <usize>load<i32>(OFFSETS + (<usize>(k & 15) << 2)));
}

/** The FAST score of the pixel at `p` (max(t) for which it is a corner), or 0 when it is no corner at threshold t. */
export function cornerScore(p: usize, t: i32): i32 {
  if (ASC_FEATURE_SIMD) return cornerScoreSimd(p, t);
  const c = <i32>load<u8>(p);
  let best = 0;
  // d[k] = c - ring[k]; darker arcs have large min(d), brighter ones large min(-d)
  for (let k = 0; k < 16; k++) {
    let lo = 255;
    let hi = 255;
    for (let j = 0; j < 9; j++) {
      const d = c - ringAt(p, k + j);
      if (d < lo) lo = d;
      if (-d < hi) hi = -d;
    }
    if (lo > best) best = lo;
    if (hi > best) best = hi;
  }
  return best - 1 >= t ? best - 1 : 0;
}

/** The 16 lanes (two i16x8: d[0..7] in `lo`, d[8..15] in `hi`) turned by r, low half. */
@inline
function turnLow(lo: v128, hi: v128, r: i32): v128 {
  // r is a constant at every call: the shuffles' lanes are immediates
  if (r == 1) return i8x16.shuffle(lo, hi, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);
  if (r == 2) return i8x16.shuffle(lo, hi, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
  return i8x16.shuffle(lo, hi, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** Per lane k of the half `lo`: the minimum of lane k and lane k + r (lanes past 7 from the other half `hi`). */
@inline
function minWithTurned(lo: v128, hi: v128, r: i32): v128 {
  return i16x8.min_s(lo, turnLow(lo, hi, r));
}

/** The same with the maximum. */
@inline
function maxWithTurned(lo: v128, hi: v128, r: i32): v128 {
  return i16x8.max_s(lo, turnLow(lo, hi, r));
}

/**
 * cornerScore with the ring as 16 lanes: the minimum over each arc of 9 by doubling
 * (arcs of 2, 4, 8, then the 9th), for min(d) and max(d) at once, where the scalar loop
 * takes 144 steps. The same score exactly (the suite compares both builds' features).
 */
function cornerScoreSimd(p: usize, t: i32): i32 {
  const c = <i32>load<u8>(p);
  let lo = i16x8.splat(0);
  let hi = i16x8.splat(0);
  lo = i16x8.replace_lane(lo, 0, <i16>(c - ringAt(p, 0)));
  lo = i16x8.replace_lane(lo, 1, <i16>(c - ringAt(p, 1)));
  lo = i16x8.replace_lane(lo, 2, <i16>(c - ringAt(p, 2)));
  lo = i16x8.replace_lane(lo, 3, <i16>(c - ringAt(p, 3)));
  lo = i16x8.replace_lane(lo, 4, <i16>(c - ringAt(p, 4)));
  lo = i16x8.replace_lane(lo, 5, <i16>(c - ringAt(p, 5)));
  lo = i16x8.replace_lane(lo, 6, <i16>(c - ringAt(p, 6)));
  lo = i16x8.replace_lane(lo, 7, <i16>(c - ringAt(p, 7)));
  hi = i16x8.replace_lane(hi, 0, <i16>(c - ringAt(p, 8)));
  hi = i16x8.replace_lane(hi, 1, <i16>(c - ringAt(p, 9)));
  hi = i16x8.replace_lane(hi, 2, <i16>(c - ringAt(p, 10)));
  hi = i16x8.replace_lane(hi, 3, <i16>(c - ringAt(p, 11)));
  hi = i16x8.replace_lane(hi, 4, <i16>(c - ringAt(p, 12)));
  hi = i16x8.replace_lane(hi, 5, <i16>(c - ringAt(p, 13)));
  hi = i16x8.replace_lane(hi, 6, <i16>(c - ringAt(p, 14)));
  hi = i16x8.replace_lane(hi, 7, <i16>(c - ringAt(p, 15)));
  // arcs of 2, 4, then 8: lane k holds the arc from d[k]
  let minLo = minWithTurned(lo, hi, 1);
  let minHi = minWithTurned(hi, lo, 1);
  let maxLo = maxWithTurned(lo, hi, 1);
  let maxHi = maxWithTurned(hi, lo, 1);
  let a = minWithTurned(minLo, minHi, 2);
  minHi = minWithTurned(minHi, minLo, 2);
  minLo = a;
  a = maxWithTurned(maxLo, maxHi, 2);
  maxHi = maxWithTurned(maxHi, maxLo, 2);
  maxLo = a;
  a = minWithTurned(minLo, minHi, 4);
  minHi = minWithTurned(minHi, minLo, 4);
  minLo = a;
  a = maxWithTurned(maxLo, maxHi, 4);
  maxHi = maxWithTurned(maxHi, maxLo, 4);
  maxLo = a;
  // the 9th: lane k of the low half takes d[k + 8] (the high half), and the other way
  minLo = i16x8.min_s(minLo, hi);
  minHi = i16x8.min_s(minHi, lo);
  maxLo = i16x8.max_s(maxLo, hi);
  maxHi = i16x8.max_s(maxHi, lo);
  // best arc: max over lanes of min(d) and of min(-d) = -max(d)
  const zero = i16x8.splat(0);
  let m = i16x8.max_s(i16x8.max_s(minLo, minHi), i16x8.max_s(i16x8.sub(zero, maxLo), i16x8.sub(zero, maxHi)));
  m = i16x8.max_s(m, i8x16.shuffle(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  m = i16x8.max_s(m, i8x16.shuffle(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3));
  m = i16x8.max_s(m, i8x16.shuffle(m, m, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1));
  let best = <i32>i16x8.extract_lane_s(m, 0);
  // the scalar loop starts from 0 and caps each arc's minimum at 255
  if (best < 0) best = 0;
  return best - 1 >= t ? best - 1 : 0;
}

/** Whether the pixel at `p` is a corner at threshold t (scalar test, as the SIMD one). */
@inline
function isCornerScalar(p: usize, t: i32): bool {
  const c = <i32>load<u8>(p);
  const hi = c + t;
  const lo = c - t;
  // compass points 0, 4, 8, 12: an arc of 9 holds two neighbouring ones
  const a0 = ringAt(p, 0);
  const a4 = ringAt(p, 4);
  const a8 = ringAt(p, 8);
  const a12 = ringAt(p, 12);
  const b = (a0 > hi ? 1 : 0) | (a4 > hi ? 2 : 0) | (a8 > hi ? 4 : 0) | (a12 > hi ? 8 : 0);
  const d = (a0 < lo ? 1 : 0) | (a4 < lo ? 2 : 0) | (a8 < lo ? 4 : 0) | (a12 < lo ? 8 : 0);
  const pairB = b & ((b >> 1) | (b << 3)) & 15;
  const pairD = d & ((d >> 1) | (d << 3)) & 15;
  if (pairB == 0 && pairD == 0) return false;
  let runB = 0;
  let runD = 0;
  let maxB = 0;
  let maxD = 0;
  for (let k = 0; k < 25; k++) {
    const v = ringAt(p, k);
    runB = v > hi ? runB + 1 : 0;
    runD = v < lo ? runD + 1 : 0;
    if (runB > maxB) maxB = runB;
    if (runD > maxD) maxD = runD;
  }
  return maxB >= 9 || maxD >= 9;
}

/** Scores of row y, columns [x0, x1), into `out` (u8 per column, 0 for no corner). */
function scoreRow(img: usize, stride: i32, y: i32, x0: i32, x1: i32, t: i32, out: usize): void {
  const row = img + <usize>(y * stride);
  let x = x0;
  if (ASC_FEATURE_SIMD) {
    const tv = i8x16.splat(<i8>t);
    const nine = i8x16.splat(9);
    const one = i8x16.splat(1);
    for (; x + 16 <= x1; x += 16) {
      const p = row + <usize>x;
      const c = v128.load(p);
      const hi = i8x16.add_sat_u(c, tv);
      const lo = i8x16.sub_sat_u(c, tv);
      const a0 = v128.load(p + <usize>load<i32>(OFFSETS));
      const a4 = v128.load(p + <usize>load<i32>(OFFSETS + 16));
      const a8 = v128.load(p + <usize>load<i32>(OFFSETS + 32));
      const a12 = v128.load(p + <usize>load<i32>(OFFSETS + 48));
      const b0 = i8x16.gt_u(a0, hi);
      const b4 = i8x16.gt_u(a4, hi);
      const b8 = i8x16.gt_u(a8, hi);
      const b12 = i8x16.gt_u(a12, hi);
      const d0 = i8x16.lt_u(a0, lo);
      const d4 = i8x16.lt_u(a4, lo);
      const d8 = i8x16.lt_u(a8, lo);
      const d12 = i8x16.lt_u(a12, lo);
      const anyB = v128.or(v128.or(v128.and(b0, b4), v128.and(b4, b8)), v128.or(v128.and(b8, b12), v128.and(b12, b0)));
      const anyD = v128.or(v128.or(v128.and(d0, d4), v128.and(d4, d8)), v128.or(v128.and(d8, d12), v128.and(d12, d0)));
      const candidates = v128.or(anyB, anyD);
      if (!v128.any_true(candidates)) {
        v128.store(out + <usize>x, v128.splat<i8>(0));
        continue;
      }
      let runB = v128.splat<i8>(0);
      let runD = v128.splat<i8>(0);
      let maxB = runB;
      let maxD = runD;
      for (let k = 0; k < 25; k++) {
        const v = v128.load(p + <usize>load<i32>(OFFSETS + (<usize>(k & 15) << 2)));
        const isB = i8x16.gt_u(v, hi);
        const isD = i8x16.lt_u(v, lo);
        runB = v128.and(i8x16.add(runB, one), isB);
        runD = v128.and(i8x16.add(runD, one), isD);
        maxB = i8x16.max_u(maxB, runB);
        maxD = i8x16.max_u(maxD, runD);
      }
      const corners = v128.and(i8x16.ge_u(i8x16.max_u(maxB, maxD), nine), candidates);
      v128.store(out + <usize>x, v128.splat<i8>(0));
      if (v128.any_true(corners)) {
        // lanes chosen at run time: through memory. The score is the scalar build's function.
        v128.store(LANE, corners);
        for (let k = 0; k < 16; k++) {
          if (load<u8>(LANE + <usize>k) != 0) store<u8>(out + <usize>(x + k), <u8>cornerScore(p + <usize>k, t));
        }
      }
    }
  }
  for (; x < x1; x++) {
    const p = row + <usize>x;
    store<u8>(out + <usize>x, isCornerScalar(p, t) ? <u8>cornerScore(p, t) : 0);
  }
}

const LANE: usize = memory.data(16, 16);

/** Writes corner (x, y) with score s as the `count`-th, when there is room for it (below `max`); returns the new count. */
@inline
function keepCorner(xy: usize, scores: usize, count: i32, max: i32, x: i32, y: i32, s: i32): i32 {
  if (count >= max) return count;
  store<i16>(xy + (<usize>count << 2), <i16>x);
  store<i16>(xy + (<usize>count << 2) + 2, <i16>y);
  store<u8>(scores + <usize>count, <u8>s);
  return count + 1;
}

/** Lanes of the 16 scores `m` (at `mid`) above all 8 neighbours', from the rows at `above`, `mid` and `below`. */
@inline
function localMaxima(m: v128, above: usize, mid: usize, below: usize): v128 {
  const sides = v128.and(i8x16.gt_u(m, v128.load(mid - 1)), i8x16.gt_u(m, v128.load(mid + 1)));
  const up = v128.and(v128.and(i8x16.gt_u(m, v128.load(above - 1)), i8x16.gt_u(m, v128.load(above))), i8x16.gt_u(m, v128.load(above + 1)));
  const down = v128.and(v128.and(i8x16.gt_u(m, v128.load(below - 1)), i8x16.gt_u(m, v128.load(below))), i8x16.gt_u(m, v128.load(below + 1)));
  return v128.and(sides, v128.and(up, down));
}

/**
 * FAST-9 corners of the w x h grey image at `img` (row stride `stride`) at threshold t
 * (1-254), with non-maximum suppression, in the window [border, w - 1 - border] x
 * [border, h - 1 - border] (border >= 3; the scores of the pixel ring just outside it
 * take part in the suppression, as in the whole image). Writes (x, y) i16 pairs to
 * `xy` and scores (u8) to `scores`, row by row, at most `max`; returns the count.
 */
export function fastCorners(img: usize, w: i32, h: i32, stride: i32, t: i32, border: i32, xy: usize, scores: usize, max: i32): i32 {
  if (border < 3) border = 3;
  if (w < 2 * border + 1 || h < 2 * border + 1) return 0;
  setStride(stride);
  // scored region: one pixel beyond the output window, within FAST's own 3-pixel margin
  // (columns [sx0, sx1) and rows [sy0, sy1))
  const sx0 = border - 1 < 3 ? 3 : border - 1;
  const sx1 = w - border + 1 > w - 3 ? w - 3 : w - border + 1;
  const sy0 = sx0;
  const sy1 = h - border + 1 > h - 3 ? h - 3 : h - border + 1;
  const rowBytes = <usize>w + 32;
  const buf = SCORES.reserve(rowBytes * 3);
  memory.fill(buf, 0, rowBytes * 3);
  let count = 0;
  // rows sy0 - 1 .. sy1: row y's scores go to slot y % 3; row y - 1 is suppressed once row y is scored
  for (let y = sy0; y <= sy1; y++) {
    const cur = buf + <usize>(y % 3) * rowBytes;
    memory.fill(cur, 0, rowBytes);
    if (y < sy1) scoreRow(img, stride, y, sx0, sx1, t, cur);
    const yc = y - 1;
    if (yc < border || yc > h - 1 - border) continue;
    const above = buf + <usize>((yc + 2) % 3) * rowBytes;
    const mid = buf + <usize>(yc % 3) * rowBytes;
    let x = border;
    // the SIMD build compares 16 scores with their 8 neighbours at once (most are 0: no
    // corner), and takes the maxima in column order
    if (ASC_FEATURE_SIMD) {
      for (; x + 16 <= w - border; x += 16) {
        const m = v128.load(mid + <usize>x);
        if (!v128.any_true(m)) continue;
        let bits = i8x16.bitmask(localMaxima(m, above + <usize>x, mid + <usize>x, cur + <usize>x));
        while (bits != 0) {
          const k = ctz(bits);
          bits &= bits - 1;
          count = keepCorner(xy, scores, count, max, x + k, yc, <i32>load<u8>(mid + <usize>(x + k)));
        }
      }
    }
    for (; x <= w - 1 - border; x++) {
      const s = <i32>load<u8>(mid + <usize>x);
      if (s == 0) continue;
      if (s > <i32>load<u8>(mid + <usize>(x - 1)) && s > <i32>load<u8>(mid + <usize>(x + 1))
        && s > <i32>load<u8>(above + <usize>(x - 1)) && s > <i32>load<u8>(above + <usize>x) && s > <i32>load<u8>(above + <usize>(x + 1))
        && s > <i32>load<u8>(cur + <usize>(x - 1)) && s > <i32>load<u8>(cur + <usize>x) && s > <i32>load<u8>(cur + <usize>(x + 1))) {
        count = keepCorner(xy, scores, count, max, x, yc, s);
      }
    }
  }
  return count;
}

const IMAGE_XY: Block = staticBlock();
const IMAGE_SCORES: Block = staticBlock();

/**
 * FAST-9 corners of a whole w x h grey image at `img` at threshold t, as cv2.FAST finds
 * them (window border 3, suppression on): returns the count, the corners at fastXY() as
 * (x, y) i16 pairs and their scores at fastScores(). For the differential test.
 */
export function fastCornersOfImage(img: usize, w: i32, h: i32, t: i32): i32 {
  const cap = (w * h) / 4 + 16;
  return fastCorners(img, w, h, w, t, 3, IMAGE_XY.reserve(<usize>cap << 2), IMAGE_SCORES.reserve(<usize>cap), cap);
}

/** The corners of the last fastCornersOfImage. */
export function fastXY(): usize {
  return IMAGE_XY.ptr;
}

/** Their scores. */
export function fastScores(): usize {
  return IMAGE_SCORES.ptr;
}
