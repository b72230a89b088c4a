// Hamming window, as chromaprint prepares it: w[i] = 0.54 - 0.46 cos(2 pi i / (N - 1)),
// divided by 32767 because the reference feeds int16 samples straight into the window.
import { FRAME_SIZE } from './config';

// allocated once (too large for the static segment of a 2-page module)
let table: usize = 0;
let ready = false;

function prepare(): void {
  table = heap.alloc(<usize>FRAME_SIZE << 3);
  const scale = (2.0 * Math.PI) / <f64>(FRAME_SIZE - 1);
  for (let i = 0; i < FRAME_SIZE; i++) {
    store<f64>(table + (<usize>i << 3), (0.54 - 0.46 * Math.cos(scale * <f64>i)) / 32767.0);
  }
  ready = true;
}

/** The window coefficient i (including the 1/32767 sample scale). */
export function windowAt(i: i32): f64 {
  if (!ready) prepare();
  return load<f64>(table + (<usize>i << 3));
}

/** out[i] = samples[i] * w[i] for one frame; `samples` and `out` hold FRAME_SIZE f64. */
export function applyWindow(samples: usize, out: usize): void {
  if (!ready) prepare();
  if (ASC_FEATURE_SIMD) {
    for (let i: usize = 0; i < <usize>FRAME_SIZE * 8; i += 16) {
      v128.store(out + i, f64x2.mul(v128.load(samples + i), v128.load(table + i)));
    }
  } else {
    for (let i: usize = 0; i < <usize>FRAME_SIZE * 8; i += 8) {
      store<f64>(out + i, load<f64>(samples + i) * load<f64>(table + i));
    }
  }
}
