// Features stage 2: the image pyramid. Level 0 is the analysis image; level l is level
// l - 1 resized by 1 / SCALE_FACTOR (bilinear, centred sampling, 7-bit fixed-point
// weights), down to MIN_LEVEL_SIDE. Each level also has a smoothed copy (a separable
// 7-tap binomial-like kernel, sigma about 1.7, borders replicated) that the descriptor
// samples, as BRIEF compares smoothed pixels. Integer arithmetic throughout: the SIMD and
// scalar builds give the same bytes.

import { LEVELS, MIN_LEVEL_SIDE, SCALE_FACTOR } from './config';
import { Block, staticBlock } from './block';

const ARENA: Block = staticBlock();
const TMP: Block = staticBlock();
const XPLAN: Block = staticBlock();
const VROW: Block = staticBlock();
/** Per level: width, height (i32), raw and smoothed image pointers (usize). */
const WIDTHS: usize = memory.data(4 * LEVELS);
const HEIGHTS: usize = memory.data(4 * LEVELS);
const RAW: usize = memory.data(sizeof<usize>() * LEVELS);
const SMOOTH: usize = memory.data(sizeof<usize>() * LEVELS);
let levelCount: i32 = 0;

@inline export function levels(): i32 { return levelCount; }
@inline export function levelWidth(l: i32): i32 { return load<i32>(WIDTHS + (<usize>l << 2)); }
@inline export function levelHeight(l: i32): i32 { return load<i32>(HEIGHTS + (<usize>l << 2)); }
@inline export function levelRaw(l: i32): usize { return load<usize>(RAW + (<usize>l * sizeof<usize>())); }
@inline export function levelSmooth(l: i32): usize { return load<usize>(SMOOTH + (<usize>l * sizeof<usize>())); }

/** The 7 taps of the smoothing kernel (sum 64). */
const K0: i32 = 14;
const K1: i32 = 12;
const K2: i32 = 8;
const K3: i32 = 5;

/** Bilinear resize of a w x h grey image to ow x oh (ow <= w, oh <= h), centred sampling. */
export function resizeBilinear(src: usize, w: i32, h: i32, dst: usize, ow: i32, oh: i32): void {
  // per output column: the left input index (i32) and its weight of the right one (0-128)
  const plan = XPLAN.reserve(<usize>ow << 3);
  const rx = <f64>w / <f64>ow;
  const ry = <f64>h / <f64>oh;
  for (let j = 0; j < ow; j++) {
    let sx = (<f64>j + 0.5) * rx - 0.5;
    if (sx < 0) sx = 0;
    let x0 = <i32>Math.floor(sx);
    let wx = <i32>Math.round((sx - <f64>x0) * 128.0);
    if (x0 >= w - 1) { x0 = w - 1; wx = 0; }
    store<i32>(plan + (<usize>j << 3), x0);
    store<i32>(plan + (<usize>j << 3) + 4, wx);
  }
  for (let i = 0; i < oh; i++) {
    let sy = (<f64>i + 0.5) * ry - 0.5;
    if (sy < 0) sy = 0;
    let y0 = <i32>Math.floor(sy);
    let wy = <i32>Math.round((sy - <f64>y0) * 128.0);
    if (y0 >= h - 1) { y0 = h - 1; wy = 0; }
    const r0 = src + <usize>(y0 * w);
    const r1 = y0 + 1 < h ? r0 + <usize>w : r0;
    const o = dst + <usize>(i * ow);
    if (ASC_FEATURE_SIMD) {
      blendRowsThenColumns(r0, r1, w, wy, plan, o, ow);
      continue;
    }
    for (let j = 0; j < ow; j++) {
      const x0 = load<i32>(plan + (<usize>j << 3));
      const wx = load<i32>(plan + (<usize>j << 3) + 4);
      const x1 = x0 + 1 < w ? x0 + 1 : x0;
      const top = <i32>load<u8>(r0 + <usize>x0) * (128 - wx) + <i32>load<u8>(r0 + <usize>x1) * wx;
      const bottom = <i32>load<u8>(r1 + <usize>x0) * (128 - wx) + <i32>load<u8>(r1 + <usize>x1) * wx;
      store<u8>(o + <usize>j, <u8>((top * (128 - wy) + bottom * wy + 8192) >> 14));
    }
  }
}

