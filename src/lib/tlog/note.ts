// Signed notes (c2sp.org/signed-note): a UTF-8 text ending in a newline, a blank line,
// and signature lines `— <name> base64(key ID || signature)`. Key IDs are
// SHA-256(name || 0x0A || type || public key)[:4]; verifier keys are
// `<name>+<hex key ID>+base64(type || public key)`. Two signature types: Ed25519 (0x01,
// a log's key) and Ed25519 cosignature/v1 (0x04, c2sp.org/tlog-cosignature: a witness's
// timestamped signature over "cosignature/v1\ntime <t>\n" || note text).
//
// Signer keys are written as Go's note package writes them:
// `PRIVATE+KEY+<name>+<hex key ID>+base64(type || 32-byte Ed25519 seed)`.
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '../sha256.js';
import { TlogError } from './errors.js';
import { decodeBase64, encodeBase64 } from './hash.js';

export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;
export type SignatureType = typeof SIG_ED25519 | typeof SIG_COSIGNATURE_V1;

/** At most this many signature lines are read (the spec asks for at least 16; Go reads 100). */
export const MAX_NOTE_SIGNATURES = 100;
/** A note longer than this (in UTF-16 units, about its bytes for ASCII) is refused unread. */
export const MAX_NOTE_LENGTH = 1 << 20;

const MAX_TIMESTAMP = (1n << 63n) - 1n;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A key that can verify note signatures of one name and key ID. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  readonly type: SignatureType;
  readonly publicKey: Uint8Array;
  /** The verifier key string (`<name>+<hex id>+<base64>`). */
  readonly vkey: string;
  /** Whether `signature` (the bytes after the key ID) signs the note text `text`. */
  verify(text: Uint8Array, signature: Uint8Array): boolean;
}

/** A key that signs notes. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  readonly type: SignatureType;
  /** The signature bytes (after the key ID) over the note text. */
  sign(text: Uint8Array): Uint8Array;
}

/** One signature line of a note. */
export interface NoteSignature {
  readonly name: string;
  readonly keyId: number;
  /** The signature bytes after the 4-byte key ID. */
  readonly signature: Uint8Array;
}

/** A signature that a known verifier checked. */
export interface VerifiedSignature extends NoteSignature {
  readonly verifier: NoteVerifier;
  /** For a cosignature/v1: its POSIX timestamp in seconds. */
  readonly timestamp?: number;
}

/** An opened note: its text, the signatures that verified, the ones from unknown keys. */
export interface OpenedNote {
  readonly text: string;
  readonly verified: VerifiedSignature[];
  readonly unverified: NoteSignature[];
}

const UNICODE_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Key names are non-empty, with no Unicode space and no `+` (signed-note "Format"). */
export function isValidKeyName(name: string): boolean {
  return typeof name === 'string' && name.length > 0 && !UNICODE_SPACE.test(name) && !name.includes('+') && !LONE_SURROGATE.test(name);
}

/** SHA-256(name || 0x0A || type || publicKey)[:4] as an unsigned 32-bit integer. */
export function keyId(name: string, type: number, publicKey: Uint8Array): number {
  const n = encoder.encode(name);
  const buf = new Uint8Array(n.length + 2 + publicKey.length);
  buf.set(n);
  buf[n.length] = 0x0a;
  buf[n.length + 1] = type;
  buf.set(publicKey, n.length + 2);
  const h = sha256(buf);
  return ((h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3]) >>> 0;
}

const hex8 = (id: number): string => id.toString(16).padStart(8, '0');

function typeAndKey(type: number, key: Uint8Array): Uint8Array {
  const b = new Uint8Array(1 + key.length);
  b[0] = type;
  b.set(key, 1);
  return b;
}

/** The verifier key string of an Ed25519 public key of type 0x01 or 0x04. */
export function formatVerifierKey(name: string, type: SignatureType, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new TlogError('malformed_key', 'a key name must be non-empty, without spaces or +');
  if (publicKey.length !== 32) throw new TlogError('malformed_key', 'an Ed25519 public key is 32 bytes');
  return `${name}+${hex8(keyId(name, type, publicKey))}+${encodeBase64(typeAndKey(type, publicKey))}`;
}

