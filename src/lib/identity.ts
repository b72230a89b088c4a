// Identities (decisions.md section 2): Ed25519 keys and what is done with them in
// Node (generate, sign, verify) over node:crypto, plus the written forms of keys, DIDs
// and signatures from keys.ts (shared with the browser entry). No state.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { base64urlnopad } from '@scure/base';
import { AUTH_CHALLENGE_PREFIX, isKey } from './keys.js';

export * from './keys.js';

// DER SubjectPublicKeyInfo and PKCS#8 headers for Ed25519 (RFC 8410): header + raw 32 bytes.
const SPKI_HEADER = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
const PKCS8_HEADER = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

export interface SigningKey {
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
  /** The private key as PKCS#8 DER (RFC 8410), what node:crypto imports directly. */
  privateKeyPkcs8: Uint8Array;
}

/** A new Ed25519 key pair. */
export function generateSigningKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const privateKeyPkcs8 = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }));
  return { publicKey: publicKeyFromPrivateKey(privateKeyPkcs8), privateKeyPkcs8 };
}

/** The PKCS#8 DER private key of a 32-byte Ed25519 seed (RFC 8032 secret key). */
export function privateKeyFromSeed(seed: Uint8Array): Uint8Array {
  if (!isKey(seed)) throw new TypeError('an Ed25519 seed is 32 bytes');
  const out = new Uint8Array(PKCS8_HEADER.length + seed.length);
  out.set(PKCS8_HEADER, 0);
  out.set(seed, PKCS8_HEADER.length);
  return out;
}

function privateKeyObject(privateKeyPkcs8: Uint8Array): KeyObject {
  const key = createPrivateKey({ key: Buffer.from(privateKeyPkcs8), format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyType !== 'ed25519') throw new TypeError('not an Ed25519 private key');
  return key;
}

/** Public KeyObjects made lately, by raw key (making one costs as much as a verify). */
const PUBLIC_KEY_CACHE = 1024;
const publicKeys = new Map<string, KeyObject>();

/**
 * A node:crypto public KeyObject of a raw 32-byte Ed25519 public key. The last
 * PUBLIC_KEY_CACHE keys' objects are kept (a log audit or a busy server verifies the
 * same signers again and again); a public key is no secret.
 */
export function publicKeyObject(publicKey: Uint8Array): KeyObject {
  if (!isKey(publicKey)) throw new TypeError('an Ed25519 public key is 32 bytes');
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64');
  let key = publicKeys.get(id);
  if (key === undefined) {
    const der = new Uint8Array(SPKI_HEADER.length + publicKey.length);
    der.set(SPKI_HEADER, 0);
    der.set(publicKey, SPKI_HEADER.length);
    key = createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
    if (publicKeys.size >= PUBLIC_KEY_CACHE) publicKeys.delete(publicKeys.keys().next().value!);
    publicKeys.set(id, key);
  }
  return key;
}

/** The raw 32-byte public key of a PKCS#8 Ed25519 private key. */
export function publicKeyFromPrivateKey(privateKeyPkcs8: Uint8Array): Uint8Array {
  const jwk = createPublicKey(privateKeyObject(privateKeyPkcs8)).export({ format: 'jwk' });
  return base64urlnopad.decode(String(jwk.x));
}

/** The 64-byte Ed25519 signature (RFC 8032, pure) of `bytes`. */
export function signBytes(privateKeyPkcs8: Uint8Array, bytes: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, bytes, privateKeyObject(privateKeyPkcs8)));
}

/** Whether `signature` is a valid Ed25519 signature of `bytes` by `publicKey` (raw 32 bytes). Never throws. */
export function verifyBytes(publicKey: Uint8Array, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (!isKey(publicKey) || !(bytes instanceof Uint8Array) || !(signature instanceof Uint8Array) || signature.length !== 64) return false;
  try {
    return verify(null, bytes, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

/**
 * A fresh vault login challenge `provenant-auth-challenge:v1:{random}`, the random part
 * being 32 bytes in base64url. The server stores it (single use, 5 minutes); the vault
 * signs its UTF-8 bytes.
 */
export function authChallenge(): string {
  return AUTH_CHALLENGE_PREFIX + base64urlnopad.encode(randomBytes(32));
}
