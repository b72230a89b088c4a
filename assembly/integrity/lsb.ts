// LSB replacement statistics on decoded 8-bit pixels, per colour channel:
// - the chi-square attack on pairs of values (Westfeld & Pfitzmann 2000): LSB
//   replacement equalises the counts of 2k and 2k+1, so a high p-value that the
//   pairs are equal means embedding;
// - sample pair analysis (Dumitrescu, Wu & Wang 2003) over horizontally adjacent
//   pixels: the smaller root of (W+Z)/2 p^2 + (2X-P) p + (Y-X) = 0 estimates the
//   embedded fraction p.
import { setStat } from './output';

const hist: usize = memory.data(256 * 8, 16);

/**
 * Statistics of channel `channel` of `width` x `height` pixels with `channels`
 * interleaved 8-bit samples at `ptr`. Results in stats slots:
 * 0 chi-square, 1 degrees of freedom, 2 p-value, 3 SPA estimate (NaN when
 * undefined), 4 pairs counted, 5 distinct values, 6 samples, 7 share of equal
 * neighbours among the pairs counted.
 */
export function lsbChannel(ptr: usize, width: u32, height: u32, channels: u32, channel: u32): f64 {
  memory.fill(hist, 0, 256 * 8);
  // per-row counts in u32 (a row has < 2^32 pairs), summed into u64 per row;
  // branch-free: the classes depend on noisy pixel values and would mispredict
  let x: u64 = 0, z: u64 = 0, w: u64 = 0, pairs: u64 = 0;
  let xv: u64 = 0, zv: u64 = 0, wv: u64 = 0, pairsV: u64 = 0;
  const stride = <usize>width * <usize>channels;
  const step = <usize>channels;
  for (let row: usize = 0; row < <usize>height; row++) {
    let p = ptr + row * stride + <usize>channel;
    let u = <u32>load<u8>(p);
    let h = hist + (<usize>u << 3);
    store<u64>(h, load<u64>(h) + 1);
    let rx: u32 = 0, rz: u32 = 0, rw: u32 = 0, rp: u32 = 0;
    for (let col: usize = 1; col < <usize>width; col++) {
      p += step;
      const v = <u32>load<u8>(p);
      h = hist + (<usize>v << 3);
      store<u64>(h, load<u64>(h) + 1);
      // X: v even and u < v, or v odd and u > v; Y: the other unequal pairs; Z: u == v;
      // W: u, v differ only in the LSB. Pairs touching the saturated LSB pairs
      // {0,1} and {254,255} are left out: clipping breaks SPA's cover assumption
      // |X| = |Y|, and the set is closed under LSB flips, so embedding moves no
      // sample in or out of it.
      const uh = u >> 1, vh = v >> 1;
      const inside = <u32>(uh - 1 < 126) & <u32>(vh - 1 < 126);
      const odd = v & 1;
      const isX = (<u32>(u < v) & (odd ^ 1)) | (<u32>(u > v) & odd);
      const eq = <u32>(u == v);
      rp += inside;
      rz += inside & eq;
      rx += inside & isX;
      rw += inside & <u32>(uh == vh) & (eq ^ 1);
      u = v;
    }
    x += <u64>rx; z += <u64>rz; w += <u64>rw; pairs += <u64>rp;
    if (row > 0) {
      // vertical neighbours: the same classes between this row and the one above
      let q = ptr + row * stride + <usize>channel;
      let vx: u32 = 0, vz: u32 = 0, vw: u32 = 0, vp: u32 = 0;
      for (let col: usize = 0; col < <usize>width; col++) {
        const a = <u32>load<u8>(q - stride);
        const b = <u32>load<u8>(q);
        const ah = a >> 1, bh = b >> 1;
        const inside = <u32>(ah - 1 < 126) & <u32>(bh - 1 < 126);
        const odd = b & 1;
        const isX = (<u32>(a < b) & (odd ^ 1)) | (<u32>(a > b) & odd);
        const eq = <u32>(a == b);
        vp += inside;
        vz += inside & eq;
        vx += inside & isX;
        vw += inside & <u32>(ah == bh) & (eq ^ 1);
        q += step;
      }
      xv += <u64>vx; zv += <u64>vz; wv += <u64>vw; pairsV += <u64>vp;
    }
  }
  const y: u64 = pairs - x - z;
  // chi-square over pairs of values with enough expected samples
  let chi: f64 = 0;
  let cats = 0;
  let distinct = 0;
  for (let k: usize = 0; k < 128; k++) {
    const a = <f64>load<u64>(hist + (k << 4));
    const b = <f64>load<u64>(hist + (k << 4) + 8);
    if (a > 0) distinct++;
    if (b > 0) distinct++;
    const expected = (a + b) * 0.5;
    if (expected < 4) continue;
    const d = a - expected;
    chi += (d * d) / expected;
    cats++;
  }
  const df = cats > 1 ? cats - 1 : 0;
  const pValue = df > 0 ? gammaQ(<f64>df * 0.5, chi * 0.5) : NaN;
  const spa = spaRoot(x, y, z, w, pairs);
  setStat(8, spaRoot(xv, pairsV - xv - zv, zv, wv, pairsV));
  setStat(0, chi);
  setStat(1, <f64>df);
  setStat(2, pValue);
  setStat(3, spa);
  setStat(4, <f64>pairs);
  setStat(5, <f64>distinct);
  setStat(6, <f64>width * <f64>height);
  setStat(7, pairs > 0 ? <f64>z / <f64>pairs : 0);
  return spa;
}

