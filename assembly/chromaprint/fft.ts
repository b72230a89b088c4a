// Power spectrum of one real frame of FRAME_SIZE samples: |X[k]|^2 for k = 0..N/2
// (chromaprint's FFTFrame). A real FFT of N points is done as a complex FFT of N/2
// points over (x[2m], x[2m+1]) followed by the usual split step; all twiddles and the
// bit-reversal table are computed once into static memory.
import { FRAME_SIZE, SPECTRUM_BINS } from './config';

const N: i32 = FRAME_SIZE;
const M: i32 = FRAME_SIZE / 2; // complex points
const LOG2M: i32 = 11;

// Complex twiddles of the M-point FFT, w_k = exp(-2 pi i k / M), k < M/2, each stored as
// (re, re, -im, im) so the SIMD build multiplies with two f64x2 products.
const twiddles: usize = memory.data(M / 2 * 32, 16);
// Split-step twiddles of the N-point real FFT, W_k = exp(-2 pi i k / N), k <= M, as (re, im).
// (allocated once: the static segment of a 2-page module cannot hold every table)
let splitTwiddles: usize = 0;
const bitrev: usize = memory.data(M * 2, 16);
let ready = false;

function prepare(): void {
  splitTwiddles = heap.alloc(<usize>(M + 1) << 4);
  for (let k = 0; k < M / 2; k++) {
    const a = (-2.0 * Math.PI * <f64>k) / <f64>M;
    const c = Math.cos(a);
    const s = Math.sin(a);
    const p = twiddles + (<usize>k << 5);
    store<f64>(p, c);
    store<f64>(p, c, 8);
    store<f64>(p, -s, 16);
    store<f64>(p, s, 24);
  }
  for (let k = 0; k <= M; k++) {
    const a = (-2.0 * Math.PI * <f64>k) / <f64>N;
    store<f64>(splitTwiddles + (<usize>k << 4), Math.cos(a));
    store<f64>(splitTwiddles + (<usize>k << 4), Math.sin(a), 8);
  }
  for (let i = 0; i < M; i++) {
    let r = 0;
    let v = i;
    for (let b = 0; b < LOG2M; b++) {
      r = (r << 1) | (v & 1);
      v >>= 1;
    }
    store<u16>(bitrev + (<usize>i << 1), <u16>r);
  }
  ready = true;
}

@inline function permute(z: usize): void {
  for (let i = 0; i < M; i++) {
    const j = <i32>load<u16>(bitrev + (<usize>i << 1));
    if (j > i) {
      const a = z + (<usize>i << 4);
      const b = z + (<usize>j << 4);
      const ar = load<f64>(a);
      const ai = load<f64>(a, 8);
      store<f64>(a, load<f64>(b));
      store<f64>(a, load<f64>(b, 8), 8);
      store<f64>(b, ar);
      store<f64>(b, ai, 8);
    }
  }
}

/** In-place radix-2 decimation-in-time FFT of M complex values (interleaved re, im). */
export function complexFft(z: usize): void {
  if (!ready) prepare();
  permute(z);
  for (let half = 1; half < M; half <<= 1) {
    const step = M / (half << 1);
    for (let start = 0; start < M; start += half << 1) {
      for (let j = 0; j < half; j++) {
        const w = twiddles + (<usize>(j * step) << 5);
        const pa = z + (<usize>(start + j) << 4);
        const pb = pa + (<usize>half << 4);
        if (ASC_FEATURE_SIMD) {
          const b = v128.load(pb);
          const t = f64x2.add(
            f64x2.mul(b, v128.load(w)),
            f64x2.mul(v128.shuffle<f64>(b, b, 1, 0), v128.load(w, 16)),
          );
          const a = v128.load(pa);
          v128.store(pa, f64x2.add(a, t));
          v128.store(pb, f64x2.sub(a, t));
        } else {
          const wr = load<f64>(w);
          const wi = load<f64>(w, 24);
          const br = load<f64>(pb);
          const bi = load<f64>(pb, 8);
          const tr = br * wr - bi * wi;
          const ti = br * wi + bi * wr;
          const ar = load<f64>(pa);
          const ai = load<f64>(pa, 8);
          store<f64>(pa, ar + tr);
          store<f64>(pa, ai + ti, 8);
          store<f64>(pb, ar - tr);
          store<f64>(pb, ai - ti, 8);
        }
      }
    }
  }
}

/**
 * `frame`: FRAME_SIZE windowed real samples (f64), overwritten as scratch.
 * `power`: SPECTRUM_BINS f64 receiving |X[k]|^2.
 */
export function powerSpectrum(frame: usize, power: usize): void {
  if (!ready) prepare();
  complexFft(frame); // (x[2m], x[2m+1]) is already the interleaved complex layout
  const z0r = load<f64>(frame);
  const z0i = load<f64>(frame, 8);
  store<f64>(power, (z0r + z0i) * (z0r + z0i));
  store<f64>(power + (<usize>M << 3), (z0r - z0i) * (z0r - z0i));
  for (let k = 1; k < M; k++) {
    const pk = frame + (<usize>k << 4);
    const pc = frame + (<usize>(M - k) << 4);
    const zr = load<f64>(pk);
    const zi = load<f64>(pk, 8);
    const cr = load<f64>(pc);
    const ci = -load<f64>(pc, 8); // conj(Z[M-k])
    const er = 0.5 * (zr + cr);
    const ei = 0.5 * (zi + ci);
    // O = (Z[k] - conj(Z[M-k])) / 2i
    const or = 0.5 * (zi - ci);
    const oi = -0.5 * (zr - cr);
    const w = splitTwiddles + (<usize>k << 4);
    const wr = load<f64>(w);
    const wi = load<f64>(w, 8);
    const xr = er + wr * or - wi * oi;
    const xi = ei + wr * oi + wi * or;
    store<f64>(power + (<usize>k << 3), xr * xr + xi * xi);
  }
}

export const POWER_BINS: i32 = SPECTRUM_BINS;
