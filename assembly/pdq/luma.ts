// PDQ stage 1: luma of four image rows at once, in the interleaved layout the row
// filter works on (element j of the four rows is one 16-byte group: lane k = row k).
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

/** Luma of 4 consecutive pixels at `p` as f32 lanes (SIMD build only); reads exactly 4 * channels bytes. */
@inline
function luma4(p: usize, channels: i32): v128 {
  const z = i32x4.splat(0);
  if (channels == 3) {
    const px = v128.load32_lane(p + 8, v128.load64_zero(p), 2);
    const r = f32x4.convert_i32x4_u(i8x16.shuffle(px, z, 0, 16, 16, 16, 3, 16, 16, 16, 6, 16, 16, 16, 9, 16, 16, 16));
    const g = f32x4.convert_i32x4_u(i8x16.shuffle(px, z, 1, 16, 16, 16, 4, 16, 16, 16, 7, 16, 16, 16, 10, 16, 16, 16));
    const b = f32x4.convert_i32x4_u(i8x16.shuffle(px, z, 2, 16, 16, 16, 5, 16, 16, 16, 8, 16, 16, 16, 11, 16, 16, 16));
    return lumaOf4(r, g, b);
  }
  if (channels == 1) {
    const v = f32x4.convert_i32x4_u(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(p))));
    return lumaOf4(v, v, v);
  }
  const px = v128.load(p);
  const lane = i32x4.splat(255);
  const a = f32x4.convert_i32x4_u(i32x4.shr_u(px, 24));
  const r = overWhite4(f32x4.convert_i32x4_u(v128.and(px, lane)), a);
  const g = overWhite4(f32x4.convert_i32x4_u(v128.and(i32x4.shr_u(px, 8), lane)), a);
  const b = overWhite4(f32x4.convert_i32x4_u(v128.and(i32x4.shr_u(px, 16), lane)), a);
  return lumaOf4(r, g, b);
}

/** Stores the 4x4 transpose of rows r0..r3 (4 f32 each) as 4 consecutive vectors at `dst`. */
@inline
export function storeTransposed(dst: usize, r0: v128, r1: v128, r2: v128, r3: v128): void {
  const t0 = i32x4.shuffle(r0, r1, 0, 4, 1, 5);
  const t1 = i32x4.shuffle(r2, r3, 0, 4, 1, 5);
  const t2 = i32x4.shuffle(r0, r1, 2, 6, 3, 7);
  const t3 = i32x4.shuffle(r2, r3, 2, 6, 3, 7);
  v128.store(dst, i32x4.shuffle(t0, t1, 0, 1, 4, 5));
  v128.store(dst, i32x4.shuffle(t0, t1, 2, 3, 6, 7), 16);
  v128.store(dst, i32x4.shuffle(t2, t3, 0, 1, 4, 5), 32);
  v128.store(dst, i32x4.shuffle(t2, t3, 2, 3, 6, 7), 48);
}

/**
 * Luma of `width` pixels of the four rows at p0..p3 into `dst`, interleaved: the f32 of
 * row k, column j at dst + 16 j + 4 k.
 */
export function lumaInterleaved(p0: usize, p1: usize, p2: usize, p3: usize, width: i32, channels: i32, dst: usize): void {
  let j = 0;
  if (ASC_FEATURE_SIMD) {
    const step = <usize>(4 * channels);
    let off: usize = 0;
    for (; j + 4 <= width; j += 4) {
      storeTransposed(dst + (<usize>j << 4), luma4(p0 + off, channels), luma4(p1 + off, channels), luma4(p2 + off, channels), luma4(p3 + off, channels));
      off += step;
    }
  }
  for (; j < width; j++) {
    const off = <usize>(j * channels);
    const q = dst + (<usize>j << 4);
    store<f32>(q, lumaAt(p0 + off, channels));
    store<f32>(q, lumaAt(p1 + off, channels), 4);
    store<f32>(q, lumaAt(p2 + off, channels), 8);
    store<f32>(q, lumaAt(p3 + off, channels), 12);
  }
}
