// Issue 32: local features find copies the global hashes miss (large crops, frames,
// screenshots, rotations, perspective): the stored images the query's features vote for
// in the feature index (src/lib/feature-index.ts), the best FEATURE_CANDIDATES of them.
// Retrieval only: the confirmation stage (../confirm.ts) decides each by the geometric
// check, and gives a confirmed one its similarity.
import { encodeFeatureSet } from 'provenant';
import type { CandidateSource } from './source.js';

/** Images retrieved by features per query, each then checked geometrically. */
export const FEATURE_CANDIDATES = 20;

export const featuresSource: CandidateSource = {
  name: 'local features (retrieval; the geometric check decides)',
  applies: (found) => found.kind === 'image' && found.features != null,
  async find(found, matching) {
    const found_ = await matching.featuresQuery(encodeFeatureSet(found.features!), FEATURE_CANDIDATES);
    return found_.map((c) => ({ seq: c.id, similarity: null, matchedBy: 'Features' }));
  },
};
