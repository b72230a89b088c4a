// Features stage 6a: the descriptor's sampling pattern, our own (OpenCV's learned ORB
// table is not used): 128 point pairs drawn from an isotropic Gaussian around the patch
// centre (sigma = 31 / 5, BRIEF's "G II"), inside the disc of radius PATTERN_RADIUS so a
// rotated pattern stays within the keypoint's margin, by a seeded xorshift32, and then
// each pair's reflection about the patch's x axis (y -> -y) as tests 128-255. A mirror
// image's descriptor is then this one with its two 16-byte halves swapped (descriptor.ts),
// which is how a query's mirrored set costs no second extraction.
// Pairs whose reflection is the pair itself or its reverse, or closer than 2 pixels, are
// drawn again.

import { PATTERN_RADIUS, PATTERN_SEED } from './config';

/** 256 tests x (x1, y1, x2, y2) as i32. */
export const PATTERN: usize = memory.data(256 * 16);
let ready = false;
let state: u32 = 0;

function nextU32(): u32 {
  let x = state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  state = x;
  return x;
}

/** A standard normal deviate (Box-Muller over two uniform draws in (0, 1)). */
function gaussian(): f64 {
  const u = (<f64>nextU32() + 1.0) / 4294967297.0;
  const v = (<f64>nextU32() + 1.0) / 4294967297.0;
  return Math.sqrt(-2.0 * Math.log(u)) * Math.cos(2.0 * Math.PI * v);
}

/** A point of the pattern: (x, y) packed as x * 256 + y + offsets. */
function drawPoint(): i32 {
  const sigma = 31.0 / 5.0;
  const r2 = PATTERN_RADIUS * PATTERN_RADIUS;
  while (true) {
    const x = <i32>Math.round(gaussian() * sigma);
    const y = <i32>Math.round(gaussian() * sigma);
    if (x * x + y * y <= r2) return ((x + 128) << 8) | (y + 128);
  }
}

@inline function px(p: i32): i32 { return (p >> 8) - 128; }
@inline function py(p: i32): i32 { return (p & 255) - 128; }

export function preparePattern(): void {
  if (ready) return;
  state = PATTERN_SEED;
  let n = 0;
  while (n < 128) {
    const a = drawPoint();
    const b = drawPoint();
    const ax = px(a);
    const ay = py(a);
    const bx = px(b);
    const by = py(b);
    const dx = ax - bx;
    const dy = ay - by;
    if (dx * dx + dy * dy < 4) continue;
    if (ay == 0 && by == 0) continue; // its reflection is itself
    if (ax == bx && ay == -by) continue; // its reflection is its reverse
    let duplicate = false;
    for (let i = 0; i < n; i++) {
      const e = PATTERN + (<usize>i << 4);
      const ex1 = load<i32>(e);
      const ey1 = load<i32>(e, 4);
      const ex2 = load<i32>(e, 8);
      const ey2 = load<i32>(e, 12);
      // the same test, its reflection, or either reversed
      if ((ex1 == ax && ex2 == bx && (ey1 == ay && ey2 == by || ey1 == -ay && ey2 == -by))
        || (ex1 == bx && ex2 == ax && (ey1 == by && ey2 == ay || ey1 == -by && ey2 == -ay))) {
        duplicate = true;
        break;
      }
    }
    if (duplicate) continue;
    const e = PATTERN + (<usize>n << 4);
    store<i32>(e, ax);
    store<i32>(e, ay, 4);
    store<i32>(e, bx, 8);
    store<i32>(e, by, 12);
    const m = PATTERN + (<usize>(n + 128) << 4);
    store<i32>(m, ax);
    store<i32>(m, -ay, 4);
    store<i32>(m, bx, 8);
    store<i32>(m, -by, 12);
    n++;
  }
  ready = true;
}
