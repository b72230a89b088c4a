// Piscina task: the perceptual fingerprint of a file's bytes (transferred, not copied).
// Images are decoded in this worker's decoder sandbox, a process of its own
// (src/media/sandbox.ts): a decoder crashing in native code fails that file only.
import { fingerprintFile } from '../src/media/fingerprint.js';
import { workerSandbox } from '../src/pool/worker-sandbox.js';
import type { Fingerprint } from '../src/lib/types.js';

export interface FingerprintTask {
  buffer: ArrayBuffer;
  /** The pool's deadline for this task (epoch ms): decoders and the sandbox end by then. */
  deadlineAt?: number;
}

/** This task's own deadline comes this much before the pool's (see below). */
const DEADLINE_MARGIN_MS = 500;

export default function fingerprint({ buffer, deadlineAt }: FingerprintTask): Promise<Fingerprint | null> {
  // The pool terminates this thread at its deadline. Decoders (ffmpeg, the sandbox) are
  // stopped a little before by this thread, which then answers null itself: a process
  // whose parent thread was terminated is never reaped (it stays a zombie until the
  // server exits), so the pool's own stop is left for a thread that does not answer.
  const timeoutMs = deadlineAt === undefined ? undefined : Math.max(1, deadlineAt - Date.now() - DEADLINE_MARGIN_MS);
  return fingerprintFile(new Uint8Array(buffer), { sandbox: workerSandbox(), timeoutMs });
}
