// The package entry (`import ... from 'provenant'`): the library, the media
// decoders that turn files into fingerprints, and the worker pool.
export * from './lib/index.js';
export { fingerprintFile, similarity } from './media/fingerprint.js';
export { examineFile, perceptualHashes } from './media/examine.js';
export type { Examination, PerceptualHashes } from './media/examine.js';
export type { FingerprintOptions } from './media/fingerprint.js';
export { CREDENTIALS_TIMEOUT_MS, FINGERPRINT_TIMEOUT_MS } from './media/deadline.js';
export { FingerprintError } from './media/errors.js';
export type { FingerprintErrorCode } from './media/errors.js';
export { DecoderSandbox, SandboxError } from './media/sandbox.js';
export type { DecoderSandboxOptions } from './media/sandbox.js';
export { createFingerprintPool, PoolError, PoolTimeoutError, PoolBusyError, PoolTaskError, workersFromEnv } from './pool/index.js';
export type { FingerprintPool, FingerprintPoolOptions, ExamineOptions } from './pool/index.js';
export { IndexThread, IndexThreadError } from './pool/match-index-thread.js';
export type { IndexRequest, IndexReply } from './lib/match-index-messages.js';
export { decodeAudio, audioFingerprint } from './media/audio.js';
export type { AudioFormat, DecodeAudioOptions } from './media/audio.js';
export { integrityReport, classifyContent, checksFor, INTEGRITY_THRESHOLDS } from './media/integrity.js';
export { readContentCredentials } from './media/c2pa.js';
export { readManifestStore, ManifestStoreError, C2PA_STORE_TYPE, MANIFEST_STORE_MAX_BYTES } from './media/c2pa-store.js';
export type { ManifestStoreReading, ManifestStoreOutcome, SoftBinding } from './media/c2pa-store.js';
export { isccOfFile, parseMp7Signature, ISCC_AUDIO_MAX_SECONDS, ISCC_MAX_TEXT_BYTES, ISCC_VIDEO_FPS } from './media/iscc.js';
export type { IsccFileOptions, IsccFileResult, IsccContentKind } from './media/iscc.js';
// The transparency log (docs/transparency-log.md), and its witness on Node
export * from './lib/tlog/index.js';
export { startWitness, loadOrCreateWitnessKey, fileWitnessStore, WitnessSetupError, WITNESS_MAX_BODY_BYTES, WITNESS_REQUEST_TIMEOUT_MS } from './lib/tlog/witness-server.js';
export type { StartWitnessOptions, RunningWitness } from './lib/tlog/witness-server.js';
// Provenant's log entries (issue 27): what each stored event appends, re-verifiable offline
export { encodeLogEntry, decodeLogEntry, thumbnailEntry, verifyLogEntrySignature } from './lib/log-entry.js';
export type { LogEntry } from './lib/log-entry.js';
// The exit-code convention of the `provenant` commands, shared with the server's (serve, admin).
export { USAGE_ERROR, UsageError } from './cli/usage.js';
// Others' strings made safe for a terminal, for every printer (the CLI's, the server's admin).
export { visible, visibleLines, terminalJson } from './lib/terminal-text.js';
