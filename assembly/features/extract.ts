// The extraction pipeline, wired in one place: analysis image (luma.ts) -> pyramid
// (pyramid.ts) -> FAST-9 per level (fast.ts) -> the best by FAST score per level, then
// the Harris response (harris.ts) -> one ranking over all levels that spreads features
// over the image -> orientation (orientation.ts) and descriptor (descriptor.ts) of the
// first maxFeatures -> packed features.
//
// Ranking: each level gets a quota of candidates, CANDIDATE_FACTOR x maxFeatures split
// over levels in proportion to 1 / SCALE_FACTOR^l (flatter than the levels' areas, so a
// copy shown at a third of the size still finds coarse features of the original); the
// candidates are sorted by Harris response, and each one's rank among the earlier ones
// of its grid cell (GRID x GRID over the image, any level) weighs it down by CELL_DECAY
// per rank. Sorting by the weighted response gives "strongest first, spread out": any
// prefix of the list is a spread set, so a stored set is the first features of a query's.
//
// Packed feature (FEATURE_BYTES = 40, little-endian):
//   0  u16  x: (column + 0.5) / level width, times 65536 (clamped to 65535)
//   2  u16  y: the same for the row
//   4  u8   angle: round(atan2(m01, m10) * 128 / pi) mod 256
//   5  u8   level (scale SCALE_FACTOR^level in the analysis image)
//   6  u16  0 (reserved)
//   8  32 B descriptor (bit i = bit i & 7 of byte i >> 3)

import {
  CANDIDATE_FACTOR, CELL_DECAY, CENTROID_RADIUS, DESCRIPTOR_OFFSET, EDGE, FAST_THRESHOLD, FEATURE_BYTES, GRID, MAX_FEATURES,
  SCALE_FACTOR,
} from './config';
import { Block, staticBlock } from './block';
import { analysisLuma, analysisWidth, analysisHeight } from './luma';
import { buildPyramid, levelHeight, levelRaw, levelSmooth, levelWidth } from './pyramid';
import { fastCorners } from './fast';
import { harrisResponse } from './harris';
import { angleByte, centroidMoments, momentX, momentY } from './orientation';
import { describe } from './descriptor';
import { innerPicture, noInnerPicture } from './inner';
import { sortByKeyDescending } from './sort';

const FAST_XY: Block = staticBlock();
const FAST_SCORES: Block = staticBlock();
const CAND_X: Block = staticBlock();
const CAND_Y: Block = staticBlock();
const CAND_LEVEL: Block = staticBlock();
const CAND_KEY: Block = staticBlock();
const CAND_ORDER: Block = staticBlock();
const OUTPUT: Block = staticBlock();
const HISTOGRAM: usize = memory.data(256 * 4);
const CELL_RANK: usize = memory.data(4 * GRID * GRID);

let candidates: i32 = 0;
let extracted: i32 = 0;

/** Candidates ranked by the last extraction (for tests and tuning). */
export function lastCandidates(): i32 {
  return candidates;
}

/** The packed features of the last extraction. */
export function featuresOutput(): usize {
  return OUTPUT.ptr;
}

/** The smallest FAST score among the `quota` best of `n` scores (u8 at `scores`): the cut of the histogram. */
function scoreCut(scores: usize, n: i32, quota: i32): i32 {
  memory.fill(HISTOGRAM, 0, 256 * 4);
  for (let i = 0; i < n; i++) {
    const a = HISTOGRAM + (<usize>load<u8>(scores + <usize>i) << 2);
    store<i32>(a, load<i32>(a) + 1);
  }
  let seen = 0;
  for (let s = 255; s > 0; s--) {
    seen += load<i32>(HISTOGRAM + (<usize>s << 2));
    if (seen >= quota) return s;
  }
  return 1;
}

/** Appends level l's best corners (by FAST score, at most `quota`) with a positive Harris response. */
function levelCandidates(l: i32, quota: i32): void {
  const w = levelWidth(l);
  const h = levelHeight(l);
  const img = levelRaw(l);
  const cap = (w * h) / 4 + 16;
  const xy = FAST_XY.reserve(<usize>cap << 2);
  const scores = FAST_SCORES.reserve(<usize>cap);
  const n = fastCorners(img, w, h, w, FAST_THRESHOLD, EDGE, xy, scores, cap);
  const cut = scoreCut(scores, n, quota);
  // all above the cut, then those at the cut in row order until the quota is full
  let above = 0;
  for (let i = 0; i < n; i++) if (<i32>load<u8>(scores + <usize>i) > cut) above++;
  let atCut = quota - above;
  for (let i = 0; i < n; i++) {
    const s = <i32>load<u8>(scores + <usize>i);
    if (s < cut) continue;
    if (s == cut) {
      if (atCut <= 0) continue;
      atCut--;
    }
    const x = <i32>load<i16>(xy + (<usize>i << 2));
    const y = <i32>load<i16>(xy + (<usize>i << 2) + 2);
    const r = harrisResponse(img, w, x, y);
    if (r <= 0.0) continue;
    const c = <usize>candidates;
    store<i16>(CAND_X.ptr + (c << 1), <i16>x);
    store<i16>(CAND_Y.ptr + (c << 1), <i16>y);
    store<u8>(CAND_LEVEL.ptr + c, <u8>l);
    store<f64>(CAND_KEY.ptr + (c << 3), r);
    candidates++;
  }
}

