// The WebAssembly fingerprint library: pure functions over bytes and pixels, no I/O.
export { detectType } from './detect.js';
export type { DetectedType, MediaFormat, MediaKind } from './detect.js';
export type { Fingerprint, HashType } from './types.js';
export { wasmFlavor, simdSupported } from './wasm.js';
export {
  AGENT_KEY_PREFIX, ED25519_MULTICODEC, AUTH_CHALLENGE_PREFIX,
  agentKeyLocation, agentKeyBytes, agentKeyFromPublicKey, parseAgentKey, normalizeAgentKey,
  didFromPublicKey, didFromAgentKey, parseDid, parseIdentity,
  generateSigningKey, privateKeyFromSeed, publicKeyFromPrivateKey, publicKeyObject,
  signBytes, verifyBytes, parseSignatureBase64, parseSignatureHex, toBase64,
  authChallenge, isAuthChallenge, quotaSyncMessage,
} from './identity.js';
export type { SigningKey } from './identity.js';
export {
  RECORD_FIELDS, CONTENT_RIGHTS_FIELDS, COMMENT_MAX, RECORD_VALUE_MAX_DEPTH, RECORD_VALUE_LIMITS, recordValueProblem,
  ENUMERATIONS, RESTRICTIVENESS, InvalidFieldError,
  enumToResponse, enumToRequest, contentRightsToResponse, contentRightsToRequest,
  restrictivenessRank, mostRestrictive, combineContentRights,
  normalizeRecord, normalizeRecordContent, recordOf, parseRecord, canonicalRecordBytes, actionHash, signRecord, isSignerKey, verifyRecord,
  isPlainObject, isHex64, commentProblem,
  canonicalRevocationBytes, signRevocation, verifyRevocation, parseRevocation,
} from './records.js';
export type {
  SignatureRecord, SignedRecord, RecordContent, RecordInput, RecordField, ContentRights, ContentRightsField, EnumField,
  Intent, AiGeneration, License, CommercialLicensing, AiTraining, ContactPreference, InvalidFieldCode,
  RevocationEntry, FreeFormField,
} from './records.js';
export {
  imagePHashFromPixels, imageHashFromPixels, imagePHashFromGrey72, imageHashFromGrey72, resizeTo9x8,
} from './dhash.js';
export type { PixelChannels } from './dhash.js';
export { imageBands, bandKey } from './bands.js';
export {
  hammingDistance, hammingSimilarity, similarityFromDistance, maxDistanceFor, scanHashes, topKHashes,
  HashTable, alignedSimilarity, SEQUENCE_ALIGNMENT, fingerprintSimilarity,
} from './hamming.js';
export type { HashMatch } from './hamming.js';
export { sha256, sha256Hex, createSha256 } from './sha256.js';
export type { Sha256Hasher } from './sha256.js';
export { hmacSha256, hmacSha256Hex, createHmacSha256 } from './hmac.js';
export type { HmacSha256 } from './hmac.js';
export { chromaprint, ChromaprintStream, audioBands, audioFingerprintFromSamples, audioFingerprintFromWords, wordsToBytes, bytesToWords, CHROMAPRINT_SAMPLE_RATE } from './chromaprint.js';
export {
  IntegrityCode, PdfName, KernelBytes, ENTROPY_WINDOW, walkPng, walkJpeg, jpegExtent, walkGif, pdfEnd, pdfScanNames, zipEnd,
  scanSignatures, walkTiff, containerEnd, mp4Location, walkId3, walkFlac, entropyProfile, entropyOf, longestBase64Run,
  lsbStatistics, chiSquareSurvival, scanText, crc32,
} from './integrity.js';
export type {
  IntegrityCheck, IntegritySeverity, IntegrityIssue, IntegrityReport, SignatureKind, SignatureHit, KernelRecord, WalkResult,
  KernelInput, ContainerKind, EntropyProfile, LsbChannelStats, TextEncoding, TextScan,
} from './integrity.js';
export { MatchIndex, MATCH_LIMIT, HASH_TYPES, hasBandLayout } from './match-index.js';
export type { MatchQuery, MatchQueryOptions, Match, IndexedFingerprint } from './match-index.js';
export {
  fileSha256, fileSha256Hex, createFileHasher, hmacSha256ForService, hmacSha256HexForService,
  FILE_SHA256_WASM_MAX_BYTES, HMAC_SHA256_WASM_MAX_BYTES,
} from './digest.js';
export type { FileHasher } from './digest.js';