function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** The message a cosignature/v1 signs: "cosignature/v1\ntime <t>\n" || note text. */
export function cosignedMessage(text: Uint8Array, timestamp: bigint): Uint8Array {
  const head = encoder.encode(`cosignature/v1\ntime ${timestamp.toString()}\n`);
  const msg = new Uint8Array(head.length + text.length);
  msg.set(head);
  msg.set(text, head.length);
  return msg;
}

function readU64(b: Uint8Array): bigint {
  let v = 0n;
  for (let i = 0; i < 8; i++) v = (v << 8n) | BigInt(b[i]);
  return v;
}

/** The timestamp of a cosignature/v1 signature (8-byte big-endian prefix), or null when malformed. */
export function cosignatureTimestamp(signature: Uint8Array): number | null {
  if (signature.length !== 72) return null;
  const t = readU64(signature);
  return t > MAX_TIMESTAMP ? null : Number(t);
}

function makeVerifier(name: string, type: SignatureType, publicKey: Uint8Array, id: number): NoteVerifier {
  const vkey = `${name}+${hex8(id)}+${encodeBase64(typeAndKey(type, publicKey))}`;
  if (type === SIG_ED25519) {
    return { name, keyId: id, type, publicKey, vkey, verify: (text, sig) => ed25519Verify(publicKey, text, sig) };
  }
  return {
    name, keyId: id, type, publicKey, vkey,
    verify(text, sig) {
      if (sig.length !== 72) return false;
      const t = readU64(sig);
      // tlog-cosignature: the timestamp MUST NOT exceed 2^63 - 1
      if (t > MAX_TIMESTAMP) return false;
      return ed25519Verify(publicKey, cosignedMessage(text, t), sig.subarray(8));
    },
  };
}

/** `s` split at its first `n` plus signs (the last part keeps any further ones). */
function splitKey(s: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  for (let i = 0; i < n; i++) {
    const at = rest.indexOf('+');
    if (at < 0) break;
    out.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  out.push(rest);
  return out;
}

/**
 * A verifier from its key string: `<name>+<8 hex>+base64(type || key)` with type 0x01
 * (Ed25519) or 0x04 (cosignature/v1) and a 32-byte key whose key ID matches.
 */
export function parseVerifierKey(vkey: string): NoteVerifier {
  const bad = (why: string): never => {
    throw new TlogError('malformed_key', `not a verifier key (${why})`);
  };
  if (typeof vkey !== 'string' || vkey.length > 1000) bad('too long');
  // the base64 key may itself hold `+`: split at the first two only (as Go's note does)
  const [name, idHex, keyB64] = splitKey(vkey, 2);
  if (keyB64 === undefined) bad('want <name>+<key id>+<key>');
  if (!isValidKeyName(name)) bad('key name');
  if (!/^[0-9a-f]{8}$/.test(idHex)) bad('key ID is not 8 lowercase hex digits');
  const raw = decodeBase64(keyB64);
  if (raw === null || raw.length < 1) bad('key is not base64');
  const type = raw![0];
  if (type !== SIG_ED25519 && type !== SIG_COSIGNATURE_V1) bad(`signature type 0x${type.toString(16).padStart(2, '0')} is not supported`);
  const publicKey = raw!.slice(1);
  if (publicKey.length !== 32) bad('an Ed25519 key is 32 bytes');
  const id = keyId(name, type, publicKey);
  if (hex8(id) !== idHex) bad('the key ID does not match the key');
  return makeVerifier(name, type as SignatureType, publicKey, id);
}

/** A signer from a 32-byte Ed25519 seed: a log key (0x01) or a witness cosigner (0x04, signing at `now()` seconds). */
export function noteSigner(name: string, type: SignatureType, seed: Uint8Array, now: () => number = () => Math.floor(Date.now() / 1000)): NoteSigner {
  if (!isValidKeyName(name)) throw new TlogError('malformed_key', 'a key name must be non-empty, without spaces or +');
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new TlogError('malformed_key', 'an Ed25519 seed is 32 bytes');
  const secret = seed.slice();
  const publicKey = ed25519.getPublicKey(secret);
  const id = keyId(name, type, publicKey);
  if (type === SIG_ED25519) return { name, keyId: id, type, sign: (text) => ed25519.sign(text, secret) };
  return {
    name, keyId: id, type,
    sign(text) {
      const t = now();
      // tlog-witness: the timestamp MUST NOT be zero
      if (!Number.isSafeInteger(t) || t <= 0) throw new TlogError('malformed_key', 'a cosignature needs a positive timestamp');
      const out = new Uint8Array(72);
      new DataView(out.buffer).setBigUint64(0, BigInt(t));
      out.set(ed25519.sign(cosignedMessage(text, BigInt(t)), secret), 8);
      return out;
    },
  };
}

/** The verifier of a signer key's public half. */
export function verifierOf(name: string, type: SignatureType, seed: Uint8Array): NoteVerifier {
  const publicKey = ed25519.getPublicKey(seed);
  return makeVerifier(name, type, publicKey, keyId(name, type, publicKey));
}

/** A new signer key string and its verifier key string. */
export function generateSignerKey(name: string, type: SignatureType): { signerKey: string; verifierKey: string } {
  const seed = ed25519.utils.randomSecretKey();
  return { signerKey: formatSignerKey(name, type, seed), verifierKey: verifierOf(name, type, seed).vkey };
}

/** `PRIVATE+KEY+<name>+<hex key ID>+base64(type || seed)` (Go's note.GenerateKey format). */
export function formatSignerKey(name: string, type: SignatureType, seed: Uint8Array): string {
  const v = verifierOf(name, type, seed);
  return `PRIVATE+KEY+${name}+${hex8(v.keyId)}+${encodeBase64(typeAndKey(type, seed))}`;
}

/** A signer key string's name, type and seed, its key ID checked. */
export function parseSignerKey(skey: string): { name: string; type: SignatureType; seed: Uint8Array } {
  const bad = (why: string): never => {
    throw new TlogError('malformed_key', `not a signer key (${why})`);
  };
  const parts = typeof skey === 'string' ? splitKey(skey.trim(), 4) : [];
  if (parts[4] === undefined || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') bad('want PRIVATE+KEY+<name>+<key id>+<key>');
  const [, , name, idHex, keyB64] = parts;
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) bad('name or key ID');
  const raw = decodeBase64(keyB64);
  if (raw === null || raw.length !== 33 || (raw[0] !== SIG_ED25519 && raw[0] !== SIG_COSIGNATURE_V1)) bad('key');
  const type = raw![0] as SignatureType;
  const seed = raw!.slice(1);
  if (hex8(verifierOf(name, type, seed).keyId) !== idHex) bad('the key ID does not match the key');
  return { name, type, seed };
}

function checkText(text: string): Uint8Array {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('malformed_note', 'a note text must end with a newline');
  checkChars(text);
  return encoder.encode(text);
}

/** Valid UTF-8 and no ASCII control character other than newline (signed-note "Format"). */
function checkChars(s: string): void {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(s) || LONE_SURROGATE.test(s)) throw new TlogError('malformed_note', 'a note holds a control character or is not valid UTF-8');
}

