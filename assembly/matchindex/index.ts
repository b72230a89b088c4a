// The perceptual match index kernel module (build/matchindex.{simd,scalar}.wasm):
// band posting lists and packed fingerprints kept in this module's memory, and the
// candidate query of decisions.md section 3 (src/lib/match-index.ts is the host side).
export { scratch, alloc, release } from '../common/memory';
export {
  miCreate, miDestroy, miAdd, miRemove, miQuery, miResults, miSize, miBytes, miReserve, miHas,
} from './index_core';
// The 256-bit PDQ index (issue 28; src/lib/pdq-index.ts is the host side).
export {
  pdqCreate, pdqDestroy, pdqAdd, pdqStage, pdqFinish, pdqRemove, pdqHas, pdqGet, pdqSize, pdqBytes, pdqCompact, pdqQuery, pdqResults,
} from './pdq_index';
// The local-features retrieval index (issue 32; src/lib/feature-index.ts is the host side).
export { fiCreate, fiDestroy, fiAdd, fiHas, fiSize, fiPostings, fiBytes, fiCell, fiQuery, fiResults, fiWeight, fiScanned, fiPassed } from './feature_index';
