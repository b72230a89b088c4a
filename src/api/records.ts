// The sign-it and public answers and requests (spec 2, 4; decisions.md 2, 9; issue 21),
// each defined once: the server validates and describes them (GET /openapi.json), the
// SDK's types are inferred from them. Answer objects are closed (z.object: in JSON
// Schema's output form `additionalProperties: false`), so a field the server adds
// without describing it here fails the contract test (test/helpers/contract.ts).
import { z } from 'zod';

export const hex64 = z.string().regex(/^[0-9a-f]{64}$/).describe('64 lowercase hex characters');
export const ms = z.number().int().describe('Unix milliseconds');
const count = z.number().int().min(0);

/** Spec 2.2, response form (capitalized values; a custom license as `{Custom}`). */
export const contentRights = z
  .object({
    license: z.union([z.string(), z.object({ Custom: z.string() })]).nullable(),
    commercial_licensing: z.string().nullable(),
    ai_training: z.string().nullable(),
    contact_preference: z.string().nullable(),
  })
  .partial()
  .describe('spec 2.2, response form (capitalized values)');

export const perceptualHash = z.object({
  hash_type: z.enum(['ImagePHash', 'AudioChromaprint', 'VideoPHash']),
  hash_value: z.array(z.number().int()),
  bands: z.array(z.array(z.number().int())),
});

export const integrityReport = z.object({
  checks_performed: z.array(z.string()),
  issues_found: z.array(
    z.object({
      check: z.string(),
      severity: z.enum(['Info', 'Warning', 'Critical']),
      description: z.string(),
      offset: z.number().int().optional(),
      length: z.number().int().optional(),
    }),
  ),
  checked_at: ms,
});

/**
 * Issue 28: a record's optional, signed PDQ (images) or vPDQ (video, one PDQ per sampled
 * frame); absent when not computed.
 */
const pdqPart = { hash_value: hex64, quality: z.number().int().min(0).max(100) };
export const pdqHash = z.union([
  z.object({ hash_type: z.literal('PDQ'), ...pdqPart }),
  z.object({ hash_type: z.literal('vPDQ'), frames: z.array(z.object({ timestamp: z.number().min(0), ...pdqPart })).min(1) }),
]);

/** Issue 32: a record's reference to its local feature set. */
export const featuresRef = z.object({ version: z.number().int().min(1).max(255), count: z.number().int().min(1), digest: hex64 });

/**
 * integrity_report and perceptual_hash in answers are the objects the signer signed,
 * returned byte for byte (a record's signature covers them): their usual fields are
 * described, the rest is the signer's. Issue 21 adds the file's Content Credentials to
 * a vault's integrity report (beyond spec 2.1's three fields).
 */
const signedIntegrityReport = z
  .looseObject({ ...integrityReport.partial().shape, content_credentials: z.lazy(() => contentCredentials).optional() })
  .describe('as signed: spec 2.1, and content_credentials (issue 21)');
const signedPerceptualHash = z.looseObject(perceptualHash.partial().shape).describe('as signed');

/** The twelve fields a signer signs (decisions.md 2), response form, and the action hash naming them. */
const recordFields = {
  file_hash: hex64,
  action_hash: hex64,
  signer: z.string().describe('agent key, uhCAk...'),
  signed_at: ms,
  intent: z.enum(['Authorship', 'Approval', 'Witness', 'Receipt', 'Agreement']),
  ai_generation: z.enum(['None', 'Assisted', 'Generated']).nullable(),
  content_rights: contentRights.nullable(),
  integrity_report: signedIntegrityReport.nullable(),
  perceptual_hash: signedPerceptualHash.nullable(),
  comment: z.string().max(280).nullable(),
  supersedes: hex64.nullable(),
  superseded_by: hex64.nullable(),
  expires_at: z.unknown(),
  tags: z.unknown(),
  pdq_hash: pdqHash.optional(),
  /** Issue 33: the file's ISCC-CODE, signed when present. */
  iscc: z.string().regex(/^ISCC:[A-Z2-7]+$/).optional(),
  /** Issue 32: which local feature set is the record's (its SHA-256), signed when present; the set itself is not answered. */
  features: featuresRef.optional(),
};

/** Spec 2.1: a signature as `GET /verify` and the creator profile answer it. */
export const signature = z
  .object({
    ...recordFields,
    signer_did: z.string(),
    signer_display_name: z.string().nullable(),
    signer_username: z.string().nullable(),
    signer_profile_picture: z.string().nullable(),
    revoked: z.boolean(),
    revoked_at: ms.nullable(),
    revocation_reason: z.string().nullable(),
    contactable: z.boolean(),
    /** Issue 32: whether the record has local features (verify-file then confirms its matches geometrically). */
    has_features: z.boolean(),
    /** Issue 27, GET /verify only: the record's index in the transparency log, null until a checkpoint covers it (a second or two). */
    log_index: z.number().int().min(0).nullable().optional(),
  })
  .describe('spec 2.1');

