// Signature records (decisions.md 2 and 11, spec 2.1-2.4): the twelve signed fields,
// their canonical bytes (RFC 8785), Ed25519 signatures over them, the action hash, and
// the conversion of request forms (tokens) to response forms (capitalized values).
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  agentKeyFromPublicKey,
  parseAgentKey,
  parseSignatureBase64,
  publicKeyFromPrivateKey,
  signBytes,
  toBase64,
  verifyBytes,
} from './identity.js';
import { actionHashBytes, canonicalBytes, canonicalRecordBytes, RECORD_FIELDS, verifyRecordWith, type RecordField } from './record-bytes.js';
import type { AiGeneration, AiTraining, CommercialLicensing, ContactPreference, ContentRights, FeaturesRef, Intent, License, PdqHashValue, SignatureRecord, SignedRecord } from './record-types.js';
import { decodeIscc, isccDecompose, IsccError, MT } from './iscc-codec.js';

export { canonicalRecordBytes, RECORD_FIELDS, type RecordField };

export type { AiGeneration, AiTraining, CommercialLicensing, ContactPreference, ContentRights, FeaturesRef, Intent, License, PdqHashValue, SignatureRecord, SignedRecord };

export const CONTENT_RIGHTS_FIELDS = ['license', 'commercial_licensing', 'ai_training', 'contact_preference'] as const;
export type ContentRightsField = (typeof CONTENT_RIGHTS_FIELDS)[number];

/** Maximum length of `comment` and of a revocation `reason` (spec 8), in code points. */
export const COMMENT_MAX = 280;

/**
 * Deepest nesting of arrays and objects in a record's free-form field (`[[1]]` is 2).
 * Checked before anything walks a value recursively: nesting thousands deep overflows
 * JSON.stringify and RFC 8785 canonicalization, and SQLite's JSON functions refuse
 * more than 1,000 levels.
 */
export const RECORD_VALUE_MAX_DEPTH = 32;

/**
 * What each free-form record field may hold: `items`, its keys plus array items over
 * all levels; `bytes`, the UTF-8 bytes of its JSON text. Far above what a real client
 * sends: the largest fingerprint, of 120 s of audio, has about 3,800 items in 15 KB.
 */
export const RECORD_VALUE_LIMITS = {
  content_rights: { items: 1_000, bytes: 16 * 1024 },
  integrity_report: { items: 4_096, bytes: 64 * 1024 },
  perceptual_hash: { items: 16_384, bytes: 64 * 1024 },
  expires_at: { items: 1_000, bytes: 16 * 1024 },
  tags: { items: 1_000, bytes: 16 * 1024 },
  /** A vPDQ of PDQ_MAX_FRAMES frames is about 13 KB in 481 items. */
  pdq_hash: { items: 4 * 120 + 8, bytes: 16 * 1024 },
} as const;
export type FreeFormField = keyof typeof RECORD_VALUE_LIMITS;

/** The spec 7 error code a field's failure maps to; everything else is `invalid_request`. */
export type InvalidFieldCode = 'missing_fields' | 'invalid_hash' | 'invalid_comment' | 'invalid_supersedes' | 'invalid_request';

/** A request field that is absent, malformed or outside its enumeration. */
export class InvalidFieldError extends Error {
  override readonly name = 'InvalidFieldError';
  /** The field, dotted for nested ones (`content_rights.license`). */
  readonly field: string;
  /** The spec 7 error code to answer with. */
  readonly code: InvalidFieldCode;
  constructor(field: string, message: string, code: InvalidFieldCode = 'invalid_request') {
    super(message);
    this.field = field;
    this.code = code;
  }
}

// ---------------------------------------------------------------- enumerations

/** Request token -> response value, per field, listed least to most restrictive (decisions.md 11). */
export const ENUMERATIONS = {
  license: {
    'cc0': 'CC0', 'public-domain': 'PublicDomain', 'cc-by': 'CCBY', 'cc-by-sa': 'CCBYSA',
    'cc-by-nd': 'CCBYND', 'cc-by-nc': 'CCBYNC', 'cc-by-nc-sa': 'CCBYNCSA', 'cc-by-nc-nd': 'CCBYNCND',
    'all-rights-reserved': 'AllRightsReserved',
  },
  commercial_licensing: {
    'open_to_licensing': 'OpenToLicensing', 'contact_for_terms': 'ContactForTerms', 'not_available': 'NotAvailable',
  },
  ai_training: { 'allowed': 'Allowed', 'allowed_with_attribution': 'AllowedWithAttribution', 'not_allowed': 'NotAllowed' },
  contact_preference: { 'allow_contact_requests': 'AllowContactRequests', 'no_contact': 'NoContact' },
  ai_generation: { 'none': 'None', 'assisted': 'Assisted', 'generated': 'Generated' },
  intent: {
    'Authorship': 'Authorship', 'Approval': 'Approval', 'Witness': 'Witness', 'Receipt': 'Receipt', 'Agreement': 'Agreement',
  },
} as const;
export type EnumField = keyof typeof ENUMERATIONS;

