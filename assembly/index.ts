// The core kernel module (build/core.{simd,scalar}.wasm): hashing, image dHash,
// bands and Hamming search. Each algorithm lives in its own file; this file only
// re-exports what the host calls.
export { scratch, alloc, release } from './common/memory';
