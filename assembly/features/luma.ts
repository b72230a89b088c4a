// Features stage 1: the analysis image. 8-bit pixels (grey, RGB, or RGBA composited
// over white as PDQ and libvips' flatten do it) reduced to grey of about ANALYSIS_PIXELS
// pixels, aspect kept: first an integer box reduction by k (summing the channel bytes of
// k x k blocks: SIMD adds of whole rows, so a 12 MP photo costs about one read of its
// bytes), then an area-weighted (box) resample by the remaining factor, under 2, to the
// exact size. Both are centred, so a mirrored image gives the mirrored analysis image
// (up to the one pixel an odd remainder of the integer reduction leaves). Images under
// the target size are taken as they are (no upscaling).
//
// Luma: Y = (299 R + 587 G + 114 B) / 1000, the weights of decisions.md 3 (ImagePHash).

import { ANALYSIS_PIXELS } from './config';
import { Block, staticBlock } from './block';

const ACC: Block = staticBlock();
const STAGE1: Block = staticBlock();
const STAGE2: Block = staticBlock();
const OUT: Block = staticBlock();
const PLAN_X: Block = staticBlock();
const PLAN_Y: Block = staticBlock();

/** Taps per output of the area resample at most (a factor under 2 touches at most 3 inputs). */
const TAPS: i32 = 4;
/** A plan entry: the first input index (i32) and TAPS f32 weights. */
const PLAN_ENTRY: usize = 4 + 4 * <usize>TAPS;
/** Bytes past STAGE1's last value that rowsSimd may read (as zeros, under a weight of 0). */
const ROW_SLACK: usize = 4 * <usize>TAPS;

let outWidth: i32 = 0;
let outHeight: i32 = 0;

/** Width of the last analysis image. */
export function analysisWidth(): i32 {
  return outWidth;
}

/** Height of the last analysis image. */
export function analysisHeight(): i32 {
  return outHeight;
}

/** The integer box factor for a width x height image. */
function boxFactor(w: i32, h: i32): i32 {
  const s = Math.sqrt(<f64>w * <f64>h / ANALYSIS_PIXELS);
  const k = <i32>Math.floor(s);
  return k < 1 ? 1 : k;
}

/** The analysis size of a width x height image: sets outWidth, outHeight. */
export function planAnalysisSize(w: i32, h: i32): void {
  const s = Math.sqrt(<f64>w * <f64>h / ANALYSIS_PIXELS);
  if (s <= 1.0) {
    outWidth = w;
    outHeight = h;
    return;
  }
  const k = boxFactor(w, h);
  const w1 = w / k;
  const h1 = h / k;
  let w2 = <i32>Math.round(<f64>w / s);
  let h2 = <i32>Math.round(<f64>h / s);
  if (w2 < 1) w2 = 1;
  if (h2 < 1) h2 = 1;
  outWidth = w2 > w1 ? w1 : w2;
  outHeight = h2 > h1 ? h1 : h2;
}

/** Sums `n` bytes at `row` into the u16 accumulators at `acc`. */
function accumulateRow(acc: usize, row: usize, n: i32): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      const v = v128.load(row + <usize>i);
      const a = acc + (<usize>i << 1);
      v128.store(a, i16x8.add(v128.load(a), i16x8.extend_low_i8x16_u(v)));
      v128.store(a, i16x8.add(v128.load(a, 16), i16x8.extend_high_i8x16_u(v)), 16);
    }
  }
  for (; i < n; i++) {
    const a = acc + (<usize>i << 1);
    store<u16>(a, load<u16>(a) + <u16>load<u8>(row + <usize>i));
  }
}

/** One RGBA row composited over white (libvips flatten) into u16 accumulators of 3 channels per pixel. */
function accumulateRowRgba(acc: usize, row: usize, pixels: i32): void {
  for (let x = 0; x < pixels; x++) {
    const p = row + (<usize>x << 2);
    const a = <u32>load<u8>(p, 3);
    const q = acc + <usize>(x * 6);
    store<u16>(q, load<u16>(q) + <u16>((<u32>load<u8>(p) * a + 255 * (255 - a)) / 255));
    store<u16>(q + 2, load<u16>(q + 2) + <u16>((<u32>load<u8>(p, 1) * a + 255 * (255 - a)) / 255));
    store<u16>(q + 4, load<u16>(q + 4) + <u16>((<u32>load<u8>(p, 2) * a + 255 * (255 - a)) / 255));
  }
}

/**
 * Stage 1a: k x k block sums of the centred w1 x h1 blocks, as luma (f32, grey levels)
 * into STAGE1. k <= 256 (the u16 sums hold 256 rows of 255).
 */
