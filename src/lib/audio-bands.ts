// LSH bands of an AudioChromaprint (decisions.md section 3): 8 bands of 4 bytes such
// that a re-encoded, trimmed or volume-changed copy shares at least one band, at the
// same position, with the original. Derivation and measurements: docs/audio.md.
//
// 1. Keep the 10 bits of each word that survive re-encoding and a shift by half a
//    frame best (measured per bit on the dev corpus): the high bit of classifiers
//    3, 5, 8, 10, 12 and 15, and both bits of classifiers 6 and 14.
// 2. Shingle: feature t = hash of (masked word t, masked word t+8, masked word t+16),
//    about 2 s of audio. Three words make the feature specific enough (30 bits) that
//    unrelated tracks rarely share one; 8 words apart they are nearly independent.
// 3. Band b = the minimum over all features of a per-band hash: a min-hash, so the
//    bands do not depend on where the audio starts (trimming) and two copies agree
//    on band b with probability equal to the Jaccard similarity of their features.

/** Word bits kept for the bands: bit 31 - 2k is classifier k's high (sign-like) bit. */
export const BAND_BIT_MASK =
  ((1 << 25) | (1 << 21) | (1 << 19) | (1 << 18) | (1 << 15) | (1 << 11) | (1 << 7) | (1 << 3) | (1 << 2) | (1 << 1)) >>> 0;
/** Word offsets of one shingle. */
export const BAND_SHINGLE = [0, 8, 16] as const;
export const BAND_COUNT = 8;

/** MurmurHash3's 32-bit finalizer: a bijective mix of all bits. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const FEATURE_SEED = 0x9747b28c;
const FEATURE_STEP = 0x6b43a9b5;

function bandSeed(b: number): number {
  return fmix32((0x01234567 + Math.imul(b, 0x9e3779b9)) >>> 0);
}

/** The distinct shingle features of a word sequence (single masked words when it is too short to shingle). */
export function bandFeatures(words: Uint32Array): Set<number> {
  const offsets: readonly number[] = words.length > BAND_SHINGLE[BAND_SHINGLE.length - 1] ? BAND_SHINGLE : [0];
  const span = offsets[offsets.length - 1];
  const features = new Set<number>();
  for (let t = 0; t + span < words.length; t++) {
    let h = FEATURE_SEED;
    for (const o of offsets) h = fmix32((((h ^ (words[t + o] & BAND_BIT_MASK)) >>> 0) + FEATURE_STEP) >>> 0);
    features.add(h);
  }
  return features;
}

/** 8 bands of 4 bytes (each a little-endian 32-bit min-hash); all 0xff for no words. */
export function audioBands(words: Uint32Array): number[][] {
  const features = bandFeatures(words);
  const bands: number[][] = [];
  for (let b = 0; b < BAND_COUNT; b++) {
    const seed = bandSeed(b);
    let min = 0xffffffff;
    for (const f of features) {
      const v = fmix32((f ^ seed) >>> 0);
      if (v < min) min = v;
    }
    bands.push([min & 0xff, (min >>> 8) & 0xff, (min >>> 16) & 0xff, min >>> 24]);
  }
  return bands;
}