/**
 * Response values from least to most restrictive, the order "most restrictive wins"
 * uses (decisions.md 11). A `{Custom}` license ranks with AllRightsReserved.
 */
export const RESTRICTIVENESS = {
  license: ['CC0', 'PublicDomain', 'CCBY', 'CCBYSA', 'CCBYND', 'CCBYNC', 'CCBYNCSA', 'CCBYNCND', 'AllRightsReserved'],
  commercial_licensing: ['OpenToLicensing', 'ContactForTerms', 'NotAvailable'],
  ai_training: ['Allowed', 'AllowedWithAttribution', 'NotAllowed'],
  contact_preference: ['AllowContactRequests', 'NoContact'],
} as const satisfies Record<ContentRightsField, readonly string[]>;

const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value);
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

function oneOf(field: EnumField): string {
  return Object.keys(ENUMERATIONS[field]).join(', ');
}

/**
 * A request token to its response value: `cc-by` -> `CCBY`, `not_allowed` ->
 * `NotAllowed`; intent accepts the capitalized value or its lower case. Throws
 * InvalidFieldError naming `path` for anything else.
 */
export function enumToResponse<F extends EnumField>(field: F, token: unknown, path: string = field): (typeof ENUMERATIONS)[F][keyof (typeof ENUMERATIONS)[F]] {
  const table = ENUMERATIONS[field] as Record<string, string>;
  if (typeof token === 'string') {
    const key = field === 'intent' ? token.charAt(0).toUpperCase() + token.slice(1) : token;
    if (own(table, key) && (field !== 'intent' || token === key || token === token.toLowerCase())) {
      return table[key] as never;
    }
  }
  throw new InvalidFieldError(path, `${path} must be one of ${oneOf(field)}; got ${describe(token)}`);
}

/** A response value back to its request token (`CCBY` -> `cc-by`), or null when it is not one. */
export function enumToRequest(field: EnumField, value: string): string | null {
  for (const [token, v] of Object.entries(ENUMERATIONS[field])) if (v === value) return token;
  return null;
}

function isResponseValue(field: EnumField, value: unknown): boolean {
  return typeof value === 'string' && Object.values(ENUMERATIONS[field]).includes(value as never);
}

function licenseToResponse(value: unknown): License {
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'custom' && typeof value.custom === 'string' && value.custom.trim() !== '') {
      return { Custom: value.custom };
    }
    throw new InvalidFieldError('content_rights.license', 'content_rights.license as an object must be {"custom": "<non-empty text>"}');
  }
  return enumToResponse('license', value, 'content_rights.license');
}

/**
 * content_rights from request form (snake_case keys, token values, `{custom}`) to
 * response form: always an object with the four keys, each converted or null (an
 * absent or null content_rights gives four nulls, so responses keep spec 2.1's
 * "object" shape). Unknown keys and values throw InvalidFieldError.
 */
export function contentRightsToResponse(input: unknown): ContentRights {
  if (input === null || input === undefined) input = {};
  if (!isPlainObject(input)) throw new InvalidFieldError('content_rights', 'content_rights must be an object');
  for (const key of Object.keys(input)) {
    if (!(CONTENT_RIGHTS_FIELDS as readonly string[]).includes(key)) {
      throw new InvalidFieldError(`content_rights.${key}`, `content_rights has no field ${JSON.stringify(key)}; allowed: ${CONTENT_RIGHTS_FIELDS.join(', ')}`);
    }
  }
  const pick = (key: ContentRightsField): unknown => (input[key] === undefined ? null : input[key]);
  const license = pick('license');
  const commercial = pick('commercial_licensing');
  const training = pick('ai_training');
  const contact = pick('contact_preference');
  return {
    license: license === null ? null : licenseToResponse(license),
    commercial_licensing: commercial === null ? null : enumToResponse('commercial_licensing', commercial, 'content_rights.commercial_licensing'),
    ai_training: training === null ? null : enumToResponse('ai_training', training, 'content_rights.ai_training'),
    contact_preference: contact === null ? null : enumToResponse('contact_preference', contact, 'content_rights.contact_preference'),
  };
}

/** content_rights back to request form (tokens, `{custom}`), dropping undeclared keys. */
export function contentRightsToRequest(rights: ContentRights): Record<string, string | { custom: string }> {
  const out: Record<string, string | { custom: string }> = {};
  for (const key of CONTENT_RIGHTS_FIELDS) {
    const value = rights[key];
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') out[key] = { custom: value.Custom };
    else out[key] = enumToRequest(key, value) ?? value;
  }
  return out;
}

