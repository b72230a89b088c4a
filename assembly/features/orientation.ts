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

/** The intensity-centroid moments at (x, y) (read with momentX / momentY); needs CENTROID_RADIUS of margin. */
export function centroidMoments(img: usize, stride: i32, x: i32, y: i32): void {
  if (!umaxReady) prepareDisc();
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

/** The angle byte of a direction: round(atan2(y, x) * 128 / pi) mod 256 (mirror: 128 - a). */
export function angleByte(x: f64, y: f64): i32 {
  if (x == 0.0 && y == 0.0) return 0;
  return (<i32>nearest(Math.atan2(y, x) * 128.0 / Math.PI)) & 255;
}