/**
 * One output row of resizeBilinear with the rows blended first, eight columns at a time
 * (r0 (128 - wy) + r1 wy fits a u16), then each output's two columns: the same integer
 * sum regrouped, so the same bytes.
 */
function blendRowsThenColumns(r0: usize, r1: usize, w: i32, wy: i32, plan: usize, o: usize, ow: i32): void {
  const blended = VROW.reserve(<usize>w << 1);
  const a = i16x8.splat(<i16>(128 - wy));
  const b = i16x8.splat(<i16>wy);
  let x = 0;
  for (; x + 8 <= w; x += 8) {
    const top = i16x8.extend_low_i8x16_u(v128.load64_zero(r0 + <usize>x));
    const bottom = i16x8.extend_low_i8x16_u(v128.load64_zero(r1 + <usize>x));
    v128.store(blended + (<usize>x << 1), i16x8.add(i16x8.mul(top, a), i16x8.mul(bottom, b)));
  }
  for (; x < w; x++) store<u16>(blended + (<usize>x << 1), <u16>(<i32>load<u8>(r0 + <usize>x) * (128 - wy) + <i32>load<u8>(r1 + <usize>x) * wy));
  for (let j = 0; j < ow; j++) {
    const x0 = load<i32>(plan + (<usize>j << 3));
    const wx = load<i32>(plan + (<usize>j << 3) + 4);
    const x1 = x0 + 1 < w ? x0 + 1 : x0;
    const v = <i32>load<u16>(blended + (<usize>x0 << 1)) * (128 - wx) + <i32>load<u16>(blended + (<usize>x1 << 1)) * wx;
    store<u8>(o + <usize>j, <u8>((v + 8192) >> 14));
  }
}