/** Rank of a response value in RESTRICTIVENESS (higher = more restrictive), or -1 if unknown. */
export function restrictivenessRank(field: ContentRightsField, value: unknown): number {
  if (field === 'license' && isPlainObject(value) && typeof value.Custom === 'string') {
    return RESTRICTIVENESS.license.indexOf('AllRightsReserved');
  }
  return (RESTRICTIVENESS[field] as readonly unknown[]).indexOf(value);
}

/**
 * The most restrictive of several values of one field; nulls and unknown values are
 * skipped; on a tie (a `{Custom}` license against AllRightsReserved) the first wins.
 */
export function mostRestrictive<T>(field: ContentRightsField, values: readonly T[]): T | null {
  let best: T | null = null;
  let bestRank = -1;
  for (const value of values) {
    const rank = restrictivenessRank(field, value);
    if (rank > bestRank) {
      best = value;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * Combined rights of several signers (decisions.md 9, content-rights): per field the
 * most restrictive declared value; null when no signer declared any right.
 */
export function combineContentRights(list: readonly (ContentRights | null | undefined)[]): ContentRights | null {
  const present = list.filter((r): r is ContentRights => isPlainObject(r));
  const out = {} as Record<ContentRightsField, unknown>;
  let any = false;
  for (const key of CONTENT_RIGHTS_FIELDS) {
    out[key] = mostRestrictive(key, present.map((r) => r[key]));
    if (out[key] !== null) any = true;
  }
  return any ? (out as unknown as ContentRights) : null;
}

// ---------------------------------------------------------------- field checks

const HEX64 = /^[0-9a-fA-F]{64}$/;
const HEX64_LOWER = /^[0-9a-f]{64}$/;

/** 64 hex characters, either case (a SHA-256 or an action hash as requests may write it). */
export function isHex64(value: unknown): value is string {
  return typeof value === 'string' && HEX64.test(value);
}

/** No lone surrogates (with the u flag a surrogate pair is one code point, so \p{Cs} matches only lone halves). */
export function isWellFormedText(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

/** Length in Unicode code points, how spec 8's character limits count. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Why `value` is not a text of spec 8's comment kind (`comment`, a revocation
 * `reason`): a string of valid Unicode of at most COMMENT_MAX code points. A message
 * naming `field`, or null when it is one.
 */
export function commentProblem(field: string, value: unknown): string | null {
  if (typeof value !== 'string') return `${field} must be a string`;
  if (!isWellFormedText(value)) return `${field} must be valid Unicode (it holds a lone surrogate)`;
  if (codePoints(value) > COMMENT_MAX) return `${field} must be at most ${COMMENT_MAX} characters`;
  return null;
}

/**
 * Bytes of a string's JSON text, quotes and escapes included; for a text that cannot
 * fit in `budget` bytes, a lower bound above it, found without encoding the text (each
 * UTF-16 unit is at least one byte of UTF-8 or of an escape).
 */
function jsonStringBytes(text: string, budget: number): number {
  if (text.length + 2 > budget) return text.length + 2;
  return utf8.encode(JSON.stringify(text)).length;
}

/**
 * Why `value` does not fit the limits of its free-form record field
 * (RECORD_VALUE_MAX_DEPTH, RECORD_VALUE_LIMITS): a message naming the field, or null
 * when it fits. The walk keeps its own stack and stops at the first limit passed, so
 * any value is safe to check, however deep or large. Bytes are those of the JSON text
 * (as JSON.stringify and RFC 8785 write it) of a JSON value.
 */
export function recordValueProblem(field: FreeFormField, value: unknown): string | null {
  const limit = RECORD_VALUE_LIMITS[field];
  let items = 0;
  let bytes = 0;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v === 'string') bytes += jsonStringBytes(v, limit.bytes - bytes);
    else if (typeof v === 'number') bytes += Number.isFinite(v) ? String(v).length : 4;
    else if (typeof v !== 'object' || v === null) bytes += v === false ? 5 : 4;
    else {
      if (depth >= RECORD_VALUE_MAX_DEPTH) return `${field} nests arrays and objects more than ${RECORD_VALUE_MAX_DEPTH} levels deep`;
      const keys = Array.isArray(v) ? null : Object.keys(v);
      const n = keys === null ? (v as unknown[]).length : keys.length;
      items += n;
      if (items > limit.items) return `${field} holds more than ${limit.items} keys and array items`;
      bytes += n === 0 ? 2 : n + 1; // brackets and commas
      for (let i = 0; i < n && bytes <= limit.bytes; i++) {
        if (keys === null) values.push((v as unknown[])[i]);
        else {
          bytes += jsonStringBytes(keys[i], limit.bytes - bytes) + 1; // "key":
          values.push((v as Record<string, unknown>)[keys[i]]);
        }
        depths.push(depth + 1);
      }
    }
    if (bytes > limit.bytes) return `${field} is larger than ${limit.bytes} bytes of JSON`;
  }
  return null;
}

/** `value` when it fits its field's limits (recordValueProblem), else throws InvalidFieldError for the field. */
function withinLimits(field: FreeFormField, value: unknown): unknown {
  const problem = recordValueProblem(field, value);
  if (problem !== null) throw new InvalidFieldError(field, problem);
  return value;
}

/**
 * A JSON value RFC 8785 can serialize (finite numbers, well-formed strings, no cycles)
 * within its field's limits, else throws for `field`.
 */
function jsonValue(field: FreeFormField, value: unknown): unknown {
  if (value === undefined) return null;
  withinLimits(field, value); // before canonicalize, which recurses
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw new InvalidFieldError(field, `${field} is not serializable JSON: ${(err as Error).message}`);
  }
  if (text === undefined) throw new InvalidFieldError(field, `${field} is not a JSON value`);
  // Round-trip so the stored value is plain JSON (no toJSON, Dates, boxed values, sparse arrays).
  return JSON.parse(text);
}

function objectOrNull(field: FreeFormField, value: unknown): object | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw new InvalidFieldError(field, `${field} must be an object or null`);
  return jsonValue(field, value) as object;
}

