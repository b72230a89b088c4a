// LSB replacement statistics on decoded 8-bit pixels, per colour channel:
// - the chi-square attack on pairs of values (Westfeld & Pfitzmann 2000): LSB
//   replacement equalises the counts of 2k and 2k+1, so a high p-value that the
//   pairs are equal means embedding;
// - sample pair analysis (Dumitrescu, Wu & Wang 2003) over horizontally adjacent
//   pixels: the smaller root of (W+Z)/2 p^2 + (2X-P) p + (Y-X) = 0 estimates the
//   embedded fraction p.
import { setStat } from './output';

const hist: usize = memory.data(256 * 8, 16);
// one colour channel as a plane, so neighbour pairs are contiguous (SIMD loads)
let plane: usize = 0;
let planeCap: usize = 0;
// pair class counts of the current direction
let cx: u64 = 0, cz: u64 = 0, cw: u64 = 0, cp: u64 = 0;

/**
 * Classifies the `n` pairs (u[i], v[i]) and adds them to cx, cz, cw, cp.
 * X: v even and u < v, or v odd and u > v; Y: the other unequal pairs; Z: u == v;
 * W: u, v differ only in the LSB. Pairs touching the saturated LSB pairs {0,1} and
 * {254,255} are left out: clipping breaks SPA's cover assumption |X| = |Y|, and the
 * set is closed under LSB flips, so embedding moves no sample in or out of it.
 * Branch-free: the classes follow noisy pixel values and would mispredict.
 */
function countPairs(u: usize, v: usize, n: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const one = i8x16.splat(1);
    const lim = i8x16.splat(126);
    let x: u32 = 0, z: u32 = 0, w: u32 = 0, p: u32 = 0;
    for (; i + 16 <= n; i += 16) {
      const a = v128.load(u + i);
      const b = v128.load(v + i);
      const ah = i8x16.shr_u(a, 1);
      const bh = i8x16.shr_u(b, 1);
      const inside = v128.and(i8x16.lt_u(i8x16.sub(ah, one), lim), i8x16.lt_u(i8x16.sub(bh, one), lim));
      const eq = i8x16.eq(a, b);
      const odd = i8x16.eq(v128.and(b, one), one);
      const isX = v128.bitselect(i8x16.gt_u(a, b), i8x16.lt_u(a, b), odd);
      const isW = v128.andnot(i8x16.eq(ah, bh), eq);
      p += popcnt<u32>(i8x16.bitmask(inside));
      z += popcnt<u32>(i8x16.bitmask(v128.and(inside, eq)));
      x += popcnt<u32>(i8x16.bitmask(v128.and(inside, isX)));
      w += popcnt<u32>(i8x16.bitmask(v128.and(inside, isW)));
    }
    cx += <u64>x; cz += <u64>z; cw += <u64>w; cp += <u64>p;
  }
  // scalar: the class bits of every (u, v) come from a 64 KiB table, and one add of
  // a packed word (four 16-bit lanes: P, Z, X, W) counts them; flushed before a lane
  // can overflow
  if (classTable == 0) buildClassTable();
  while (i < n) {
    const stop = min<usize>(n, i + 65535);
    let acc: u64 = 0;
    for (; i < stop; i++) {
      const k = (<usize>load<u8>(u + i) << 8) | <usize>load<u8>(v + i);
      acc += load<u64>(laneIncrement + (<usize>load<u8>(classTable + k) << 3));
    }
    cp += acc & 0xffff;
    cz += (acc >> 16) & 0xffff;
    cx += (acc >> 32) & 0xffff;
    cw += acc >> 48;
  }
}

// class bits per (u, v): 1 counted (not saturated), 2 Z, 4 X, 8 W (each implies 1)
let classTable: usize = 0;
// packed increments for each 4-bit class value: bit b adds 1 to lane b
const laneIncrement: usize = memory.data(16 * 8, 8);

function buildClassTable(): void {
  const t = heap.alloc(65536);
  for (let a: u32 = 0; a < 256; a++) {
    for (let b: u32 = 0; b < 256; b++) {
      const ah = a >> 1, bh = b >> 1;
      let c: u32 = 0;
      if (ah - 1 < 126 && bh - 1 < 126) {
        c = 1;
        if (a == b) c |= 2;
        else {
          if (((b & 1) == 0 && a < b) || ((b & 1) == 1 && a > b)) c |= 4;
          if (ah == bh) c |= 8;
        }
      }
      store<u8>(t + ((<usize>a << 8) | <usize>b), <u8>c);
    }
  }
  for (let c: u32 = 0; c < 16; c++) {
    let inc: u64 = 0;
    for (let lane: u32 = 0; lane < 4; lane++) if (c & (1 << lane)) inc |= <u64>1 << (<u64>lane * 16);
    store<u64>(laneIncrement + (<usize>c << 3), inc);
  }
  classTable = t;
}

/**
 * Statistics of channel `channel` of `width` x `height` pixels with `channels`
 * interleaved 8-bit samples at `ptr`. Results in stats slots:
 * 0 chi-square, 1 degrees of freedom, 2 p-value, 3 SPA estimate from horizontal
 * neighbours (NaN when undefined), 4 pairs counted, 5 distinct values, 6 samples,
 * 7 share of equal neighbours among the pairs counted, 8 SPA from vertical neighbours.
 */
export function lsbChannel(ptr: usize, width: u32, height: u32, channels: u32, channel: u32): f64 {
  memory.fill(hist, 0, 256 * 8);
  const w = <usize>width, h = <usize>height;
  const n = w * h;
  if (n > planeCap) {
    if (plane != 0) heap.free(plane);
    plane = heap.alloc(n);
    planeCap = n;
  }
  // the channel as a plane, and its histogram
  const step = <usize>channels;
  let src = ptr + <usize>channel;
  for (let i: usize = 0; i < n; i++) {
    const v = load<u8>(src);
    store<u8>(plane + i, v);
    const hb = hist + (<usize>v << 3);
    store<u64>(hb, load<u64>(hb) + 1);
    src += step;
  }
  // horizontal neighbours, row by row
  cx = 0; cz = 0; cw = 0; cp = 0;
  if (w > 1) for (let row: usize = 0; row < h; row++) countPairs(plane + row * w, plane + row * w + 1, w - 1);
  const x = cx, z = cz, pairs = cp, wc = cw;
  // vertical neighbours: every row against the row above, as one run
  cx = 0; cz = 0; cw = 0; cp = 0;
  if (h > 1) countPairs(plane, plane + w, w * (h - 1));
  const xv = cx, zv = cz, wv = cw, pairsV = cp;
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
  const spa = spaRoot(x, y, z, wc, pairs);
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
