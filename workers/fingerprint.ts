// Piscina task: what a file's bytes (transferred, not copied) hold. Without `examine`,
// the spec's perceptual fingerprint alone (POST /fingerprint); with it, the file's
// Examination (src/media/examine.ts: every fingerprint its kind has, one decode for an
// image) and, with `credentials`, its Content Credentials (C2PA) read beside it under
// the same deadline. Images are decoded, and credentials read, in this worker's decoder
// sandbox, a process of its own (src/media/sandbox.ts): a decoder or reader crashing in
// native code or WebAssembly fails that file only.
import { fingerprintFile } from '../src/media/fingerprint.js';
import { examineFile, type Examination } from '../src/media/examine.js';
import { FingerprintError, type FingerprintOutcome } from '../src/media/errors.js';
import { detectType } from '../src/lib/detect.js';
import { credentialsWithin } from '../src/media/sandbox.js';
import { workerSandbox, type PoolWorkerData } from '../src/media/worker-sandbox.js';
import type { ContentCredentials } from '../src/lib/content-credentials.js';
import { workerData } from 'piscina';
import { CREDENTIALS_TIMEOUT_MS } from '../src/media/deadline.js';

export interface FingerprintTask {
  buffer: ArrayBuffer;
  /** The pool's deadline for this task (epoch ms): decoders and the sandbox end by then. */
  deadline?: number;
  /** Answer the file's Examination, not only its fingerprint. */
  examine?: boolean;
  /** With `examine`: read the file's Content Credentials too (the Examination's content_credentials). */
  credentials?: boolean;
}

/** This task's own deadline comes this much before the pool's (see below). */
const DEADLINE_MARGIN_MS = 500;

export default async function fingerprint({ buffer, deadline, examine, credentials }: FingerprintTask): Promise<FingerprintOutcome | Examination> {
  // The pool terminates this thread at its deadline. Decoders (ffmpeg, the sandbox) are
  // stopped a little before by this thread, which then answers the timeout itself: a
  // process whose parent thread was terminated is never reaped (it stays a zombie until
  // the server exits), so the pool's own stop is left for a thread that does not answer.
  const own = deadline === undefined ? undefined : deadline - DEADLINE_MARGIN_MS;
  const bytes = new Uint8Array(buffer);
  const options = { sandbox: workerSandbox(), deadline: own };
  if (examine !== true) {
    try {
      return { fingerprint: await fingerprintFile(bytes, options) };
    } catch (e) {
      if (e instanceof FingerprintError) return { failure: e.code, message: e.message };
      throw e;
    }
  }
  // started first: the sandbox reads while this thread (or ffmpeg) works on the fingerprints,
  // by a shorter deadline of its own (a sandbox request stopped at it takes its process
  // with it, and the image decode queued behind it goes to a new one: sandbox.ts)
  const read = credentials ? contentCredentials(bytes, own) : undefined;
  let found: Examination;
  try {
    found = await examineFile(bytes, options);
  } catch (e) {
    if (!(e instanceof FingerprintError)) {
      read?.catch(() => {});
      throw e;
    }
    // a supported kind the decoders refused: its credentials may still be read
    found = { kind: detectType(bytes)?.kind ?? null, fingerprint: null, pdq_hash: null, iscc: null, failure: { code: e.code, message: e.message } };
  }
  return read === undefined ? found : { ...found, content_credentials: await read };
}

/**
 * The credentials, read in the sandbox by CREDENTIALS_TIMEOUT_MS (the pool's
 * credentialsTimeoutMs) or the task's own deadline, whichever comes first; present null
 * saying why when stopped there or when the sandbox failed otherwise.
 */
async function contentCredentials(bytes: Uint8Array, taskDeadline: number | undefined): Promise<ContentCredentials> {
  const ms = (workerData as PoolWorkerData | undefined)?.credentialsTimeoutMs ?? CREDENTIALS_TIMEOUT_MS;
  return credentialsWithin(workerSandbox(), bytes, ms, taskDeadline);
}