/** Frames a vPDQ may hold: as many as VideoPHash samples (MAX_VIDEO_FRAMES, src/media/video.ts). */
export const PDQ_MAX_FRAMES = 120;
/**
 * The latest a vPDQ frame's timestamp may be, in seconds: 24 hours. Our own frames lie in
 * the first 120 s (src/media/video.ts reads at most 120 s, t = 0.5 ... 119.5), but another
 * tool's vPDQ of at most 120 frames may sample a whole film or recorded stream (Meta's
 * vpdq-hash-video hashes the full video), so the bound is a video's length, not ours.
 * Within it Meta's text writes every timestamp as a plain decimal (toFixed(3)).
 */
export const PDQ_MAX_TIMESTAMP_SECONDS = 86_400;

/** Why `t` cannot be a vPDQ frame's timestamp after one at `previous` seconds, or null when it can. */
export function vpdqTimestampProblem(t: unknown, previous: number | null): string | null {
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > PDQ_MAX_TIMESTAMP_SECONDS) return `must be a number of seconds from 0 to ${PDQ_MAX_TIMESTAMP_SECONDS}`;
  if (previous !== null && t < previous) return `must not be before the previous frame's (${previous}): frames are in time order`;
  return null;
}
const PDQ_HEX = /^[0-9a-f]{64}$/;

function pdqPart(path: string, v: unknown, anyCase: boolean): { hash_value: string; quality: number } {
  if (!isPlainObject(v)) throw new InvalidFieldError(path, `${path} must be an object`);
  const h = typeof v.hash_value === 'string' && anyCase ? v.hash_value.toLowerCase() : v.hash_value;
  if (typeof h !== 'string' || !PDQ_HEX.test(h)) throw new InvalidFieldError(`${path}.hash_value`, `${path}.hash_value must be 64 lowercase hex digits (Meta's PDQ text)`);
  const q = v.quality;
  if (typeof q !== 'number' || !Number.isInteger(q) || q < 0 || q > 100) throw new InvalidFieldError(`${path}.quality`, `${path}.quality must be an integer from 0 to 100`);
  return { hash_value: h, quality: q };
}

function exactKeys(path: string, v: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of Object.keys(v)) {
    if (!keys.includes(k)) throw new InvalidFieldError(`${path}.${k}`, `${path} has no field ${JSON.stringify(k)}`);
  }
}

/**
 * A record's `pdq_hash` (issue 28) checked, or undefined when absent or null:
 * `{hash_type: "PDQ", hash_value, quality}` or `{hash_type: "vPDQ", frames:
 * [{timestamp, hash_value, quality}]}` (1 to PDQ_MAX_FRAMES frames, timestamps seconds
 * from 0 to PDQ_MAX_TIMESTAMP_SECONDS, non-decreasing), hex lowercase (`anyCase`, the
 * request form: lower-cased), nothing else. Throws InvalidFieldError naming the field.
 * `timestamps: 'as stored'` reads a stored value back without the timestamp bound
 * (issue 34): records stored before it keep matching (any finite, non-negative seconds).
 */
