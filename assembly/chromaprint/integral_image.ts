// A rolling integral image over the last MAX_FILTER_WIDTH + 1 chroma rows
// (chromaprint src/utils/rolling_integral_image.h): cell (r, c) holds the sum of all
// rows <= r and columns <= c, so any rectangle's sum costs four loads.
import { CHROMA_BANDS, MAX_FILTER_WIDTH } from './config';

const CAPACITY: i32 = MAX_FILTER_WIDTH + 1;
const cells: usize = memory.data(CAPACITY * CHROMA_BANDS * 8, 16);
let rows: i32 = 0;

export function resetIntegralImage(): void {
  rows = 0;
}

export function integralRows(): i32 {
  return rows;
}

@inline function rowPtr(r: i32): usize {
  return cells + (<usize>((r % CAPACITY) * CHROMA_BANDS) << 3);
}

/** Appends one row of CHROMA_BANDS f64. */
export function integralAddRow(row: usize): void {
  const cur = rowPtr(rows);
  let sum: f64 = 0;
  if (rows > 0) {
    const prev = rowPtr(rows - 1);
    for (let c = 0; c < CHROMA_BANDS; c++) {
      sum += load<f64>(row + (<usize>c << 3));
      store<f64>(cur + (<usize>c << 3), sum + load<f64>(prev + (<usize>c << 3)));
    }
  } else {
    for (let c = 0; c < CHROMA_BANDS; c++) {
      sum += load<f64>(row + (<usize>c << 3));
      store<f64>(cur + (<usize>c << 3), sum);
    }
  }
  rows++;
}

/** Sum of rows r1..r2-1 and columns c1..c2-1 (both ranges half-open). */
export function area(r1: i32, c1: i32, r2: i32, c2: i32): f64 {
  if (r1 == r2 || c1 == c2) return 0;
  const b2 = rowPtr(r2 - 1);
  let v = load<f64>(b2 + (<usize>(c2 - 1) << 3));
  if (c1 > 0) v -= load<f64>(b2 + (<usize>(c1 - 1) << 3));
  if (r1 > 0) {
    const b1 = rowPtr(r1 - 1);
    v -= load<f64>(b1 + (<usize>(c2 - 1) << 3));
    if (c1 > 0) v += load<f64>(b1 + (<usize>(c1 - 1) << 3));
  }
  return v;
}
