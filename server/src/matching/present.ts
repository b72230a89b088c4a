// Perceptual-match answers (spec 2.3, 4.2, 4.3; issue 21, 28): every response body of
// the feature is shaped here, as JSON text built by appending (the same text
// JSON.stringify gives for the object, without building the object per answer: the
// reduced fields of each record are serialised once, by the store, and cached).
import type { ContentCredentials } from 'provenant';
import type { EmbeddedRecord } from '../domain/embedded-record.js';

/**
 * A record's reduced fields (spec 2.3: file_hash, signer, signed_at, intent,
 * ai_generation, content_rights) serialised once: JSON text of the object without its
 * closing brace (each answer appends similarity and match_type), and signed_at for
 * ordering.
 */
export interface ReducedText {
  signed_at: number;
  fields: string;
}

/** Which fingerprint found a match (the answers' `matched_by`). */
export type MatchedBy = 'ImagePHash' | 'AudioChromaprint' | 'VideoPHash' | 'PDQ' | 'vPDQ' | 'ISCC' | 'Features';

/** One match, ready to serialise. */
export interface MatchedRecord {
  similarity: number | null;
  row: ReducedText;
  /** The record's seq (from match()). */
  seq?: number;
  /** Issue 28: which hash found it (answered only when set) and, for PDQ, at what distance. */
  matchedBy?: MatchedBy;
  pdqDistance?: number;
  /** Issue 32: the geometric check that confirmed it (its inliers and the share of the query they cover). */
  features?: { inliers: number; coverage: number };
}

/**
 * Spec 4.2/4.3: the answer `{signatures, count}` (plus `match_type: "none"` for an
 * unreadable upload) as JSON text, each signature in the reduced shape (spec 2.3):
 * the record's cached fields, then similarity and match_type. The same text
 * JSON.stringify gives for the object, without building it per answer.
 */
export function body(matches: readonly MatchedRecord[], none = false): string {
  let out = '{"signatures":[';
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i];
    const by = m.matchedBy === undefined ? '' : `,"matched_by":"${m.matchedBy}"${m.pdqDistance === undefined ? '' : `,"pdq_distance":${m.pdqDistance}`}`;
    const geometry = m.features === undefined ? '' : `,"feature_inliers":${m.features.inliers},"feature_coverage":${Math.round(m.features.coverage * 1000) / 1000}`;
    out += `${i === 0 ? '' : ','}${m.row.fields},"similarity":${m.similarity === null ? 'null' : m.similarity},"match_type":"perceptual"${by}${geometry}}`;
  }
  return `${out}],"count":${matches.length}${none ? ',"match_type":"none"' : ''}}`;
}

/**
 * The answer text with `content_credentials`, `embedded_record`, `conflicts` and
 * (issue 33) `recovered_credentials` appended. The cached answer is per fingerprint, the credentials per file, so they are
 * added after the cache.
 */
export function withCredentials(answer: string, credentials: ContentCredentials, embedded: EmbeddedRecord | null, conflicts: unknown[], recovered: unknown[]): string {
  return `${answer.slice(0, -1)},"content_credentials":${JSON.stringify(credentials)},"embedded_record":${JSON.stringify(embedded)},"conflicts":${JSON.stringify(conflicts)},"recovered_credentials":${JSON.stringify(recovered)}}`;
}