@inline
function cellOf(c: usize): i32 {
  const l = <i32>load<u8>(CAND_LEVEL.ptr + c);
  const x = <f64>load<i16>(CAND_X.ptr + (c << 1));
  const y = <f64>load<i16>(CAND_Y.ptr + (c << 1));
  let cx = <i32>((x + 0.5) / <f64>levelWidth(l) * <f64>GRID);
  let cy = <i32>((y + 0.5) / <f64>levelHeight(l) * <f64>GRID);
  if (cx >= GRID) cx = GRID - 1;
  if (cy >= GRID) cy = GRID - 1;
  return cy * GRID + cx;
}

@inline
function coordinate(v: i32, size: i32): u16 {
  const q = <i32>Math.floor((<f64>v + 0.5) / <f64>size * 65536.0 + 0.5);
  return <u16>(q > 65535 ? 65535 : q);
}

/** Ranks the candidates for `max` and packs the first `max` (at most `keep`) into OUTPUT; returns how many. */
function rankAndDescribe(max: i32, keep: i32): i32 {
  const n = candidates;
  const order = CAND_ORDER.reserve(<usize>n << 2);
  for (let i = 0; i < n; i++) store<u32>(order + (<usize>i << 2), <u32>i);
  sortByKeyDescending(order, n, CAND_KEY.ptr);
  memory.fill(CELL_RANK, 0, 4 * GRID * GRID);
  for (let i = 0; i < n; i++) {
    const c = <usize>load<u32>(order + (<usize>i << 2));
    const cell = CELL_RANK + (<usize>cellOf(c) << 2);
    const rank = load<i32>(cell);
    store<i32>(cell, rank + 1);
    const key = CAND_KEY.ptr + (c << 3);
    store<f64>(key, load<f64>(key) * Math.pow(CELL_DECAY, <f64>rank));
  }
  for (let i = 0; i < n; i++) store<u32>(order + (<usize>i << 2), <u32>i);
  sortByKeyDescending(order, n, CAND_KEY.ptr);
  let count = n < max ? n : max;
  if (count > keep) count = keep; // the first `keep` of the ranking for `max`: the same features
  const room: i32 = count > 0 ? count : 1;
  const out = OUTPUT.reserve(<usize>room * <usize>FEATURE_BYTES);
  for (let i = 0; i < count; i++) {
    const c = <usize>load<u32>(order + (<usize>i << 2));
    const l = <i32>load<u8>(CAND_LEVEL.ptr + c);
    const x = <i32>load<i16>(CAND_X.ptr + (c << 1));
    const y = <i32>load<i16>(CAND_Y.ptr + (c << 1));
    const w = levelWidth(l);
    centroidMoments(levelRaw(l), w, x, y);
    const mx = <f64>momentX();
    const my = <f64>momentY();
    const r = Math.sqrt(mx * mx + my * my);
    const cos = r > 0 ? <f32>(mx / r) : <f32>1.0;
    const sin = r > 0 ? <f32>(my / r) : <f32>0.0;
    const f = out + <usize>(i * FEATURE_BYTES);
    store<u16>(f, coordinate(x, w));
    store<u16>(f, coordinate(y, levelHeight(l)), 2);
    store<u8>(f, <u8>angleByte(mx, my), 4);
    store<u8>(f, <u8>l, 5);
    store<u16>(f, 0, 6);
    describe(levelSmooth(l), w, x, y, cos, sin, f + <usize>DESCRIPTOR_OFFSET);
  }
  return count;
}

/**
 * Features of an analysis image (grey, w x h at `luma`), at most `max`, of which the first
 * `keep` are described and answered (the same as the first `keep` of all `max`: what a
 * record keeps, without describing what it would drop); returns the count (0 when too
 * small).
 */
export function extractFromAnalysis(luma: usize, w: i32, h: i32, max: i32, keep: i32): i32 {
  candidates = 0;
  extracted = 0;
  if (max > MAX_FEATURES) max = MAX_FEATURES;
  if (max <= 0) return 0;
  const n = buildPyramid(luma, w, h);
  if (n == 0) return 0;
  // level quotas in proportion to 1 / SCALE_FACTOR^l
  let total = 0.0;
  for (let l = 0; l < n; l++) total += Math.pow(SCALE_FACTOR, -<f64>l);
  let capacity = 0;
  for (let l = 0; l < n; l++) capacity += <i32>Math.ceil(<f64>(max * CANDIDATE_FACTOR) * Math.pow(SCALE_FACTOR, -<f64>l) / total);
  CAND_X.reserve(<usize>capacity << 1);
  CAND_Y.reserve(<usize>capacity << 1);
  CAND_LEVEL.reserve(<usize>capacity);
  CAND_KEY.reserve(<usize>capacity << 3);
  for (let l = 0; l < n; l++) {
    levelCandidates(l, <i32>Math.ceil(<f64>(max * CANDIDATE_FACTOR) * Math.pow(SCALE_FACTOR, -<f64>l) / total));
  }
  extracted = rankAndDescribe(max, keep);
  return extracted;
}

/**
 * Features of `w` x `h` pixels of `channels` bytes (1 grey, 3 RGB, 4 RGBA over white) at
 * `src`, at most `max` (the first `keep` of them), packed at featuresOutput(); returns the
 * count. With `inner`, the inner picture (inner.ts) is looked for on the same analysis
 * image first (innerPictureBox()).
 */
export function extractFeatures(src: usize, w: i32, h: i32, channels: i32, max: i32, keep: i32, inner: bool): i32 {
  noInnerPicture();
  const luma = analysisLuma(src, w, h, channels);
  if (luma == 0) {
    candidates = 0;
    return 0;
  }
  if (inner) innerPicture(luma, analysisWidth(), analysisHeight());
  return extractFromAnalysis(luma, analysisWidth(), analysisHeight(), max, keep);
}

// the radius the orientation needs is within the keypoints' margin
assert(CENTROID_RADIUS < EDGE);
