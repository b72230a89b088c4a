// The bench's one source of randomness: a seeded generator (mulberry32), so that the
// same seed gives the same sample corpus, the same variant placements, the same pair
// sample and the same synthetic index entries on every machine.

export type Random = () => number;

/** Floats in [0, 1) from a 32-bit seed. */
export function seeded(seed: number): Random {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A generator of its own for one named use of the run's seed (independent streams per use). */
export function streamFor(seed: number, use: string): Random {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < use.length; i++) h = Math.imul(h ^ use.charCodeAt(i), 0x01000193);
  return seeded(h);
}

/** An integer in [0, n). */
export function below(random: Random, n: number): number {
  return Math.floor(random() * n);
}