export function pdqHashOrAbsent(value: unknown, anyCase = false, timestamps: 'checked' | 'as stored' = 'checked'): PdqHashValue | undefined {
  if (value === undefined || value === null) return undefined;
  withinLimits('pdq_hash', value);
  if (!isPlainObject(value)) throw new InvalidFieldError('pdq_hash', 'pdq_hash must be an object or null');
  if (value.hash_type === 'PDQ') {
    exactKeys('pdq_hash', value, ['hash_type', 'hash_value', 'quality']);
    return { hash_type: 'PDQ', ...pdqPart('pdq_hash', value, anyCase) };
  }
  if (value.hash_type === 'vPDQ') {
    exactKeys('pdq_hash', value, ['hash_type', 'frames']);
    const frames = value.frames;
    if (!Array.isArray(frames) || frames.length < 1 || frames.length > PDQ_MAX_FRAMES) {
      throw new InvalidFieldError('pdq_hash.frames', `pdq_hash.frames must be an array of 1 to ${PDQ_MAX_FRAMES} frames`);
    }
    return {
      hash_type: 'vPDQ',
      frames: frames.map((f: unknown, i) => {
        const path = `pdq_hash.frames.${i}`;
        const part = pdqPart(path, f, anyCase);
        const frame = f as Record<string, unknown>;
        exactKeys(path, frame, ['timestamp', 'hash_value', 'quality']);
        const t = frame.timestamp;
        const problem = timestamps === 'as stored'
          ? (typeof t === 'number' && Number.isFinite(t) && t >= 0 ? null : 'must be a non-negative number of seconds')
          : vpdqTimestampProblem(t, i === 0 ? null : ((frames[i - 1] as Record<string, unknown>).timestamp as number));
        if (problem !== null) throw new InvalidFieldError(`${path}.timestamp`, `${path}.timestamp ${problem}`);
        return { timestamp: t as number, ...part };
      }),
    };
  }
  throw new InvalidFieldError('pdq_hash.hash_type', 'pdq_hash.hash_type must be PDQ or vPDQ');
}

// ---- beyond pdq_hash: the file's ISCC (issue 33) and its local features (issue 32), each signed only when present

/** Longest ISCC-CODE string accepted: a 256-bit content unit with data and instance units is under 120 characters. */
export const ISCC_TEXT_MAX = 200;

/**
 * A record's `iscc` (issue 33) checked, or undefined when absent or null: the file's
 * ISCC-CODE (MainType ISCC), in its canonical `ISCC:` form exactly (the signature covers
 * the string as written). Throws InvalidFieldError.
 */
export function isccOrAbsent(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > ISCC_TEXT_MAX) throw new InvalidFieldError('iscc', `iscc must be an ISCC-CODE string ("ISCC:...", at most ${ISCC_TEXT_MAX} characters) or null`);
  try {
    const unit = decodeIscc(value);
    if (unit.mainType !== MT.ISCC) throw new IsccError('it is a single unit, not an ISCC-CODE');
    if (!value.startsWith('ISCC:') || /[\s-]/.test(value)) throw new IsccError('not in its canonical form');
    isccDecompose(value);
  } catch (e) {
    throw new InvalidFieldError('iscc', `iscc must be an ISCC-CODE in canonical form: ${(e as Error).message}`);
  }
  return value;
}

/** The Content-Code unit of an ISCC-CODE (its first unit of MainType CONTENT), or null when it has none. */
export function isccContentUnit(code: string): string | null {
  for (const unit of isccDecompose(code)) if (decodeIscc(unit).mainType === MT.CONTENT) return unit;
  return null;
}

/** Most features a published set may hold (the vault's sets are far smaller: features.ts). */
export const FEATURES_REF_MAX_COUNT = 4096;

/**
 * A record's `features` (issue 32) checked, or undefined when absent or null:
 * `{version, count, digest}`, the digest the SHA-256 (64 lowercase hex) of the feature
 * set's bytes, which travel beside the record (publish's `features_data`), so the
 * signature binds them to the record without carrying them. Throws InvalidFieldError.
 */
export function featuresRefOrAbsent(value: unknown): FeaturesRef | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) throw new InvalidFieldError('features', 'features must be an object {version, count, digest} or null');
  for (const k of Object.keys(value)) if (k !== 'version' && k !== 'count' && k !== 'digest') throw new InvalidFieldError(`features.${k}`, `features has no field ${JSON.stringify(k)}`);
  const { version, count, digest } = value;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1 || version > 255) throw new InvalidFieldError('features.version', 'features.version must be an integer from 1 to 255');
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > FEATURES_REF_MAX_COUNT) throw new InvalidFieldError('features.count', `features.count must be an integer from 1 to ${FEATURES_REF_MAX_COUNT}`);
  if (typeof digest !== 'string' || !HEX64_LOWER.test(digest)) throw new InvalidFieldError('features.digest', 'features.digest must be the SHA-256 of the feature set, 64 lowercase hex digits');
  return { version, count, digest };
}

