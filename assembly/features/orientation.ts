// Features stage 5: orientation by the intensity centroid (Rosin; ORB's choice): the
// moments m10 = sum x I, m01 = sum y I over the disc of radius CENTROID_RADIUS around the
// keypoint, on the level's unsmoothed image. The direction (m10, m01) is kept as its
// exact integer moments: the descriptor rotates its pattern by cos = m10 / r,
// sin = m01 / r. A mirror image (x -> -x) negates m10 exactly, so its angle is pi - theta.

import { CENTROID_RADIUS } from './config';

/** Half-widths of the disc per row offset 0..R: umax[v] = floor(sqrt(R^2 - v^2)). */
const UMAX: usize = memory.data(4 * (CENTROID_RADIUS + 1));
let umaxReady = false;

function prepareDisc(): void {
  const r2 = CENTROID_RADIUS * CENTROID_RADIUS;
  for (let v = 0; v <= CENTROID_RADIUS; v++) {
    let u = CENTROID_RADIUS;
    while (u * u + v * v > r2) u--;
    store<i32>(UMAX + (<usize>v << 2), u);
  }
  umaxReady = true;
}

let m10: i32 = 0;
let m01: i32 = 0;

@inline export function momentX(): i32 { return m10; }
@inline export function momentY(): i32 { return m01; }

/**
 * For the SIMD build: per row offset v (-R..R) 32 byte lanes over du = -R..R + 1, 0xff
 * where |du| <= umax[|v|] (the disc), 0 elsewhere.
 */
const ROW_MASKS: usize = memory.data(32 * (2 * CENTROID_RADIUS + 1), 16);
/** du of the 32 lanes as i16 (four vectors of 8). */
const LANE_DU: usize = memory.data(64, 16);

function prepareMasks(): void {
  for (let v = -CENTROID_RADIUS; v <= CENTROID_RADIUS; v++) {
    const u = load<i32>(UMAX + (<usize>(v < 0 ? -v : v) << 2));
    const m = ROW_MASKS + (<usize>(v + CENTROID_RADIUS) << 5);
    for (let l = 0; l < 32; l++) {
      const du = l - CENTROID_RADIUS;
      store<u8>(m + <usize>l, du >= -u && du <= u ? 0xff : 0);
    }
  }
  for (let l = 0; l < 32; l++) store<i16>(LANE_DU + (<usize>l << 1), <i16>(l - CENTROID_RADIUS));
}

/** The intensity-centroid moments at (x, y) (read with momentX / momentY); needs CENTROID_RADIUS of margin. */
export function centroidMoments(img: usize, stride: i32, x: i32, y: i32): void {
  if (!umaxReady) {
    prepareDisc();
    if (ASC_FEATURE_SIMD) prepareMasks();
  }
  if (ASC_FEATURE_SIMD) {
    centroidMomentsSimd(img, stride, x, y);
    return;
  }
  let sx = 0;
  let sy = 0;
  const c = img + <usize>(y * stride + x);
  for (let v = -CENTROID_RADIUS; v <= CENTROID_RADIUS; v++) {
    const u = load<i32>(UMAX + (<usize>(v < 0 ? -v : v) << 2));
    const row = c + <usize>(v * stride);
    let rowSum = 0;
    for (let du = -u; du <= u; du++) {
      const value = <i32>load<u8>(row + <usize>du);
      sx += du * value;
      rowSum += value;
    }
    sy += v * rowSum;
  }
  m10 = sx;
  m01 = sy;
}

/**
 * centroidMoments over 32 lanes a row (du = -R..R + 1, the disc's by a mask): the same
 * integer sums. Reads one pixel past the disc on the right of each row (masked; within
 * EDGE's margin).
 */
function centroidMomentsSimd(img: usize, stride: i32, x: i32, y: i32): void {
  const d0 = v128.load(LANE_DU);
  const d1 = v128.load(LANE_DU, 16);
  const d2 = v128.load(LANE_DU, 32);
  const d3 = v128.load(LANE_DU, 48);
  let sx = i32x4.splat(0);
  let sy = 0;
  const c = img + <usize>(y * stride + x - CENTROID_RADIUS);
  for (let v = -CENTROID_RADIUS; v <= CENTROID_RADIUS; v++) {
    const row = c + <usize>(v * stride);
    const m = ROW_MASKS + (<usize>(v + CENTROID_RADIUS) << 5);
    const a = v128.and(v128.load(row), v128.load(m));
    const b = v128.and(v128.load(row, 16), v128.load(m, 16));
    const a0 = i16x8.extend_low_i8x16_u(a);
    const a1 = i16x8.extend_high_i8x16_u(a);
    const b0 = i16x8.extend_low_i8x16_u(b);
    const b1 = i16x8.extend_high_i8x16_u(b);
    sx = i32x4.add(sx, i32x4.add(i32x4.add(i32x4.dot_i16x8_s(a0, d0), i32x4.dot_i16x8_s(a1, d1)), i32x4.add(i32x4.dot_i16x8_s(b0, d2), i32x4.dot_i16x8_s(b1, d3))));
    const sums = i32x4.extadd_pairwise_i16x8_u(i16x8.add(i16x8.add(a0, a1), i16x8.add(b0, b1)));
    const rowSum = i32x4.extract_lane(sums, 0) + i32x4.extract_lane(sums, 1) + i32x4.extract_lane(sums, 2) + i32x4.extract_lane(sums, 3);
    sy += v * rowSum;
  }
  m10 = i32x4.extract_lane(sx, 0) + i32x4.extract_lane(sx, 1) + i32x4.extract_lane(sx, 2) + i32x4.extract_lane(sx, 3);
  m01 = sy;
}

/** The angle byte of a direction: round(atan2(y, x) * 128 / pi) mod 256 (mirror: 128 - a). */
export function angleByte(x: f64, y: f64): i32 {
  if (x == 0.0 && y == 0.0) return 0;
  return (<i32>nearest(Math.atan2(y, x) * 128.0 / Math.PI)) & 255;
}
