// Piscina task for checking a pool's boundaries (its deadline, crash and memory
// isolation), used by the tests and by operators: `pool.run('diagnostic', {mode})`.
// Harmless in production: it does nothing unless asked, and only to its own worker.
import { DecoderSandbox } from '../src/media/sandbox.js';

export interface DiagnosticTask {
  /** echo: return `value`; sleep: wait `ms` without yielding the thread; exit: end the
   * worker's process-level thread abruptly; throw: fail with an error; oom: allocate until
   * the worker's heap limit ends it; decoder-hang: wait on a decoder sandbox that never
   * answers, until `deadline` (epoch ms). */
  mode: 'echo' | 'sleep' | 'exit' | 'throw' | 'oom' | 'decoder-hang';
  ms?: number;
  value?: unknown;
  deadline?: number;
}

export default function diagnostic(task: DiagnosticTask): unknown {
  switch (task.mode) {
    case 'echo':
      return task.value ?? null;
    case 'sleep': {
      // Busy-waits on purpose: a hung decoder does not yield either.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, task.ms ?? 1000);
      return 'slept';
    }
    case 'exit':
      process.exit(1);
    // falls through (never reached)
    case 'throw':
      throw new Error('diagnostic task failed on purpose');
    case 'decoder-hang':
      return new DecoderSandbox().diagnostic('hang', task.deadline);
    case 'oom': {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array(1 << 20).fill(1.5));
    }
    default:
      throw new Error(`diagnostic: unknown mode ${String((task as { mode: unknown }).mode)}`);
  }
}
