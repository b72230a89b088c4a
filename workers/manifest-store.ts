// Piscina task: a detached C2PA manifest store (issue 33: what a vault publishes to the
// repository), read in this worker's decoder sandbox (src/media/c2pa-store.ts) by the
// credentials deadline. A store the reader refuses is an answer (`refused`, the reason);
// the sandbox crashing or running past the deadline is `failed`.
// Run it with `pool.run('manifest-store', { buffer }, [buffer])`.
import { workerData } from 'piscina';
import { workerSandbox, type PoolWorkerData } from '../src/media/worker-sandbox.js';
import { SandboxError } from '../src/media/sandbox.js';
import { CREDENTIALS_TIMEOUT_MS } from '../src/media/deadline.js';
import type { ManifestStoreOutcome } from '../src/media/c2pa-store.js';

export interface ManifestStoreTask {
  buffer: ArrayBuffer;
}

export default async function manifestStore({ buffer }: ManifestStoreTask): Promise<ManifestStoreOutcome> {
  const ms = (workerData as PoolWorkerData | undefined)?.credentialsTimeoutMs ?? CREDENTIALS_TIMEOUT_MS;
  try {
    return { reading: await workerSandbox().manifestStore(new Uint8Array(buffer), Date.now() + ms) };
  } catch (e) {
    if (e instanceof SandboxError) return { failed: e.code === 'timeout' ? `reading the store ran past its deadline (${ms} ms)` : e.message.slice(0, 200) };
    return { refused: (e instanceof Error ? e.message : String(e)).slice(0, 300) };
  }
}