/** Spec 2.3: a perceptual match of `verify-file` or `verify-fuzzy`. */
export const reducedSignature = z
  .object({
    file_hash: hex64,
    signer: z.string(),
    signed_at: ms,
    intent: z.string(),
    ai_generation: z.string().nullable(),
    content_rights: contentRights.nullable(),
    similarity: z.number().int().min(0).max(100).nullable(),
    match_type: z.literal('perceptual'),
    /** Issue 28: which hash found it, and for PDQ the Hamming distance; issue 33: ISCC, the file's Content-Code; issue 32: Features. */
    matched_by: z.enum(['ImagePHash', 'AudioChromaprint', 'VideoPHash', 'PDQ', 'vPDQ', 'ISCC', 'Features']).optional(),
    pdq_distance: z.number().int().min(0).max(256).optional(),
    /** Issue 32: when the record has local features, the geometric check that confirmed it: its inliers and the share of the query they cover. */
    feature_inliers: z.number().int().min(0).optional(),
    feature_coverage: z.number().min(0).max(1).optional(),
  })
  .describe('spec 2.3');

/** Spec 2.4: one of the caller's own records, with its signature. */
export const ownSignature = z
  .object({
    ...recordFields,
    signature: z.string(),
    revoked: z.boolean(),
    revoked_at: ms.nullable(),
    revoked_reason: z.string().nullable(),
    thumbnail: z.string().nullable(),
  })
  .describe('spec 2.4');

/**
 * Spec 2.5. `overage_signs` and `overage_cents_per_100` are numbers, present on an org's
 * paid tiers only (an enterprise's custom overage has no number: the fields are absent).
 */
export const quotaState = z
  .object({
    allowed: z.boolean(),
    scope: z.enum(['community', 'org']),
    tier: z.string(),
    used: z.number(),
    limit: z.number().nullable(),
    resets_at: z.string().nullable(),
    upgrade_tier: z.string().optional(),
    overage_signs: z.number().optional(),
    overage_cents_per_100: z.number().optional(),
    sponsor: z.object({ app_name: z.string(), exhausted: z.boolean() }).optional(),
  })
  .describe('spec 2.5');

// ---------------------------------------------------------------- verify (spec 4.1-4.3, issue 21)

export const verifyAnswer = z.object({ signatures: z.array(signature), count });

/** verify-fuzzy's answer (spec 4.3); `match_type: 'none'` when nothing matched. */
export const matchAnswer = z.object({ signatures: z.array(reducedSignature), count, match_type: z.literal('none').optional() });

/** The file's Content Credentials (C2PA) as verify-file reports them (src/lib/content-credentials.ts). */
export const contentCredentials = z.union([
  z.object({ present: z.literal(false) }),
  z.object({ present: z.null(), message: z.string() }),
  z.object({
    present: z.literal(true),
    validation_state: z.enum(['valid', 'untrusted_signer', 'invalid', 'unknown_algorithm', 'remote']),
    validation_codes: z.array(z.string()).describe('failure codes as C2PA names them'),
    manifests: z.number().int().nullable(),
    remote_url: z.string().nullable().describe('a remote manifest: reported, never fetched'),
    claim_generator: z.string().nullable(),
    signer: z.object({ issuer: z.string().nullable(), common_name: z.string().nullable(), algorithm: z.string().nullable() }).nullable(),
    signed_at: z.string().nullable(),
    actions: z.array(z.object({ action: z.string(), digital_source_type: z.string().nullable(), ai_generated: z.boolean() })),
    created: z.boolean(),
    edited: z.boolean(),
    ai_generated: z.boolean(),
    ingredients: z.object({ count: z.number().int(), titles: z.array(z.string()) }),
    provenant_record: z.object({ record: z.looseObject({}), signature: z.string(), action_hash: z.string(), service: z.string() }).nullable(),
    message: z.string().nullable(),
  }),
]);

/** verify-file's embedded_record: a record found from the file's Content Credentials, re-verified by the server. */
export const embeddedRecord = z.object({
  found_by: z.literal('content_credentials'),
  action_hash: z.string(),
  service: z.string(),
  signature_valid: z.boolean(),
  action_hash_matches: z.boolean(),
  stored: z.boolean(),
  record: z.looseObject({}),
});

export const credentialsConflict = z.object({ file_hash: hex64, ai_generation: z.string(), content_credentials: z.string(), message: z.string() });

/**
 * verify-file's `recovered_credentials` (issue 33): for a file without Content Credentials
 * of its own, the stored manifests of the records it matched, with what the reference
 * reader said of each store when it was stored (validation_state and validation_codes, the
 * detached hard binding set aside) and whether the file's ISCC Content-Code matches the
 * manifest's io.iscc.v0 soft binding (null when either has none).
 */
export const recoveredCredentials = z.object({
  manifest_id: z.string(),
  action_hash: hex64,
  validation_state: z.enum(['valid', 'untrusted_signer', 'invalid']),
  validation_codes: z.array(z.string()),
  soft_binding: z.object({ alg: z.string(), value: z.string() }).nullable(),
  soft_binding_matches: z.boolean().nullable(),
  soft_binding_distance: z.number().int().min(0).max(256).nullable(),
});

