// Folds the power spectrum into 12 pitch classes (chromaprint src/chroma.cpp, without
// interpolation as in "test2"): FFT bin i, at f = i * 11025 / 4096 Hz, adds its energy to
// note floor(12 * frac(log2(f / 27.5))) for the bins of 28..3520 Hz.
import { CHROMA_BANDS, FRAME_SIZE, MAX_FREQ, MIN_FREQ, SAMPLE_RATE } from './config';

const notes: usize = memory.data(FRAME_SIZE / 2, 16);
let minIndex: i32 = 0;
let maxIndex: i32 = 0;
let ready = false;

@inline function freqToIndex(freq: f64): i32 {
  // chromaprint rounds half away from zero; frequencies here are positive
  return <i32>Math.floor((<f64>FRAME_SIZE * freq) / <f64>SAMPLE_RATE + 0.5);
}

function prepare(): void {
  minIndex = max(1, freqToIndex(MIN_FREQ));
  maxIndex = min(FRAME_SIZE / 2, freqToIndex(MAX_FREQ));
  for (let i = minIndex; i < maxIndex; i++) {
    const freq = (<f64>i * <f64>SAMPLE_RATE) / <f64>FRAME_SIZE;
    const octave = Math.log(freq / (440.0 / 16.0)) / Math.log(2.0);
    const note = <i32>(<f64>CHROMA_BANDS * (octave - Math.floor(octave)));
    store<u8>(notes + <usize>i, <u8>note);
  }
  ready = true;
}

/** The pitch class (0..11) of FFT bin i, or -1 when the bin is outside 28..3520 Hz. */
export function noteOfBin(i: i32): i32 {
  if (!ready) prepare();
  if (i < minIndex || i >= maxIndex) return -1;
  return <i32>load<u8>(notes + <usize>i);
}

/** `power`: SPECTRUM_BINS f64; `features`: receives CHROMA_BANDS f64. */
export function chromaConsume(power: usize, features: usize): void {
  if (!ready) prepare();
  memory.fill(features, 0, <usize>CHROMA_BANDS << 3);
  for (let i = minIndex; i < maxIndex; i++) {
    const p = features + (<usize>load<u8>(notes + <usize>i) << 3);
    store<f64>(p, load<f64>(p) + load<f64>(power + (<usize>i << 3)));
  }
}
