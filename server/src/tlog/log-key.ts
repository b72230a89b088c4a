// The transparency log's identity (docs/transparency-log.md): its origin, the first line
// of every checkpoint, and its Ed25519 key, a 32-byte seed made on first use in the
// secrets directory (`log.key`, 0600) beside the other secrets. Every node of a cluster
// needs the same file, as it needs jwt.key.
import { noteSigner, SIG_ED25519, verifierOf, type NoteSigner } from 'provenant';
import type { Config } from '../config.js';
import type { Secrets } from '../secrets.js';

export interface LogIdentity {
  /** `<host of PROVENANT_BASE_URL>/log`: the checkpoints' origin line and the key's name. */
  origin: string;
  signer: NoteSigner;
  /** `<origin>+<key id>+<base64>` (signed-note), what clients pin. */
  verifierKey: string;
}

/**
 * The log's origin: PROVENANT_LOG_ORIGIN when set (a log keeps its origin for good: set it
 * to the old one when the server's address changes); else the host of PROVENANT_BASE_URL
 * (with its port when it names one) and `/log`; `localhost/log` when PROVENANT_BASE_URL
 * is not set either (the origin must not change with the port a test server happens to get).
 */
export function logOrigin(config: Pick<Config, 'baseUrl' | 'baseUrlFromEnv' | 'logOrigin'>): string {
  if (config.logOrigin !== null) return config.logOrigin;
  return config.baseUrlFromEnv ? `${new URL(config.baseUrl).host}/log` : 'localhost/log';
}

export function loadLogIdentity(config: Pick<Config, 'baseUrl' | 'baseUrlFromEnv' | 'logOrigin'>, secrets: Secrets): LogIdentity {
  const origin = logOrigin(config);
  const seed = new Uint8Array(secrets.key('log.key'));
  return { origin, signer: noteSigner(origin, SIG_ED25519, seed), verifierKey: verifierOf(origin, SIG_ED25519, seed).vkey };
}
