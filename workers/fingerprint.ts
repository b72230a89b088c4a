// Piscina task: the perceptual fingerprint of a file's bytes (transferred, not copied).
// Images are decoded in this worker's decoder sandbox, a process of its own
// (src/media/sandbox.ts): a decoder crashing in native code fails that file only.
import { fingerprintFile } from '../src/media/fingerprint.js';
import { FingerprintError, type FingerprintOutcome } from '../src/media/errors.js';
import { workerSandbox } from '../src/pool/worker-sandbox.js';

export interface FingerprintTask {
  buffer: ArrayBuffer;
  /** The pool's deadline for this task (epoch ms): decoders and the sandbox end by then. */
  deadline?: number;
}

/** This task's own deadline comes this much before the pool's (see below). */
const DEADLINE_MARGIN_MS = 500;

export default async function fingerprint({ buffer, deadline }: FingerprintTask): Promise<FingerprintOutcome> {
  // The pool terminates this thread at its deadline. Decoders (ffmpeg, the sandbox) are
  // stopped a little before by this thread, which then answers the timeout itself: a
  // process whose parent thread was terminated is never reaped (it stays a zombie until
  // the server exits), so the pool's own stop is left for a thread that does not answer.
  const own = deadline === undefined ? undefined : deadline - DEADLINE_MARGIN_MS;
  try {
    return { fingerprint: await fingerprintFile(new Uint8Array(buffer), { sandbox: workerSandbox(), deadline: own }) };
  } catch (e) {
    if (e instanceof FingerprintError) return { failure: e.code, message: e.message };
    throw e;
  }
}
