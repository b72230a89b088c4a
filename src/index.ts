// The package entry (`import ... from 'provenant'`): the library, the media
// decoders that turn files into fingerprints, and the worker pool.
export * from './lib/index.js';
export { fingerprintFile, perceptualHashes, similarity } from './media/fingerprint.js';
export type { FingerprintOptions, PerceptualHashes } from './media/fingerprint.js';
export { FINGERPRINT_TIMEOUT_MS } from './media/deadline.js';
export { FingerprintError } from './media/errors.js';
export type { FingerprintErrorCode } from './media/errors.js';
export { DecoderSandbox, SandboxError } from './media/sandbox.js';
export type { DecoderSandboxOptions } from './media/sandbox.js';
export { createFingerprintPool, PoolError, PoolTimeoutError, PoolBusyError, PoolTaskError } from './pool/index.js';
export type { FingerprintPool, FingerprintPoolOptions } from './pool/index.js';
export { IndexThread, IndexThreadError } from './pool/match-index-thread.js';
export type { IndexRequest, IndexReply } from './pool/match-index-thread.js';
export { decodeAudio, audioFingerprint } from './media/audio.js';
export type { AudioFormat, DecodeAudioOptions } from './media/audio.js';
export { integrityReport, classifyContent, checksFor, INTEGRITY_THRESHOLDS } from './media/integrity.js';
export { readContentCredentials } from './media/c2pa.js';
// The exit-code convention of the `provenant` commands, shared with the server's (serve, admin).
export { USAGE_ERROR, UsageError } from './cli/usage.js';
// Others' strings made safe for a terminal, for every printer (the CLI's, the server's admin).
export { visible, visibleLines, terminalJson } from './lib/terminal-text.js';