/** One signature line: `— <name> <base64>\n`. */
export function formatSignatureLine(sig: NoteSignature): string {
  const b = new Uint8Array(4 + sig.signature.length);
  new DataView(b.buffer).setUint32(0, sig.keyId >>> 0);
  b.set(sig.signature, 4);
  return `\u2014 ${sig.name} ${encodeBase64(b)}\n`;
}

/** A note of `text` (ending in a newline) with the given signatures, in order. */
export function formatNote(text: string, signatures: readonly NoteSignature[]): string {
  checkText(text);
  if (signatures.length === 0) throw new TlogError('malformed_note', 'a signed note needs a signature');
  for (const s of signatures) if (!isValidKeyName(s.name)) throw new TlogError('malformed_note', 'a signature has an invalid key name');
  return `${text}\n${signatures.map(formatSignatureLine).join('')}`;
}

/** The signature of `text` by each signer. */
export function signatures(text: string, signers: readonly NoteSigner[]): NoteSignature[] {
  const bytes = checkText(text);
  return signers.map((s) => ({ name: s.name, keyId: s.keyId, signature: s.sign(bytes) }));
}

/** `text` signed by every signer, as a note. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  return formatNote(text, signatures(text, signers));
}

/** Parses signature lines (each `— <name> <base64>\n`), as a witness answers them. */
export function parseSignatureLines(lines: string): NoteSignature[] {
  if (typeof lines !== 'string' || lines.length === 0 || !lines.endsWith('\n')) throw new TlogError('malformed_note', 'signature lines must end with a newline');
  const out: NoteSignature[] = [];
  const rows = lines.slice(0, -1).split('\n');
  if (rows.length > MAX_NOTE_SIGNATURES) throw new TlogError('malformed_note', `more than ${MAX_NOTE_SIGNATURES} signatures`);
  for (const row of rows) {
    if (!row.startsWith('\u2014 ')) throw new TlogError('malformed_note', 'a signature line must start with an em dash and a space');
    const rest = row.slice(2);
    const sp = rest.indexOf(' ');
    const name = sp < 0 ? rest : rest.slice(0, sp);
    const b64 = sp < 0 ? '' : rest.slice(sp + 1);
    const raw = decodeBase64(b64);
    if (!isValidKeyName(name) || b64 === '' || raw === null || raw.length < 5) throw new TlogError('malformed_note', 'a malformed signature line');
    out.push({ name, keyId: new DataView(raw.buffer, raw.byteOffset).getUint32(0), signature: raw.slice(4) });
  }
  return out;
}

