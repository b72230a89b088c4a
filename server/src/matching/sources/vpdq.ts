// Issue 28: a video's vPDQ as Meta defines it: the query's frames of quality >= 50, and a
// record matches when at least VPDQ_MATCH_PERCENT of them have a frame of it within
// PDQ_MATCH_DISTANCE; similarity is that share of the query's frames.
import { PDQ_MATCH_DISTANCE, PDQ_MIN_QUALITY } from 'provenant';
import type { CandidateSource } from './source.js';

/** vPDQ (Meta's default): a video matches when at least this share of the query's frames find a partner. */
export const VPDQ_MATCH_PERCENT = 80;

export const vpdqSource: CandidateSource = {
  name: 'vPDQ',
  applies: (found) => found.pdq_hash?.hash_type === 'vPDQ',
  async find(found, matching) {
    if (found.pdq_hash?.hash_type !== 'vPDQ') return [];
    const frames = found.pdq_hash.frames.filter((f) => f.quality >= PDQ_MIN_QUALITY).map((f) => f.hash_value);
    const matches = await matching.vpdqQuery(frames, PDQ_MATCH_DISTANCE, VPDQ_MATCH_PERCENT);
    return matches.map((m) => ({ seq: m.id, similarity: m.percent, matchedBy: 'vPDQ' }));
  },
};
