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
// brighter and darker ring pixels per lane); the score is the same scalar function in
// both builds.

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
    for (let x = border; x <= w - 1 - border; x++) {
      const s = <i32>load<u8>(mid + <usize>x);
      if (s == 0) continue;
      if (s > <i32>load<u8>(mid + <usize>(x - 1)) && s > <i32>load<u8>(mid + <usize>(x + 1))
        && s > <i32>load<u8>(above + <usize>(x - 1)) && s > <i32>load<u8>(above + <usize>x) && s > <i32>load<u8>(above + <usize>(x + 1))
        && s > <i32>load<u8>(cur + <usize>(x - 1)) && s > <i32>load<u8>(cur + <usize>x) && s > <i32>load<u8>(cur + <usize>(x + 1))) {
        if (count < max) {
          store<i16>(xy + (<usize>count << 2), <i16>x);
          store<i16>(xy + (<usize>count << 2) + 2, <i16>yc);
          store<u8>(scores + <usize>count, <u8>s);
          count++;
        }
      }
    }
  }
  return count;
}
