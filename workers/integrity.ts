// Piscina task: the integrity report of a file's bytes (transferred, not copied).
// Run it with `pool.run('integrity', { buffer }, [buffer])`.
import { integrityReport } from '../src/media/integrity.js';
import type { IntegrityReport } from '../src/lib/integrity.js';

export interface IntegrityTask {
  buffer: ArrayBuffer;
}

export default function integrity({ buffer }: IntegrityTask): Promise<IntegrityReport> {
  return integrityReport(new Uint8Array(buffer));
}