/** Splits a note into its text and signatures, checking the format but no signature. */
export function parseNote(note: string | Uint8Array): { text: string; signatures: NoteSignature[] } {
  let s: string;
  if (note instanceof Uint8Array) {
    if (note.length > MAX_NOTE_LENGTH) throw new TlogError('malformed_note', 'the note is too long');
    try {
      s = decoder.decode(note);
    } catch {
      throw new TlogError('malformed_note', 'the note is not valid UTF-8');
    }
  } else {
    if (typeof note !== 'string') throw new TlogError('malformed_note', 'a note is text');
    s = note;
  }
  if (s.length > MAX_NOTE_LENGTH) throw new TlogError('malformed_note', 'the note is too long');
  checkChars(s);
  // the text is separated from the signatures by the last blank line
  const split = s.lastIndexOf('\n\n');
  if (split < 0) throw new TlogError('malformed_note', 'no blank line before the signatures');
  const text = s.slice(0, split + 1);
  const sigs = s.slice(split + 2);
  if (sigs.length === 0 || !sigs.endsWith('\n')) throw new TlogError('malformed_note', 'a note must end with signature lines, each ending in a newline');
  return { text, signatures: parseSignatureLines(sigs) };
}

/**
 * Opens a note with the known verifiers (signed-note "Signatures"): signatures from
 * unknown keys (name and key ID not both matching) are set aside unverified (identical
 * lines once); every signature of a known key must verify (else bad_signature: the whole
 * note is refused); and at least one must (else no_verified_signature).
 *
 * A known key's (name, key ID) on two lines refuses the note (repeated_signature) before
 * any signature is verified. The spec says a verifier MUST verify every signature of a
 * known key, so a repeat cannot be dropped unchecked (Go's note.Open drops it), and
 * verifying each repeat let one note buy MAX_NOTE_SIGNATURES verifications (issue 34).
 * The spec's tuple names one key, and a key signs a note once.
 */
export function openNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenedNote {
  const { text, signatures: sigs } = parseNote(note);
  const known: { sig: NoteSignature; verifier: NoteVerifier }[] = [];
  const unverified: NoteSignature[] = [];
  const seenKnown = new Set<string>();
  const seenUnknown = new Set<string>();
  for (const sig of sigs) {
    const v = verifiers.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (v === undefined) {
      const line = formatSignatureLine(sig);
      if (!seenUnknown.has(line)) unverified.push(sig);
      seenUnknown.add(line);
      continue;
    }
    const key = `${sig.name}+${hex8(sig.keyId)}`;
    if (seenKnown.has(key)) throw new TlogError('repeated_signature', `the note repeats a signature of ${key}`);
    seenKnown.add(key);
    known.push({ sig, verifier: v });
  }
  const textBytes = encoder.encode(text);
  const verified: VerifiedSignature[] = [];
  for (const { sig, verifier: v } of known) {
    if (!v.verify(textBytes, sig.signature)) throw new TlogError('bad_signature', `the signature of ${sig.name}+${hex8(sig.keyId)} does not verify`);
    const timestamp = v.type === SIG_COSIGNATURE_V1 ? cosignatureTimestamp(sig.signature) ?? undefined : undefined;
    verified.push(timestamp === undefined ? { ...sig, verifier: v } : { ...sig, verifier: v, timestamp });
  }
  if (verified.length === 0) throw new TlogError('no_verified_signature', 'no signature of a known key');
  return { text, verified, unverified };
}
