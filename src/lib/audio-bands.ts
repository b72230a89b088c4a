// LSH bands of an AudioChromaprint (decisions.md section 3): 8 bands of 4 bytes such
// that a re-encoded, trimmed or volume-changed copy shares at least one band, at the
// same position, with the original. Derivation and measurements: docs/audio.md.
//
// 1. Robust bits: of each word only 17 bits that rarely flip under re-encoding or a
//    shift of the audio by part of a frame (measured per bit on the dev corpus) are
//    used; each band keeps its own 8 of them (BAND_MASKS), so one flipped bit does not
//    spoil every band at once.
// 2. Shingle: feature t = a hash of (masked word t, masked word t+8, masked word t+16),
//    about 2 s of audio in 24 bits: specific enough that unrelated music rarely shares
//    one, while many survive; 8 words apart the words are nearly independent.
// 3. Band b = the minimum over the band's features of a per-band hash: a min-hash, so
//    the band does not depend on where the audio starts (trimming), and two copies
//    agree on it with probability equal to the Jaccard similarity of their features.

/**
 * The word bits each band keeps (bit 31 - 2k is classifier k's high, sign-like bit and
 * bit 30 - 2k its low bit). All are drawn from the 17 robust bits
 * 31-25, 21-18, 15, 11, 7, 3-1.
 */
export const BAND_MASKS: readonly number[] = [
  0x8a2c0808, 0x98248006, 0xe4308008, 0x6a08080a, 0x06188086, 0x72140006, 0xd804008a, 0xb2300808,
];
/** Word offsets of one shingle. */
export const BAND_SHINGLE: readonly number[] = [0, 8, 16];

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

/** The distinct shingle features of a word sequence under `mask` (single words when it is too short to shingle). */
export function bandFeatures(words: Uint32Array, mask: number): Set<number> {
  const offsets = words.length > BAND_SHINGLE[BAND_SHINGLE.length - 1] ? BAND_SHINGLE : [0];
  const span = offsets[offsets.length - 1];
  const features = new Set<number>();
  for (let t = 0; t + span < words.length; t++) {
    let h = FEATURE_SEED;
    for (const o of offsets) h = fmix32((((h ^ (words[t + o] & mask)) >>> 0) + FEATURE_STEP) >>> 0);
    features.add(h);
  }
  return features;
}

/** 8 bands of 4 bytes (each a little-endian 32-bit min-hash); all 0xff for no words. */
export function audioBands(words: Uint32Array): number[][] {
  return BAND_MASKS.map((mask, b) => {
    const seed = bandSeed(b);
    let min = 0xffffffff;
    for (const f of bandFeatures(words, mask)) {
      const v = fmix32((f ^ seed) >>> 0);
      if (v < min) min = v;
    }
    return [min & 0xff, (min >>> 8) & 0xff, (min >>> 16) & 0xff, min >>> 24];
  });
}
