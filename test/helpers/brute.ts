// Brute-force references for Hamming similarity (decisions.md section 3), one bit at a
// time, shared by the kernel tests and the match-index tests.

/** Set bits of one byte (or any non-negative integer). */
export function bitCount(x: number): number {
  let n = 0;
  for (; x; x >>>= 1) n += x & 1;
  return n;
}

/** Differing bits between a[from, to) and b[bFrom, bFrom + to - from). */
export function bruteDistance(a: ArrayLike<number>, b: ArrayLike<number>, from = 0, to = a.length, bFrom = from): number {
  let d = 0;
  for (let i = from; i < to; i++) d += bitCount(a[i] ^ b[i - from + bFrom]);
  return d;
}

/** Similarity 0-100 of `d` differing bits out of `bits`, rounded down. */
export function bruteSimilarity(d: number, bits: number): number {
  return Math.floor((100 * (bits - d)) / bits);
}

/**
 * Sequence similarity at the best alignment: every offset within +-maxShift units with
 * at least minOverlap overlapping units, else the shorter sequence at offset 0. Both
 * sequences are whole units; 0 when either is empty.
 */
export function bruteAligned(a: ArrayLike<number>, b: ArrayLike<number>, unit: number, maxShift: number, minOverlap: number): number {
  const na = a.length / unit;
  const nb = b.length / unit;
  if (na === 0 || nb === 0) return 0;
  let best = -1;
  for (let o = -maxShift; o <= maxShift; o++) {
    let d = 0;
    let overlap = 0;
    for (let i = 0; i < na; i++) {
      const j = i + o;
      if (j < 0 || j >= nb) continue;
      overlap++;
      d += bruteDistance(a, b, i * unit, (i + 1) * unit, j * unit);
    }
    if (overlap >= minOverlap) best = Math.max(best, bruteSimilarity(d, overlap * unit * 8));
  }
  if (best >= 0) return best;
  const n = Math.min(na, nb);
  return bruteSimilarity(bruteDistance(a, b, 0, n * unit, 0), n * unit * 8);
}
