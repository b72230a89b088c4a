// The entries of Provenant's transparency log (issue 27, docs/transparency-log.md): the
// RFC 8785 canonical JSON of what one stored event wrote, with its signature, so that
// anyone holding an entry re-verifies the signer's Ed25519 signature without the server.
//
//   {"action_hash":..,"kind":"record","published_at":..,"record":{twelve fields},"signature":".."}
//   {"action_hash":..,"kind":"revocation","reason":..,"revoked_at":..,"signature":"..","signer":".."}
//   {"action_hash":..,"kind":"thumbnail","sha256":"<hex of the data URI's UTF-8>"}
//
// A thumbnail is not signed by anyone and may be larger than an entry (64 KiB): its entry
// commits to the data URI's SHA-256. A record whose entry would exceed 65535 bytes (its
// free-form fields allow ~180 KB) carries `record_sha256`, the SHA-256 of the record's
// canonical bytes, instead of `record`: its signature is re-verified with the record as
// /verify answers it, once its hash matches. The record's `published_at` (server time,
// Unix ms) is not covered by the record's signature; the log's order is.
import canonicalize from 'canonicalize';
import { canonicalBytes, canonicalRecordBytes } from './record-bytes.js';
import { verifyRecord, verifyRevocation, type SignatureRecord, type SignedRecord } from './records.js';
import { sha256Hex } from './sha256.js';
import { MAX_ENTRY_BYTES } from './tlog/tiles.js';

export type LogEntry =
  | { kind: 'record'; action_hash: string; record: SignatureRecord; signature: string; published_at: number }
  | { kind: 'record'; action_hash: string; record_sha256: string; signature: string; published_at: number }
  | { kind: 'revocation'; action_hash: string; reason: string | null; revoked_at: number; signer: string; signature: string }
  | { kind: 'thumbnail'; action_hash: string; sha256: string };

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** The entry's bytes (RFC 8785). Throws RangeError when they exceed an entry's 65535 bytes. */
export function encodeLogEntry(entry: LogEntry): Uint8Array {
  let value: object;
  switch (entry.kind) {
    case 'record': {
      const common = { kind: 'record', action_hash: entry.action_hash, signature: entry.signature, published_at: entry.published_at };
      if (!('record' in entry)) {
        value = { ...common, record_sha256: entry.record_sha256 };
        break;
      }
      // exactly the twelve signed fields, as the signature covers them, canonicalised once:
      // RFC 8785 writes an object as its members sorted by key, each value canonical, so
      // the entry is the record's canonical bytes spliced between the other members'
      // (action_hash < kind < published_at < record < signature)
      const bytes = canonicalRecordBytes(entry.record);
      const full = spliceRecordEntry(entry.action_hash, entry.published_at, bytes, entry.signature);
      if (full.length <= MAX_ENTRY_BYTES) return full;
      value = { ...common, record_sha256: sha256Hex(bytes) };
      break;
    }
    case 'revocation':
      value = { kind: 'revocation', action_hash: entry.action_hash, reason: entry.reason ?? null, revoked_at: entry.revoked_at, signer: entry.signer, signature: entry.signature };
      break;
    case 'thumbnail':
      value = { kind: 'thumbnail', action_hash: entry.action_hash, sha256: entry.sha256 };
      break;
  }
  const bytes = canonicalBytes(value);
  if (bytes.length > MAX_ENTRY_BYTES) throw new RangeError(`a log entry is at most ${MAX_ENTRY_BYTES} bytes (this one: ${bytes.length})`);
  return bytes;
}

/** `{"action_hash":..,"kind":"record","published_at":..,"record":<recordBytes>,"signature":..}`, each scalar canonical. */
function spliceRecordEntry(actionHash: string, publishedAt: number, recordBytes: Uint8Array, signature: string): Uint8Array {
  const head = utf8.encode(`{"action_hash":${scalar(actionHash)},"kind":"record","published_at":${scalar(publishedAt)},"record":`);
  const tail = utf8.encode(`,"signature":${scalar(signature)}}`);
  const out = new Uint8Array(head.length + recordBytes.length + tail.length);
  out.set(head, 0);
  out.set(recordBytes, head.length);
  out.set(tail, head.length + recordBytes.length);
  return out;
}

function scalar(value: string | number): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('not a JSON value');
  return text;
}

/** The thumbnail entry of a data URI. */
export function thumbnailEntry(actionHash: string, dataUri: string): LogEntry {
  return { kind: 'thumbnail', action_hash: actionHash, sha256: sha256Hex(utf8.encode(dataUri)) };
}

/** Why an entry is not a well-formed, canonical log entry, or null. */
function problem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  if (typeof v.action_hash !== 'string' || !/^[0-9a-f]{64}$/.test(v.action_hash)) return 'no action_hash';
  switch (v.kind) {
    case 'record':
      if (typeof v.signature !== 'string' || typeof v.published_at !== 'number') return 'a record entry needs signature and published_at';
      if ('record' in v === 'record_sha256' in v) return 'a record entry needs record or record_sha256';
      if ('record' in v && (typeof v.record !== 'object' || v.record === null || Array.isArray(v.record))) return 'a record entry\'s record must be an object';
      if ('record_sha256' in v && (typeof v.record_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(v.record_sha256))) return 'record_sha256 must be 64 lowercase hex';
      return null;
    case 'revocation':
      if (typeof v.signature !== 'string' || typeof v.signer !== 'string' || typeof v.revoked_at !== 'number' || (v.reason !== null && typeof v.reason !== 'string')) return 'a revocation entry needs reason, revoked_at, signer and signature';
      return null;
    case 'thumbnail':
      if (typeof v.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(v.sha256)) return 'a thumbnail entry needs sha256';
      return null;
    default:
      return 'unknown kind';
  }
}

/** Parses an entry's bytes; throws TypeError when they are not a canonical log entry. */
export function decodeLogEntry(bytes: Uint8Array): LogEntry {
  let value: unknown;
  try {
    value = JSON.parse(utf8Strict.decode(bytes));
  } catch {
    throw new TypeError('a log entry must be UTF-8 JSON');
  }
  const why = problem(value);
  if (why !== null) throw new TypeError(`not a log entry: ${why}`);
  const entry = value as LogEntry;
  const again = encodeLogEntry(entry);
  if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) throw new TypeError('not a log entry: not in canonical form');
  return entry;
}

/**
 * Re-verifies the signature an entry carries (a record's by its signer, a revocation's
 * by its signer); a thumbnail entry carries none and passes. A record entry holding only
 * `record_sha256` needs the record (`record`, e.g. from /verify): false without it or
 * when its hash differs. Never throws.
 */
export function verifyLogEntrySignature(entry: LogEntry, record?: SignatureRecord): boolean {
  try {
    if (entry.kind === 'record') {
      let signed: SignatureRecord;
      if ('record' in entry) signed = entry.record;
      else {
        if (record === undefined || sha256Hex(canonicalRecordBytes(record)) !== entry.record_sha256) return false;
        signed = record;
      }
      return verifyRecord({ ...signed, signature: entry.signature } as SignedRecord);
    }
    if (entry.kind === 'revocation') return verifyRevocation({ action_hash: entry.action_hash, reason: entry.reason, revoked_at: entry.revoked_at, signer: entry.signer, signature: entry.signature });
    return true;
  } catch {
    return false;
  }
}