/** The record's iscc and features, checked, as the keys to spread into it (none when absent). */
function recordExtensions(input: { iscc?: unknown; features?: unknown }): { iscc?: string; features?: FeaturesRef } {
  const iscc = isccOrAbsent(input.iscc);
  const features = featuresRefOrAbsent(input.features);
  return { ...(iscc === undefined ? {} : { iscc }), ...(features === undefined ? {} : { features }) };
}

function commentOrNull(value: unknown, field = 'comment'): string | null {
  if (value === undefined || value === null) return null;
  const problem = commentProblem(field, value);
  if (problem !== null) throw new InvalidFieldError(field, problem, field === 'comment' ? 'invalid_comment' : 'invalid_request');
  return value as string;
}

function signedAt(value: unknown, field = 'signed_at'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidFieldError(field, `${field} must be a non-negative integer of Unix milliseconds`);
  }
  return value;
}

/** Request form of a record: what `POST /sign` carries plus the server's `signer` and `signed_at`. */
export interface RecordInput {
  file_hash: unknown;
  /** Agent key in any accepted form (uhCAk or plain base64); normalized to uhCAk. */
  signer: unknown;
  signed_at: unknown;
  intent?: unknown;
  ai_generation?: unknown;
  content_rights?: unknown;
  integrity_report?: unknown;
  perceptual_hash?: unknown;
  /** Issue 28: PDQ or vPDQ; absent or null when not computed. */
  pdq_hash?: unknown;
  /** Issue 33: the file's ISCC-CODE; absent or null when not computed. */
  iscc?: unknown;
  /** Issue 32: the reference to the record's feature set; absent or null without one. */
  features?: unknown;
  comment?: unknown;
  supersedes?: unknown;
  expires_at?: unknown;
  tags?: unknown;
}

/** A record without who signed it and when: what a sign request declares, before the signer's key and clock are known. */
export type RecordContent = Omit<SignatureRecord, 'signer' | 'signed_at'>;

/**
 * The content of a record in response form from its request form (decisions.md 11):
 * enumeration tokens converted (`cc-by` -> `CCBY`, `{custom}` -> `{Custom}`, `none` ->
 * `None`, intent in either case, absent intent -> `Authorship` as spec 4.7 says), hex
 * lower-cased, absent fields null. Other keys of `input` (signer, signature,
 * client_id, ...) are ignored. Throws InvalidFieldError naming the first bad field,
 * with the spec 7 code to answer (`missing_fields` for an absent file_hash,
 * `invalid_hash`, `invalid_comment`, `invalid_supersedes`, else `invalid_request`).
 * Spec 4.7 reports a bad intent on `/sign` at commit, not as a 400: the server decides
 * how to answer a field of `intent`.
 */
export function normalizeRecordContent(input: Omit<RecordInput, 'signer' | 'signed_at'>): RecordContent {
  if (!isPlainObject(input)) throw new InvalidFieldError('body', 'the record must be a JSON object');
  if (input.file_hash === undefined || input.file_hash === null) {
    throw new InvalidFieldError('file_hash', 'file_hash is required', 'missing_fields');
  }
  if (typeof input.file_hash !== 'string' || !HEX64.test(input.file_hash)) {
    throw new InvalidFieldError('file_hash', 'file_hash must be 64 hex characters', 'invalid_hash');
  }
  const comment = commentOrNull(input.comment); // spec 4.7 lists invalid_comment before invalid_supersedes
  let supersedes: string | null = null;
  if (input.supersedes !== undefined && input.supersedes !== null) {
    if (typeof input.supersedes !== 'string' || !HEX64.test(input.supersedes)) {
      throw new InvalidFieldError('supersedes', 'supersedes must be an action hash (64 hex characters)', 'invalid_supersedes');
    }
    supersedes = input.supersedes.toLowerCase();
  }
  const pdq = pdqHashOrAbsent(input.pdq_hash, true);
  const extensions = recordExtensions(input);
  return {
    file_hash: input.file_hash.toLowerCase(),
    intent: input.intent === undefined || input.intent === null ? 'Authorship' : enumToResponse('intent', input.intent),
    ai_generation: input.ai_generation === undefined || input.ai_generation === null ? null : enumToResponse('ai_generation', input.ai_generation),
    content_rights: contentRightsToResponse(withinLimits('content_rights', input.content_rights)),
    integrity_report: objectOrNull('integrity_report', input.integrity_report),
    perceptual_hash: objectOrNull('perceptual_hash', input.perceptual_hash),
    comment,
    supersedes,
    expires_at: jsonValue('expires_at', input.expires_at),
    tags: jsonValue('tags', input.tags),
    ...(pdq === undefined ? {} : { pdq_hash: pdq }),
    ...extensions,
  };
}

/** The record of checked content, signed by `signer` (an agent key in its `uhCAk` form) at `signedAt`, in record field order. */
export function recordOf(content: RecordContent, signer: string, signedAt: number): SignatureRecord {
  const { file_hash, ...rest } = content;
  return { file_hash, signer, signed_at: signedAt, ...rest };
}

