// ImagePHash: the 64-bit difference hash of decisions.md section 3.
//
//   1. (host) decode to 8-bit grey, RGB or RGBA;
//   2. luma Y = 0.299 R + 0.587 G + 0.114 B in floating point, RGBA composited over
//      white first (c' = c a / 255 + 255 (1 - a / 255));
//   3. separable triangle-filter resize to 9 x 8 (rows, then columns) in f64; along an
//      axis shrunk by s = in / out, output i is centred at (i + 0.5) s - 0.5 and takes
//      weights max(0, 1 - |x - centre| / max(s, 1)), taps outside dropped, normalised
//      to sum 1; then rounded to the nearest integer;
//   4. bit 8y + x = p[y][x] > p[y][x + 1], row by row, most significant bit first.
//
// The filter plan of each axis is computed once per input size and kept; the row pass
// keeps 9 values per input row in a grow-only block, so repeated calls allocate nothing.
// Both builds do the same arithmetic in the same order: their results are identical.

const OUT_W: i32 = 9;
const OUT_H: i32 = 8;

/** The 72 resized grey values (9 x 8, row-major), as bytes. */
const RESIZED: usize = memory.data(72);
/** The 8 hash bytes. */
const HASH: usize = memory.data(8);

// Per output sample of an axis: first input index (i32) and tap count (i32).
const X_SPANS: usize = memory.data(OUT_W * 8);
const Y_SPANS: usize = memory.data(OUT_H * 8);

let xWeights: usize = 0;
let xWeightsCap: usize = 0;
let xFor: i32 = -1;
let yWeights: usize = 0;
let yWeightsCap: usize = 0;
let yFor: i32 = -1;

let rowsOut: usize = 0;
let rowsOutCap: usize = 0;

/** More taps than one axis can need: each output spans at most 2 ceil(r) + 1 inputs, r = max(in / out, 1). */
function tapBound(inSize: i32, outSize: i32): usize {
  const r = <i32>Math.ceil(Math.max(<f64>inSize / <f64>outSize, 1.0));
  return <usize>outSize * <usize>(2 * r + 3);
}

/** Fills `spans` and `weights` (f64, normalised per output) for one axis. */
function prepareAxis(inSize: i32, outSize: i32, spans: usize, weights: usize): void {
  const s = <f64>inSize / <f64>outSize;
  const r = Math.max(s, 1.0);
  let w = weights;
  for (let i = 0; i < outSize; i++) {
    const c = (<f64>i + 0.5) * s - 0.5;
    let lo = <i32>Math.ceil(c - r);
    let hi = <i32>Math.floor(c + r);
    if (lo < 0) lo = 0;
    if (hi > inSize - 1) hi = inSize - 1;
    let sum = 0.0;
    for (let x = lo; x <= hi; x++) {
      const t = 1.0 - Math.abs(<f64>x - c) / r;
      const v = t > 0.0 ? t : 0.0;
      store<f64>(w + (<usize>(x - lo) << 3), v);
      sum += v;
    }
    const n = hi - lo + 1;
    for (let k = 0; k < n; k++) {
      const p = w + (<usize>k << 3);
      store<f64>(p, load<f64>(p) / sum);
    }
    store<i32>(spans + (<usize>i << 3), lo);
    store<i32>(spans + (<usize>i << 3), n, 4);
    w += <usize>n << 3;
  }
}

function growBlock(ptr: usize, cap: usize, need: usize): usize {
  if (need <= cap) return ptr;
  if (ptr != 0) heap.free(ptr);
  return heap.alloc(need);
}

function prepare(width: i32, height: i32): void {
  if (xFor != width) {
    const need = tapBound(width, OUT_W) << 3;
    if (need > xWeightsCap) { xWeights = growBlock(xWeights, xWeightsCap, need); xWeightsCap = need; }
    prepareAxis(width, OUT_W, X_SPANS, xWeights);
    xFor = width;
  }
  if (yFor != height) {
    const need = tapBound(height, OUT_H) << 3;
    if (need > yWeightsCap) { yWeights = growBlock(yWeights, yWeightsCap, need); yWeightsCap = need; }
    prepareAxis(height, OUT_H, Y_SPANS, yWeights);
    yFor = height;
  }
  const outNeed = <usize>height * <usize>(OUT_W << 3);
  if (outNeed > rowsOutCap) { rowsOut = growBlock(rowsOut, rowsOutCap, outNeed); rowsOutCap = outNeed; }
}

// Luma in integers first. With S = 299 R + 587 G + 114 B, the composite over white
// (c' = c a / 255 + 255 (1 - a / 255)) has luma exactly Y = T / 255000 with the integer
// T = (S - 255000) a + 65025000 (< 2^26). RGB is the case a = 255 (T = 255 S); grey
// uses the value itself (scale 1).
const RGB_SCALE: f64 = 1.0 / 255000.0;

