// Features stage 6b: the 256-bit descriptor (rotated BRIEF over pattern.ts's tests): bit i
// is set when the smoothed level image is darker at the test's first point than at its
// second, both rotated by the keypoint's direction (cos, sin) and rounded to the nearest
// pixel (ties to even, so that a mirrored offset rounds to the mirrored pixel). Bit i is
// bit (i & 7) of byte i >> 3.
//
// The pattern point (a, b) is taken at p + a u + b v, u = (cos, sin), v = (-sin, cos).
// In the mirror image (x -> -x) the direction is (-cos, sin) and the same point lands on
// the mirror of p + a u - b v: test i of the mirror image is test i + 128 of the original
// and the other way round. So mirrorDescriptor swaps the two halves.

import { PATTERN, preparePattern } from './pattern';

/**
 * The pattern for the SIMD build, four tests a group: their x1, y1, x2, y2 as four f32
 * lanes each (64 groups of 64 bytes).
 */
const GROUPS: usize = memory.data(64 * 64, 16);
let groupsReady = false;

function prepareGroups(): void {
  preparePattern();
  for (let i = 0; i < 256; i++) {
    const g = GROUPS + (<usize>(i >> 2) << 6) + (<usize>(i & 3) << 2);
    for (let v = 0; v < 4; v++) store<f32>(g + (<usize>v << 4), <f32>load<i32>(PATTERN + (<usize>i << 4) + (<usize>v << 2)));
  }
  groupsReady = true;
}

/** The descriptor of the keypoint (x, y) of the smoothed image at `img`, direction (cos, sin), into 32 bytes at `out`. */
export function describe(img: usize, stride: i32, x: i32, y: i32, cos: f32, sin: f32, out: usize): void {
  if (ASC_FEATURE_SIMD) {
    describeSimd(img, stride, x, y, cos, sin, out);
    return;
  }
  preparePattern();
  const c = img + <usize>(y * stride + x);
  for (let byte = 0; byte < 32; byte++) {
    let bits: u32 = 0;
    for (let b = 0; b < 8; b++) {
      const e = PATTERN + (<usize>(byte * 8 + b) << 4);
      const ax = <f32>load<i32>(e);
      const ay = <f32>load<i32>(e, 4);
      const bx = <f32>load<i32>(e, 8);
      const by = <f32>load<i32>(e, 12);
      const x1 = <i32>nearest(ax * cos - ay * sin);
      const y1 = <i32>nearest(ax * sin + ay * cos);
      const x2 = <i32>nearest(bx * cos - by * sin);
      const y2 = <i32>nearest(bx * sin + by * cos);
      const v1 = load<u8>(c + <usize>(y1 * stride + x1));
      const v2 = load<u8>(c + <usize>(y2 * stride + x2));
      if (v1 < v2) bits |= <u32>1 << <u32>b;
    }
    store<u8>(out + <usize>byte, <u8>bits);
  }
}

/** The offset of the rotated points (x, y) of a group: nearest(x cos - y sin), nearest(x sin + y cos), as describe rounds them. */
@inline
function rotatedOffsets(x: v128, y: v128, cos: v128, sin: v128, stride: v128): v128 {
  const rx = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.sub(f32x4.mul(x, cos), f32x4.mul(y, sin))));
  const ry = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.add(f32x4.mul(x, sin), f32x4.mul(y, cos))));
  return i32x4.add(i32x4.mul(ry, stride), rx);
}

/** describe with four tests' points rotated at a time (the same f32 products, sums and rounding, so the same bits). */
function describeSimd(img: usize, stride: i32, x: i32, y: i32, cos: f32, sin: f32, out: usize): void {
  if (!groupsReady) prepareGroups();
  const c = img + <usize>(y * stride + x);
  const cv = f32x4.splat(cos);
  const sv = f32x4.splat(sin);
  const st = i32x4.splat(stride);
  for (let byte = 0; byte < 32; byte++) {
    let bits: u32 = 0;
    for (let half = 0; half < 2; half++) {
      const g = GROUPS + (<usize>(byte * 2 + half) << 6);
      const o1 = rotatedOffsets(v128.load(g), v128.load(g, 16), cv, sv, st);
      const o2 = rotatedOffsets(v128.load(g, 32), v128.load(g, 48), cv, sv, st);
      const shift = <u32>(half << 2);
      if (load<u8>(c + <usize>i32x4.extract_lane(o1, 0)) < load<u8>(c + <usize>i32x4.extract_lane(o2, 0))) bits |= <u32>1 << shift;
      if (load<u8>(c + <usize>i32x4.extract_lane(o1, 1)) < load<u8>(c + <usize>i32x4.extract_lane(o2, 1))) bits |= <u32>2 << shift;
      if (load<u8>(c + <usize>i32x4.extract_lane(o1, 2)) < load<u8>(c + <usize>i32x4.extract_lane(o2, 2))) bits |= <u32>4 << shift;
      if (load<u8>(c + <usize>i32x4.extract_lane(o1, 3)) < load<u8>(c + <usize>i32x4.extract_lane(o2, 3))) bits |= <u32>8 << shift;
    }
    store<u8>(out + <usize>byte, <u8>bits);
  }
}

/** The descriptor of the mirror image's keypoint: the two 16-byte halves swapped (`d` to `out`, not in place). */
export function mirrorDescriptor(d: usize, out: usize): void {
  memory.copy(out, d + 16, 16);
  memory.copy(out + 16, d, 16);
}
