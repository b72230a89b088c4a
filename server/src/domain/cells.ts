// Server-hosted cells (decisions.md 2): an Ed25519 identity whose private key the
// server holds, sealed with AES-256-GCM under cell.key (PROVENANT_SECRETS_DIR). The
// additional data binds each ciphertext to its user and agent key, so a row copied
// onto another user does not decrypt.
import { createCipheriv, createDecipheriv, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { agentKeyFromPublicKey, didFromPublicKey, generateSigningKey, parseAgentKey } from 'provenant';
import { DomainError } from '../errors.js';
import type { Cell } from '../store/index.js';
import type { DomainDeps } from './deps.js';

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
 * key linked as the user's primary. The store refuses a second one (StoreConflictError 'cell').
 */
export async function createServerCell(deps: DomainDeps, userId: string): Promise<ServerCell> {
  const { publicKey, privateKeyPkcs8 } = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(publicKey);
  const sealed = seal(deps.secrets.key('cell.key'), privateKeyPkcs8, additionalData(userId, agentKey));
  privateKeyPkcs8.fill(0);
  await deps.store.accounts.createCell({ userId, agentKey, ...sealed });
  return { agentKey, did: didFromPublicKey(publicKey) };
}

/** The agent key of the user's server-hosted cell, or null for device-hosted identities. */
export async function serverCellAgentKey(deps: DomainDeps, userId: string): Promise<string | null> {
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
 * Signs `bytes` with the user's server-hosted cell. Throws DomainError `signing_failed`
 * (spec 4.7) when the user has none or the key cannot be opened.
 */
export async function signWithCell(deps: DomainDeps, userId: string, bytes: Uint8Array): Promise<CellSignature> {
  const cell = await deps.store.accounts.getCell(userId);
  if (!cell) throw new DomainError('signing_failed');
  return signAsCell(deps, cell, [bytes])[0];
}

/**
 * Signs each of `messages` with the key of `cell` (read by the caller), unsealing and
 * importing it once (a batch of 100 would otherwise spend most of its time
 * re-importing it). Throws DomainError `signing_failed` when the key cannot be opened.
 */
export function signAsCell(deps: Pick<DomainDeps, 'secrets'>, cell: Cell, messages: readonly Uint8Array[]): CellSignature[] {
  let privateKey: KeyObject;
  let sealedOpen: Uint8Array | null = null;
  try {
    sealedOpen = open(deps.secrets.key('cell.key'), cell.ciphertext, cell.nonce, additionalData(cell.userId, cell.agentKey));
    privateKey = createPrivateKey({ key: Buffer.from(sealedOpen), format: 'der', type: 'pkcs8' });
  } catch {
    throw new DomainError('signing_failed', 'Signing failed: the server-hosted key could not be unsealed.');
  } finally {
    sealedOpen?.fill(0);
  }
  const publicKey = parseAgentKey(cell.agentKey)!;
  return messages.map((bytes) => ({ agentKey: cell.agentKey, publicKey, signature: new Uint8Array(sign(null, bytes, privateKey)) }));
}
