// The part of the library that needs nothing of its environment: kernels over bytes,
// pixels and samples, exported alike by the Node entry (./index.ts) and the browser
// entry (../browser.ts), so the two lists cannot drift apart.
export { detectType } from './detect.js';
export type { DetectedType, MediaFormat, MediaKind } from './detect.js';
export type { Fingerprint, HashType } from './types.js';
export {
  imagePHashFromPixels, imageHashFromPixels, imagePHashFromGrey72, imageHashFromGrey72, resizeTo9x8,
} from './dhash.js';
export type { PixelChannels } from './dhash.js';
export {
  pdqHash, pdqDihedral, imageHashesFromPixels, pdqHex, pdqFromHex, pdqDistance, pdqBit, PDQ_BYTES, PDQ_DIHEDRAL,
  pdqFingerprint, vpdqFingerprint, pdqExchangeLines,
} from './pdq.js';
export type { PdqHash, PdqDihedral, PdqDihedralName, PdqFingerprint, VpdqFingerprint, VpdqFrame } from './pdq.js';
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
export { verifyWebhookSignature } from './webhook.js';
export { chromaprint, ChromaprintStream, audioBands, audioFingerprintFromSamples, audioFingerprintFromWords, wordsToBytes, bytesToWords, CHROMAPRINT_SAMPLE_RATE } from './chromaprint.js';
export { mixToMono, resampleTo11025 } from './resample.js';
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
export { PdqIndex, PDQ_MATCH_DISTANCE, PDQ_MIN_QUALITY, PDQ_INDEX_MAX_ENTRIES } from './pdq-index.js';
export type { PdqMatch } from './pdq-index.js';
export { IsccIndex, ISCC_INDEX_BITS, ISCC_MIN_SET_BITS, ISCC_BINDING_MAX_DISTANCE, ISCC_SOURCE_MAX_DISTANCE, isccSimilarity, isccIndexKey } from './iscc-index.js';
export type { IsccMatch } from './iscc-index.js';
// Local features and their geometric check (issue 32; docs/features.md)
export {
  extractFeatures, compareFeatures, matchFeatures, confirms, shownShare, recordFeatures, prefixOf, descriptorsOf, encodeFeatureSet, decodeFeatureSet, FeatureSetError,
  FEATURES_VERSION, FEATURE_BYTES, FEATURE_DESCRIPTOR_OFFSET, QUERY_FEATURES_MAX, RECORD_FEATURES_MAX, INDEXED_FEATURES, RETRIEVAL_FEATURES, MIN_FEATURES, MIN_INLIERS, MIN_COVERAGE, MIN_SHOWN, MAX_SHOWN, FRAMED_MIN_INLIERS, SPREAD_MIN_INLIERS, SPREAD_COVERAGE, NEAR_COPY_PDQ_DISTANCE,
} from './features.js';
export type { FeatureSet, FeatureMatch, FeaturePixels } from './features.js';
export { FeatureIndex, FEATURE_INDEX_MAX_ID, FEATURE_INDEX_FEATURES, FEATURE_INDEX_MAX_IMAGES } from './feature-index.js';
export type { FeatureCandidate, FeatureQueryOptions } from './feature-index.js';
export { AI_SOURCE_TYPES, CREDENTIALS_STATES, PROVENANT_RECORD_LABEL, SOFT_BINDING_LABEL, ISCC_SOFT_BINDING_ALG, isAiSourceType, aiGenerationConflicts } from './content-credentials.js';
export type { ContentCredentials, CredentialsFound, CredentialsState, CredentialsAction, CredentialsSigner, CredentialsConflict, ProvenantRecordAssertion, ProvenantRecordAssertionData } from './content-credentials.js';
// ISCC codes (ISO 24138, issue 33; docs/iscc.md) and BLAKE3, their Instance-Code's hash
export { blake3, createBlake3, BLAKE3_BYTES } from './blake3.js';
export type { Blake3Hasher } from './blake3.js';
export {
  imageCode, audioCode, videoCode, textCode, mixedCode, dataCode, instanceCode, isccCode,
  createDataHasher, createInstanceHasher, isccImagePixels, isccImageCodeFromPixels, textCollapse, textClean, xxh32,
  decodeIscc, encodeUnit, isccToBytes, isccFromBytes, isccDecompose, isccDistance, isccTypeName,
  IsccError, MP7_SIGNATURE_SIZE, ISCC_MAX_IMAGE_SIDE,
} from './iscc.js';
export type { IsccUnit, IsccCodeOptions, IsccPixelChannels, IsccByteInput, DataHasher, InstanceHasher, InstanceCode } from './iscc.js';
