// PDQ stage 1: luma of a group of eight image rows at once, in the interleaved layout the
// row filter works on (element j of the eight rows is 32 bytes: lane k = row k), and the
// moves between that layout and plain rows.
//
// Luma as Meta's fillFloatLumaFromRGB: Y = 0.299 R + 0.587 G + 0.114 B in f32, each
// product rounded to f32 and the sums taken left to right ((R + G) + B). Grey pixels
// are R = G = B (the decode of decisions.md 3 step 1 is RGB); RGBA is first composited
// over white to 8-bit RGB exactly as libvips' flatten does it, floor((c a + 255 (255 - a)) / 255),
// so the pixels hashed are the ones the fixtures' rgb_sha256 names.

const CR: f32 = 0.299;
const CG: f32 = 0.587;
const CB: f32 = 0.114;

@inline
function lumaOf(r: f32, g: f32, b: f32): f32 {
  return (CR * r + CG * g) + CB * b;
}

/** Composite of one 8-bit channel over white (libvips flatten, integer). */
@inline
function overWhite(c: u32, a: u32): f32 {
  return <f32>((c * a + 255 * (255 - a)) / 255);
}

/** Luma of the pixel at `p` (channels 1, 3 or 4). */
@inline
export function lumaAt(p: usize, channels: i32): f32 {
  if (channels == 3) return lumaOf(<f32>load<u8>(p), <f32>load<u8>(p, 1), <f32>load<u8>(p, 2));
  if (channels == 1) {
    const v = <f32>load<u8>(p);
    return lumaOf(v, v, v);
  }
  const a = <u32>load<u8>(p, 3);
  return lumaOf(overWhite(<u32>load<u8>(p), a), overWhite(<u32>load<u8>(p, 1), a), overWhite(<u32>load<u8>(p, 2), a));
}

@inline
function lumaOf4(r: v128, g: v128, b: v128): v128 {
  return f32x4.add(f32x4.add(f32x4.mul(f32x4.splat(CR), r), f32x4.mul(f32x4.splat(CG), g)), f32x4.mul(f32x4.splat(CB), b));
}

/** floor((c a + 255 (255 - a)) / 255) per lane: every value is an integer below 2^16, exact in f32. */
@inline
function overWhite4(c: v128, a: v128): v128 {
  const k = f32x4.splat(255.0);
  return f32x4.floor(f32x4.div(f32x4.add(f32x4.mul(c, a), f32x4.mul(k, f32x4.sub(k, a))), k));
}

/** Luma of 4 consecutive pixels from the 16 bytes `px` (RGB: 12 used; RGBA: all; grey: 4), as f32 lanes (SIMD build only). */
@inline
function luma4Of(px: v128, channels: i32): v128 {
  // byte swizzles with constant indexes (128: a zero byte), one pshufb each; every value
  // is below 2^31, so the signed conversion (one instruction) is exact
  if (channels == 3) {
    const r = f32x4.convert_i32x4_s(i8x16.swizzle(px, i8x16(0, -128, -128, -128, 3, -128, -128, -128, 6, -128, -128, -128, 9, -128, -128, -128)));
    const g = f32x4.convert_i32x4_s(i8x16.swizzle(px, i8x16(1, -128, -128, -128, 4, -128, -128, -128, 7, -128, -128, -128, 10, -128, -128, -128)));
    const b = f32x4.convert_i32x4_s(i8x16.swizzle(px, i8x16(2, -128, -128, -128, 5, -128, -128, -128, 8, -128, -128, -128, 11, -128, -128, -128)));
    return lumaOf4(r, g, b);
  }
  if (channels == 1) {
    const v = f32x4.convert_i32x4_s(i8x16.swizzle(px, i8x16(0, -128, -128, -128, 1, -128, -128, -128, 2, -128, -128, -128, 3, -128, -128, -128)));
    return lumaOf4(v, v, v);
  }
  const lane = i32x4.splat(255);
  const a = f32x4.convert_i32x4_s(i32x4.shr_u(px, 24));
  const r = overWhite4(f32x4.convert_i32x4_s(v128.and(px, lane)), a);
  const g = overWhite4(f32x4.convert_i32x4_s(v128.and(i32x4.shr_u(px, 8), lane)), a);
  const b = overWhite4(f32x4.convert_i32x4_s(v128.and(i32x4.shr_u(px, 16), lane)), a);
  return lumaOf4(r, g, b);
}

