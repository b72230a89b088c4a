// Matching an examined upload (STYLE.md "Where the next fingerprints go"): a short list of
// candidate sources (sources/), each finding records by one kind of fingerprint; their
// candidates merged, one per record; then the rows, in the answers' order (service.ts
// withRows) for the one presenter (present.ts), after the one confirmation stage (confirm.ts:
// a record with local features is returned only when the geometric check confirms it). verify-file, the Soft Binding Resolution
// API's byContent and `provenant verify` (through verify-file) all answer from here.
import type { Examination } from 'provenant';
import type { MatchedRecord } from './present.js';
import type { MatchingService } from './service.js';
import { perceptualHashSource } from './sources/perceptual-hash.js';
import { pdqSource } from './sources/pdq.js';
import type { Candidate, CandidateSource } from './sources/source.js';
import { vpdqSource } from './sources/vpdq.js';
import { isccSource } from './sources/iscc.js';
import { featuresSource } from './sources/features.js';
import { confirmByFeatures } from './confirm.js';

/**
 * The sources, in the order their `matched_by` wins when several find one record: the
 * spec's fingerprint first (its similarity is the one spec 4.2 thresholds), then PDQ,
 * then vPDQ, then the ISCC Content-Code (issue 33), then local features (issue 32).
 */
export const CANDIDATE_SOURCES: readonly CandidateSource[] = [perceptualHashSource, pdqSource, vpdqSource, isccSource, featuresSource];

/**
 * One candidate per record: the first source's (in CANDIDATE_SOURCES order), with the
 * details later sources found for it (PDQ's distance) added.
 */
export function mergeCandidates(lists: readonly (readonly Candidate[])[]): Candidate[] {
  const bySeq = new Map<number, Candidate>();
  for (const list of lists) {
    for (const c of list) {
      const held = bySeq.get(c.seq);
      if (held === undefined) bySeq.set(c.seq, { ...c });
      else if (held.pdqDistance === undefined && c.pdqDistance !== undefined) held.pdqDistance = c.pdqDistance;
    }
  }
  return [...bySeq.values()];
}

/** The matches of an examined upload at `threshold` (spec 4.2: 60), best first, at most MATCH_LIMIT. */
export async function findMatches(matching: MatchingService, found: Examination, threshold: number): Promise<MatchedRecord[]> {
  const sources = CANDIDATE_SOURCES.filter((s) => s.applies(found));
  const lists = await Promise.all(sources.map((s) => s.find(found, matching, threshold)));
  return matching.withRows(await confirmByFeatures(matching, found, mergeCandidates(lists)));
}
