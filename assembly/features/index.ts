// The local-features kernel module (build/features.{simd,scalar}.wasm): keypoints and
// binary descriptors over an image pyramid, and the geometric check of two feature sets
// (issue 32). Each stage lives in its own file; this file only re-exports what the host calls.
export { scratch, alloc, release } from '../common/memory';
export { extractFeatures, extractFromAnalysis, featuresOutput, lastCandidates } from './extract';
export { analysisWidth, analysisHeight, analysisLuma } from './luma';
export { innerPictureBox } from './inner';
export { fastCornersOfImage, fastXY, fastScores } from './fast';
export { matchSets, matchModel, matchCoverage, matchAffine, matchCorrespondences } from './match';
