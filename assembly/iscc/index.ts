// The ISCC kernel module (build/iscc.{simd,scalar}.wasm): BLAKE3 and the hot parts of the
// ISCC codes of ISO 24138 (issue 33). Each algorithm lives in its own file; this file only
// re-exports what the host calls.
export { scratch, alloc, release } from '../common/memory';
export { blake3Init, blake3Update, blake3Final, blake3Digest, blake3ContextSize } from './blake3';
export { xxh32Digest } from './xxh32';
export { dataInit, dataUpdate, dataFinal, dataContextSize } from './data';
export { textHash } from './text';
export { imageTrimBox, imageGrey32, imageNormalize, imageHash } from './image';
