// How well two Chromaprint fingerprints agree, measured as decisions.md section 3 says
// agreement with fpcalc is measured: the fraction of equal bits at the best alignment
// within +-20 words. Plain TypeScript, independent of the kernels it judges.

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

export function fpcalcAgreement(a: Uint32Array, b: number[]): number {
  let best = 0;
  for (let off = -20; off <= 20; off++) {
    let bits = 0;
    let same = 0;
    for (let i = 0; i < a.length; i++) {
      const j = i + off;
      if (j < 0 || j >= b.length) continue;
      bits += 32;
      same += 32 - popcount32((a[i] ^ b[j]) >>> 0);
    }
    if (bits >= 32 * Math.min(32, a.length, b.length) && same / bits > best) best = same / bits;
  }
  return best;
}
