// Issue 33: the file's ISCC Content-Code (ISO 24138) against every record's, within
// ISCC_SOURCE_MAX_DISTANCE bits (src/lib/iscc-index.ts: codes of one content type, over 64
// bits, contentless codes left out). Nothing confirms its candidates, so its threshold is
// the strict one: on the dev corpus it adds framed and bordered pictures, whose uniform
// margins the ISCC's normalisation trims, to what the other sources find, and no picture
// of another package (docs/iscc.md, Thresholds).
import { ISCC_SOURCE_MAX_DISTANCE, MATCH_LIMIT, isccIndexKey, isccSimilarity } from 'provenant';
import type { CandidateSource } from './source.js';

/** The upload's Content-Code when the index can compare it, else null. */
export function comparableContent(content: string | null | undefined): string | null {
  if (content === null || content === undefined) return null;
  try {
    return isccIndexKey(content) === null ? null : content;
  } catch {
    return null; // shorter than 64 bits, or not a Content-Code
  }
}

export const isccSource: CandidateSource = {
  name: 'ISCC Content-Code',
  applies: (found) => comparableContent(found.iscc?.content) !== null,
  async find(found, matching) {
    const matches = await matching.isccQuery(found.iscc!.content!, ISCC_SOURCE_MAX_DISTANCE, MATCH_LIMIT);
    return matches.map((m) => ({ seq: m.id, similarity: isccSimilarity(m.distance), matchedBy: 'ISCC' }));
  },
};
