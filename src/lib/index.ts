// The WebAssembly fingerprint library: pure functions over bytes and pixels, no I/O.
export * from './portable.js';
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
  pdqHashOrAbsent, PDQ_MAX_FRAMES, PDQ_MAX_TIMESTAMP_SECONDS, vpdqTimestampProblem, isccOrAbsent, isccContentUnit, ISCC_TEXT_MAX, featuresRefOrAbsent, FEATURES_REF_MAX_COUNT,
} from './records.js';
export type {
  SignatureRecord, SignedRecord, RecordContent, RecordInput, RecordField, ContentRights, ContentRightsField, EnumField,
  Intent, AiGeneration, License, CommercialLicensing, AiTraining, ContactPreference, InvalidFieldCode,
  RevocationEntry, FreeFormField, PdqHashValue, FeaturesRef,
} from './records.js';
export {
  fileSha256, fileSha256Hex, createFileHasher, hmacSha256ForService, hmacSha256HexForService,
  FILE_SHA256_WASM_MAX_BYTES, HMAC_SHA256_WASM_MAX_BYTES,
} from './digest.js';
export type { FileHasher } from './digest.js';
