// Smooths chroma over time with the 5-tap filter {0.25, 0.75, 1.0, 0.75, 0.25}
// (chromaprint src/chroma_filter.cpp): the first output comes after 5 input rows, then
// one per row, each the weighted sum of the last 5 rows (oldest first).
import { CHROMA_BANDS, FILTER_TAPS } from './config';

const RING: i32 = 8;
const ring: usize = memory.data(RING * CHROMA_BANDS * 8, 16);
const coefficients: StaticArray<f64> = [0.25, 0.75, 1.0, 0.75, 0.25];
let offset: i32 = 0;
let size: i32 = 1;

export function resetChromaFilter(): void {
  offset = 0;
  size = 1;
}

/** Takes one row of CHROMA_BANDS f64 at `row`; returns true and writes `out` when a filtered row is ready. */
export function chromaFilterConsume(row: usize, out: usize): bool {
  memory.copy(ring + (<usize>(offset * CHROMA_BANDS) << 3), row, <usize>CHROMA_BANDS << 3);
  offset = (offset + 1) % RING;
  if (size < FILTER_TAPS) {
    size++;
    return false;
  }
  const first = (offset + RING - FILTER_TAPS) % RING;
  for (let i = 0; i < CHROMA_BANDS; i++) {
    let sum: f64 = 0;
    for (let j = 0; j < FILTER_TAPS; j++) {
      const r = (first + j) % RING;
      sum += load<f64>(ring + (<usize>(r * CHROMA_BANDS + i) << 3)) * unchecked(coefficients[j]);
    }
    store<f64>(out + (<usize>i << 3), sum);
  }
  return true;
}
