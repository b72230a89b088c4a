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
// The filter weights of each axis are computed once per input size and kept; the
// row pass needs one luma row and one 9-value row per input row, in grow-only blocks,
// so repeated calls allocate nothing.

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

let lumaRow: usize = 0;
let lumaRowCap: usize = 0;
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
  const rowNeed = <usize>width << 3;
  if (rowNeed > lumaRowCap) { lumaRow = growBlock(lumaRow, lumaRowCap, rowNeed); lumaRowCap = rowNeed; }
  const outNeed = <usize>height * <usize>(OUT_W << 3);
  if (outNeed > rowsOutCap) { rowsOut = growBlock(rowsOut, rowsOutCap, outNeed); rowsOutCap = outNeed; }
}

// Luma in integers first. With S = 299 R + 587 G + 114 B, the composite over white
// (c' = c a / 255 + 255 (1 - a / 255)) has luma exactly
//   Y = (S a + 255000 (255 - a)) / 255000,
// and the numerator T is an exact integer (< 2^28). The luma row holds T (as f64) and
// the filter runs on T; the 72 results are scaled by 1 / 255000 once before rounding.
// So each pixel's luma is exact, and the only roundings are those of the filter sums,
// which makes the result agree with the definition evaluated term by term in f64 to
// the last bits. RGB is the a = 255 case (T = 255 S); grey stores the value itself
// (scale 1). Both builds do the same operations in the same order.
const RGB_SCALE: f64 = 1.0 / 255000.0;

@inline
function lumaNumerator(r: u32, g: u32, b: u32, a: u32): f64 {
  return <f64>((299 * r + 587 * g + 114 * b) * a + 255000 * (255 - a));
}

/** Luma of one input row into `lumaRow` (f64 per pixel: the grey value, or T for RGB and RGBA). */
function lumaOfRow(src: usize, width: i32, channels: i32): void {
  const dst = lumaRow;
  let x = 0;
  if (channels == 1) {
    if (ASC_FEATURE_SIMD) {
      for (; x + 4 <= width; x += 4) {
        const v = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(src + <usize>x)));
        const o = dst + (<usize>x << 3);
        v128.store(o, f64x2.convert_low_i32x4_u(v));
        v128.store(o, f64x2.convert_low_i32x4_u(i32x4.shuffle(v, v, 2, 3, 2, 3)), 16);
      }
    }
    for (; x < width; x++) {
      store<f64>(dst + (<usize>x << 3), <f64>load<u8>(src + <usize>x));
    }
  } else if (channels == 3) {
    if (ASC_FEATURE_SIMD) {
      // 4 pixels per step from a 16-byte load that stays inside the row (x + 6 <= width):
      // R G B spread to i16 lanes (R0 G0 B0 0 R1 G1 B1 0), weighted pairwise, pairs added.
      const zero = i32x4.splat(0);
      const a255 = i32x4.splat(255);
      const coef = i16x8(299, 587, 114, 0, 299, 587, 114, 0);
      for (; x + 6 <= width; x += 4) {
        const px = v128.load(src + <usize>x * 3);
        const dl = i32x4.dot_i16x8_s(i8x16.shuffle(px, zero, 0, 16, 1, 16, 2, 16, 16, 16, 3, 16, 4, 16, 5, 16, 16, 16), coef);
        const dh = i32x4.dot_i16x8_s(i8x16.shuffle(px, zero, 6, 16, 7, 16, 8, 16, 16, 16, 9, 16, 10, 16, 11, 16, 16, 16), coef);
        const sum = i32x4.add(i32x4.shuffle(dl, dh, 0, 2, 4, 6), i32x4.shuffle(dl, dh, 1, 3, 5, 7));
        storeLuma4(dst + (<usize>x << 3), sum, a255, zero);
      }
    }
    for (; x < width; x++) {
      const p = src + <usize>x * 3;
      store<f64>(dst + (<usize>x << 3), lumaNumerator(load<u8>(p), load<u8>(p, 1), load<u8>(p, 2), 255));
    }
  } else {
    if (ASC_FEATURE_SIMD) {
      const lowBytes = i32x4.splat(0x00ff00ff);
      const c255 = i32x4.splat(255);
      const kRB = i32x4.splat((114 << 16) | 299);
      const kG = i32x4.splat(587);
      for (; x + 4 <= width; x += 4) {
        // one pixel per i32 lane: R | G << 8 | B << 16 | A << 24
        const px = v128.load(src + (<usize>x << 2));
        const rb = v128.and(px, lowBytes); // i16 pairs (R, B)
        const ga = v128.and(i32x4.shr_u(px, 8), lowBytes); // i16 pairs (G, A)
        const sum = i32x4.add(i32x4.dot_i16x8_s(rb, kRB), i32x4.dot_i16x8_s(ga, kG));
        const alpha = i32x4.shr_u(px, 24);
        storeLuma4(dst + (<usize>x << 3), sum, alpha, i32x4.sub(c255, alpha));
      }
    }
    for (; x < width; x++) {
      const p = src + (<usize>x << 2);
      store<f64>(dst + (<usize>x << 3), lumaNumerator(load<u8>(p), load<u8>(p, 1), load<u8>(p, 2), load<u8>(p, 3)));
    }
  }
}

