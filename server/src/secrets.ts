// Secrets generated into the data directory on first use (decisions.md 2, 5):
// `$DATA_DIR/secrets/jwt.key` (session-token HMAC key) and `cell.key` (the AES-256-GCM
// key sealing server-hosted cells). 32 random bytes each, file mode 0600, never logged.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type SecretName = 'jwt.key' | 'cell.key';

const SECRET_BYTES = 32;
const cache = new Map<string, Buffer>();

/** The secret `name` of `dataDir`, created atomically (exclusive create) if missing. */
export function loadSecret(dataDir: string, name: SecretName): Buffer {
  const file = join(dataDir, 'secrets', name);
  const cached = cache.get(file);
  if (cached) return cached;
  mkdirSync(join(dataDir, 'secrets'), { recursive: true, mode: 0o700 });
  let secret: Buffer;
  try {
    writeFileSync(file, randomBytes(SECRET_BYTES), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  secret = readFileSync(file);
  if (secret.length !== SECRET_BYTES) throw new Error(`${file} must hold ${SECRET_BYTES} bytes`);
  chmodSync(file, 0o600);
  cache.set(file, secret);
  return secret;
}
