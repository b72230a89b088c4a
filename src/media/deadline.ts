// The one time limit of fingerprinting a file (spec 8: 60 s), passed down as one
// deadline: an instant (epoch ms) that every layer below stops by, whatever it spends
// its share on. The pool sets it when a task is submitted (from its configured
// timeout, the server's PROVENANT_FINGERPRINT_TIMEOUT_MS), and the worker,
// fingerprintFile, the decoder sandbox, ffmpeg and the audio decoders take it as
// `deadline`. Only a caller that gives none gets one from this default.

/** Spec 8: the default time limit of fingerprinting one file, in ms. */
export const FINGERPRINT_TIMEOUT_MS = 60_000;

/**
 * The default time limit of reading a file's Content Credentials beside its fingerprint
 * (pool.examine), in ms: a read still running then is stopped, content_credentials says
 * so, and the fingerprint answers as usual (issue 25 item 15; docs/c2pa.md).
 */
export const CREDENTIALS_TIMEOUT_MS = 10_000;

/** `deadline`, or one FINGERPRINT_TIMEOUT_MS from now when none is given. */
export function deadlineOrDefault(deadline: number | undefined): number {
  return deadline ?? Date.now() + FINGERPRINT_TIMEOUT_MS;
}

/** Milliseconds left until `deadline`, at least 1 (a timer for a past deadline still fires, at once). */
export function msUntil(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}
