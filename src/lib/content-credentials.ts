// Content Credentials (C2PA) as Provenant reports them (issue 21): what a file's
// embedded manifest store says, reduced to what a person checking the file needs, and
// the cross-check against Provenant records. The reading itself (the reference reader,
// WebAssembly) is src/media/c2pa.ts; this module is plain data and pure rules, so that
// the browser build and the server can use it without the reader.

/**
 * How the reader judged the credentials:
 * - valid: every check passed and the signer is on the reader's trust list;
 * - untrusted_signer: every check passed but the signing certificate is not trusted
 *   (C2PA `signingCredential.untrusted`: test, self-issued or unlisted certificates);
 * - invalid: a check failed (signature, hashes, ingredients; see validation_codes);
 * - unknown_algorithm: signed with an algorithm the reader does not know;
 * - remote: the manifest lives at a URL (remote_url), which is never fetched.
 */
export type CredentialsState = 'valid' | 'untrusted_signer' | 'invalid' | 'unknown_algorithm' | 'remote';

export const CREDENTIALS_STATES: readonly CredentialsState[] = ['valid', 'untrusted_signer', 'invalid', 'unknown_algorithm', 'remote'];

export interface CredentialsAction {
  /** The C2PA action name, e.g. `c2pa.created`, `c2pa.edited`, `c2pa.color_adjustments`. */
  action: string;
  /** The action's digitalSourceType (an IPTC URI), or null. */
  digital_source_type: string | null;
  /** The digitalSourceType says AI generation (AI_SOURCE_TYPES). */
  ai_generated: boolean;
}

/** The active manifest's signer, from its certificate. */
export interface CredentialsSigner {
  issuer: string | null;
  common_name: string | null;
  /** The signature algorithm as the reader names it (e.g. Ps256, Es256, Ed25519). */
  algorithm: string | null;
}

export interface CredentialsFound {
  present: true;
  validation_state: CredentialsState;
  /** The failure codes as C2PA names them (e.g. `claimSignature.mismatch`), each once, in the reader's order. */
  validation_codes: string[];
  /** Manifests in the store (the active one and its ingredients'); null when the store was not read (remote, unknown algorithm). */
  manifests: number | null;
  /** The URL of a remote manifest (state remote): reported, not fetched. */
  remote_url: string | null;
  claim_generator: string | null;
  signer: CredentialsSigner | null;
  /** When the claim was signed (ISO 8601, from its time stamp), or null. */
  signed_at: string | null;
  actions: CredentialsAction[];
  /** The summary of `actions`: a c2pa.created action, an editing action, a digitalSourceType of AI generation. */
  created: boolean;
  edited: boolean;
  ai_generated: boolean;
  ingredients: { count: number; titles: string[] };
  /** The active manifest's provenant.record assertion (a vault wrote it), as it reads; its signature is checked by whoever uses it. */
  provenant_record: ProvenantRecordAssertion | null;
  /** Why the reader stopped, when it did (unknown_algorithm, remote, or invalid with `general.error`). */
  message: string | null;
}

/** The label of the assertion that carries a Provenant record in a vault's C2PA manifest (issue 21 part 2). */
export const PROVENANT_RECORD_LABEL = 'provenant.record';

/** The label of a soft binding assertion (C2PA 2.x 18.10), and the algorithm of the ISCC Content-Code in the C2PA soft binding algorithm list (identifier 3; issue 33). */
export const SOFT_BINDING_LABEL = 'c2pa.soft-binding';
export const ISCC_SOFT_BINDING_ALG = 'io.iscc.v0';


/** What a vault puts in its provenant.record assertion: the signed record, as published. */
export interface ProvenantRecordAssertionData {
  /** The record's twelve fields as their canonical JSON text (RFC 8785): the bytes signed. */
  record: string;
  /** Base64 Ed25519 signature over the record's canonical bytes. */
  signature: string;
  action_hash: string;
  /** The Provenant service the record was published to. */
  service: string;
}

/** A provenant.record assertion as read: the record parsed from its canonical text. */
export interface ProvenantRecordAssertion {
  /** The record's twelve fields (response form), as signed. */
  record: Record<string, unknown>;
  /** Base64 Ed25519 signature over the record's canonical bytes. */
  signature: string;
  action_hash: string;
  /** The Provenant service the record was published to. */
  service: string;
}

/**
 * present false: the reader found no Content Credentials (or the format carries none).
 * present null: they could not be read (the reader crashed, ran out of memory or
 * time); `message` says why, and nothing is claimed either way.
 */
export type ContentCredentials = CredentialsFound | { present: false } | { present: null; message: string };

/**
 * IPTC digital source types that declare generation by AI or other algorithms (the
 * IPTC NewsCodes vocabulary C2PA uses: https://cv.iptc.org/newscodes/digitalsourcetype/).
 * Media made by a trained model, in whole or as part of a composite, and purely
 * algorithmic media: each contradicts a record that says ai_generation none.
 */
export const AI_SOURCE_TYPES: readonly string[] = [
  'trainedAlgorithmicMedia',
  'compositeWithTrainedAlgorithmicMedia',
  'algorithmicMedia',
  'compositeSynthetic',
];

/** Whether a digitalSourceType URI (full or its last segment) is one of AI_SOURCE_TYPES. */
export function isAiSourceType(uri: string | null | undefined): boolean {
  if (typeof uri !== 'string') return false;
  const name = uri.slice(uri.lastIndexOf('/') + 1);
  return AI_SOURCE_TYPES.includes(name);
}

/** A record (any shape with ai_generation, request or response form) whose declaration the credentials contradict. */
export interface CredentialsConflict {
  file_hash: string;
  /** What the record says: `None`. */
  ai_generation: string;
  /** What the credentials say (the first AI digitalSourceType). */
  content_credentials: string;
  message: string;
}

/**
 * The cross-check of issue 21: where the credentials declare AI generation and a matched
 * record says ai_generation none (`None` in responses, `none` in requests), a conflict
 * per such record. Credentials that are not valid still count: they are what the file
 * claims, and a claim of AI generation is worth showing beside a record that denies it.
 */
export function aiGenerationConflicts(credentials: ContentCredentials, records: readonly { file_hash: string; ai_generation?: string | null }[]): CredentialsConflict[] {
  if (credentials.present !== true || !credentials.ai_generated) return [];
  const declared = credentials.actions.find((a) => a.ai_generated)?.digital_source_type ?? 'AI generation';
  const out: CredentialsConflict[] = [];
  for (const r of records) {
    if (typeof r.ai_generation !== 'string' || r.ai_generation.toLowerCase() !== 'none') continue;
    out.push({
      file_hash: r.file_hash,
      ai_generation: r.ai_generation,
      content_credentials: declared,
      message: 'The file\'s Content Credentials declare AI generation; this record says none.',
    });
  }
  return out;
}
