// The quality figures, as pure functions over scores (higher = closer: a similarity
// 0-100, or the bits two hashes share): how often each service rule matches, the
// distribution of scores for same-file and different-file pairs, the ROC curve over all
// thresholds, its area, and the threshold where false matches reach a given rate.
import { below, type Random } from './random.js';

/** Scores counted by value; `none` counts pairs that could not be compared (never a match). */
export interface Histogram {
  counts: Record<string, number>;
  none: number;
}

export const emptyHistogram = (): Histogram => ({ counts: {}, none: 0 });

export function addScore(h: Histogram, score: number | null): void {
  if (score === null || !Number.isFinite(score)) h.none++;
  else h.counts[score] = (h.counts[score] ?? 0) + 1;
}

export function histogramTotal(h: Histogram): number {
  let n = h.none;
  for (const c of Object.values(h.counts)) n += c;
  return n;
}

/** How many of the histogram's pairs score at least `threshold`. */
export function atLeast(h: Histogram, threshold: number): number {
  let n = 0;
  for (const [s, c] of Object.entries(h.counts)) if (Number(s) >= threshold) n += c;
  return n;
}

/** A point of the ROC curve: match when score >= threshold. */
export interface RocPoint {
  threshold: number;
  /** Share of same-file pairs matched (recall). */
  tpr: number;
  /** Share of different-file pairs matched (false matches). */
  fpr: number;
}

export interface Roc {
  /** From the strictest threshold (nothing matches: +Infinity, written null in JSON) to the loosest (everything matches: -Infinity). */
  points: RocPoint[];
  /** Area under the curve: the chance that a same-file pair scores above a different-file pair, ties counted half. */
  auc: number;
}

/**
 * The ROC curve of same-file (`same`) against different-file (`different`) scores:
 * one point per distinct score, plus the two ends; null when either side is empty.
 * Pairs that could not be compared sit below every threshold.
 */
export function rocCurve(same: Histogram, different: Histogram): Roc | null {
  const p = histogramTotal(same);
  const n = histogramTotal(different);
  if (p === 0 || n === 0) return null;
  const values = [...new Set([...Object.keys(same.counts), ...Object.keys(different.counts)].map(Number))].sort((a, b) => b - a);
  const points: RocPoint[] = [{ threshold: Infinity, tpr: 0, fpr: 0 }];
  let tp = 0;
  let fp = 0;
  for (const v of values) {
    tp += same.counts[v] ?? 0;
    fp += different.counts[v] ?? 0;
    points.push({ threshold: v, tpr: tp / p, fpr: fp / n });
  }
  points.push({ threshold: -Infinity, tpr: 1, fpr: 1 });
  let auc = 0;
  for (let i = 1; i < points.length; i++) auc += ((points[i].fpr - points[i - 1].fpr) * (points[i].tpr + points[i - 1].tpr)) / 2;
  return { points, auc };
}

/** The loosest finite threshold whose false-match rate is at most `maxFpr`, with its recall; null when even the strictest passes it. */
export function thresholdAtFalseMatchRate(roc: Roc, maxFpr: number): RocPoint | null {
  let best: RocPoint | null = null;
  for (const pt of roc.points) if (Number.isFinite(pt.threshold) && pt.fpr <= maxFpr) best = pt;
  return best;
}

/** The pairs (i < j) of `n` items to compare: all of them up to `maxPairs`, else `maxPairs` drawn at random (with replacement). */
export function pairPlan(n: number, maxPairs: number): { total: number; sampled: boolean; count: number } {
  const total = (n * (n - 1)) / 2;
  return total <= maxPairs ? { total, sampled: false, count: total } : { total, sampled: true, count: maxPairs };
}

export function* pairs(n: number, maxPairs: number, random: Random): Generator<[number, number]> {
  const plan = pairPlan(n, maxPairs);
  if (!plan.sampled) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) yield [i, j];
    return;
  }
  for (let k = 0; k < plan.count; k++) {
    const i = below(random, n);
    let j = below(random, n - 1);
    if (j >= i) j++;
    yield i < j ? [i, j] : [j, i];
  }
}

/** The value below which a share `q` (0-1) of the sorted `values` lie (nearest rank). */
export function quantile(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}
