// The Chromaprint kernel module (build/chromaprint.{simd,scalar}.wasm): chromaprint's
// "test2" fingerprint as a pipeline of small stages. The host resets, feeds int16
// samples at 11025 Hz mono through `scratch` (float samples are converted there by
// `int16FromFloat`), then reads the words.
export { scratch, alloc, release } from '../common/memory';
export { fingerprintReset, fingerprintConsume, fingerprintWordCount, fingerprintWords } from './fingerprinter';
export { int16FromFloat } from './pcm';

// Single stages, exported so each can be tested alone with hand-computed input.
export { windowAt, applyWindow } from './window';
export { complexFft, powerSpectrum } from './fft';
export { noteOfBin, chromaConsume } from './chroma';
export { chromaFilterConsume, resetChromaFilter } from './chroma_filter';
export { normalizeRow } from './normalizer';
export { resetIntegralImage, integralAddRow, area } from './integral_image';
export { filterValue, quantize, subFingerprint } from './classifiers';
export { grayCode } from './gray_code';

// The resampler's inner loop (11025 Hz input for the fingerprint).
export { resampleRun } from './resampler';
