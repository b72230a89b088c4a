// The vault's key file (decisions.md 2): one Ed25519 identity, JSON, mode 0600 in a
// 0700 folder, never overwritten. The private key (PKCS#8 DER) is stored either plain or
// encrypted under a passphrase: scrypt (RFC 7914) derives an AES-256-GCM key; the
// agent key is the GCM additional data, so a file whose public half was swapped for
// another identity's fails to open like a wrong passphrase does.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { agentKeyFromPublicKey, didFromPublicKey, generateSigningKey, publicKeyFromPrivateKey, type SigningKey } from '../lib/identity.js';
import { VaultCommandError } from './errors.js';

const FORMAT = 'provenant-vault-key/1';
// RFC 7914 parameters: N = 2^15, r = 8 (32 MiB, about 0.1 s here); stored in the file so they can grow.
const SCRYPT = { N: 1 << 15, r: 8, p: 1 } as const;

interface EncryptedKey {
  kdf: 'scrypt';
  salt: string;
  N: number;
  r: number;
  p: number;
  cipher: 'aes-256-gcm';
  iv: string;
  tag: string;
  ciphertext: string;
}

/** The key file as stored: the public identity, and the private key plain (`private_key`) or encrypted (`encrypted_private_key`), base64. */
interface KeyFileJson {
  format: typeof FORMAT;
  agent_pub_key: string;
  did: string;
  created_at: string;
  private_key?: string;
  encrypted_private_key?: EncryptedKey;
}

/** An opened key file: who it is, and how to get its private key. */
export interface KeyFile {
  path: string;
  agentPubKey: string;
  did: string;
  encrypted: boolean;
  /** The PKCS#8 private key; a passphrase is needed when `encrypted` (wrong_passphrase if it does not open the key). */
  unlock(passphrase?: string): Uint8Array;
}

function deriveKey(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Buffer {
  return scryptSync(passphrase.normalize('NFC'), salt, 32, { ...params, maxmem: 256 * params.N * params.r });
}

function encrypt(privateKey: Uint8Array, passphrase: string, agentPubKey: string): EncryptedKey {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(passphrase, salt, SCRYPT), iv);
  cipher.setAAD(Buffer.from(agentPubKey, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(privateKey), cipher.final()]);
  return {
    kdf: 'scrypt', salt: salt.toString('base64'), ...SCRYPT,
    cipher: 'aes-256-gcm', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64'),
  };
}

function decrypt(file: KeyFileJson, path: string, passphrase: string): Uint8Array {
  const e = file.encrypted_private_key!;
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(passphrase, Buffer.from(e.salt, 'base64'), e), Buffer.from(e.iv, 'base64'));
    decipher.setAAD(Buffer.from(file.agent_pub_key, 'utf8'));
    decipher.setAuthTag(Buffer.from(e.tag, 'base64'));
    return new Uint8Array(Buffer.concat([decipher.update(Buffer.from(e.ciphertext, 'base64')), decipher.final()]));
  } catch {
    throw new VaultCommandError('wrong_passphrase', path);
  }
}

/** The private key after checking that it is the file's identity (a hand-edited file must not sign as someone else). */
function checkedKey(privateKey: Uint8Array, file: KeyFileJson, path: string): Uint8Array {
  let publicKey: Uint8Array;
  try {
    publicKey = publicKeyFromPrivateKey(privateKey);
  } catch {
    throw new VaultCommandError('key_file_invalid', path);
  }
  if (agentKeyFromPublicKey(publicKey) !== file.agent_pub_key) throw new VaultCommandError('key_file_invalid', path);
  return privateKey;
}

/**
 * Creates the key file at `path` (its folder 0700, the file 0600, refused if it exists):
 * a new identity, encrypted when `passphrase` is a non-empty string.
 */
export function createKeyFile(path: string, passphrase: string | null, key: SigningKey = generateSigningKey()): KeyFile {
  const agentPubKey = agentKeyFromPublicKey(key.publicKey);
  const json: KeyFileJson = { format: FORMAT, agent_pub_key: agentPubKey, did: didFromPublicKey(key.publicKey), created_at: new Date().toISOString() };
  if (passphrase) json.encrypted_private_key = encrypt(key.privateKeyPkcs8, passphrase, agentPubKey);
  else json.private_key = Buffer.from(key.privateKeyPkcs8).toString('base64');
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new VaultCommandError('key_file_exists', path);
    throw err;
  }
  chmodSync(path, 0o600); // whatever the umask
  return openParsed(json, path);
}

function openParsed(file: KeyFileJson, path: string): KeyFile {
  return {
    path,
    agentPubKey: file.agent_pub_key,
    did: file.did,
    encrypted: file.encrypted_private_key !== undefined,
    unlock(passphrase?: string): Uint8Array {
      if (file.encrypted_private_key === undefined) return checkedKey(new Uint8Array(Buffer.from(file.private_key!, 'base64')), file, path);
      if (passphrase === undefined || passphrase === '') throw new VaultCommandError('passphrase_needed', path);
      return checkedKey(decrypt(file, path, passphrase), file, path);
    },
  };
}

/** Opens the key file at `path`: no_key_file, key_file_exposed (readable by group or others), key_file_invalid. */
export function openKeyFile(path: string): KeyFile {
  let text: string;
  try {
    const mode = statSync(path).mode;
    if ((mode & 0o077) !== 0) throw new VaultCommandError('key_file_exposed', path, (mode & 0o777).toString(8));
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new VaultCommandError('no_key_file', path);
    throw err;
  }
  let file: KeyFileJson;
  try {
    file = JSON.parse(text) as KeyFileJson;
  } catch {
    throw new VaultCommandError('key_file_invalid', path);
  }
  const wellFormed = file?.format === FORMAT && typeof file.agent_pub_key === 'string' && typeof file.did === 'string'
    && (typeof file.private_key === 'string' || (typeof file.encrypted_private_key === 'object' && file.encrypted_private_key !== null));
  if (!wellFormed) throw new VaultCommandError('key_file_invalid', path);
  return openParsed(file, path);
}
