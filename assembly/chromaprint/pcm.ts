// Float samples to the int16 the fingerprint takes, converted as swresample converts
// them (what fpcalc's samples go through): x * 32768 rounded to nearest, ties to even
// (lrintf), then clipped to [-32768, 32767]. NaN becomes 0 in both builds.

/**
 * Converts `len` f32 at `src` to i16 at `dst`. `dst` may equal `src`: each i16 is
 * written behind the f32 reads.
 */
export function int16FromFloat(src: usize, dst: usize, len: i32): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    const scale = f32x4.splat(32768);
    for (; i + 8 <= len; i += 8) {
      const p = src + (<usize>i << 2);
      // trunc_sat saturates (NaN to 0) and narrow saturates to the int16 range
      const a = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p), scale)));
      const b = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 16), scale)));
      v128.store(dst + (<usize>i << 1), i16x8.narrow_i32x4_s(a, b));
    }
  }
  for (; i < len; i++) {
    let x = nearest<f32>(load<f32>(src + (<usize>i << 2)) * 32768);
    if (x != x) x = 0;
    else if (x > 32767) x = 32767;
    else if (x < -32768) x = -32768;
    store<i16>(dst + (<usize>i << 1), <i16>x);
  }
}
