// Chromaprint's default "test2" configuration (chromaprint src/fingerprinter_configuration.cpp):
// 11025 Hz mono input, 4096-sample frames advanced by a third of a frame, chroma of
// 28..3520 Hz in 12 bins, a 5-tap chroma filter, 16 classifiers over 16 frames.

export const SAMPLE_RATE: i32 = 11025;
export const FRAME_SIZE: i32 = 4096;
/** chromaprint: overlap = 4096 - 4096 / 3, so each frame starts 4096 / 3 = 1365 samples later. */
export const FRAME_OVERLAP: i32 = FRAME_SIZE - FRAME_SIZE / 3;
export const HOP: i32 = FRAME_SIZE - FRAME_OVERLAP;
export const SPECTRUM_BINS: i32 = FRAME_SIZE / 2 + 1;
export const MIN_FREQ: f64 = 28.0;
export const MAX_FREQ: f64 = 3520.0;
export const CHROMA_BANDS: i32 = 12;
export const FILTER_TAPS: i32 = 5;
/** Widest classifier filter, in frames: a word needs this many chroma rows. */
export const MAX_FILTER_WIDTH: i32 = 16;
export const CLASSIFIERS: i32 = 16;
