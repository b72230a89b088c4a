// Piscina task that pool.close() runs on each worker before Piscina terminates them:
// ends the worker's decoder sandbox and waits until it is reaped (a process whose
// worker is terminated is never reaped: it would stay a zombie while the app runs on).
import { releaseWorkerSandbox } from '../src/media/worker-sandbox.js';

export default function release(): Promise<void> {
  return releaseWorkerSandbox();
}
