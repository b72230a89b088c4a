// Down-mix to mono and resample to 11025 Hz the way fpcalc does (through swresample in
// chromaprint's "compatible mode"): a Kaiser-windowed sinc (beta 9) of
// ceil(16 / factor) taps, cutoff 0.8 of the output Nyquist frequency, 256 phases with
// linear interpolation between neighbouring phases, gain normalised on phase 0.
// For the usual rates the output positions fall on a small set of phases, so those
// filters are interpolated once up front and each output sample is one dot product,
// done by the chromaprint kernel (assembly/chromaprint/resampler.ts) over chunks.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';

interface ResamplerExports extends BaseExports {
  resampleRun(
    input: number, inLen: number, output: number, outLen: number,
    phases: number, taps: number, stride: number, den: number, stepWhole: number, stepRest: number,
    index0: number, rest0: number, center: number,
  ): void;
}

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
  let n = limit;
  for (const c of channels) n = Math.min(n, c.length);
  if (channels.length === 1) return channels[0].length === n ? channels[0] : channels[0].slice(0, n);
  const out = new Float32Array(n);
  if (channels.length === 2) {
    const [a, b] = channels;
    for (let i = 0; i < n; i++) out[i] = (a[i] + b[i]) * 0.5;
    return out;
  }
  const scale = 1 / channels.length;
  for (const ch of channels) for (let i = 0; i < n; i++) out[i] += ch[i];
  for (let i = 0; i < n; i++) out[i] *= scale;
  return out;
}

const OUT_CHUNK = 65536; // output samples per kernel call

interface KernelPlan {
  phases: number; // pointer to den rows of `stride` f32
  stride: number;
}
const MAX_PLANS = 8; // phase tables kept in wasm memory, one per input rate
const plans = new Map<number, KernelPlan>();
let inBlock = 0;
let outBlock = 0;
let inCap = 0;

/** The phase filters of `inRate` in wasm memory as f32 (the last MAX_PLANS rates are kept). */
function kernelPlan(k: Kernel<ResamplerExports>, inRate: number, bank: FilterBank, den: number): KernelPlan {
  const cached = plans.get(inRate);
  if (cached) return cached;
  if (plans.size >= MAX_PLANS) {
    const [oldest, old] = plans.entries().next().value as [number, KernelPlan];
    k.exports.release(old.phases);
    plans.delete(oldest);
  }
  const phases = exactPhases(bank, den);
  const stride = (bank.taps + 3) & ~3;
  const ptr = k.exports.alloc(den * stride * 4);
  const view = k.view(Float32Array, ptr, den * stride);
  view.fill(0);
  for (let r = 0; r < den; r++) for (let i = 0; i < bank.taps; i++) view[r * stride + i] = phases[r * bank.taps + i];
  const plan = { phases: ptr, stride };
  plans.set(inRate, plan);
  return plan;
}

/** The filters of the `den` phases output samples fall on, interpolated between the 256 designed phases. */
function exactPhases(fb: FilterBank, den: number): Float64Array {
  const { taps, table } = fb;
  const phases = new Float64Array(den * taps);
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
  return phases;
}

/** Resamples mono `input` at `inRate` to 11025 Hz; at most `maxOut` output samples. */
export function resampleTo11025(input: Float32Array, inRate: number, maxOut = Infinity): Float32Array {
  if (inRate === TARGET_RATE) return input.length > maxOut ? input.slice(0, maxOut) : input;
  const fb = filterBank(inRate);
  const outLen = Math.min(maxOut, Math.floor((input.length * TARGET_RATE) / inRate));
  const out = new Float32Array(outLen);
  // output n sits at input position n * inRate / 11025 = index + rest / den
  const g = gcd(inRate, TARGET_RATE);
  const den = TARGET_RATE / g;
  const step = inRate / g;
  const stepWhole = Math.floor(step / den);
  const stepRest = step % den;
  if (den <= MAX_EXACT_PHASES) {
    runKernel(input, inRate, fb, den, step, stepWhole, stepRest, out);
    return out;
  }
  // an unusual rate: interpolate between the two nearest designed phases per sample
  const { taps, center, table } = fb;
  let index = 0;
  let rest = 0;
  for (let n = 0; n < outLen; n++) {
    const start = index - center;
    const p = (rest / den) * PHASE_COUNT;
    const p0 = Math.floor(p);
    const a = p - p0;
    let v0 = 0;
    let v1 = 0;
    for (let i = 0; i < taps; i++) {
      const j = start + i;
      if (j < 0 || j >= input.length) continue;
      v0 += input[j] * table[p0 * taps + i];
      v1 += input[j] * table[(p0 + 1) * taps + i];
    }
    out[n] = v0 + (v1 - v0) * a;
    index += stepWhole;
    rest += stepRest;
    if (rest >= den) {
      rest -= den;
      index += 1;
    }
  }
  return out;
}

function runKernel(
  input: Float32Array, inRate: number, fb: FilterBank, den: number, step: number,
  stepWhole: number, stepRest: number, out: Float32Array,
): void {
  const kernel = loadKernel<ResamplerExports>('chromaprint');
  const k = kernel.exports;
  const p = kernelPlan(kernel, inRate, fb, den);
  for (let n0 = 0; n0 < out.length; n0 += OUT_CHUNK) {
    const count = Math.min(OUT_CHUNK, out.length - n0);
    const index0 = Math.floor((n0 * step) / den);
    const rest0 = (n0 * step) % den;
    const lastIndex = Math.floor(((n0 + count - 1) * step) / den);
    const lo = Math.max(0, index0 - fb.center);
    const hi = Math.min(input.length, lastIndex - fb.center + p.stride + 1);
    const len = Math.max(0, hi - lo);
    if (len > inCap || outBlock === 0) {
      if (inBlock) k.release(inBlock);
      if (outBlock) k.release(outBlock);
      inCap = Math.max(len, 1);
      inBlock = k.alloc(inCap * 4);
      outBlock = k.alloc(OUT_CHUNK * 4);
    }
    kernel.view(Float32Array, inBlock, len).set(input.subarray(lo, hi));
    k.resampleRun(inBlock, len, outBlock, count, p.phases, fb.taps, p.stride, den, stepWhole, stepRest, index0 - lo, rest0, fb.center);
    out.set(kernel.view(Float32Array, outBlock, count), n0);
  }
}
