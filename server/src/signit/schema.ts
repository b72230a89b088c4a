// Request checks of the sign-it endpoints, each in the order its spec section lists
// the errors. Every function returns clean values or throws an ApiError.
import { ApiError } from '../errors.js';
import {
  InvalidFieldError,
  commentProblem,
  enumToResponse,
  isHex64,
  isPlainObject,
  normalizeRecord,
  type Intent,
  type SignatureRecord,
} from 'provenant';

/** Spec 8: thumbnails are data:image/ URIs of at most 15,000 characters. */
export const THUMBNAIL_MAX = 15_000;
/** Spec 8: at most 100 files per batch. */
export const BATCH_MAX = 100;

/** Spec 4.1: `hash` required (missing_hash), exactly 64 hex (invalid_hash); lower-cased. */
export function parseHashQuery(value: unknown): string {
  const hash = Array.isArray(value) ? value[0] : value;
  if (hash === undefined || hash === '') throw new ApiError('missing_hash');
  if (!isHex64(hash)) throw new ApiError('invalid_hash');
  return hash.toLowerCase();
}

/** Spec 4.7, 4.8: an optional comment; anything but valid text of at most 280 characters is 400 invalid_comment saying which. */
function checkComment(field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  const problem = commentProblem(field, value);
  if (problem !== null) throw new ApiError('invalid_comment', `${problem}.`, { field });
}

function fromFieldError(err: unknown): never {
  if (err instanceof InvalidFieldError) throw new ApiError(err.code, err.message, { field: err.field });
  throw err;
}

// Any accepted key works for checking the fields (32 zero bytes, plain base64); the real signer replaces it.
const PLACEHOLDER_KEY = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** What a sign request declares; the server adds `signer` and `signed_at`. */
export interface SignRequest {
  fields: Record<string, unknown>;
  /** The intent in response form, or null when it is not one (spec 4.7: it fails at commit). */
  intent: Intent | null;
  intentError: string | null;
}

/**
 * One file of `/sign` or `/sign-batch`, checked in spec 4.7 order: missing_fields,
 * invalid_hash, invalid_comment, invalid_supersedes, then the enumerations
 * (decisions.md 11: `invalid_request` naming the field). A bad `intent` is not a 400
 * (spec 4.7 "fails at commit"): it is returned in `intentError`.
 */
export function parseSignFields(body: unknown): SignRequest {
  if (!isPlainObject(body)) throw new ApiError('missing_fields', 'The body must be a JSON object with file_hash.');
  if (body.file_hash === undefined || body.file_hash === null) throw new ApiError('missing_fields', 'file_hash is required.', { field: 'file_hash' });
  if (!isHex64(body.file_hash)) throw new ApiError('invalid_hash', undefined, { field: 'file_hash' });
  checkComment('comment', body.comment);
  if (body.supersedes !== undefined && body.supersedes !== null && !isHex64(body.supersedes)) {
    throw new ApiError('invalid_supersedes', undefined, { field: 'supersedes' });
  }
  let intent: Intent | null = 'Authorship';
  let intentError: string | null = null;
  if (body.intent !== undefined && body.intent !== null) {
    try {
      intent = enumToResponse('intent', body.intent) as Intent;
    } catch (err) {
      intent = null;
      intentError = (err as Error).message;
    }
  }
  // The enumerations and JSON fields, with a placeholder signer and time.
  try {
    toRecord({ fields: body, intent: 'Authorship', intentError: null }, PLACEHOLDER_KEY, 0);
  } catch (err) {
    fromFieldError(err);
  }
  return { fields: body, intent, intentError };
}

/** The record of a checked request, signed by `signer` at `signedAt`. */
export function toRecord(req: SignRequest, signer: string, signedAt: number): SignatureRecord {
  const f = req.fields;
  const record = normalizeRecord({
    file_hash: f.file_hash,
    signer,
    signed_at: signedAt,
    intent: undefined,
    ai_generation: f.ai_generation,
    content_rights: f.content_rights,
    integrity_report: f.integrity_report,
    perceptual_hash: f.perceptual_hash,
    comment: f.comment,
    supersedes: f.supersedes,
    expires_at: f.expires_at,
    tags: f.tags,
  });
  record.intent = req.intent ?? 'Authorship';
  return record;
}

