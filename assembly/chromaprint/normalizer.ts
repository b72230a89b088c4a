// Scales a chroma row to unit Euclidean length; rows whose norm is below 0.01 become
// all zeros (chromaprint src/chroma_normalizer.h, NormalizeVector threshold 0.01).
import { CHROMA_BANDS } from './config';

const THRESHOLD: f64 = 0.01;

export function normalizeRow(row: usize): void {
  let squares: f64 = 0;
  for (let i = 0; i < CHROMA_BANDS; i++) {
    const v = load<f64>(row + (<usize>i << 3));
    squares += v * v;
  }
  const norm = squares > 0 ? Math.sqrt(squares) : 0.0;
  if (norm < THRESHOLD) {
    memory.fill(row, 0, <usize>CHROMA_BANDS << 3);
    return;
  }
  for (let i = 0; i < CHROMA_BANDS; i++) {
    const p = row + (<usize>i << 3);
    store<f64>(p, load<f64>(p) / norm);
  }
}
