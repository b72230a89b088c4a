// The shapes of a signature record (spec 2.1-2.4, decisions.md 2 and 11), on their own so
// that records.ts and record-bytes.ts (which records.ts builds on) both take them from a
// leaf: no import circle.

export type Intent = 'Authorship' | 'Approval' | 'Witness' | 'Receipt' | 'Agreement';
export type AiGeneration = 'None' | 'Assisted' | 'Generated';
export type License =
  | 'CC0' | 'PublicDomain' | 'CCBY' | 'CCBYSA' | 'CCBYND' | 'CCBYNC' | 'CCBYNCSA' | 'CCBYNCND'
  | 'AllRightsReserved' | { Custom: string };
export type CommercialLicensing = 'OpenToLicensing' | 'ContactForTerms' | 'NotAvailable';
export type AiTraining = 'Allowed' | 'AllowedWithAttribution' | 'NotAllowed';
export type ContactPreference = 'AllowContactRequests' | 'NoContact';

/** content_rights in response form (spec 2.2): all four keys present, null where not declared. */
export interface ContentRights {
  license: License | null;
  commercial_licensing: CommercialLicensing | null;
  ai_training: AiTraining | null;
  contact_preference: ContactPreference | null;
}

/**
 * The twelve fields a signer declares and signs (decisions.md 2), in response form.
 * Every field is present; null means "not declared". `ai_generation` may be null: the
 * record states only what its signer declared, and a server-side default ("None")
 * would sign a claim the signer never made. `content_rights` built by normalizeRecord
 * is always an object (its four keys null where undeclared); a vault-signed record may
 * carry null, which parseRecord accepts because the signature covers it as sent.
 */
export interface SignatureRecord {
  /** SHA-256 of the file, 64 lowercase hex characters. */
  file_hash: string;
  /** The signer's agent key in its canonical `uhCAk...` form. */
  signer: string;
  /** Unix milliseconds. */
  signed_at: number;
  intent: Intent;
  ai_generation: AiGeneration | null;
  content_rights: ContentRights | null;
  integrity_report: object | null;
  perceptual_hash: object | null;
  /** At most 280 characters (Unicode code points). */
  comment: string | null;
  /** Action hash (64 lowercase hex) of the record this one amends. */
  supersedes: string | null;
  expires_at: unknown;
  tags: unknown;
  /**
   * PDQ (images) or vPDQ (video), signed with the rest (issue 28; README decisions,
   * an extension of decisions.md 2). Absent when not computed, and then the record's
   * canonical bytes are exactly the twelve fields', as before.
   */
  pdq_hash?: PdqHashValue;
  /** The file's ISCC-CODE (issue 33), signed only when present (record-extensions.ts). */
  iscc?: string;
  /** Which local feature set belongs to the record (issue 32), signed only when present; the set's bytes travel beside it. */
  features?: FeaturesRef;
}

/** A record's reference to its local features: the set's format version, its count, and the SHA-256 (hex) of its bytes. */
export interface FeaturesRef {
  version: number;
  count: number;
  digest: string;
}

/** A record's `pdq_hash`: Meta's PDQ of an image, or one PDQ per sampled frame of a video. */
export type PdqHashValue =
  | { hash_type: 'PDQ'; hash_value: string; quality: number }
  | { hash_type: 'vPDQ'; frames: { timestamp: number; hash_value: string; quality: number }[] };

/** A record with its base64 Ed25519 signature, as `/my-signatures` and publish carry it. */
export type SignedRecord = SignatureRecord & { signature: string };
