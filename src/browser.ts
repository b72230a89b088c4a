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
export { detectType } from './lib/detect.js';
export type { DetectedType, MediaFormat, MediaKind } from './lib/detect.js';
export type { Fingerprint, HashType } from './lib/types.js';
export {
  AGENT_KEY_PREFIX, ED25519_MULTICODEC, AUTH_CHALLENGE_PREFIX,
  agentKeyLocation, agentKeyBytes, agentKeyFromPublicKey, parseAgentKey, normalizeAgentKey,
  didFromPublicKey, didFromAgentKey, parseDid, parseIdentity,
  parseSignatureBase64, parseSignatureHex, toBase64, isAuthChallenge, quotaSyncMessage,
} from './lib/keys.js';
export { RECORD_FIELDS, canonicalRecordBytes } from './lib/record-bytes.js';
export type { SignatureRecord, SignedRecord, RecordField } from './lib/records.js';
export {
  imagePHashFromPixels, imageHashFromPixels, imagePHashFromGrey72, imageHashFromGrey72, resizeTo9x8,
} from './lib/dhash.js';
export type { PixelChannels } from './lib/dhash.js';
export { imageBands, bandKey } from './lib/bands.js';
export {
  hammingDistance, hammingSimilarity, similarityFromDistance, maxDistanceFor, scanHashes, topKHashes,
  HashTable, alignedSimilarity, SEQUENCE_ALIGNMENT, fingerprintSimilarity,
} from './lib/hamming.js';
export type { HashMatch } from './lib/hamming.js';
export { sha256, sha256Hex, createSha256 } from './lib/sha256.js';
export type { Sha256Hasher } from './lib/sha256.js';
export { hmacSha256, hmacSha256Hex, createHmacSha256 } from './lib/hmac.js';
export type { HmacSha256 } from './lib/hmac.js';
export { chromaprint, ChromaprintStream, audioBands, audioFingerprintFromSamples, audioFingerprintFromWords, wordsToBytes, bytesToWords, CHROMAPRINT_SAMPLE_RATE } from './lib/chromaprint.js';
export { mixToMono, resampleTo11025 } from './lib/resample.js';
export {
  IntegrityCode, PdfName, KernelBytes, ENTROPY_WINDOW, walkPng, walkJpeg, jpegExtent, walkGif, pdfEnd, pdfScanNames, zipEnd,
  scanSignatures, walkTiff, containerEnd, mp4Location, walkId3, walkFlac, entropyProfile, entropyOf, longestBase64Run,
  lsbStatistics, chiSquareSurvival, scanText, crc32,
} from './lib/integrity.js';
export type {
  IntegrityCheck, IntegritySeverity, IntegrityIssue, IntegrityReport, SignatureKind, SignatureHit, KernelRecord, WalkResult,
  KernelInput, ContainerKind, EntropyProfile, LsbChannelStats, TextEncoding, TextScan,
} from './lib/integrity.js';
export { MatchIndex, MATCH_LIMIT, HASH_TYPES, hasBandLayout } from './lib/match-index.js';
export type { MatchQuery, MatchQueryOptions, Match, IndexedFingerprint } from './lib/match-index.js';

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
