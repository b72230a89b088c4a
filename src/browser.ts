// The package entry for browsers (the "browser" condition of package.json "exports"):
// everything of the library that works on bytes, pixels and samples the page already
// has (decoding files is the browser's job: createImageBitmap, decodeAudioData). The
// same modules as the Node entry; only the WebAssembly loader (initWasm, awaited once
// before any other call) and the Ed25519 verifier (@noble/curves, not node:crypto)
// differ. Nothing here reaches a Node built-in.
import { ed25519 } from '@noble/curves/ed25519.js';
import { isKey } from './lib/keys.js';
import { actionHashBytes, verifyRecordWith } from './lib/record-bytes.js';
import type { SignatureRecord, SignedRecord } from './lib/records.js';
import { sha256Hex } from './lib/sha256.js';

export { initWasm } from './lib/wasm-browser.js';
export type { WasmSource } from './lib/wasm-browser.js';
export { wasmFlavor, simdSupported, KERNEL_NAMES } from './lib/wasm-core.js';
export type { WasmFlavor, KernelName } from './lib/wasm-core.js';
export {
  AGENT_KEY_PREFIX, ED25519_MULTICODEC, AUTH_CHALLENGE_PREFIX,
  agentKeyLocation, agentKeyBytes, agentKeyFromPublicKey, parseAgentKey, normalizeAgentKey,
  didFromPublicKey, didFromAgentKey, parseDid, parseIdentity,
  parseSignatureBase64, parseSignatureHex, toBase64, isAuthChallenge, quotaSyncMessage,
} from './lib/keys.js';
export { RECORD_FIELDS, canonicalRecordBytes } from './lib/record-bytes.js';
export type { SignatureRecord, SignedRecord, RecordField } from './lib/records.js';
export * from './lib/portable.js';
// the transparency log's verification (docs/transparency-log.md): Ed25519 through @noble/curves here too
export * from './lib/tlog/index.js';

/**
 * Whether `signature` is a valid Ed25519 signature of `bytes` by `publicKey` (raw 32
 * bytes), as RFC 8032 defines it (zip215 off: non-canonical encodings are refused, as
 * node:crypto refuses them). Never throws.
 */
export function verifyBytes(publicKey: Uint8Array, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (!isKey(publicKey) || !(bytes instanceof Uint8Array) || !(signature instanceof Uint8Array) || signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, bytes, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/**
 * Re-verifies a signed record offline, as the Node entry's verifyRecord does: the key
 * from `signer`, the base64 signature over canonicalRecordBytes. False on any
 * malformed input; never throws.
 */
export function verifyRecord(record: SignedRecord): boolean {
  return verifyRecordWith(record, verifyBytes);
}

/** The action hash (decisions.md 2), as the Node entry's actionHash: lowercase hex SHA-256 of actionHashBytes. */
export function actionHash(record: SignatureRecord, signature: string): string {
  return sha256Hex(actionHashBytes(record, signature));
}
