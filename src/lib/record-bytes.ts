// What a signature record's signature and action hash cover (decisions.md 2), and the
// check of a signature over it with the Ed25519 verifier passed in. One implementation
// for both entries: Node verifies with node:crypto (records.ts), the browser entry with
// @noble/curves (src/browser.ts). No Node built-in is reached.
import canonicalize from 'canonicalize';
import { parseAgentKey, parseSignatureBase64 } from './keys.js';
import type { SignatureRecord, SignedRecord } from './record-types.js';

/** The twelve record fields, in the order of spec 2.1 (canonical bytes sort them anyway). */
export const RECORD_FIELDS = [
  'file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights',
  'integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags',
] as const satisfies readonly (keyof SignatureRecord)[];
export type RecordField = (typeof RECORD_FIELDS)[number];

/** Whether `signature` is a valid Ed25519 signature of `bytes` by the raw 32-byte `publicKey`; never throws. */
export type Ed25519Verify = (publicKey: Uint8Array, bytes: Uint8Array, signature: Uint8Array) => boolean;

const utf8 = new TextEncoder();

/** RFC 8785 canonical JSON of `value`, UTF-8. */
export function canonicalBytes(value: object): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('not a JSON value');
  return utf8.encode(text);
}

/**
 * Fields a record may carry beyond the twelve, signed only when present (not null):
 * a record without them has the twelve fields' bytes exactly (issue 28's pdq_hash, issue
 * 33's iscc, issue 32's features).
 */
export const OPTIONAL_RECORD_FIELDS = ['pdq_hash', 'iscc', 'features'] as const;

/** The twelve fields of `record`, undefined mapped to null, and the optional fields it holds. */
function twelve(record: SignatureRecord): Record<RecordField, unknown> {
  const out = {} as Record<RecordField, unknown>;
  for (const field of RECORD_FIELDS) out[field] = record[field] === undefined ? null : record[field];
  for (const field of OPTIONAL_RECORD_FIELDS) {
    const v = record[field];
    if (v !== undefined && v !== null) (out as Record<string, unknown>)[field] = v;
  }
  return out;
}

/**
 * The bytes a record's signature covers (decisions.md 2): the RFC 8785 canonical JSON
 * (UTF-8) of an object with exactly the twelve RECORD_FIELDS, each present (undefined
 * written as null), plus each OPTIONAL_RECORD_FIELDS field the record has (not null); any other key
 * of `record` left out. Throws TypeError on values
 * JSON cannot carry (NaN, lone surrogates, cycles).
 */
export function canonicalRecordBytes(record: SignatureRecord): Uint8Array {
  return canonicalBytes(twelve(record));
}

/**
 * The bytes the action hash is the SHA-256 of (decisions.md 2): the RFC 8785 canonical
 * JSON of the twelve record fields plus `signature` (the base64 string as signed and
 * stored), i.e. of `{...twelve fields, signature}` as one canonical object. Each entry
 * hashes them with its fastest SHA-256 (node:crypto in Node, the kernel in a browser).
 */
export function actionHashBytes(record: SignatureRecord, signature: string): Uint8Array {
  return canonicalBytes({ ...twelve(record), signature });
}

/**
 * Whether `record.signature` (88-character base64) is `verify`'s Ed25519 signature
 * over canonicalRecordBytes by the key in `signer` (any accepted agent-key form).
 * False on any malformed input; never throws.
 */
export function verifyRecordWith(record: SignedRecord, verify: Ed25519Verify): boolean {
  try {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return false;
    const key = typeof record.signer === 'string' ? parseAgentKey(record.signer) : null;
    const signature = parseSignatureBase64(record.signature);
    if (key === null || signature === null) return false;
    return verify(key, canonicalRecordBytes(record), signature);
  } catch {
    return false;
  }
}