@inline
function clampIndex(i: i32, n: i32): i32 {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

@inline
function tapsAt(p: usize, step: usize): i32 {
  return K0 * <i32>load<u8>(p)
    + K1 * (<i32>load<u8>(p - step) + <i32>load<u8>(p + step))
    + K2 * (<i32>load<u8>(p - 2 * step) + <i32>load<u8>(p + 2 * step))
    + K3 * (<i32>load<u8>(p - 3 * step) + <i32>load<u8>(p + 3 * step));
}

@inline
function tapsVector(p: usize, step: usize): v128 {
  // u8 -> u16 lanes (8 at a time), weighted sum below 64 * 255
  let s = i16x8.mul(i16x8.extend_low_i8x16_u(v128.load(p)), i16x8.splat(<i16>K0));
  s = i16x8.add(s, i16x8.mul(i16x8.add(i16x8.extend_low_i8x16_u(v128.load(p - step)), i16x8.extend_low_i8x16_u(v128.load(p + step))), i16x8.splat(<i16>K1)));
  s = i16x8.add(s, i16x8.mul(i16x8.add(i16x8.extend_low_i8x16_u(v128.load(p - 2 * step)), i16x8.extend_low_i8x16_u(v128.load(p + 2 * step))), i16x8.splat(<i16>K2)));
  s = i16x8.add(s, i16x8.mul(i16x8.add(i16x8.extend_low_i8x16_u(v128.load(p - 3 * step)), i16x8.extend_low_i8x16_u(v128.load(p + 3 * step))), i16x8.splat(<i16>K3)));
  return i16x8.shr_u(i16x8.add(s, i16x8.splat(32)), 6);
}

/** The smoothed copy of a w x h grey image (7-tap separable, borders replicated); `tmp` holds (w + 6) x h bytes. */
export function smooth(src: usize, w: i32, h: i32, dst: usize): void {
  // horizontal pass into tmp, each row padded by 3 replicated pixels per side
  const pw = w + 6;
  const tmp = TMP.reserve(<usize>pw * <usize>(h + 6) + 16);
  const pad = TMP.ptr + <usize>pw * <usize>h; // one padded input row, after the h output rows
  for (let i = 0; i < h; i++) {
    const row = src + <usize>(i * w);
    for (let j = 0; j < 3; j++) {
      store<u8>(pad + <usize>j, load<u8>(row));
      store<u8>(pad + <usize>(w + 3 + j), load<u8>(row + <usize>(w - 1)));
    }
    memory.copy(pad + 3, row, <usize>w);
    const o = tmp + <usize>(i * w);
    let j = 0;
    if (ASC_FEATURE_SIMD) {
      for (; j + 8 <= w; j += 8) {
        const v = tapsVector(pad + <usize>(j + 3), 1);
        v128.store64_lane(o + <usize>j, i8x16.narrow_i16x8_u(v, v), 0);
      }
    }
    for (; j < w; j++) store<u8>(o + <usize>j, <u8>((tapsAt(pad + <usize>(j + 3), 1) + 32) >> 6));
  }
  // vertical pass: rows clamped at the borders
  for (let i = 0; i < h; i++) {
    const o = dst + <usize>(i * w);
    if (i >= 3 && i + 3 < h) {
      const c = tmp + <usize>(i * w);
      let j = 0;
      if (ASC_FEATURE_SIMD) {
        for (; j + 8 <= w; j += 8) {
          const v = tapsVector(c + <usize>j, <usize>w);
          v128.store64_lane(o + <usize>j, i8x16.narrow_i16x8_u(v, v), 0);
        }
      }
      for (; j < w; j++) store<u8>(o + <usize>j, <u8>((tapsAt(c + <usize>j, <usize>w) + 32) >> 6));
    } else {
      for (let j = 0; j < w; j++) {
        let s = 0;
        for (let t = -3; t <= 3; t++) {
          const k = t == 0 ? K0 : (t == 1 || t == -1 ? K1 : (t == 2 || t == -2 ? K2 : K3));
          s += k * <i32>load<u8>(tmp + <usize>(clampIndex(i + t, h) * w + j));
        }
        store<u8>(o + <usize>j, <u8>((s + 32) >> 6));
      }
    }
  }
}

/** Builds the pyramid of the w x h grey image at `src`; returns the number of levels (0 when level 0 is too small). */
export function buildPyramid(src: usize, w: i32, h: i32): i32 {
  levelCount = 0;
  if (w < MIN_LEVEL_SIDE || h < MIN_LEVEL_SIDE) return 0;
  // sizes first, then one arena for every level's two images
  let total: usize = 0;
  let n = 0;
  for (let l = 0; l < LEVELS; l++) {
    const f = Math.pow(SCALE_FACTOR, <f64>l);
    const lw = l == 0 ? w : <i32>Math.round(<f64>w / f);
    const lh = l == 0 ? h : <i32>Math.round(<f64>h / f);
    if (lw < MIN_LEVEL_SIDE || lh < MIN_LEVEL_SIDE) break;
    store<i32>(WIDTHS + (<usize>l << 2), lw);
    store<i32>(HEIGHTS + (<usize>l << 2), lh);
    total += (<usize>lw * <usize>lh + 16) * 2;
    n++;
  }
  const arena = ARENA.reserve(total);
  let at = arena;
  for (let l = 0; l < n; l++) {
    const size = <usize>levelWidth(l) * <usize>levelHeight(l) + 16;
    store<usize>(RAW + <usize>l * sizeof<usize>(), at);
    store<usize>(SMOOTH + <usize>l * sizeof<usize>(), at + size);
    at += 2 * size;
  }
  memory.copy(levelRaw(0), src, <usize>w * <usize>h);
  for (let l = 1; l < n; l++) {
    resizeBilinear(levelRaw(l - 1), levelWidth(l - 1), levelHeight(l - 1), levelRaw(l), levelWidth(l), levelHeight(l));
  }
  for (let l = 0; l < n; l++) smooth(levelRaw(l), levelWidth(l), levelHeight(l), levelSmooth(l));
  levelCount = n;
  return n;
}
