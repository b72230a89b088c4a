// The inner loop of the 11025 Hz resampler (the filter design lives in the host,
// src/lib/resample.ts): each output sample is one dot product of the input around its
// position with the polyphase filter of its phase. The host cuts long inputs into
// chunks, so `input` is a window of the signal and reads outside it are zeros only at
// the true ends of the signal.

/**
 * input: inLen f32; output: outLen f32; phases: den rows of `stride` f32 (taps padded
 * with zeros to a multiple of 4). Output n reads input[index - center ...] with the
 * filter of phase `rest`; both advance by stepWhole + stepRest / den per output.
 */
export function resampleRun(
  input: usize, inLen: i32, output: usize, outLen: i32,
  phases: usize, taps: i32, stride: i32, den: i32, stepWhole: i32, stepRest: i32,
  index0: i32, rest0: i32, center: i32,
): void {
  let index = index0;
  let rest = rest0;
  for (let n = 0; n < outLen; n++) {
    const start = index - center;
    const h = phases + (<usize>(rest * stride) << 2);
    let acc: f32 = 0;
    if (start >= 0 && start + stride <= inLen) {
      const x = input + (<usize>start << 2);
      if (ASC_FEATURE_SIMD) {
        let sum = f32x4.splat(0);
        for (let i: usize = 0; i < <usize>stride << 2; i += 16) {
          sum = f32x4.add(sum, f32x4.mul(v128.load(x + i), v128.load(h + i)));
        }
        acc = f32x4.extract_lane(sum, 0) + f32x4.extract_lane(sum, 1) + f32x4.extract_lane(sum, 2) + f32x4.extract_lane(sum, 3);
      } else {
        for (let i: usize = 0; i < <usize>taps << 2; i += 4) acc += load<f32>(x + i) * load<f32>(h + i);
      }
    } else {
      for (let i = 0; i < taps; i++) {
        const j = start + i;
        if (j >= 0 && j < inLen) acc += load<f32>(input + (<usize>j << 2)) * load<f32>(h + (<usize>i << 2));
      }
    }
    store<f32>(output + (<usize>n << 2), acc);
    index += stepWhole;
    rest += stepRest;
    if (rest >= den) {
      rest -= den;
      index++;
    }
  }
}