/**
 * A whole record in response form from its request form: normalizeRecordContent plus
 * `signer` (any accepted agent key form, written as `uhCAk`) and `signed_at`. Throws
 * InvalidFieldError as normalizeRecordContent does, content fields first.
 */
export function normalizeRecord(input: RecordInput): SignatureRecord {
  const content = normalizeRecordContent(input);
  const signer = typeof input.signer === 'string' ? parseAgentKey(input.signer) : null;
  if (signer === null) throw new InvalidFieldError('signer', 'signer must be an agent key (uhCAk... or base64)');
  return recordOf(content, agentKeyFromPublicKey(signer), signedAt(input.signed_at));
}

function checkContentRightsResponse(value: unknown): ContentRights | null {
  if (value === null) return null;
  if (!isPlainObject(value)) throw new InvalidFieldError('content_rights', 'content_rights must be an object or null');
  const keys = Object.keys(value);
  for (const key of keys) {
    if (!(CONTENT_RIGHTS_FIELDS as readonly string[]).includes(key)) {
      throw new InvalidFieldError(`content_rights.${key}`, `content_rights has no field ${JSON.stringify(key)}`);
    }
  }
  for (const key of CONTENT_RIGHTS_FIELDS) {
    const path = `content_rights.${key}`;
    if (!own(value, key)) throw new InvalidFieldError(path, `${path} must be present (null when not declared)`);
    const v = value[key];
    if (v === null) continue;
    if (key === 'license' && isPlainObject(v)) {
      const k = Object.keys(v);
      if (k.length === 1 && k[0] === 'Custom' && typeof v.Custom === 'string' && v.Custom.trim() !== '') continue;
      throw new InvalidFieldError(path, `${path} as an object must be {"Custom": "<non-empty text>"}`);
    }
    if (!isResponseValue(key, v)) {
      throw new InvalidFieldError(path, `${path} must be one of ${Object.values(ENUMERATIONS[key]).join(', ')}, or null`);
    }
  }
  return value as unknown as ContentRights;
}

/**
 * Checks that `input` holds a record already in response form, exactly as signed
 * (the body of `POST S:/publish`): all twelve fields present (null where unset),
 * capitalized enumerations, content_rights with its four keys, lowercase hex,
 * `signer` in `uhCAk` form, nothing converted (the signature covers these exact
 * values). Returns the twelve fields (other keys such as `signature` and `client_id`
 * dropped) or throws InvalidFieldError.
 */
export function parseRecord(input: unknown): SignatureRecord {
  if (!isPlainObject(input)) throw new InvalidFieldError('body', 'the record must be a JSON object');
  for (const field of RECORD_FIELDS) {
    if (!own(input, field) || input[field] === undefined) {
      throw new InvalidFieldError(field, `${field} must be present (null when unset)`, field === 'file_hash' ? 'missing_fields' : 'invalid_request');
    }
  }
  const r = input as Record<RecordField, unknown>;
  if (typeof r.file_hash !== 'string' || !HEX64_LOWER.test(r.file_hash)) {
    throw new InvalidFieldError('file_hash', 'file_hash must be 64 lowercase hex characters', 'invalid_hash');
  }
  if (typeof r.signer !== 'string' || !r.signer.startsWith('uhCAk') || parseAgentKey(r.signer) === null) {
    throw new InvalidFieldError('signer', 'signer must be an agent key in its uhCAk form');
  }
  if (!isResponseValue('intent', r.intent)) throw new InvalidFieldError('intent', `intent must be one of ${oneOf('intent')}`);
  if (r.ai_generation !== null && !isResponseValue('ai_generation', r.ai_generation)) {
    throw new InvalidFieldError('ai_generation', 'ai_generation must be None, Assisted, Generated or null');
  }
  const comment = commentOrNull(r.comment); // spec 4.7 lists invalid_comment before invalid_supersedes
  if (r.supersedes !== null && (typeof r.supersedes !== 'string' || !HEX64_LOWER.test(r.supersedes))) {
    throw new InvalidFieldError('supersedes', 'supersedes must be an action hash (64 lowercase hex characters) or null', 'invalid_supersedes');
  }
  const pdq = pdqHashOrAbsent((input as Record<string, unknown>).pdq_hash);
  const extensions = recordExtensions(input);
  return {
    file_hash: r.file_hash,
    signer: r.signer,
    signed_at: signedAt(r.signed_at),
    intent: r.intent as Intent,
    ai_generation: r.ai_generation as AiGeneration | null,
    content_rights: checkContentRightsResponse(withinLimits('content_rights', r.content_rights)),
    integrity_report: objectOrNull('integrity_report', r.integrity_report),
    perceptual_hash: objectOrNull('perceptual_hash', r.perceptual_hash),
    comment,
    supersedes: r.supersedes as string | null,
    expires_at: jsonValue('expires_at', r.expires_at),
    tags: jsonValue('tags', r.tags),
    ...(pdq === undefined ? {} : { pdq_hash: pdq }),
    ...extensions,
  };
}

