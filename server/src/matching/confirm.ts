// The one confirmation stage (issue 32): every candidate whose record has local features
// is confirmed by the geometric check before it is returned, whichever source found it;
// one that fails it is dropped. Candidates of records without features follow today's
// rule unchanged, and so does one PDQ finds within Meta's threshold (NEAR_COPY_PDQ_DISTANCE).
// A query without features (a flat image, or one too small: fewer than
// MIN_FEATURES keypoints) cannot be checked at all, so its candidates follow today's rule
// too, as a record without features does: the features decide only where they can.
import { NEAR_COPY_PDQ_DISTANCE, encodeFeatureSet, type Examination, type FeatureMatch } from 'provenant';
import type { MatchingService } from './service.js';
import type { Candidate } from './sources/source.js';

/**
 * A confirmed feature match's similarity, 0-100 as spec 2.3 has it: 60 (verify-file's
 * threshold, so every confirmed match passes it) plus 40 times the share of the query's
 * area the inliers cover: a tight crop of the picture is 100, the picture as a third of a
 * screenshot about 73.
 */
export function featureSimilarity(match: FeatureMatch): number {
  return 60 + Math.round(40 * Math.min(1, Math.max(0, match.coverage)));
}

export async function confirmByFeatures(matching: MatchingService, found: Examination, candidates: readonly Candidate[]): Promise<Candidate[]> {
  if (found.kind !== 'image' || candidates.length === 0 || found.features == null) return [...candidates];
  const checked = await matching.featuresVerify(encodeFeatureSet(found.features), candidates.map((c) => c.seq));
  const out: Candidate[] = [];
  for (const c of candidates) {
    if (!checked.has(c.seq)) {
      out.push(c); // the record has no features: today's rule
      continue;
    }
    const match = checked.get(c.seq);
    if (match == null) {
      // not confirmed: dropped, unless PDQ found it (a copy too small or soft for its features to agree)
      if (c.pdqDistance !== undefined && c.pdqDistance <= NEAR_COPY_PDQ_DISTANCE) out.push(c);
      continue;
    }
    out.push({ ...c, features: match, similarity: c.matchedBy === 'Features' ? featureSimilarity(match) : c.similarity });
  }
  return out;
}
