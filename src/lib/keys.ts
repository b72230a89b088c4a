// Identities as written (decisions.md 2): the 39-byte agent key written `uhCAk...`,
// `did:key` identifiers, Ed25519 signatures in base64 or hex, and the messages a vault
// signs. Pure functions with no Node built-in, so the browser entry shares them; the
// key operations (sign, verify, generate) are in identity.ts.
import { blake2b } from '@noble/hashes/blake2.js';
import { hexToBytes } from '@noble/hashes/utils.js';
import { base58, base64, base64urlnopad } from '@scure/base';

/** The three type bytes of an agent key (0x84 0x20 0x24): `uhCAk` once encoded. */
export const AGENT_KEY_PREFIX: readonly number[] = [0x84, 0x20, 0x24];
/** The multicodec varint of ed25519-pub (0xed, as the two-byte varint 0xed 0x01). */
export const ED25519_MULTICODEC: readonly number[] = [0xed, 0x01];

const KEY_BYTES = 32;
const AGENT_KEY_BYTES = 3 + KEY_BYTES + 4;

const BASE64URL_52 = /^[A-Za-z0-9_-]{52}$/;
const BASE64_52 = /^[A-Za-z0-9+/]{52}$/;
const BASE64_44 = /^[A-Za-z0-9+/]{43}=$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** Whether `bytes` is a raw 32-byte Ed25519 key (or seed). */
export function isKey(bytes: unknown): bytes is Uint8Array {
  return bytes instanceof Uint8Array && bytes.length === KEY_BYTES;
}

/**
 * The 4 location bytes of an agent key: BLAKE2b-256 of the 32-byte key, XOR-folded
 * so that byte i = hash[i] ^ hash[i+4] ^ ... ^ hash[i+28] (decisions.md 2).
 */
export function agentKeyLocation(publicKey: Uint8Array): Uint8Array {
  const hash = blake2b(publicKey, { dkLen: 32 });
  const out = new Uint8Array(4);
  for (let i = 0; i < 32; i++) out[i & 3] ^= hash[i];
  return out;
}

/** The 39 agent-key bytes: 84 20 24 + key + location. */
export function agentKeyBytes(publicKey: Uint8Array): Uint8Array {
  if (!isKey(publicKey)) throw new TypeError('an Ed25519 public key is 32 bytes');
  const out = new Uint8Array(AGENT_KEY_BYTES);
  out.set(AGENT_KEY_PREFIX, 0);
  out.set(publicKey, 3);
  out.set(agentKeyLocation(publicKey), 3 + KEY_BYTES);
  return out;
}

/** The agent key of a 32-byte Ed25519 public key: `u` + base64url (no padding) of the 39 bytes. */
export function agentKeyFromPublicKey(publicKey: Uint8Array): string {
  return 'u' + base64urlnopad.encode(agentKeyBytes(publicKey));
}

/** The key inside 39 agent-key bytes, or null when the prefix or the location bytes are wrong. */
function keyFromAgentKeyBytes(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length !== AGENT_KEY_BYTES) return null;
  for (let i = 0; i < 3; i++) if (bytes[i] !== AGENT_KEY_PREFIX[i]) return null;
  const key = bytes.slice(3, 3 + KEY_BYTES);
  const location = agentKeyLocation(key);
  for (let i = 0; i < 4; i++) if (bytes[3 + KEY_BYTES + i] !== location[i]) return null;
  return key;
}

/**
 * The 32-byte public key of an agent key given in one of the accepted forms
 * (decisions.md 2): `u` + base64url of the 39 bytes, standard base64 of the 39 bytes
 * (prefix and location checked in both), or standard base64 (with its `=`) of the
 * 32-byte key. Anything else, including surrounding whitespace, gives null.
 */
export function parseAgentKey(input: string): Uint8Array | null {
  if (typeof input !== 'string') return null;
  try {
    if (input.length === 53 && input[0] === 'u' && BASE64URL_52.test(input.slice(1))) {
      return keyFromAgentKeyBytes(base64urlnopad.decode(input.slice(1)));
    }
    if (BASE64_52.test(input)) return keyFromAgentKeyBytes(base64.decode(input));
    if (BASE64_44.test(input)) {
      const key = base64.decode(input); // rejects non-zero padding bits: one spelling per key
      return key.length === KEY_BYTES ? key : null;
    }
  } catch {
    return null;
  }
  return null;
}

/** The canonical `uhCAk...` form of an accepted agent key, or null. */
export function normalizeAgentKey(input: string): string | null {
  const key = parseAgentKey(input);
  return key === null ? null : agentKeyFromPublicKey(key);
}

