// Request checks of the sign-it endpoints, each in the order its spec section lists
// the errors: every function returns the typed input of one domain call or throws an
// ApiError naming the field. Each sign request's fields are checked by one pass of the
// library's record normaliser (normalizeRecordContent), the same rules vault records
// are held to.
import {
  InvalidFieldError,
  commentProblem,
  enumToResponse,
  isHex64,
  isPlainObject,
  normalizeAgentKey,
  normalizeRecordContent,
  parseRecord,
  parseRevocation,
  type RevocationEntry,
  type SignatureRecord,
} from 'provenant';
import type { QuotaSync } from '../domain/quota-plans.js';
import type { BatchFile, SignRequest } from '../domain/signing.js';
import { ApiError, DomainError } from '../errors.js';

/** Spec 8: thumbnails are data:image/ URIs of at most 15,000 characters. */
export const THUMBNAIL_MAX = 15_000;
/** Spec 8: at most 100 files per batch. */
export const BATCH_MAX = 100;

/** The first value of a query parameter given more than once. */
function firstQueryValue(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

/** Spec 4.1: `hash` required (missing_hash), exactly 64 hex (invalid_hash); lower-cased. */
export function parseHashQuery(value: unknown): string {
  const hash = firstQueryValue(value);
  if (hash === undefined || hash === '') throw new ApiError('missing_hash');
  if (!isHex64(hash)) throw new ApiError('invalid_hash');
  return hash.toLowerCase();
}

/** A failed record check as the vault endpoints answer it: the library's code, message and field. */
function fieldError(err: InvalidFieldError): ApiError {
  return new ApiError(err.code, err.message, { field: err.field });
}

/**
 * A failed field check of a sign request as spec 4.7 answers it: invalid_hash and
 * invalid_supersedes in the table's words, missing_fields and invalid_comment as the
 * library's sentence, the rest (invalid_request) as the library words it.
 */
function signFieldError(err: InvalidFieldError): ApiError {
  const message =
    err.code === 'invalid_hash' || err.code === 'invalid_supersedes' ? undefined : err.code === 'invalid_request' ? err.message : `${err.message}.`;
  return new ApiError(err.code, message, { field: err.field });
}

/**
 * One file of `/sign` or `/sign-batch`, checked in spec 4.7 order: missing_fields,
 * invalid_hash, invalid_comment, invalid_supersedes, then the enumerations and the
 * free-form fields (decisions.md 11: `invalid_request` naming the field). A bad
 * `intent` is not a 400 (spec 4.7 "fails at commit"): it is returned as `intentProblem`.
 */
export function parseSignRequest(body: unknown): SignRequest {
  if (!isPlainObject(body)) throw new ApiError('missing_fields', 'The body must be a JSON object with file_hash.');
  let content;
  try {
    content = normalizeRecordContent({ file_hash: undefined, ...body, intent: undefined }); // the intent below
  } catch (err) {
    throw err instanceof InvalidFieldError ? signFieldError(err) : err;
  }
  // issue 32: a record's features are bound to the feature set the vault publishes beside
  // it; a server-hosted cell signs a hash and has no file, so no set to store
  if (content.features !== undefined) throw new ApiError('invalid_request', 'features are published with their feature set from a vault (POST /publish); /sign and /sign-batch take none.', { field: 'features' });
  let intentProblem: string | null = null;
  if (body.intent !== undefined && body.intent !== null) {
    try {
      content.intent = enumToResponse('intent', body.intent);
    } catch (err) {
      if (!(err instanceof InvalidFieldError)) throw err;
      intentProblem = err.message;
    }
  }
  return { content, intentProblem };
}

/** Spec 4.7, 4.8: an optional comment; anything but valid text of at most 280 characters is 400 invalid_comment saying which. */
function checkComment(field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  const problem = commentProblem(field, value);
  if (problem !== null) throw new ApiError('invalid_comment', `${problem}.`, { field });
}

/**
 * Spec 4.8: `files` (1..100 items) and optional `shared_metadata`, merged into each
 * file (its own fields win), then each file checked alone: one that fails carries the
 * code of its check.
 */
export function parseBatch(body: unknown): BatchFile[] {
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
  return body.files.map((file): BatchFile => {
    const item = isPlainObject(file) ? { ...sharedFields, ...file } : file;
    const fileHash = isPlainObject(item) && typeof item.file_hash === 'string' ? item.file_hash.toLowerCase() : null;
    try {
      return { fileHash, request: parseSignRequest(item) };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return { fileHash, error: err.code };
    }
  });
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

/** Spec 4.12: `action_hash` (hex, lower-cased) and `thumbnail` (data:image/ URI, at most 15,000 characters). */
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

/** Spec 4.5: `agent_pub_key` (uhCAk or plain base64) as its canonical agent key, else invalid_agent_pub_key. */
export function parseAgentKeyQuery(value: unknown): string {
  const text = firstQueryValue(value);
  const key = typeof text === 'string' && text !== '' ? normalizeAgentKey(text) : null;
  if (key === null) throw new ApiError('invalid_agent_pub_key');
  return key;
}

/** Spec 4.5: the optional `client_id` (an empty one is none). */
export function parseClientIdQuery(value: unknown): string | null {
  const client = firstQueryValue(value);
  return typeof client === 'string' && client !== '' ? client : null;
}

/** decisions.md 2: `{agent_pub_key, count, timestamp, signature (hex), client_id?}`. */
export function parseQuotaSync(body: unknown): QuotaSync {
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

/** Issue 32: a published feature set's bytes at most (its base64 travels as `features_data`). */
export const FEATURES_DATA_MAX_BYTES = 64 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `features_data`: standard base64 (padded, nothing else) of at most FEATURES_DATA_MAX_BYTES bytes, or null when absent. */
function featuresData(value: unknown): Uint8Array | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > Math.ceil(FEATURES_DATA_MAX_BYTES / 3) * 4 || !BASE64.test(value)) {
    throw new ApiError('invalid_request', `features_data must be standard base64 of at most ${FEATURES_DATA_MAX_BYTES} bytes.`, { field: 'features_data' });
  }
  const bytes = Buffer.from(value, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * decisions.md 2, `POST S:/publish`: the twelve record fields exactly as signed
 * (parseRecord), `signature`, an optional sponsoring `client_id`, and (issue 32) the
 * feature set's bytes `features_data` when the record has `features`.
 */
export function parsePublish(body: unknown): { record: SignatureRecord; signature: string; clientId: string | null; features: Uint8Array | null } {
  if (!isPlainObject(body)) throw new ApiError('invalid_request', 'The body must be a signed record.');
  let record: SignatureRecord;
  try {
    record = parseRecord(body);
  } catch (err) {
    throw err instanceof InvalidFieldError ? fieldError(err) : err;
  }
  const clientId = body.client_id;
  if (clientId !== undefined && clientId !== null && clientId !== '' && typeof clientId !== 'string') {
    throw new ApiError('invalid_request', 'client_id must be a string.', { field: 'client_id' });
  }
  return {
    record,
    signature: typeof body.signature === 'string' ? body.signature : '',
    clientId: typeof clientId === 'string' && clientId !== '' ? clientId : null,
    features: featuresData(body.features_data),
  };
}

/** decisions.md 2, `POST S:/publish-revocation`: `{action_hash, reason, revoked_at, signer}` as signed, and `signature`. */
export function parsePublishRevocation(body: unknown): { entry: RevocationEntry; signature: string } {
  let entry: RevocationEntry;
  try {
    entry = parseRevocation(body);
  } catch (err) {
    throw err instanceof InvalidFieldError ? fieldError(err) : err;
  }
  return { entry, signature: isPlainObject(body) && typeof body.signature === 'string' ? body.signature : '' };
}
