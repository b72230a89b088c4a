// PDQ stage 3: the quality score of the 64 x 64 image and its 16 x 16 DCT (rows 1-16
// of the 64-point DCT-II along each axis, the DC row skipped), both in f32 as Meta's
// pdqImageDomainQualityMetric and dct64To16 compute them: the matrix entries rounded
// to f32 once, each dot product summed in order k = 0..63 from 0.

/** D[i][k] = f32(f32(sqrt(2 / 64)) * cos(pi / 128 * (i + 1) * (2 k + 1))), 16 x 64, row-major. */
const D: usize = memory.data(16 * 64 * 4);
/** D transposed (64 x 16), for the second product's vector form. */
const DT: usize = memory.data(64 * 16 * 4);
/** T = D A (16 x 64). */
const T: usize = memory.data(16 * 64 * 4);
let ready = false;

function prepare(): void {
  const scale = <f64><f32>Math.sqrt(2.0 / 64.0);
  for (let i = 0; i < 16; i++) {
    for (let k = 0; k < 64; k++) {
      const v = <f32>(scale * Math.cos(Math.PI / 2.0 / 64.0 * <f64>(i + 1) * <f64>(2 * k + 1)));
      store<f32>(D + (<usize>(i * 64 + k) << 2), v);
      store<f32>(DT + (<usize>(k * 16 + i) << 2), v);
    }
  }
  ready = true;
}

/** The 16 x 16 DCT coefficients (row-major f32 at `out`) of the 64 x 64 f32 image at `a`. */
export function dct64To16(a: usize, out: usize): void {
  if (!ready) prepare();
  // T[i][j] = sum_k D[i][k] A[k][j]
  for (let i = 0; i < 16; i++) {
    const d = D + (<usize>(i * 64) << 2);
    const t = T + (<usize>(i * 64) << 2);
    if (ASC_FEATURE_SIMD) {
      for (let j = 0; j < 64; j += 4) {
        let s = f32x4.splat(0.0);
        let p = a + (<usize>j << 2);
        for (let k = 0; k < 64; k++) {
          s = f32x4.add(s, f32x4.mul(f32x4.splat(load<f32>(d + (<usize>k << 2))), v128.load(p)));
          p += 256;
        }
        v128.store(t + (<usize>j << 2), s);
      }
    } else {
      for (let j = 0; j < 64; j++) {
        let s: f32 = 0.0;
        let p = a + (<usize>j << 2);
        for (let k = 0; k < 64; k++) {
          s += load<f32>(d + (<usize>k << 2)) * load<f32>(p);
          p += 256;
        }
        store<f32>(t + (<usize>j << 2), s);
      }
    }
  }
  // B[i][j] = sum_k T[i][k] D[j][k]
  for (let i = 0; i < 16; i++) {
    const t = T + (<usize>(i * 64) << 2);
    const b = out + (<usize>(i * 16) << 2);
    if (ASC_FEATURE_SIMD) {
      for (let j = 0; j < 16; j += 4) {
        let s = f32x4.splat(0.0);
        let p = DT + (<usize>j << 2);
        for (let k = 0; k < 64; k++) {
          s = f32x4.add(s, f32x4.mul(f32x4.splat(load<f32>(t + (<usize>k << 2))), v128.load(p)));
          p += 64;
        }
        v128.store(b + (<usize>j << 2), s);
      }
    } else {
      for (let j = 0; j < 16; j++) {
        let s: f32 = 0.0;
        const d = D + (<usize>(j * 64) << 2);
        for (let k = 0; k < 64; k++) {
          s += load<f32>(t + (<usize>k << 2)) * load<f32>(d + (<usize>k << 2));
        }
        store<f32>(b + (<usize>j << 2), s);
      }
    }
  }
}

/** |(int)((u - v) * 100 / 255)| in f32, truncated toward zero as C's float-to-int conversion. */
@inline
function gradient(u: f32, v: f32): i32 {
  const d = <i32>(((u - v) * <f32>100.0) / <f32>255.0);
  return d < 0 ? -d : d;
}

/** The quality score (0-100) of the 64 x 64 f32 image at `a`: the sum of neighbour gradients over 90, capped at 100. */
export function quality64(a: usize): i32 {
  let sum = 0;
  for (let i = 0; i < 63; i++) {
    for (let j = 0; j < 64; j++) {
      const p = a + (<usize>(i * 64 + j) << 2);
      sum += gradient(load<f32>(p), load<f32>(p + 256));
    }
  }
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 63; j++) {
      const p = a + (<usize>(i * 64 + j) << 2);
      sum += gradient(load<f32>(p), load<f32>(p + 4));
    }
  }
  const q = sum / 90;
  return q > 100 ? 100 : q;
}