/** Luma of the 4 pixels at `p`, reading exactly their 4 * channels bytes. */
@inline
function luma4(p: usize, channels: i32): v128 {
  if (channels == 3) return luma4Of(v128.load32_lane(p + 8, v128.load64_zero(p), 2), 3);
  if (channels == 1) return luma4Of(v128.load32_zero(p), 1);
  return luma4Of(v128.load(p), 4);
}

/** Luma of the 4 pixels at `p` with one 16-byte load: only where 16 bytes from `p` are inside the row. */
@inline
function luma4Wide(p: usize, channels: i32): v128 {
  return luma4Of(v128.load(p), channels);
}

/** Rows in a group: the row passes run this many rows at once (two vectors of four lanes per element). */
export const GROUP: i32 = 8;
/** Bytes per element of a group (GROUP f32). */
export const ELEMENT: usize = 32;

/** Stores the 4x4 transpose of rows r0..r3 (4 f32 each) as 4 vectors, `stride` bytes apart, from `dst`. */
@inline
export function storeTransposed(dst: usize, stride: usize, r0: v128, r1: v128, r2: v128, r3: v128): void {
  const t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5);
  const t1 = i32x4.shuffle(r2, r3, 0, 4, 1, 5);
  const t2 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  const t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  v128.store(dst, i32x4.shuffle(t0, t1, 0, 1, 4, 5));
  v128.store(dst + stride, i32x4.shuffle(t0, t1, 2, 3, 6, 7));
  v128.store(dst + 2 * stride, i32x4.shuffle(t2, t3, 0, 1, 4, 5));
  v128.store(dst + 3 * stride, i32x4.shuffle(t2, t3, 2, 3, 6, 7));
}

/**
 * Luma of `width` pixels of the GROUP rows whose addresses are at `rows` (usize each)
 * into `dst`, interleaved: the f32 of row k, column j at dst + ELEMENT j + 4 k.
 */
export function lumaInterleaved(rows: usize, width: i32, channels: i32, dst: usize): void {
  const p0 = load<usize>(rows);
  const p1 = load<usize>(rows, sizeof<usize>());
  const p2 = load<usize>(rows, 2 * sizeof<usize>());
  const p3 = load<usize>(rows, 3 * sizeof<usize>());
  const p4 = load<usize>(rows, 4 * sizeof<usize>());
  const p5 = load<usize>(rows, 5 * sizeof<usize>());
  const p6 = load<usize>(rows, 6 * sizeof<usize>());
  const p7 = load<usize>(rows, 7 * sizeof<usize>());
  let j = 0;
  if (ASC_FEATURE_SIMD) {
    const step = <usize>(4 * channels);
    let off: usize = 0;
    // 16-byte loads while they stay inside the row (RGB: 5 1/3 pixels, grey: 16), then exact ones
    const wideEnd = channels == 3 ? width - 6 : channels == 1 ? width - 16 : width - 4;
    for (; j <= wideEnd; j += 4) {
      const q = dst + <usize>j * ELEMENT;
      storeTransposed(q, ELEMENT, luma4Wide(p0 + off, channels), luma4Wide(p1 + off, channels), luma4Wide(p2 + off, channels), luma4Wide(p3 + off, channels));
      storeTransposed(q + 16, ELEMENT, luma4Wide(p4 + off, channels), luma4Wide(p5 + off, channels), luma4Wide(p6 + off, channels), luma4Wide(p7 + off, channels));
      off += step;
    }
    for (; j + 4 <= width; j += 4) {
      const q = dst + <usize>j * ELEMENT;
      storeTransposed(q, ELEMENT, luma4(p0 + off, channels), luma4(p1 + off, channels), luma4(p2 + off, channels), luma4(p3 + off, channels));
      storeTransposed(q + 16, ELEMENT, luma4(p4 + off, channels), luma4(p5 + off, channels), luma4(p6 + off, channels), luma4(p7 + off, channels));
      off += step;
    }
  }
  for (; j < width; j++) {
    const off = <usize>(j * channels);
    const q = dst + <usize>j * ELEMENT;
    store<f32>(q, lumaAt(p0 + off, channels));
    store<f32>(q, lumaAt(p1 + off, channels), 4);
    store<f32>(q, lumaAt(p2 + off, channels), 8);
    store<f32>(q, lumaAt(p3 + off, channels), 12);
    store<f32>(q, lumaAt(p4 + off, channels), 16);
    store<f32>(q, lumaAt(p5 + off, channels), 20);
    store<f32>(q, lumaAt(p6 + off, channels), 24);
    store<f32>(q, lumaAt(p7 + off, channels), 28);
  }
}