/** `did:key:z6Mk...`: multibase base58btc (`z`) of the multicodec ed25519-pub 0xed 0x01 + key. */
export function didFromPublicKey(publicKey: Uint8Array): string {
  if (!isKey(publicKey)) throw new TypeError('an Ed25519 public key is 32 bytes');
  const bytes = new Uint8Array(2 + KEY_BYTES);
  bytes.set(ED25519_MULTICODEC, 0);
  bytes.set(publicKey, 2);
  return 'did:key:z' + base58.encode(bytes);
}

/** The public key of a multibase `z6Mk...` ed25519-pub identifier, or null. */
function keyFromMultibase(id: string): Uint8Array | null {
  if (!id.startsWith('z6Mk') || id.length > 60 || !BASE58.test(id.slice(1))) return null;
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(id.slice(1));
  } catch {
    return null;
  }
  if (bytes.length !== 2 + KEY_BYTES || bytes[0] !== ED25519_MULTICODEC[0] || bytes[1] !== ED25519_MULTICODEC[1]) return null;
  return bytes.slice(2);
}

// DID syntax (W3C DID Core 3.1): "did:" method-name ":" method-specific-id, with a
// method name of lower-case letters and digits.
const DID = /^did:([a-z0-9]+):(.+)$/;

/**
 * The public key named by a DID: any `did:<method>:<id>` whose id is a `z6Mk...`
 * ed25519 multibase key or an agent key in a form parseAgentKey accepts
 * (decisions.md 2). DID URLs (with `#`, `?` or a path) and anything else give null.
 */
export function parseDid(did: string): Uint8Array | null {
  if (typeof did !== 'string') return null;
  const m = DID.exec(did);
  if (m === null) return null;
  const id = m[2];
  return keyFromMultibase(id) ?? parseAgentKey(id);
}

/** The public key named by an agent key (any accepted form) or a DID, or null: for `:id` paths. */
export function parseIdentity(input: string): Uint8Array | null {
  if (typeof input !== 'string') return null;
  return input.startsWith('did:') ? parseDid(input) : parseAgentKey(input);
}

/** `did:key:z6Mk...` of an agent key in any accepted form, or null. */
export function didFromAgentKey(agentKey: string): string | null {
  const key = parseAgentKey(agentKey);
  return key === null ? null : didFromPublicKey(key);
}

const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{86}==$/;
const SIGNATURE_HEX = /^[0-9a-fA-F]{128}$/;

/** The 64 bytes of a signature written as standard base64 (88 characters, `==`), or null. */
export function parseSignatureBase64(text: string): Uint8Array | null {
  if (typeof text !== 'string' || !SIGNATURE_BASE64.test(text)) return null;
  try {
    return base64.decode(text);
  } catch {
    return null; // non-zero padding bits
  }
}

/** The 64 bytes of a signature written as hex (128 characters, either case), or null. */
export function parseSignatureHex(text: string): Uint8Array | null {
  if (typeof text !== 'string' || !SIGNATURE_HEX.test(text)) return null;
  return hexToBytes(text);
}

/** Standard base64 (with padding) of bytes: how signatures are written in records. */
export function toBase64(bytes: Uint8Array): string {
  return base64.encode(bytes);
}

/** Prefix of a vault login challenge (decisions.md 5). */
export const AUTH_CHALLENGE_PREFIX = 'provenant-auth-challenge:v1:';
const AUTH_CHALLENGE = /^provenant-auth-challenge:v1:[A-Za-z0-9_-]{43}$/;

/** Whether `text` has the shape authChallenge() produces (not whether it was issued). */
export function isAuthChallenge(text: unknown): text is string {
  return typeof text === 'string' && AUTH_CHALLENGE.test(text);
}

/**
 * The message a vault signs for `POST S:/quota/sync-by-agent` (decisions.md 2):
 * `provenant-quota-sync:{agent_pub_key}:{timestamp}:{count}` plus `:{client_id}` when
 * a client id is given. `agent_pub_key` is used exactly as sent (not normalized).
 */
export function quotaSyncMessage(agent_pub_key: string, timestamp: number, count: number, client_id?: string | null): string {
  if (!Number.isSafeInteger(timestamp) || !Number.isSafeInteger(count)) {
    throw new RangeError('timestamp and count must be integers');
  }
  const base = `provenant-quota-sync:${agent_pub_key}:${timestamp}:${count}`;
  return client_id === undefined || client_id === null || client_id === '' ? base : `${base}:${client_id}`;
}