/** Spec 4.8: `files` (1..100 items) and optional `shared_metadata`, merged per file. */
export function parseBatch(body: unknown): { items: unknown[] } {
  if (!isPlainObject(body) || body.files === undefined || body.files === null) {
    throw new ApiError('missing_fields', 'files is required.', { field: 'files' });
  }
  if (!Array.isArray(body.files)) throw new ApiError('invalid_request', 'files must be an array.', { field: 'files' });
  if (body.files.length === 0) throw new ApiError('missing_fields', 'files must hold at least one file.', { field: 'files' });
  if (body.files.length > BATCH_MAX) {
    throw new ApiError('invalid_request', `files holds ${body.files.length} items; the limit is ${BATCH_MAX}.`, { field: 'files' });
  }
  const shared = body.shared_metadata ?? {};
  if (!isPlainObject(shared)) throw new ApiError('invalid_request', 'shared_metadata must be an object.', { field: 'shared_metadata' });
  checkComment('shared_metadata.comment', shared.comment);
  const { file_hash: _ignored, ...sharedFields } = shared;
  const items = body.files.map((file) => (isPlainObject(file) ? { ...sharedFields, ...file } : file));
  return { items };
}

/**
 * Spec 4.10: `action_hash` required (a string; what it names is the cell's to refuse,
 * 500 revocation_failed, as are the reason's content checks); `reason` optional.
 */
export function parseRevoke(body: unknown): { actionHash: string; reason: unknown } {
  if (!isPlainObject(body) || body.action_hash === undefined || body.action_hash === null || body.action_hash === '') {
    throw new ApiError('missing_fields', 'action_hash is required.', { field: 'action_hash' });
  }
  if (typeof body.action_hash !== 'string') throw new ApiError('invalid_request', 'action_hash must be a string.', { field: 'action_hash' });
  return { actionHash: body.action_hash, reason: body.reason ?? null };
}

/** Spec 4.12: `action_hash` (hex) and `thumbnail` (data:image/ URI, at most 15,000 characters). */
export function parseThumbnail(body: unknown): { actionHash: string; thumbnail: string } {
  if (!isPlainObject(body)) throw new ApiError('missing_fields', 'action_hash and thumbnail are required.');
  if (body.action_hash === undefined || body.action_hash === null || body.action_hash === '') {
    throw new ApiError('missing_fields', 'action_hash is required.', { field: 'action_hash' });
  }
  if (body.thumbnail === undefined || body.thumbnail === null || body.thumbnail === '') {
    throw new ApiError('missing_fields', 'thumbnail is required.', { field: 'thumbnail' });
  }
  if (!isHex64(body.action_hash)) throw new ApiError('invalid_request', 'action_hash must be 64 hex characters.', { field: 'action_hash' });
  const t = body.thumbnail;
  if (typeof t !== 'string' || !/^data:image\/[a-z0-9.+-]+[;,]/i.test(t)) {
    throw new ApiError('invalid_request', 'thumbnail must be a data:image/... URI.', { field: 'thumbnail' });
  }
  if (t.length > THUMBNAIL_MAX) {
    throw new ApiError('invalid_request', `thumbnail is longer than ${THUMBNAIL_MAX} characters.`, { field: 'thumbnail' });
  }
  return { actionHash: body.action_hash.toLowerCase(), thumbnail: t };
}

/** Decisions.md 2: `{agent_pub_key, count, timestamp, signature (hex), client_id?}`. */
export interface QuotaSyncRequest {
  agentPubKey: string;
  count: number;
  timestamp: number;
  signature: string;
  clientId: string | null;
}

export function parseQuotaSync(body: unknown): QuotaSyncRequest {
  if (!isPlainObject(body) || typeof body.agent_pub_key !== 'string' || body.agent_pub_key === '') {
    throw new ApiError('invalid_agent_pub_key', undefined, { field: 'agent_pub_key' });
  }
  for (const field of ['count', 'timestamp'] as const) {
    const v = body[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw new ApiError('invalid_request', `${field} must be a non-negative integer.`, { field });
    }
  }
  if (typeof body.signature !== 'string') throw new ApiError('invalid_request', 'signature (hex) is required.', { field: 'signature' });
  const clientId = body.client_id;
  if (clientId !== undefined && clientId !== null && typeof clientId !== 'string') {
    throw new ApiError('invalid_request', 'client_id must be a string.', { field: 'client_id' });
  }
  return {
    agentPubKey: body.agent_pub_key,
    count: body.count as number,
    timestamp: body.timestamp as number,
    signature: body.signature,
    clientId: typeof clientId === 'string' && clientId !== '' ? clientId : null,
  };
}

/** The optional sponsoring app of a publish body. */
export function parseClientId(body: Record<string, unknown>): string | null {
  const v = body.client_id;
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new ApiError('invalid_request', 'client_id must be a string.', { field: 'client_id' });
  return v;
}

export { fromFieldError };