// The row pass sums T and (x - start) T exactly (integers in f64, below 2^53 for
// intervals shorter than 2^14 pixels) over the intervals between the points where some
// output's triangle starts, peaks or ends; on each interval every output's weight is
// linear in x, so output i = sum over its intervals of alpha A + beta B.
const MAX_BOUNDS: i32 = 3 * OUT_W;
const BOUNDS: usize = memory.data(MAX_BOUNDS * 4);
let boundCount: i32 = 0;
/** Per output: first and end interval (i32 each). */
const OUT_INTERVALS: usize = memory.data(OUT_W * 8);
/** Per output and interval: alpha, beta (f64), row-major [i][k]. */
const ALPHA: usize = memory.data(OUT_W * MAX_BOUNDS * 8);
const BETA: usize = memory.data(OUT_W * MAX_BOUNDS * 8);
/** Per interval of the current row: A = sum T, B = sum (x - start) T. */
const SUM_A: usize = memory.data(MAX_BOUNDS * 8);
const SUM_B: usize = memory.data(MAX_BOUNDS * 8);
let rowPlanFor: i32 = -1;

function insertBound(v: i32): void {
  let n = boundCount;
  for (let k = 0; k < n; k++) if (load<i32>(BOUNDS + (<usize>k << 2)) == v) return;
  let k = n;
  while (k > 0 && load<i32>(BOUNDS + (<usize>(k - 1) << 2)) > v) {
    store<i32>(BOUNDS + (<usize>k << 2), load<i32>(BOUNDS + (<usize>(k - 1) << 2)));
    k--;
  }
  store<i32>(BOUNDS + (<usize>k << 2), v);
  boundCount = n + 1;
}

function boundIndex(v: i32): i32 {
  for (let k = 0; k < boundCount; k++) if (load<i32>(BOUNDS + (<usize>k << 2)) == v) return k;
  return -1;
}

/** The interval plan of the row pass for `width` input columns. */
function prepareRowPlan(width: i32): void {
  const s = <f64>width / <f64>OUT_W;
  const r = Math.max(s, 1.0);
  boundCount = 0;
  for (let i = 0; i < OUT_W; i++) {
    const lo = load<i32>(X_SPANS + (<usize>i << 3));
    const n = load<i32>(X_SPANS + (<usize>i << 3), 4);
    const c = (<f64>i + 0.5) * s - 0.5;
    let m = <i32>Math.floor(c) + 1;
    if (m < lo) m = lo;
    if (m > lo + n) m = lo + n;
    insertBound(lo);
    insertBound(m);
    insertBound(lo + n);
  }
  for (let i = 0; i < OUT_W; i++) {
    const lo = load<i32>(X_SPANS + (<usize>i << 3));
    const n = load<i32>(X_SPANS + (<usize>i << 3), 4);
    const c = (<f64>i + 0.5) * s - 0.5;
    // the normalising sum, as prepareAxis adds it
    let sum = 0.0;
    for (let x = lo; x < lo + n; x++) {
      const t = 1.0 - Math.abs(<f64>x - c) / r;
      sum += t > 0.0 ? t : 0.0;
    }
    const k0 = boundIndex(lo);
    const k1 = boundIndex(lo + n);
    store<i32>(OUT_INTERVALS + (<usize>i << 3), k0);
    store<i32>(OUT_INTERVALS + (<usize>i << 3), k1, 4);
    for (let k = k0; k < k1; k++) {
      const b = <f64>load<i32>(BOUNDS + (<usize>k << 2));
      const at = <usize>(i * MAX_BOUNDS + k) << 3;
      if (b <= c) {
        // rising side: weight 1 - (c - x) / r
        store<f64>(ALPHA + at, (1.0 - (c - b) / r) / sum);
        store<f64>(BETA + at, (1.0 / r) / sum);
      } else {
        // falling side: weight 1 - (x - c) / r
        store<f64>(ALPHA + at, (1.0 + (c - b) / r) / sum);
        store<f64>(BETA + at, -(1.0 / r) / sum);
      }
    }
  }
  rowPlanFor = width;
}

/** T of one pixel (the luma numerator above; grey: the value) as f64. */
@inline
function pixelT(p: usize, channels: i32): f64 {
  if (channels == 1) return <f64>load<u8>(p);
  const s = 299 * <i32>load<u8>(p) + 587 * <i32>load<u8>(p, 1) + 114 * <i32>load<u8>(p, 2);
  if (channels == 3) return <f64>(s * 255);
  return <f64>((s - 255000) * <i32>load<u8>(p, 3) + 65025000);
}

