// Down-mix to mono and resample to 11025 Hz the way fpcalc does (through swresample in
// chromaprint's "compatible mode"): a Kaiser-windowed sinc (beta 9) of
// ceil(16 / factor) taps, cutoff 0.8 of the output Nyquist frequency, 256 phases with
// linear interpolation between neighbouring phases, gain normalised on phase 0.
// For the usual rates the output positions fall on a small set of phases, so those
// filters are interpolated once up front and each output sample is one dot product.

export const TARGET_RATE = 11025;

const FILTER_SIZE = 16;
const PHASE_COUNT = 256;
const CUTOFF = 0.8;
const KAISER_BETA = 9;
const MAX_EXACT_PHASES = 4096;

function besselI0(x: number): number {
  // power series; converges quickly for the arguments a beta-9 window needs
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 64; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

interface FilterBank {
  taps: number;
  center: number;
  /** (PHASE_COUNT + 1) rows of `taps` coefficients. */
  table: Float64Array;
}

const banks = new Map<number, FilterBank>();

function filterBank(inRate: number): FilterBank {
  let bank = banks.get(inRate);
  if (bank) return bank;
  const factor = Math.min((TARGET_RATE * CUTOFF) / inRate, 1);
  const taps = Math.max(Math.ceil(FILTER_SIZE / factor), 1);
  const center = Math.floor((taps - 1) / 2);
  const table = new Float64Array((PHASE_COUNT + 1) * taps);
  let norm = 0;
  for (let ph = 0; ph <= PHASE_COUNT; ph++) {
    for (let i = 0; i < taps; i++) {
      const x = Math.PI * (i - center - ph / PHASE_COUNT) * factor;
      let y = x === 0 ? 1 : Math.sin(x) / x;
      const w = (2 * x) / (factor * taps * Math.PI);
      y *= besselI0(KAISER_BETA * Math.sqrt(Math.max(1 - w * w, 0)));
      table[ph * taps + i] = y;
      if (ph === 0) norm += y;
    }
  }
  for (let i = 0; i < table.length; i++) table[i] /= norm;
  bank = { taps, center, table };
  banks.set(inRate, bank);
  return bank;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The mono mix of `channels` (their average), first `limit` samples. */
export function mixToMono(channels: Float32Array[], limit = Infinity): Float32Array {
  const n = Math.min(limit, ...channels.map((c) => c.length));
  if (channels.length === 1) return channels[0].length === n ? channels[0] : channels[0].slice(0, n);
  const out = new Float32Array(n);
  const scale = 1 / channels.length;
  for (const ch of channels) for (let i = 0; i < n; i++) out[i] += ch[i];
  for (let i = 0; i < n; i++) out[i] *= scale;
  return out;
}

/** Resamples mono `input` at `inRate` to 11025 Hz; at most `maxOut` output samples. */
export function resampleTo11025(input: Float32Array, inRate: number, maxOut = Infinity): Float32Array {
  if (inRate === TARGET_RATE) return input.length > maxOut ? input.slice(0, maxOut) : input;
  const { taps, center, table } = filterBank(inRate);
  const outLen = Math.min(maxOut, Math.floor((input.length * TARGET_RATE) / inRate));
  const out = new Float32Array(outLen);
  // output n sits at input position n * inRate / 11025 = index + num / TARGET_RATE
  const g = gcd(inRate, TARGET_RATE);
  const den = TARGET_RATE / g;
  const step = inRate / g; // per output: num += step (mod den), carrying into index
  const stepWhole = Math.floor(step / den);
  const stepRest = step % den;
  const exact = den <= MAX_EXACT_PHASES;
  let phases: Float64Array | null = null;
  if (exact) {
    phases = new Float64Array(den * taps);
    for (let r = 0; r < den; r++) {
      const p = (r / den) * PHASE_COUNT;
      const p0 = Math.floor(p);
      const a = p - p0;
      for (let i = 0; i < taps; i++) {
        const h0 = table[p0 * taps + i];
        const h1 = p0 < PHASE_COUNT ? table[(p0 + 1) * taps + i] : h0;
        phases[r * taps + i] = h0 + (h1 - h0) * a;
      }
    }
  }
  let index = 0;
  let rest = 0;
  const last = input.length;
  for (let n = 0; n < outLen; n++) {
    const start = index - center;
    let acc = 0;
    if (phases !== null) {
      const base = rest * taps;
      if (start >= 0 && start + taps <= last) {
        for (let i = 0; i < taps; i++) acc += input[start + i] * phases[base + i];
      } else {
        for (let i = 0; i < taps; i++) {
          const j = start + i;
          if (j >= 0 && j < last) acc += input[j] * phases[base + i];
        }
      }
    } else {
      const p = (rest / den) * PHASE_COUNT;
      const p0 = Math.floor(p);
      const a = p - p0;
      let v0 = 0;
      let v1 = 0;
      for (let i = 0; i < taps; i++) {
        const j = start + i;
        if (j < 0 || j >= last) continue;
        v0 += input[j] * table[p0 * taps + i];
        v1 += input[j] * table[(p0 + 1) * taps + i];
      }
      acc = v0 + (v1 - v0) * a;
    }
    out[n] = acc;
    index += stepWhole;
    rest += stepRest;
    if (rest >= den) {
      rest -= den;
      index += 1;
    }
  }
  return out;
}
