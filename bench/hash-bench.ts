// Shared by bench/sha256.bench.ts and bench/hmac.bench.ts: benchmark.js timed on this
// process's CPU time (process.cpuUsage) instead of the wall clock, because the dev
// box is a shared 2-core machine where other jobs take most of the wall time; every
// implementation compared runs synchronously on this thread, so CPU time is the cost
// of the work itself. BENCH_CLOCK=wall restores benchmark.js's own wall clock.
//
// WebAssembly is compiled by TurboFan from the start (--no-liftoff), for ours and
// hash-wasm alike: V8 otherwise runs baseline code until a background thread has
// optimized it, which on a loaded machine can take long enough to skew a row. A
// long-running server runs the optimized code; that is what these rows compare.
// Import this module before anything that compiles WebAssembly.
import Benchmark from 'benchmark';
import v8 from 'node:v8';

v8.setFlagsFromString('--no-liftoff');

const wallClock = process.env.BENCH_CLOCK === 'wall';

/** process.hrtime's calling convention ([s, ns], or the difference from `since`) over CPU time. */
function cpuHrtime(since?: [number, number]): [number, number] {
  const u = process.cpuUsage();
  let ns = (u.user + u.system) * 1000;
  if (since) ns -= since[0] * 1e9 + since[1];
  return [Math.floor(ns / 1e9), ns % 1e9];
}

const Bench: typeof Benchmark = wallClock
  ? Benchmark
  : (Benchmark as unknown as { runInContext(ctx: object): typeof Benchmark }).runInContext({
      process: { hrtime: cpuHrtime, nextTick: process.nextTick, env: process.env },
    });

export const clockName = wallClock ? 'wall clock' : 'process CPU time';

/** Operations per second of `fn`, measured by benchmark.js. */
export function hz(name: string, fn: () => void, maxTime: number): number {
  const bench = new Bench(name, fn, { maxTime, minSamples: 5 });
  bench.run();
  if (bench.error) throw bench.error;
  return bench.hz;
}

/** `size` pseudo-random bytes (xorshift32), the same on every run. */
export function input(size: number): Uint8Array {
  const data = new Uint8Array(size);
  let x = 0x9e3779b9;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x;
  }
  return data;
}

export const fmtRate = (opsPerSec: number, size: number): string =>
  size >= 1024 ? `${((opsPerSec * size) / 1e6).toFixed(0)} MB/s` : `${(opsPerSec / 1e6).toFixed(2)} M ops/s`;

export const fmtSize = (size: number): string =>
  size % (1 << 20) === 0 ? `${size >> 20} MiB` : size % 1024 === 0 ? `${size >> 10} KiB` : `${size} B`;

/**
 * Operations per second of each of `fns`, the best of `rounds` runs taken in turn
 * (all of them, then all again), so a burst of load on the shared machine does not
 * decide a comparison.
 */
export function bestOf(fns: Array<() => void>, maxTime: number, rounds = 2): number[] {
  const best = fns.map(() => 0);
  for (let r = 0; r < rounds; r++) fns.forEach((fn, i) => { best[i] = Math.max(best[i], hz(`candidate ${i}`, fn, maxTime)); });
  return best;
}

/** bestOf for two. */
export function versus(ours: () => void, theirs: () => void, maxTime: number, rounds = 2): [number, number] {
  const [a, b] = bestOf([ours, theirs], maxTime, rounds);
  return [a, b];
}
