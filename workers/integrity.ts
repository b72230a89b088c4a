// Piscina task: the integrity report of a file's bytes (transferred, not copied).
// Run it with `pool.run('integrity', { buffer }, [buffer])`.
// The report is made in this worker's decoder sandbox (src/media/sandbox.ts): the LSB
// statistics decode images with sharp, and a decoder crashing in native code then fails
// this task only.
import { workerSandbox } from '../src/media/worker-sandbox.js';
import type { IntegrityReport } from '../src/lib/integrity.js';

export interface IntegrityTask {
  buffer: ArrayBuffer;
}

export default function integrity({ buffer }: IntegrityTask): Promise<IntegrityReport> {
  return workerSandbox().integrityReport(new Uint8Array(buffer));
}
