// What a vault keeps beside its key file, in the same folder (one vault per folder,
// every file 0600): config.json (the origins allowed to call `vault serve`),
// session.json (the session token `vault link` got) and records.jsonl (every record
// this vault signed, with its signature, and its revocations: `vault list` reads it,
// and `verify` re-verifies records offline with it).
import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RevocationEntry, SignedRecord } from '../lib/records.js';

/** `$PROVENANT_VAULT_KEY`, else key.json in the vault folder under the user's config directory (XDG). */
export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PROVENANT_VAULT_KEY) return env.PROVENANT_VAULT_KEY;
  const config = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(config, 'provenant', 'vault', 'key.json');
}

export interface VaultConfig {
  /** Origins (scheme://host[:port]) whose web pages may ask `vault serve` to sign. */
  allowed_origins: string[];
}

export interface VaultSession {
  server: string;
  token: string;
  user_id: string;
  agent_pub_key: string;
  linked_at: string;
}

/** One line of records.jsonl: a record this vault signed, or a revocation it published. */
export type LogEntry =
  | { kind: 'record'; record: SignedRecord; action_hash: string; published: boolean; server: string | null; file: string | null }
  | { kind: 'revocation'; revocation: RevocationEntry & { signature: string }; server: string };

function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/** The files of the vault whose key file is `keyFile`. */
export class VaultState {
  readonly configFile: string;
  readonly sessionFile: string;
  readonly logFile: string;

  constructor(readonly keyFile: string) {
    const dir = dirname(keyFile);
    this.configFile = join(dir, 'config.json');
    this.sessionFile = join(dir, 'session.json');
    this.logFile = join(dir, 'records.jsonl');
  }

  config(): VaultConfig {
    const stored = readJson<Partial<VaultConfig>>(this.configFile);
    return { allowed_origins: Array.isArray(stored?.allowed_origins) ? stored.allowed_origins.filter((o) => typeof o === 'string') : [] };
  }

  saveConfig(config: VaultConfig): void {
    writePrivate(this.configFile, `${JSON.stringify(config, null, 2)}\n`);
  }

  session(): VaultSession | null {
    return readJson<VaultSession>(this.sessionFile);
  }

  saveSession(session: VaultSession): void {
    writePrivate(this.sessionFile, `${JSON.stringify(session, null, 2)}\n`);
  }

  append(entry: LogEntry): void {
    mkdirSync(dirname(this.logFile), { recursive: true, mode: 0o700 });
    appendFileSync(this.logFile, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  /** Every entry, oldest first; a torn last line (a crash mid-append) is skipped. */
  log(): LogEntry[] {
    let text: string;
    try {
      text = readFileSync(this.logFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: LogEntry[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        out.push(JSON.parse(line) as LogEntry);
      } catch {
        // a partial line
      }
    }
    return out;
  }
}

/**
 * An origin as browsers send it (scheme://host[:port], no path), or null: what
 * `vault allow` stores and the service compares exactly.
 */
export function normalizeOrigin(input: string): string | null {
  try {
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '') return null;
    return url.origin;
  } catch {
    return null;
  }
}
