// The parameters of the local features (FEATURES_VERSION 1; docs/features.md says why
// each has its value). A stored feature set is only comparable with sets made by the
// same parameters: changing one of the extraction's is a new FEATURES_VERSION.

// ---- extraction ----------------------------------------------------------------------

/** The analysis image: pixels are reduced to grey of about this many pixels (area), aspect kept. */
export const ANALYSIS_PIXELS: f64 = 640.0 * 480.0;
/** Levels of the pyramid at most, and the scale between two levels. */
export const LEVELS: i32 = 6;
export const SCALE_FACTOR: f64 = 1.3;
/** No keypoint closer than this to a level's border (the descriptor's patch radius + 1). */
export const EDGE: i32 = 16;
/** A level smaller than this on a side is not built. */
export const MIN_LEVEL_SIDE: i32 = 2 * EDGE + 8;
/** FAST-9 threshold (grey levels). */
export const FAST_THRESHOLD: i32 = 16;
/** Candidates kept per level before the Harris score, as a multiple of the level's quota. */
export const CANDIDATE_FACTOR: i32 = 3;
/** Spatial spread: cells per side of the grid over the image, and the weight of each further feature of a cell. */
export const GRID: i32 = 8;
export const CELL_DECAY: f64 = 0.5;
/** The intensity-centroid radius (orientation) and the radius of the descriptor's sampling pattern. */
export const CENTROID_RADIUS: i32 = 15;
export const PATTERN_RADIUS: i32 = 13;
/** Seed of the descriptor's sampling pattern (pattern.ts). */
export const PATTERN_SEED: u32 = 0x50524f56; // "PROV"

// ---- the packed feature ----------------------------------------------------------------

/** Bytes per packed feature: x u16, y u16, angle u8, level u8, two zero bytes, 32 descriptor bytes. */
export const FEATURE_BYTES: i32 = 40;
export const DESCRIPTOR_OFFSET: i32 = 8;
/** Most features one call extracts or compares. */
export const MAX_FEATURES: i32 = 1024;