function boxReduce(src: usize, w: i32, h: i32, channels: i32, k: i32, w1: i32, h1: i32): usize {
  if (k == 1) return lumaOfPixels(src, w * h, channels);
  const ox = (w - w1 * k) >> 1;
  const oy = (h - h1 * k) >> 1;
  const acc = ACC.reserve(<usize>w1 * <usize>k * 3 * 2 + 32);
  const out = STAGE1.reserve((<usize>w1 * <usize>h1 << 2) + ROW_SLACK);
  const accChannels = channels == 1 ? 1 : 3;
  const accValues = w1 * k * accChannels;
  const rowBytes = <usize>w * <usize>channels;
  const norm = <f64>1.0 / (<f64>k * <f64>k);
  for (let i = 0; i < h1; i++) {
    memory.fill(acc, 0, <usize>accValues << 1);
    for (let r = 0; r < k; r++) {
      const row = src + <usize>(oy + i * k + r) * rowBytes + <usize>ox * <usize>channels;
      if (channels == 4) accumulateRowRgba(acc, row, w1 * k);
      else accumulateRow(acc, row, accValues);
    }
    const o = out + (<usize>(i * w1) << 2);
    for (let j = 0; j < w1; j++) {
      let luma: f64;
      if (accChannels == 1) {
        let s: u32 = 0;
        const a = acc + (<usize>(j * k) << 1);
        for (let t = 0; t < k; t++) s += <u32>load<u16>(a + (<usize>t << 1));
        luma = <f64>s * norm;
      } else {
        let sr: u32 = 0;
        let sg: u32 = 0;
        let sb: u32 = 0;
        let a = acc + (<usize>(j * k * 3) << 1);
        for (let t = 0; t < k; t++) {
          sr += <u32>load<u16>(a);
          sg += <u32>load<u16>(a, 2);
          sb += <u32>load<u16>(a, 4);
          a += 6;
        }
        const sum: u64 = <u64>299 * <u64>sr + <u64>587 * <u64>sg + <u64>114 * <u64>sb;
        luma = <f64>sum * norm / 1000.0;
      }
      store<f32>(o + (<usize>j << 2), <f32>luma);
    }
  }
  return out;
}

/**
 * Stage 1a without a reduction (k = 1, the pictures of 0.3 to 1.2 MP): each pixel's luma
 * straight from its bytes, into STAGE1. The same values as the block sums give for k = 1:
 * sum / 1000 and sum * 0.001 round to the same f32 for every sum up to 255,000
 * (test/lib/features-analysis.test.ts checks all of them).
 */
function lumaOfPixels(src: usize, n: i32, channels: i32): usize {
  const out = STAGE1.reserve((<usize>n << 2) + ROW_SLACK);
  let i = 0;
  if (ASC_FEATURE_SIMD && channels == 3) i = lumaOfRgbSimd(src, n, out);
  if (channels == 1) {
    for (; i < n; i++) store<f32>(out + (<usize>i << 2), <f32>load<u8>(src + <usize>i));
    return out;
  }
  for (; i < n; i++) {
    const p = src + <usize>i * <usize>channels;
    let r = <u32>load<u8>(p);
    let g = <u32>load<u8>(p, 1);
    let b = <u32>load<u8>(p, 2);
    if (channels == 4) {
      const a = <u32>load<u8>(p, 3);
      r = (r * a + 255 * (255 - a)) / 255;
      g = (g * a + 255 * (255 - a)) / 255;
      b = (b * a + 255 * (255 - a)) / 255;
    }
    store<f32>(out + (<usize>i << 2), <f32>(<f64>(299 * r + 587 * g + 114 * b) * 0.001));
  }
  return out;
}

/** Four pixels' luma from their R, G, B (i32 lanes): 299 R + 587 G + 114 B as f32 (exact below 2^24), over 1000. */
@inline
function lumaOfFour(r: v128, g: v128, b: v128): v128 {
  const sum = i32x4.add(i32x4.add(i32x4.mul(r, i32x4.splat(299)), i32x4.mul(g, i32x4.splat(587))), i32x4.mul(b, i32x4.splat(114)));
  return f32x4.div(f32x4.convert_i32x4_u(sum), f32x4.splat(1000));
}

/**
 * lumaOfPixels for RGB, sixteen pixels at a time (the channels parted by shuffles), into
 * `out`; returns the first pixel it left to the scalar loop. The f32 quotient is the f64
 * one rounded to f32 (double rounding is harmless for a quotient of two f32 when f64
 * holds 2 x 24 + 2 bits: Figueroa), so the same values.
 */
