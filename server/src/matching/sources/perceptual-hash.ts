// The spec's perceptual fingerprint (decisions.md 3): records of the same hash_type
// sharing a band at the same position, at or above the threshold (null similarities
// kept). ImagePHash, AudioChromaprint and VideoPHash all match this way.
import type { CandidateSource } from './source.js';

export const perceptualHashSource: CandidateSource = {
  name: 'the spec\'s perceptual fingerprint (its bands, then similarity)',
  applies: (found) => found.fingerprint !== null,
  async find(found, matching, threshold) {
    const fp = found.fingerprint!;
    const matches = await matching.query(fp, fp.hash_type, threshold);
    return matches.map((m) => ({ seq: m.id, similarity: m.similarity, matchedBy: fp.hash_type }));
  },
};
