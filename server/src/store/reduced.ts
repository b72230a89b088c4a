// The reduced shape's stored fields (spec 2.3: file_hash, signer, signed_at, intent,
// ai_generation, content_rights) of a record as JSON object text, written beside every
// fingerprinted record when it is stored: a perceptual match answers with up to 100 of
// them, and reading this text costs about half as much as building it from the record
// on every answer (docs/matching.md). Every engine stores this same text.
import canonicalize from 'canonicalize';
import type { SignatureRecord } from 'provenant';

const REDUCED_FIELDS = ['file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights'] as const;

/**
 * The six fields in this order, each value in canonical JSON (RFC 8785, as the stored
 * record), a missing one as null: the bytes SQLite's json_object wrote for records
 * stored before version 005 (test/store/sqlite/reduced.test.ts compares them).
 */
export function reducedJson(record: SignatureRecord): string {
  const fields = record as unknown as Record<string, unknown>;
  return `{${REDUCED_FIELDS.map((name) => `"${name}":${canonicalize(fields[name]) ?? 'null'}`).join(',')}}`;
}