/** T of 4 pixels as i32 lanes (SIMD build only); reads exactly 4 * channels bytes. */
@inline
function pixelT4(p: usize, channels: i32): v128 {
  if (channels == 1) {
    return i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(p)));
  }
  if (channels == 3) {
    const px = v128.load32_lane(p + 8, v128.load64_zero(p), 2); // 12 bytes: R0 G0 B0 ... B3
    const coef = i16x8(299, 587, 114, 0, 299, 587, 114, 0);
    const zero = i32x4.splat(0);
    const dl = i32x4.dot_i16x8_s(i8x16.shuffle(px, zero, 0, 16, 1, 16, 2, 16, 16, 16, 3, 16, 4, 16, 5, 16, 16, 16), coef);
    const dh = i32x4.dot_i16x8_s(i8x16.shuffle(px, zero, 6, 16, 7, 16, 8, 16, 16, 16, 9, 16, 10, 16, 11, 16, 16, 16), coef);
    return i32x4.mul(i32x4.add(i32x4.shuffle(dl, dh, 0, 2, 4, 6), i32x4.shuffle(dl, dh, 1, 3, 5, 7)), i32x4.splat(255));
  }
  // one pixel per i32 lane: R | G << 8 | B << 16 | A << 24
  const px = v128.load(p);
  const lowBytes = i32x4.splat(0x00ff00ff);
  const rb = v128.and(px, lowBytes); // i16 pairs (R, B)
  const ga = v128.and(i32x4.shr_u(px, 8), lowBytes); // i16 pairs (G, A)
  const s = i32x4.add(i32x4.dot_i16x8_s(rb, i32x4.splat((114 << 16) | 299)), i32x4.dot_i16x8_s(ga, i32x4.splat(587)));
  return i32x4.add(i32x4.mul(i32x4.sub(s, i32x4.splat(255000)), i32x4.shr_u(px, 24)), i32x4.splat(65025000));
}

/**
 * A = sum T and B = sum (x - start) T over pixels start..end-1 of the row at `row`
 * into SUM_A / SUM_B slot k. The bulk runs in steps of 4 pixels, one running sum R and
 * one sum of running sums Q per lane j (the pixels start + 4u + j): then
 * sum_u u T = n R - Q for n steps, so B = sum_j 4 (n R_j - Q_j) + j R_j and A = sum_j R_j.
 * Every value is an integer below 2^53, so the sums are exact in f64 and the order of
 * the additions does not matter.
 */
@inline
function intervalSums(row: usize, start: i32, end: i32, channels: i32, k: i32): void {
  const steps = (end - start) >> 2;
  let r0 = 0.0;
  let r1 = 0.0;
  let r2 = 0.0;
  let r3 = 0.0;
  let q0 = 0.0;
  let q1 = 0.0;
  let q2 = 0.0;
  let q3 = 0.0;
  let p = row + <usize>(start * channels);
  const stride = <usize>(4 * channels);
  if (ASC_FEATURE_SIMD) {
    let r01 = f64x2.splat(0.0);
    let r23 = f64x2.splat(0.0);
    let q01 = f64x2.splat(0.0);
    let q23 = f64x2.splat(0.0);
    for (let u = 0; u < steps; u++) {
      const t = pixelT4(p, channels);
      r01 = f64x2.add(r01, f64x2.convert_low_i32x4_s(t));
      r23 = f64x2.add(r23, f64x2.convert_low_i32x4_s(i32x4.shuffle(t, t, 2, 3, 2, 3)));
      q01 = f64x2.add(q01, r01);
      q23 = f64x2.add(q23, r23);
      p += stride;
    }
    r0 = f64x2.extract_lane(r01, 0);
    r1 = f64x2.extract_lane(r01, 1);
    r2 = f64x2.extract_lane(r23, 0);
    r3 = f64x2.extract_lane(r23, 1);
    q0 = f64x2.extract_lane(q01, 0);
    q1 = f64x2.extract_lane(q01, 1);
    q2 = f64x2.extract_lane(q23, 0);
    q3 = f64x2.extract_lane(q23, 1);
  } else {
    const c = <usize>channels;
    for (let u = 0; u < steps; u++) {
      r0 += pixelT(p, channels);
      r1 += pixelT(p + c, channels);
      r2 += pixelT(p + 2 * c, channels);
      r3 += pixelT(p + 3 * c, channels);
      q0 += r0;
      q1 += r1;
      q2 += r2;
      q3 += r3;
      p += stride;
    }
  }
  const n = <f64>steps;
  let a = (r0 + r1) + (r2 + r3);
  let b = 4.0 * ((n * r0 - q0) + (n * r1 - q1) + (n * r2 - q2) + (n * r3 - q3)) + r1 + 2.0 * r2 + 3.0 * r3;
  for (let x = start + (steps << 2); x < end; x++) {
    const t = pixelT(row + <usize>(x * channels), channels);
    a += t;
    b += <f64>(x - start) * t;
  }
  store<f64>(SUM_A + (<usize>k << 3), a);
  store<f64>(SUM_B + (<usize>k << 3), b);
}