/**
 * lumaNumerator for 4 pixels from their integer parts (one i32 lane each): `sum` =
 * 299 R + 587 G + 114 B, `alpha` = a, `white` = 255 - a.
 */
@inline
function storeLuma4(dst: usize, sum: v128, alpha: v128, white: v128): void {
  const t = i32x4.add(i32x4.mul(sum, alpha), i32x4.mul(white, i32x4.splat(255000)));
  v128.store(dst, f64x2.convert_low_i32x4_s(t));
  v128.store(dst, f64x2.convert_low_i32x4_s(i32x4.shuffle(t, t, 2, 3, 2, 3)), 16);
}

/**
 * Sum of w[k] * l[k] for k < n, in four interleaved partial sums (taps k = 0, 1, 2, 3
 * mod 4) so the additions do not wait on each other, combined as (s0 + s1) + (s2 + s3),
 * then the last n mod 4 taps in order. Both builds add in exactly this order.
 */
@inline
function dot(w: usize, l: usize, n: i32): f64 {
  let k = 0;
  let acc = 0.0;
  if (ASC_FEATURE_SIMD) {
    let a0 = f64x2.splat(0.0);
    let a1 = f64x2.splat(0.0);
    for (; k + 4 <= n; k += 4) {
      const o = <usize>k << 3;
      a0 = f64x2.add(a0, f64x2.mul(v128.load(w + o), v128.load(l + o)));
      a1 = f64x2.add(a1, f64x2.mul(v128.load(w + o, 16), v128.load(l + o, 16)));
    }
    acc = (f64x2.extract_lane(a0, 0) + f64x2.extract_lane(a0, 1)) + (f64x2.extract_lane(a1, 0) + f64x2.extract_lane(a1, 1));
  } else {
    let s0 = 0.0;
    let s1 = 0.0;
    let s2 = 0.0;
    let s3 = 0.0;
    for (; k + 4 <= n; k += 4) {
      const o = <usize>k << 3;
      s0 += load<f64>(w + o) * load<f64>(l + o);
      s1 += load<f64>(w + o, 8) * load<f64>(l + o, 8);
      s2 += load<f64>(w + o, 16) * load<f64>(l + o, 16);
      s3 += load<f64>(w + o, 24) * load<f64>(l + o, 24);
    }
    acc = (s0 + s1) + (s2 + s3);
  }
  for (; k < n; k++) {
    acc += load<f64>(w + (<usize>k << 3)) * load<f64>(l + (<usize>k << 3));
  }
  return acc;
}

/** Resizes `width` x `height` pixels of `channels` (1, 3 or 4) bytes at `src` to 9 x 8 grey bytes. */
function resize(src: usize, width: i32, height: i32, channels: i32): void {
  prepare(width, height);
  const rowBytes = <usize>width * <usize>channels;
  // Rows first: each input row becomes 9 values.
  for (let y = 0; y < height; y++) {
    lumaOfRow(src + <usize>y * rowBytes, width, channels);
    const out = rowsOut + <usize>y * <usize>(OUT_W << 3);
    let w = xWeights;
    for (let i = 0; i < OUT_W; i++) {
      const lo = load<i32>(X_SPANS + (<usize>i << 3));
      const n = load<i32>(X_SPANS + (<usize>i << 3), 4);
      store<f64>(out + (<usize>i << 3), dot(w, lumaRow + (<usize>lo << 3), n));
      w += <usize>n << 3;
    }
  }
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