/** The smaller root of (W+Z)/2 p^2 + (2X-P) p + (Y-X) = 0, or NaN when undefined. */
function spaRoot(x: u64, y: u64, z: u64, w: u64, pairs: u64): f64 {
  const aq = <f64>(w + z) * 0.5;
  if (aq <= 0) return NaN;
  const bq = 2.0 * <f64>x - <f64>pairs;
  const cq = <f64>y - <f64>x;
  // a negative discriminant (estimation noise near p = 1) leaves the vertex -b/2a
  const disc = bq * bq - 4 * aq * cq;
  const s = disc > 0 ? Math.sqrt(disc) : 0;
  return Math.min((-bq + s) / (2 * aq), (-bq - s) / (2 * aq));
}

// Regularised upper incomplete gamma Q(a, x) = 1 - P(a, x): the survival function
// of chi-square with 2a degrees of freedom at 2x (series for x < a + 1, Lentz's
// continued fraction otherwise, as in Numerical Recipes 6.2).
function lnGamma(xx: f64): f64 {
  // Lanczos approximation (g = 7, n = 9)
  const g: f64 = 7;
  if (xx < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * xx))) - lnGamma(1 - xx);
  const x = xx - 1;
  let a: f64 = 0.99999999999980993;
  a += 676.5203681218851 / (x + 1);
  a += -1259.1392167224028 / (x + 2);
  a += 771.32342877765313 / (x + 3);
  a += -176.61502916214059 / (x + 4);
  a += 12.507343278686905 / (x + 5);
  a += -0.13857109526572012 / (x + 6);
  a += 9.9843695780195716e-6 / (x + 7);
  a += 1.5056327351493116e-7 / (x + 8);
  const t = x + g + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

export function gammaQ(a: f64, x: f64): f64 {
  if (x <= 0) return 1;
  if (x < a + 1) {
    let sum = 1.0 / a, del = sum, ap = a;
    for (let n = 0; n < 1000; n++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-15) break;
    }
    const p = sum * Math.exp(-x + a * Math.log(x) - lnGamma(a));
    return p >= 1 ? 0 : 1 - p;
  }
  const fpmin: f64 = 1e-300;
  let b = x + 1 - a, c = 1.0 / fpmin, d = 1.0 / b, h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -<f64>i * (<f64>i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < fpmin) d = fpmin;
    c = b + an / c;
    if (Math.abs(c) < fpmin) c = fpmin;
    d = 1.0 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - lnGamma(a)) * h;
}
