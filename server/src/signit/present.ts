// Sign-it answers (spec 2.1, 2.4, 2.5, 4.1, 4.7-4.10, 4.12; decisions.md 2): every
// response body of the feature is shaped here, from what the domain returns.
import { didFromAgentKey, recordValueProblem, type FreeFormField } from 'provenant';
import type { BatchOutcome } from '../domain/signing.js';
import { supersededByMap } from '../domain/superseded-by.js';
import type { NewSignature, StoredSignature } from '../store/index.js';
import type { Provisional } from './cache.js';

/**
 * A stored free-form field as answered: null when it is beyond the limits a record is
 * checked against now (a row stored before they held, or written past the service),
 * so that one such row answers without that field instead of failing the answer of its
 * hash, or of its signer's list, for everyone (nesting thousands deep overflows
 * JSON.stringify).
 */
function answered<T>(field: FreeFormField, value: T): T | null {
  return value === undefined || recordValueProblem(field, value) !== null ? null : value;
}

/** Spec 2.1 (without profile/revocation) + 2.4 share these record fields. */
function recordFields(s: StoredSignature, supersededBy: string | null) {
  const r = s.record;
  return {
    file_hash: r.file_hash,
    action_hash: s.action_hash,
    signer: r.signer,
    signed_at: r.signed_at,
    intent: r.intent,
    ai_generation: r.ai_generation,
    content_rights: answered('content_rights', r.content_rights),
    integrity_report: answered('integrity_report', r.integrity_report),
    perceptual_hash: answered('perceptual_hash', r.perceptual_hash),
    comment: r.comment,
    supersedes: r.supersedes,
    superseded_by: supersededBy,
    expires_at: answered('expires_at', r.expires_at),
    tags: answered('tags', r.tags),
    // issues 28, 33, 32: signed only when present, so answered only then (a reader re-verifying needs them)
    ...(r.pdq_hash === undefined || r.pdq_hash === null ? {} : { pdq_hash: r.pdq_hash }),
    ...(typeof r.iscc === 'string' ? { iscc: r.iscc } : {}),
    ...(r.features === undefined || r.features === null ? {} : { features: r.features }),
  };
}

/** Spec 2.1: the full public signature shape, profile fields only where the signer granted them. */
export function publicSignature(s: StoredSignature, supersededBy: string | null) {
  const grants = new Set(s.profile?.public_fields ?? []);
  const fields = recordFields(s, supersededBy);
  const rights = fields.content_rights;
  return {
    ...fields,
    signer_did: didFromAgentKey(s.record.signer),
    signer_display_name: grants.has('display_name') ? (s.profile?.display_name ?? null) : null,
    signer_username: grants.has('username') ? (s.profile?.username ?? null) : null,
    signer_profile_picture: grants.has('profile_picture') ? (s.profile?.profile_picture ?? null) : null,
    revoked: s.revocation !== null,
    revoked_at: s.revocation?.revoked_at ?? null,
    revocation_reason: s.revocation?.reason ?? null,
    contactable: s.revocation === null && rights?.contact_preference === 'AllowContactRequests',
    has_features: s.record.features !== undefined && s.record.features !== null,
  };
}

/** Spec 2.1 for a list, with `superseded_by` computed within it. */
export function publicSignatures(list: readonly StoredSignature[]) {
  const map = supersededByMap(list);
  return list.map((s) => publicSignature(s, map.get(s.action_hash) ?? null));
}

/**
 * Spec 4.1: the JSON body of `{signatures, count}` for a file's records, as UTF-8 bytes
 * (what the verify cache keeps). With `log` (issue 27) each signature carries
 * `log_index`: its record's entry in the transparency log once a checkpoint covers it,
 * else null, and then the answer is provisional (served, not cached: the index appears
 * within a second without a write the cache would hear of).
 */
export function verifyAnswer(
  list: readonly StoredSignature[],
  log?: { indexes: ReadonlyMap<string, number>; checkpointSize: number },
): Buffer | Provisional {
  let pending = false;
  const signatures = publicSignatures(list).map((s) => {
    if (log === undefined) return s;
    const index = log.indexes.get(s.action_hash);
    const logIndex = index !== undefined && index < log.checkpointSize ? index : null;
    if (logIndex === null) pending = true;
    return { ...s, log_index: logIndex };
  });
  const body = Buffer.from(JSON.stringify({ signatures, count: signatures.length }), 'utf8');
  return pending ? { body, provisional: true } : body;
}

/** Spec 2.4: record fields plus signature, revocation (as `revoked_reason`) and thumbnail. */
export function ownSignature(s: StoredSignature, supersededBy: string | null) {
  return {
    ...recordFields(s, supersededBy),
    signature: s.signature,
    revoked: s.revocation !== null,
    revoked_at: s.revocation?.revoked_at ?? null,
    revoked_reason: s.revocation?.reason ?? null,
    thumbnail: s.thumbnail,
  };
}

/** Spec 4.9: the user's records, newest first, `superseded_by` computed within them. */
export function mySignaturesAnswer(list: readonly StoredSignature[]) {
  const map = supersededByMap(list);
  return { signatures: list.map((s) => ownSignature(s, map.get(s.action_hash) ?? null)) };
}

/** Spec 4.7. */
export function signAnswer({ record, action_hash }: NewSignature) {
  return { success: true as const, file_hash: record.file_hash, agent_pub_key: record.signer, signed_at: record.signed_at, action_hash };
}

/** Spec 4.8: per file in request order, then the counts. */
export function batchAnswer(outcomes: readonly BatchOutcome[]) {
  const results = outcomes.map(({ fileHash, actionHash, error }) =>
    error === null ? { file_hash: fileHash, action_hash: actionHash, success: true } : { file_hash: fileHash, action_hash: null, success: false, error });
  const signed = outcomes.filter((o) => o.error === null).length;
  return { results, signed, failed: results.length - signed };
}

/** Spec 4.10, 4.12. */
export const SUCCESS = { success: true as const };

/** decisions.md 2: publish and publish-revocation answer the record's action hash. */
export function publishedAnswer(actionHash: string) {
  return { success: true as const, action_hash: actionHash };
}