/** Interleaves the GROUP f32 rows (width values each) whose addresses are at `rows` into `dst`. */
export function interleaveRows(rows: usize, width: i32, dst: usize): void {
  for (let g: usize = 0; g < 2; g++) {
    const r0 = load<usize>(rows + (4 * g) * sizeof<usize>());
    const r1 = load<usize>(rows + (4 * g + 1) * sizeof<usize>());
    const r2 = load<usize>(rows + (4 * g + 2) * sizeof<usize>());
    const r3 = load<usize>(rows + (4 * g + 3) * sizeof<usize>());
    const base = dst + (g << 4);
    let j = 0;
    if (ASC_FEATURE_SIMD) {
      for (; j + 4 <= width; j += 4) {
        const o = <usize>j << 2;
        storeTransposed(base + <usize>j * ELEMENT, ELEMENT, v128.load(r0 + o), v128.load(r1 + o), v128.load(r2 + o), v128.load(r3 + o));
      }
    }
    for (; j < width; j++) {
      const o = <usize>j << 2;
      const q = base + <usize>j * ELEMENT;
      store<f32>(q, load<f32>(r0 + o));
      store<f32>(q, load<f32>(r1 + o), 4);
      store<f32>(q, load<f32>(r2 + o), 8);
      store<f32>(q, load<f32>(r3 + o), 12);
    }
  }
}

/** The inverse: lanes 0..n-1 of the interleaved `src` (width elements) to the rows whose addresses are at `rows`. */
export function deinterleaveRows(src: usize, width: i32, n: i32, rows: usize): void {
  for (let g = 0; g < 2; g++) {
    if (ASC_FEATURE_SIMD && n >= 4 * g + 4) {
      const r0 = load<usize>(rows + <usize>(4 * g) * sizeof<usize>());
      const r1 = load<usize>(rows + <usize>(4 * g + 1) * sizeof<usize>());
      const r2 = load<usize>(rows + <usize>(4 * g + 2) * sizeof<usize>());
      const r3 = load<usize>(rows + <usize>(4 * g + 3) * sizeof<usize>());
      const base = src + (<usize>g << 4);
      let j = 0;
      for (; j + 4 <= width; j += 4) {
        const q = base + <usize>j * ELEMENT;
        // four elements (each rows 4g..4g+3) transposed into four rows of four columns
        const e0 = v128.load(q);
        const e1 = v128.load(q + ELEMENT);
        const e2 = v128.load(q + 2 * ELEMENT);
        const e3 = v128.load(q + 3 * ELEMENT);
        const t0 = i32x4.shuffle(e0, e1, 0, 4, 1, 5);
        const t1 = i32x4.shuffle(e2, e3, 0, 4, 1, 5);
        const t2 = i32x4.shuffle(e0, e1, 2, 6, 3, 7);
        const t3 = i32x4.shuffle(e2, e3, 2, 6, 3, 7);
        const o = <usize>j << 2;
        v128.store(r0 + o, i32x4.shuffle(t0, t1, 0, 1, 4, 5));
        v128.store(r1 + o, i32x4.shuffle(t0, t1, 2, 3, 6, 7));
        v128.store(r2 + o, i32x4.shuffle(t2, t3, 0, 1, 4, 5));
        v128.store(r3 + o, i32x4.shuffle(t2, t3, 2, 3, 6, 7));
      }
      for (; j < width; j++) {
        const q = base + <usize>j * ELEMENT;
        const o = <usize>j << 2;
        store<f32>(r0 + o, load<f32>(q));
        store<f32>(r1 + o, load<f32>(q, 4));
        store<f32>(r2 + o, load<f32>(q, 8));
        store<f32>(r3 + o, load<f32>(q, 12));
      }
    } else {
      for (let k = 4 * g; k < 4 * g + 4 && k < n; k++) {
        const r = load<usize>(rows + <usize>k * sizeof<usize>());
        let q = src + (<usize>k << 2);
        for (let j = 0; j < width; j++) {
          store<f32>(r + (<usize>j << 2), load<f32>(q));
          q += ELEMENT;
        }
      }
    }
  }
}
