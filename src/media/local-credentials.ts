// Content Credentials for the in-process callers, `provenant integrity`, the vault
// (issue 34 item 1) and `provenant c2pa recover` (issue 33): read as the server's workers read them, in a decoder sandbox (a
// process of its own, src/media/sandbox.ts) under the same limits (c2pa-limits.ts, applied
// by the reader) and a deadline, past which the sandbox process is killed and the report
// says the credentials were not read. The deadline is the server's setting,
// PROVENANT_CREDENTIALS_TIMEOUT_MS (default CREDENTIALS_TIMEOUT_MS, 10 s).
import type { ContentCredentials } from '../lib/content-credentials.js';
import type { ManifestStoreReading } from './c2pa-store.js';
import { CREDENTIALS_TIMEOUT_MS } from './deadline.js';
import { credentialsWithin, DecoderSandbox, SandboxError } from './sandbox.js';

export type CredentialsReader = (bytes: Uint8Array) => Promise<ContentCredentials>;

/** PROVENANT_CREDENTIALS_TIMEOUT_MS as the server reads it (100 ms to an hour), or the default; throws naming the variable for another value. */
export function credentialsTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.PROVENANT_CREDENTIALS_TIMEOUT_MS?.trim();
  if (text === undefined || text === '') return CREDENTIALS_TIMEOUT_MS;
  const ms = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(ms >= 100 && ms <= 3_600_000)) throw new Error('PROVENANT_CREDENTIALS_TIMEOUT_MS must be a whole number of milliseconds from 100 to 3600000');
  return ms;
}

/** Runs `use` with a reader of credentials in a sandbox of its own, closed when `use` settles. */
export async function withCredentialsReader<T>(use: (read: CredentialsReader) => Promise<T>, timeoutMs = credentialsTimeoutFromEnv()): Promise<T> {
  const sandbox = new DecoderSandbox();
  try {
    return await use((bytes) => credentialsWithin(sandbox, bytes, timeoutMs));
  } finally {
    await sandbox.close();
  }
}

/**
 * A detached manifest store (one a repository sent: `provenant c2pa recover`) read in a
 * sandbox process of its own by the same deadline; rejects with the reader's refusal, or
 * saying the deadline passed.
 */
export async function readManifestStoreLocally(bytes: Uint8Array, timeoutMs = credentialsTimeoutFromEnv()): Promise<ManifestStoreReading> {
  const sandbox = new DecoderSandbox();
  try {
    return await sandbox.manifestStore(bytes, Date.now() + timeoutMs);
  } catch (e) {
    if (e instanceof SandboxError && e.code === 'timeout') throw new Error(`reading the manifest store ran past its deadline (${timeoutMs} ms)`);
    throw e;
  } finally {
    await sandbox.close();
  }
}