/** Rows first: each input row becomes 9 values (into rowsOut). */
@inline
function rowPass(src: usize, width: i32, height: i32, channels: i32): void {
  const rowBytes = <usize>width * <usize>channels;
  const intervals = boundCount - 1;
  for (let y = 0; y < height; y++) {
    const row = src + <usize>y * rowBytes;
    for (let k = 0; k < intervals; k++) {
      intervalSums(row, load<i32>(BOUNDS + (<usize>k << 2)), load<i32>(BOUNDS + (<usize>(k + 1) << 2)), channels, k);
    }
    const out = rowsOut + <usize>y * <usize>(OUT_W << 3);
    for (let i = 0; i < OUT_W; i++) {
      const k0 = load<i32>(OUT_INTERVALS + (<usize>i << 3));
      const k1 = load<i32>(OUT_INTERVALS + (<usize>i << 3), 4);
      let acc = 0.0;
      for (let k = k0; k < k1; k++) {
        const at = <usize>(i * MAX_BOUNDS + k) << 3;
        acc += load<f64>(ALPHA + at) * load<f64>(SUM_A + (<usize>k << 3)) + load<f64>(BETA + at) * load<f64>(SUM_B + (<usize>k << 3));
      }
      store<f64>(out + (<usize>i << 3), acc);
    }
  }
}

/** Resizes `width` x `height` pixels of `channels` (1, 3 or 4) bytes at `src` to 9 x 8 grey bytes. */
function resize(src: usize, width: i32, height: i32, channels: i32): void {
  prepare(width, height);
  if (rowPlanFor != width) prepareRowPlan(width);
  if (channels == 1) rowPass(src, width, height, 1);
  else if (channels == 3) rowPass(src, width, height, 3);
  else rowPass(src, width, height, 4);
  // Then columns: each of the 8 output rows is a weighted sum of input rows.
  const scale = channels == 1 ? 1.0 : RGB_SCALE;
  let w = yWeights;
  for (let j = 0; j < OUT_H; j++) {
    const lo = load<i32>(Y_SPANS + (<usize>j << 3));
    const n = load<i32>(Y_SPANS + (<usize>j << 3), 4);
    for (let i = 0; i < OUT_W; i++) {
      let acc = 0.0;
      let p = rowsOut + <usize>lo * <usize>(OUT_W << 3) + (<usize>i << 3);
      for (let k = 0; k < n; k++) {
        acc += load<f64>(w + (<usize>k << 3)) * load<f64>(p);
        p += <usize>(OUT_W << 3);
      }
      let v = Math.floor(acc * scale + 0.5);
      if (v < 0.0) v = 0.0;
      if (v > 255.0) v = 255.0;
      store<u8>(RESIZED + <usize>(j * OUT_W + i), <u8>v);
    }
    w += <usize>n << 3;
  }
}

/** Step 4 over 72 grey bytes at `grey`: the 8 hash bytes into HASH. */
function differenceBits(grey: usize): void {
  for (let y = 0; y < OUT_H; y++) {
    const row = grey + <usize>(y * OUT_W);
    let byte: u32 = 0;
    for (let x = 0; x < 8; x++) {
      byte = (byte << 1) | <u32>(load<u8>(row + <usize>x) > load<u8>(row + <usize>(x + 1)));
    }
    store<u8>(HASH + <usize>y, <u8>byte);
  }
}

/** Resizes the image at `src` to 9 x 8 grey bytes; returns their pointer (72 bytes, row-major). */
export function dhashResize(src: usize, width: i32, height: i32, channels: i32): usize {
  resize(src, width, height, channels);
  return RESIZED;
}

/** The ImagePHash of the image at `src`; returns the pointer of its 8 bytes. */
export function dhashFromPixels(src: usize, width: i32, height: i32, channels: i32): usize {
  resize(src, width, height, channels);
  differenceBits(RESIZED);
  return HASH;
}

/** The ImagePHash of 72 grey bytes (9 x 8, row-major) at `grey`; returns the pointer of its 8 bytes. */
export function dhashFromGrey72(grey: usize): usize {
  differenceBits(grey);
  return HASH;
}
