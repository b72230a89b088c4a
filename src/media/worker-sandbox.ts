// The decoder sandbox of the current worker thread (sandbox.ts), shared by the pool's
// task files (workers/fingerprint.ts, workers/integrity.ts): one process per worker,
// made on first use, ending itself after the pool's decoderIdleMs idle. Its settings
// come in Piscina's workerData, which the pool (src/pool/index.ts) fills.
import { workerData } from 'piscina';
import { DecoderSandbox } from './sandbox.js';

/** What every worker gets as Piscina's workerData: the media settings of its tasks. */
export interface PoolWorkerData {
  decoderIdleMs?: number;
  decoderMemoryMb?: number | null;
  credentialsTimeoutMs?: number;
}

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
