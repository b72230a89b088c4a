// Issue 28: an image's PDQ, with its eight dihedral variants when the decode gave them
// (rotated and mirrored copies), against the stored image PDQs of quality >= 50 within
// PDQ_MATCH_DISTANCE; similarity is PDQ's share of equal bits.
import { PDQ_MATCH_DISTANCE, PDQ_MIN_QUALITY, type Examination } from 'provenant';
import type { CandidateSource } from './source.js';

/** PDQ's share of equal bits, 0-100 (ImagePHash's similarity is the same over its 64 bits). */
export function pdqSimilarity(distance: number): number {
  return Math.round((100 * (256 - distance)) / 256);
}

/** The query's PDQ hashes: its eight dihedral ones when the decode gave them, else its own. */
export function pdqQueryHashes(found: Examination): string[] {
  const pdq = found.pdq_hash;
  if (pdq?.hash_type !== 'PDQ') return [];
  const d = found.pdq_dihedral;
  return d !== undefined && d.length === 8 && d[0] === pdq.hash_value ? d : [pdq.hash_value];
}

export const pdqSource: CandidateSource = {
  name: 'PDQ',
  applies: (found) => found.pdq_hash?.hash_type === 'PDQ' && found.pdq_hash.quality >= PDQ_MIN_QUALITY,
  async find(found, matching) {
    const matches = await matching.pdqQuery(pdqQueryHashes(found), PDQ_MATCH_DISTANCE);
    return matches.map((m) => ({ seq: m.id, similarity: pdqSimilarity(m.distance), matchedBy: 'PDQ', pdqDistance: m.distance }));
  },
};
