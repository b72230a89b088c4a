// What a candidate source is (STYLE.md "Where the next fingerprints go"): a small module
// that, given an upload's Examination, names the stored records one kind of fingerprint
// finds, each with its similarity and how it was found. The pipeline (../pipeline.ts) runs
// the sources that apply, merges their candidates, confirms them and presents them.
import type { Examination, FeatureMatch } from 'provenant';
import type { MatchedBy } from '../present.js';
import type { MatchingService } from '../service.js';

/** One stored record a source found, by the record's seq (the index's id). */
export interface Candidate {
  seq: number;
  /** 0-100, or null when the record has no comparable hash (spec 2.3). */
  similarity: number | null;
  matchedBy: MatchedBy;
  /** PDQ's distance in bits, when PDQ found the record (issue 28). */
  pdqDistance?: number;
  /** The geometric check's answer, when the record has local features and the check confirmed it (issue 32). */
  features?: FeatureMatch;
}

export interface CandidateSource {
  /** Which fingerprint this source matches by, in a few words (logs, docs). */
  readonly name: string;
  /** Whether the upload holds what this source needs. */
  applies(found: Examination): boolean;
  /** The records it finds, best first, at most MATCH_LIMIT; `threshold` is the endpoint's similarity threshold. */
  find(found: Examination, matching: MatchingService, threshold: number): Promise<Candidate[]>;
}
