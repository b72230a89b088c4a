// The core kernel module (build/core.{simd,scalar}.wasm): hashing, image dHash,
// bands and Hamming search. Each algorithm lives in its own file; this file only
// re-exports what the host calls.
export { scratch, alloc, release } from './common/memory';
export { dhashResize, dhashFromPixels, dhashFromGrey72 } from './dhash';
export { imageBands } from './bands';
export { hammingDistance, hammingScan, hammingScanBytewise, hammingDistancesAt, hammingTopK, hammingResults, alignedSimilarity } from './hamming';
export { sha256Init, sha256Update, sha256Final, sha256Digest, sha256ContextSize } from './sha256';
export { hmacSha256Init, hmacSha256Reset, hmacSha256Update, hmacSha256Final, hmacSha256Mac, hmacSha256Digest, hmacSha256ContextSize } from './hmac';
export { pdqFromPixels, pdqDihedralFromPixels } from './pdq/hash';