function lumaOfRgbSimd(src: usize, n: i32, out: usize): i32 {
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const p = src + <usize>i * 3;
    const v0 = v128.load(p);
    const v1 = v128.load(p, 16);
    const v2 = v128.load(p, 32);
    // channel c of pixel k is byte 3k + c of the 48
    const r = i8x16.shuffle(i8x16.shuffle(v0, v1, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0), v2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
    const g = i8x16.shuffle(i8x16.shuffle(v0, v1, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0), v2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
    const b = i8x16.shuffle(i8x16.shuffle(v0, v1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0), v2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
    const rl = i16x8.extend_low_i8x16_u(r);
    const gl = i16x8.extend_low_i8x16_u(g);
    const bl = i16x8.extend_low_i8x16_u(b);
    const rh = i16x8.extend_high_i8x16_u(r);
    const gh = i16x8.extend_high_i8x16_u(g);
    const bh = i16x8.extend_high_i8x16_u(b);
    const o = out + (<usize>i << 2);
    v128.store(o, lumaOfFour(i32x4.extend_low_i16x8_u(rl), i32x4.extend_low_i16x8_u(gl), i32x4.extend_low_i16x8_u(bl)));
    v128.store(o, lumaOfFour(i32x4.extend_high_i16x8_u(rl), i32x4.extend_high_i16x8_u(gl), i32x4.extend_high_i16x8_u(bl)), 16);
    v128.store(o, lumaOfFour(i32x4.extend_low_i16x8_u(rh), i32x4.extend_low_i16x8_u(gh), i32x4.extend_low_i16x8_u(bh)), 32);
    v128.store(o, lumaOfFour(i32x4.extend_high_i16x8_u(rh), i32x4.extend_high_i16x8_u(gh), i32x4.extend_high_i16x8_u(bh)), 48);
  }
  return i;
}

/** The area-resample plan from `inLen` to `outLen` (outLen <= inLen) into `plan`. */
function planAxis(plan: Block, inLen: i32, outLen: i32): usize {
  const p = plan.reserve(<usize>outLen * PLAN_ENTRY);
  const r = <f64>inLen / <f64>outLen;
  for (let o = 0; o < outLen; o++) {
    const lo = <f64>o * r;
    const hi = <f64>(o + 1) * r;
    const first = <i32>Math.floor(lo);
    const e = p + <usize>o * PLAN_ENTRY;
    store<i32>(e, first);
    for (let t = 0; t < TAPS; t++) {
      const a = <f64>(first + t);
      const b = a + 1.0;
      let cover = (b < hi ? b : hi) - (a > lo ? a : lo);
      if (cover < 0.0 || first + t >= inLen) cover = 0.0;
      store<f32>(e + 4 + (<usize>t << 2), <f32>(cover / r));
    }
  }
  return p;
}

/**
 * Output row `o` of the column pass, four columns at a time: the same taps, products and
 * sums in the same order as tapped() (f32, no fused multiply-add), so the same bytes.
 * Returns the first column it left to the scalar loop.
 */
function columnsSimd(stage2: usize, w2: i32, h1: i32, e: usize, o: usize): i32 {
  const first = load<i32>(e);
  let taps = h1 - first;
  if (taps > TAPS) taps = TAPS;
  const lo = f32x4.splat(0);
  const hi = f32x4.splat(255);
  let j = 0;
  for (; j + 4 <= w2; j += 4) {
    let s = f32x4.splat(0);
    for (let t = 0; t < taps; t++) {
      const v = v128.load(stage2 + ((<usize>(first + t) * <usize>w2 + <usize>j) << 2));
      s = f32x4.add(s, f32x4.mul(f32x4.splat(load<f32>(e + 4 + (<usize>t << 2))), v));
    }
    const q = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.min(f32x4.max(s, lo), hi)));
    const bytes = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_s(q, q), i16x8.splat(0));
    store<u32>(o + <usize>j, i32x4.extract_lane(bytes, 0));
  }
  return j;
}

/**
 * Row `line` of the row pass, four outputs at a time: each output's TAPS (4) inputs read
 * as one vector from its first, times its TAPS weights, and the four products of each
 * output added in tap order across lanes after a transpose (f32, no fused multiply-add):
 * the same sums as tapped() gives, whose breaks only skip products of weight 0 (an
 * exact +0 added to a sum >= 0). Inputs past the row are the next row's, or ROW_SLACK's
 * zeros after the last: finite, under weight 0. Returns the first output it left to the
 * scalar loop.
 */
