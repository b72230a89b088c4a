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

/** The descriptor of the keypoint (x, y) of the smoothed image at `img`, direction (cos, sin), into 32 bytes at `out`. */
export function describe(img: usize, stride: i32, x: i32, y: i32, cos: f32, sin: f32, out: usize): void {
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

/** The descriptor of the mirror image's keypoint: the two 16-byte halves swapped (`d` to `out`, not in place). */
export function mirrorDescriptor(d: usize, out: usize): void {
  memory.copy(out, d + 16, 16);
  memory.copy(out + 16, d, 16);
}
