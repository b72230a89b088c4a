// Piscina task: the perceptual fingerprint of a file's bytes (transferred, not copied),
// and with `credentials` its Content Credentials (C2PA) as well, read beside it under
// the same deadline. Images are decoded, and credentials read, in this worker's decoder
// sandbox, a process of its own (src/media/sandbox.ts): a decoder or reader crashing in
// native code or WebAssembly fails that file only.
import { fingerprintFile, perceptualHashes } from '../src/media/fingerprint.js';
import { FingerprintError, type ExamineOutcome, type FingerprintOutcome } from '../src/media/errors.js';
import { SandboxError } from '../src/media/sandbox.js';
import { workerSandbox, type PoolWorkerData } from '../src/media/worker-sandbox.js';
import type { ContentCredentials } from '../src/lib/content-credentials.js';
import { workerData } from 'piscina';
import { CREDENTIALS_TIMEOUT_MS } from '../src/media/deadline.js';

export interface FingerprintTask {
  buffer: ArrayBuffer;
  /** The pool's deadline for this task (epoch ms): decoders and the sandbox end by then. */
  deadline?: number;
  /** Read the file's Content Credentials too (the answer's content_credentials). */
  credentials?: boolean;
  /** Compute the file's PDQ too (the answer's pdq_hash; images from the same decode). */
  pdq?: boolean;
}

/** This task's own deadline comes this much before the pool's (see below). */
const DEADLINE_MARGIN_MS = 500;

export default async function fingerprint({ buffer, deadline, credentials, pdq }: FingerprintTask): Promise<FingerprintOutcome | ExamineOutcome> {
  // The pool terminates this thread at its deadline. Decoders (ffmpeg, the sandbox) are
  // stopped a little before by this thread, which then answers the timeout itself: a
  // process whose parent thread was terminated is never reaped (it stays a zombie until
  // the server exits), so the pool's own stop is left for a thread that does not answer.
  const own = deadline === undefined ? undefined : deadline - DEADLINE_MARGIN_MS;
  const bytes = new Uint8Array(buffer);
  // started first: the sandbox reads while this thread (or ffmpeg) works on the fingerprint,
  // by a shorter deadline of its own (a sandbox request stopped at it takes its process
  // with it, and the image decode queued behind it goes to a new one: sandbox.ts)
  const read = credentials ? contentCredentials(bytes, own) : undefined;
  let outcome: FingerprintOutcome;
  try {
    const options = { sandbox: workerSandbox(), deadline: own };
    outcome = pdq ? await perceptualHashes(bytes, options) : { fingerprint: await fingerprintFile(bytes, options) };
  } catch (e) {
    if (!(e instanceof FingerprintError)) {
      read?.catch(() => {});
      throw e;
    }
    outcome = { failure: e.code, message: e.message };
  }
  if (read === undefined) return outcome;
  return { ...outcome, content_credentials: await read };
}

/**
 * The credentials, read in the sandbox by CREDENTIALS_TIMEOUT_MS (the pool's
 * credentialsTimeoutMs) or the task's own deadline, whichever comes first; present null
 * saying why when stopped there or when the sandbox failed otherwise.
 */
async function contentCredentials(bytes: Uint8Array, taskDeadline: number | undefined): Promise<ContentCredentials> {
  const ms = (workerData as PoolWorkerData | undefined)?.credentialsTimeoutMs ?? CREDENTIALS_TIMEOUT_MS;
  const deadline = Math.min(taskDeadline ?? Infinity, Date.now() + ms);
  try {
    return await workerSandbox().contentCredentials(bytes, deadline);
  } catch (e) {
    if (e instanceof SandboxError && e.code === 'timeout') return { present: null, message: `not read: reading Content Credentials ran past its deadline (${ms} ms; docs/c2pa.md)` };
    return { present: null, message: `not read: ${(e instanceof Error ? e.message : String(e)).slice(0, 150)}` };
  }
}
