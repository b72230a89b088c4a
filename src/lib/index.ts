// The WebAssembly fingerprint library: pure functions over bytes and pixels, no I/O.
export { detectType } from './detect.js';
export type { DetectedType, MediaFormat, MediaKind } from './detect.js';
export type { Fingerprint, HashType } from './types.js';
export { wasmFlavor, simdSupported } from './wasm.js';