/** verify-file (spec 4.2, issue 21): the matches, the file's Content Credentials, an embedded record, conflicts; issue 33: credentials recovered for a stripped copy. */
export const verifyFileAnswer = matchAnswer.extend({
  content_credentials: contentCredentials,
  embedded_record: embeddedRecord.nullable(),
  conflicts: z.array(credentialsConflict),
  recovered_credentials: z.array(recoveredCredentials),
});

/** Spec 4.3: bands (and optionally hash_value) of a fingerprint, or 72 grey pixels. */
export const fuzzyQuery = z.object({
  bands: z.array(z.array(z.number().int())).optional(),
  hash_value: z.array(z.number().int()).optional(),
  pixels: z.array(z.number().int()).length(72).optional(),
  /** Issue 28: a PDQ hash, 64 hex. */
  pdq: z.string().optional(),
});

export const fingerprintAnswer = z.object({ fingerprint: perceptualHash.nullable() });

// ---------------------------------------------------------------- signing (spec 4.7-4.12; decisions.md 2)

/** Spec 4.7's body, request form (snake_case tokens). */
export const signRequest = z
  .object({
    file_hash: z.string(),
    intent: z.string().optional(),
    ai_generation: z.enum(['none', 'assisted', 'generated']).optional(),
    content_rights: z
      .object({ license: z.union([z.string(), z.object({ custom: z.string() })]), commercial_licensing: z.string(), ai_training: z.string(), contact_preference: z.string() })
      .partial()
      .optional(),
    comment: z.string().max(280).optional(),
    supersedes: z.string().optional(),
    perceptual_hash: perceptualHash.optional(),
    integrity_report: integrityReport.optional(),
    pdq_hash: pdqHash.optional(),
    expires_at: z.unknown().optional(),
    tags: z.unknown().optional(),
  })
  .describe('spec 4.7; request form (snake_case tokens)');

export const signAnswer = z.object({ success: z.literal(true), file_hash: hex64, agent_pub_key: z.string(), signed_at: ms, action_hash: hex64 });

export const signBatchRequest = z.object({ files: z.array(signRequest).max(100), shared_metadata: signRequest.partial().optional() });
export const signBatchAnswer = z.object({
  results: z.array(z.object({ file_hash: z.string().nullable(), action_hash: z.string().nullable(), success: z.boolean(), error: z.string().optional() })),
  signed: count,
  failed: count,
});

export const revokeRequest = z.object({ action_hash: z.string(), reason: z.string().max(280).optional() });
export const thumbnailRequest = z.object({ action_hash: z.string(), thumbnail: z.string().max(15_000) });
export const success = z.object({ success: z.literal(true) });
export const mySignaturesAnswer = z.object({ signatures: z.array(ownSignature) });

/** decisions.md 2: a vault's hex signature of quotaSyncMessage over these fields. */
export const quotaSyncRequest = z.object({ agent_pub_key: z.string(), count: z.number().int(), timestamp: z.number().int(), signature: z.string(), client_id: z.string().optional() });

/** decisions.md 2, `POST /publish`: the twelve fields as signed, the signature, an optional sponsoring app. */
export const publishRequest = z
  .object({ ...recordFields, signature: z.string(), client_id: z.string().optional() })
  .omit({ action_hash: true, superseded_by: true });
export const publishRevocationRequest = z.object({ action_hash: hex64, reason: z.string().nullable(), revoked_at: ms, signer: z.string(), signature: z.string() });
export const publishAnswer = z.object({ success: z.literal(true), action_hash: hex64 });

// ---------------------------------------------------------------- public surfaces (spec 4.6, 4.13; decisions.md 9)

export const creatorAnswer = z
  .object({
    creator: z.object({ agent_key: z.string(), did: z.string(), member_since: ms.nullable(), contactable: z.boolean() }),
    stats: z.object({
      total: count,
      active: count,
      revoked: count,
      by_intent: z.record(z.string(), z.number().int()),
      by_license: z.record(z.string(), z.number().int()),
    }),
    signatures: z.array(signature),
  })
  .describe('spec 2.6');

const rightsValues = contentRights.required();
export const contentRightsAnswer = z.object({
  file_hash: hex64,
  signed: z.boolean(),
  signer_count: count,
  rights: rightsValues.nullable(),
  signers: z.array(z.object({ signer: z.string(), signed_at: ms }).extend(rightsValues.shape)),
});

export const badgeAnswer = z.object({
  file_hash: hex64,
  signed: z.boolean(),
  signer_count: count,
  latest: z
    .object({ signer: z.string(), signer_did: z.string().nullable(), signer_display_name: z.string().nullable(), signed_at: ms, intent: z.string(), ai_generation: z.string().nullable() })
    .nullable(),
});

/** Spec 4.13: the one answer of the contact relay, whatever was sent. */
export const contactAnswer = z.object({ success: z.literal(true), message: z.string() });