// ---------------------------------------------------------------- canonical bytes, signatures

const utf8 = new TextEncoder();

// canonicalRecordBytes and the bytes of the action hash are in record-bytes.ts, shared with the browser entry.

/** The action hash (decisions.md 2): lowercase hex SHA-256 of actionHashBytes. */
export function actionHash(record: SignatureRecord, signature: string): string {
  return createHash('sha256').update(actionHashBytes(record, signature)).digest('hex');
}

/** Signs the canonical bytes of `record`; returns the base64 signature and the action hash. */
export function signRecord(record: SignatureRecord, privateKeyPkcs8: Uint8Array): { signature: string; action_hash: string } {
  const signature = toBase64(signBytes(privateKeyPkcs8, canonicalRecordBytes(record)));
  return { signature, action_hash: actionHash(record, signature) };
}

/** Whether a private key belongs to a record's `signer` (before signing on someone's behalf). */
export function isSignerKey(record: Pick<SignatureRecord, 'signer'>, privateKeyPkcs8: Uint8Array): boolean {
  const key = parseAgentKey(record.signer);
  if (key === null) return false;
  return Buffer.from(publicKeyFromPrivateKey(privateKeyPkcs8)).equals(Buffer.from(key));
}

/**
 * Re-verifies a signed record offline: the public key comes from `signer` (any
 * accepted agent-key form), the signature (88-character base64) must be Ed25519 over
 * canonicalRecordBytes. False on any malformed input; never throws.
 */
export function verifyRecord(record: SignedRecord): boolean {
  return verifyRecordWith(record, verifyBytes);
}

// ---------------------------------------------------------------- revocation entries

/** A vault revocation (decisions.md 2, `POST S:/publish-revocation`), without its signature. */
export interface RevocationEntry {
  action_hash: string;
  reason: string | null;
  /** Unix milliseconds. */
  revoked_at: number;
  signer: string;
}

/**
 * The bytes a revocation's signature covers: RFC 8785 canonical JSON of exactly
 * `{action_hash, reason, revoked_at, signer}` (reason null when none), UTF-8.
 */
export function canonicalRevocationBytes(entry: RevocationEntry): Uint8Array {
  return canonicalBytes({
    action_hash: entry.action_hash,
    reason: entry.reason === undefined ? null : entry.reason,
    revoked_at: entry.revoked_at,
    signer: entry.signer,
  });
}

/** The base64 Ed25519 signature of a revocation entry. */
export function signRevocation(entry: RevocationEntry, privateKeyPkcs8: Uint8Array): string {
  return toBase64(signBytes(privateKeyPkcs8, canonicalRevocationBytes(entry)));
}

/** Whether a revocation's base64 signature is valid for its `signer`; never throws. */
export function verifyRevocation(entry: RevocationEntry & { signature: string }): boolean {
  try {
    if (!isPlainObject(entry)) return false;
    const key = typeof entry.signer === 'string' ? parseAgentKey(entry.signer) : null;
    const signature = parseSignatureBase64(entry.signature);
    if (key === null || signature === null) return false;
    return verifyBytes(key, canonicalRevocationBytes(entry), signature);
  } catch {
    return false;
  }
}

/**
 * Checks a revocation body in the form it is signed: `action_hash` 64 lowercase hex,
 * `reason` a string of at most 280 characters or null, `revoked_at` integer ms,
 * `signer` an agent key in `uhCAk` form. Returns the four fields or throws InvalidFieldError.
 */
export function parseRevocation(input: unknown): RevocationEntry {
  if (!isPlainObject(input)) throw new InvalidFieldError('body', 'the revocation must be a JSON object');
  if (input.action_hash === undefined || input.action_hash === null) {
    throw new InvalidFieldError('action_hash', 'action_hash is required', 'missing_fields');
  }
  if (typeof input.action_hash !== 'string' || !HEX64_LOWER.test(input.action_hash)) {
    throw new InvalidFieldError('action_hash', 'action_hash must be 64 lowercase hex characters');
  }
  if (typeof input.signer !== 'string' || !input.signer.startsWith('uhCAk') || parseAgentKey(input.signer) === null) {
    throw new InvalidFieldError('signer', 'signer must be an agent key in its uhCAk form');
  }
  return {
    action_hash: input.action_hash,
    reason: commentOrNull(input.reason, 'reason'),
    revoked_at: signedAt(input.revoked_at, 'revoked_at'),
    signer: input.signer,
  };
}
