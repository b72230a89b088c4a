// The decoder sandbox of the current worker thread (src/media/sandbox.ts), shared by
// its task files (workers/fingerprint.ts, workers/integrity.ts): one process per
// worker, made on first use, ending itself after the pool's decoderIdleMs idle.
import { workerData } from 'piscina';
import { DecoderSandbox } from '../media/sandbox.js';
import type { PoolWorkerData } from './index.js';

let sandbox: DecoderSandbox | undefined;

export function workerSandbox(): DecoderSandbox {
  const data = workerData as PoolWorkerData | undefined;
  return (sandbox ??= new DecoderSandbox({ idleMs: data?.decoderIdleMs, memoryLimitMb: data?.decoderMemoryMb }));
}

/** Ends this worker's sandbox and waits until it is reaped (workers/release.ts, before the pool ends its workers). */
export async function releaseWorkerSandbox(): Promise<void> {
  const s = sandbox;
  sandbox = undefined;
  await s?.close();
}