function rowsSimd(line: usize, plan: usize, w2: i32, o: usize): i32 {
  let j = 0;
  for (; j + 4 <= w2; j += 4) {
    const e = plan + <usize>j * PLAN_ENTRY;
    const p0 = f32x4.mul(v128.load(e, 4), v128.load(line + (<usize>load<i32>(e) << 2)));
    const p1 = f32x4.mul(v128.load(e, 4 + PLAN_ENTRY), v128.load(line + (<usize>load<i32>(e, PLAN_ENTRY) << 2)));
    const p2 = f32x4.mul(v128.load(e, 4 + 2 * PLAN_ENTRY), v128.load(line + (<usize>load<i32>(e, 2 * PLAN_ENTRY) << 2)));
    const p3 = f32x4.mul(v128.load(e, 4 + 3 * PLAN_ENTRY), v128.load(line + (<usize>load<i32>(e, 3 * PLAN_ENTRY) << 2)));
    // lane k of tap t: output j + k's product t
    const a = v128.shuffle<f32>(p0, p1, 0, 4, 1, 5);
    const b = v128.shuffle<f32>(p2, p3, 0, 4, 1, 5);
    const c = v128.shuffle<f32>(p0, p1, 2, 6, 3, 7);
    const d = v128.shuffle<f32>(p2, p3, 2, 6, 3, 7);
    const t0 = v128.shuffle<f32>(a, b, 0, 1, 4, 5);
    const t1 = v128.shuffle<f32>(a, b, 2, 3, 6, 7);
    const t2 = v128.shuffle<f32>(c, d, 0, 1, 4, 5);
    const t3 = v128.shuffle<f32>(c, d, 2, 3, 6, 7);
    v128.store(o + (<usize>j << 2), f32x4.add(f32x4.add(f32x4.add(t0, t1), t2), t3));
  }
  return j;
}

@inline
function tapped(line: usize, stride: usize, e: usize, limit: i32): f32 {
  const first = load<i32>(e);
  let s: f32 = 0.0;
  for (let t = 0; t < TAPS; t++) {
    if (first + t >= limit) break;
    const weight = load<f32>(e + 4 + (<usize>t << 2));
    // only the last taps weigh 0 (past the output's span): adding their +0 changes nothing
    if (weight == 0) break;
    s += weight * load<f32>(line + <usize>(first + t) * stride);
  }
  return s;
}

/**
 * The analysis image of `w` x `h` pixels of `channels` bytes at `src` (grey u8,
 * analysisWidth() x analysisHeight(), row-major); returns its pointer, or 0 when the
 * reduction would need more than 256 rows per block (a side over 256 times the target's).
 */
export function analysisLuma(src: usize, w: i32, h: i32, channels: i32): usize {
  planAnalysisSize(w, h);
  const k = boxFactor(w, h);
  if (k > 256) return 0;
  const w1 = w / k;
  const h1 = h / k;
  const w2 = outWidth;
  const h2 = outHeight;
  const out = OUT.reserve(<usize>w2 * <usize>h2);
  const stage1 = boxReduce(src, w, h, channels, k, w1, h1);
  if (w2 == w1 && h2 == h1) {
    for (let i = 0; i < w1 * h1; i++) {
      const v = load<f32>(stage1 + (<usize>i << 2));
      store<u8>(out + <usize>i, <u8>(<i32>nearest(v)));
    }
    return out;
  }
  // rows: w1 -> w2 into STAGE2 (h1 x w2), then columns: h1 -> h2
  const px = planAxis(PLAN_X, w1, w2);
  const py = planAxis(PLAN_Y, h1, h2);
  const stage2 = STAGE2.reserve(<usize>h1 * <usize>w2 << 2);
  memory.fill(stage1 + (<usize>(w1 * h1) << 2), 0, ROW_SLACK);
  for (let i = 0; i < h1; i++) {
    const line = stage1 + (<usize>(i * w1) << 2);
    const o = stage2 + (<usize>(i * w2) << 2);
    let j = 0;
    if (ASC_FEATURE_SIMD) j = rowsSimd(line, px, w2, o);
    for (; j < w2; j++) store<f32>(o + (<usize>j << 2), tapped(line, 4, px + <usize>j * PLAN_ENTRY, w1));
  }
  const colStride = <usize>w2 << 2;
  for (let i = 0; i < h2; i++) {
    const e = py + <usize>i * PLAN_ENTRY;
    const o = out + <usize>(i * w2);
    let j = 0;
    if (ASC_FEATURE_SIMD) j = columnsSimd(stage2, w2, h1, e, o);
    for (; j < w2; j++) {
      let v = tapped(stage2 + (<usize>j << 2), colStride, e, h1);
      if (v < 0) v = 0;
      if (v > 255) v = 255;
      store<u8>(o + <usize>j, <u8>(<i32>nearest(v)));
    }
  }
  return out;
}
