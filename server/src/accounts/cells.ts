// Server-hosted cells (decisions.md 2): an Ed25519 identity whose private key the
// server holds, sealed with AES-256-GCM under $DATA_DIR/secrets/cell.key. The
// additional data binds each ciphertext to its user and agent key, so a row copied
// onto another user does not decrypt.
import { createCipheriv, createDecipheriv, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { agentKeyFromPublicKey, didFromPublicKey, generateSigningKey, parseAgentKey } from 'provenant';
import { StoreConflictError } from '../store/accounts.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { loadSecret } from '../secrets.js';

const TAG_BYTES = 16;

function additionalData(userId: string, agentKey: string): Buffer {
  return Buffer.from(`provenant-cell:v1:${userId}:${agentKey}`, 'utf8');
}

function seal(key: Buffer, plain: Uint8Array, aad: Buffer): { ciphertext: Uint8Array; nonce: Uint8Array } {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { ciphertext: new Uint8Array(body), nonce: new Uint8Array(nonce) };
}

function open(key: Buffer, ciphertext: Uint8Array, nonce: Uint8Array, aad: Buffer): Uint8Array {
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(aad);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES));
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES)), decipher.final()]));
}

export interface ServerCell {
  agentKey: string;
  did: string;
}

/**
 * Gives `userId` a server-hosted cell: a new Ed25519 key, stored encrypted, its agent
 * key linked as the user's primary. Throws StoreConflictError if the user has one.
 */
export async function createServerCell(deps: Pick<ServerDeps, 'config' | 'store'>, userId: string): Promise<ServerCell> {
  if (await deps.store.accounts.getCell(userId)) throw new StoreConflictError('unknown');
  const { publicKey, privateKeyPkcs8 } = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(publicKey);
  const sealed = seal(loadSecret(deps.config.dataDir, 'cell.key'), privateKeyPkcs8, additionalData(userId, agentKey));
  privateKeyPkcs8.fill(0);
  await deps.store.accounts.createCell({ userId, agentKey, ...sealed });
  return { agentKey, did: didFromPublicKey(publicKey) };
}

/** The agent key of the user's server-hosted cell, or null for device-hosted identities. */
export async function serverCellAgentKey(deps: Pick<ServerDeps, 'store'>, userId: string): Promise<string | null> {
  return (await deps.store.accounts.getCell(userId))?.agentKey ?? null;
}

export interface CellSignature {
  /** The cell's agent key (`uhCAk...`), the record's `signer`. */
  agentKey: string;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  /** The 64-byte Ed25519 signature of `bytes`. */
  signature: Uint8Array;
}

/**
 * Signs `bytes` with the user's server-hosted cell. Throws ApiError `signing_failed`
 * (500, spec 4.7) when the user has none or the key cannot be opened.
 */
export async function signWithCell(deps: Pick<ServerDeps, 'config' | 'store'>, userId: string, bytes: Uint8Array): Promise<CellSignature> {
  const [signed] = await signManyWithCell(deps, userId, [bytes]);
  return signed;
}

/**
 * Signs each of `messages` with the user's cell, unsealing and importing the key once
 * (a batch of 100 would otherwise spend most of its time re-importing it).
 */
export async function signManyWithCell(
  deps: Pick<ServerDeps, 'config' | 'store'>,
  userId: string,
  messages: Uint8Array[],
): Promise<CellSignature[]> {
  const cell = await deps.store.accounts.getCell(userId);
  if (!cell) throw new ApiError('signing_failed');
  let privateKey: KeyObject;
  let sealedOpen: Uint8Array | null = null;
  try {
    sealedOpen = open(loadSecret(deps.config.dataDir, 'cell.key'), cell.ciphertext, cell.nonce, additionalData(userId, cell.agentKey));
    privateKey = createPrivateKey({ key: Buffer.from(sealedOpen), format: 'der', type: 'pkcs8' });
  } catch {
    throw new ApiError('signing_failed', 'Signing failed: the server-hosted key could not be unsealed.');
  } finally {
    sealedOpen?.fill(0);
  }
  const publicKey = parseAgentKey(cell.agentKey)!;
  return messages.map((bytes) => ({ agentKey: cell.agentKey, publicKey, signature: new Uint8Array(sign(null, bytes, privateKey)) }));
}
