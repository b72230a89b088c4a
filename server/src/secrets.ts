// Secrets generated on first use (decisions.md 2, 5) in the secrets directory
// (PROVENANT_SECRETS_DIR, default `$PROVENANT_DATA_DIR/secrets`): `jwt.key` (session-token
// HMAC key) and `cell.key` (the AES-256-GCM key sealing server-hosted cells). 32 random
// bytes each, file mode 0600, never logged. The nodes of a cluster share them (one
// mounted directory, or copies); a fingerprint of them, never the keys, is what a shared
// database records to catch a node with other keys (root.ts). The composition root
// builds one Secrets and passes it in the deps (ServerDeps, DomainDeps): nothing reads
// a key by path or from a module-wide cache.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// `log.key` (the transparency log's Ed25519 seed, tlog/log-key.ts) is made the same way but
// is not among SECRET_NAMES: the fingerprint a shared database recorded before the log
// existed stays valid (nodes must still share it: docs/transparency-log.md)
export type SecretName = 'jwt.key' | 'cell.key' | 'log.key';
const SECRET_NAMES: readonly SecretName[] = ['jwt.key', 'cell.key'];

const SECRET_BYTES = 32;

/** The keys of one secrets directory, each read (or made) on its first use and then held. */
export class Secrets {
  private readonly keys = new Map<SecretName, Buffer>();

  constructor(readonly dir: string) {}

  /** The secret `name` in the directory, created atomically (exclusive create) if missing. */
  key(name: SecretName): Buffer {
    const held = this.keys.get(name);
    if (held) return held;
    const file = join(this.dir, name);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(SECRET_BYTES), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const secret = readFileSync(file);
    if (secret.length !== SECRET_BYTES) throw new Error(`${file} must hold ${SECRET_BYTES} bytes`);
    chmodSync(file, 0o600);
    this.keys.set(name, secret);
    return secret;
  }

  /** SHA-256 over jwt.key and cell.key (name and bytes), as `sha256:<hex>`: equal exactly when the keys are. */
  fingerprint(): string {
    const hash = createHash('sha256');
    for (const name of SECRET_NAMES) hash.update(`${name}\n`).update(this.key(name));
    return `sha256:${hash.digest('hex')}`;
  }
}

/**
 * A data directory from before PROVENANT_SECRETS_DIR keeps its keys in `dataDir/secrets`.
 * When the secrets directory is elsewhere and holds none of them yet, the old keys are
 * copied there (0600; the originals stay, so going back to the old setting still
 * works), instead of new keys being made that would lock out every session and cell.
 * `log.key` is copied whenever the secrets directory has none: the log of this data
 * directory is signed by it. Returns the names copied.
 */
export function adoptDataDirSecrets(dataDir: string, secretsDir: string): SecretName[] {
  const old = join(dataDir, 'secrets');
  if (resolve(old) === resolve(secretsDir)) return [];
  const found = SECRET_NAMES.some((name) => existsSync(join(secretsDir, name))) ? [] : SECRET_NAMES.filter((name) => existsSync(join(old, name)));
  // the log's key goes with the log (its checkpoints are signed by it: a new key would be
  // a second identity, which the checkpointer refuses), whatever the other keys do
  if (!existsSync(join(secretsDir, 'log.key')) && existsSync(join(old, 'log.key'))) found.push('log.key');
  if (found.length === 0) return [];
  mkdirSync(secretsDir, { recursive: true, mode: 0o700 });
  for (const name of found) writeFileSync(join(secretsDir, name), readFileSync(join(old, name)), { flag: 'wx', mode: 0o600 });
  return found;
}
