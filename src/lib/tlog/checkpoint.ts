// Checkpoints (c2sp.org/tlog-checkpoint): the note text `<origin>\n<size>\n<base64 root>\n`
// and optional extension lines; verified against a log key and a k-of-n policy of
// witness cosignatures (c2sp.org/tlog-cosignature, cosignature/v1).
import { TlogError } from './errors.js';
import { HASH_SIZE, encodeBase64, parseHash } from './hash.js';
import {
  SIG_COSIGNATURE_V1, SIG_ED25519, openNote, parseVerifierKey, signNote,
  type NoteSigner, type NoteVerifier, type VerifiedSignature,
} from './note.js';

/** A checkpoint's lines. */
export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly rootHash: Uint8Array;
  /** Extension lines, opaque (not RECOMMENDED; never auditable). */
  readonly extensions: readonly string[];
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** The note text of a checkpoint. */
export function formatCheckpoint(c: Checkpoint): string {
  if (typeof c.origin !== 'string' || c.origin.length === 0 || c.origin.includes('\n')) throw new TlogError('malformed_checkpoint', 'the origin must be one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new TlogError('malformed_checkpoint', 'the tree size must be a non-negative integer');
  if (!(c.rootHash instanceof Uint8Array) || c.rootHash.length !== HASH_SIZE) throw new TlogError('malformed_checkpoint', 'the root hash is 32 bytes');
  for (const e of c.extensions) if (e.length === 0 || e.includes('\n')) throw new TlogError('malformed_checkpoint', 'extension lines must be non-empty single lines');
  return [c.origin, String(c.size), encodeBase64(c.rootHash), ...c.extensions].map((l) => `${l}\n`).join('');
}

/** Parses a checkpoint's note text (not a signed note: see verifyCheckpoint). */
export function parseCheckpoint(text: string): Checkpoint {
  if (typeof text !== 'string' || !text.endsWith('\n')) throw new TlogError('malformed_checkpoint', 'a checkpoint text ends with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new TlogError('malformed_checkpoint', 'a checkpoint has at least three lines');
  const [origin, size, root, ...extensions] = lines;
  if (origin.length === 0) throw new TlogError('malformed_checkpoint', 'the origin line is empty');
  if (!DECIMAL.test(size) || !Number.isSafeInteger(Number(size))) throw new TlogError('malformed_checkpoint', 'the tree size is not a decimal without leading zeroes below 2^53');
  let rootHash: Uint8Array;
  try {
    rootHash = parseHash(root, 'the root hash');
  } catch {
    throw new TlogError('malformed_checkpoint', 'the root hash is not the base64 of 32 bytes');
  }
  if (extensions.some((e) => e.length === 0)) throw new TlogError('malformed_checkpoint', 'extension lines must be non-empty');
  return { origin, size: Number(size), rootHash, extensions };
}

/** A checkpoint signed by the log's key(s) (Ed25519, type 0x01), as a signed note. */
export function signCheckpoint(c: Checkpoint, signers: NoteSigner | readonly NoteSigner[]): string {
  return signNote(formatCheckpoint(c), Array.isArray(signers) ? signers : [signers as NoteSigner]);
}

/** Who a checkpoint must be signed by. */
export interface CheckpointPolicy {
  /** The log's verifier key(s) (type 0x01); one valid signature of one of them is required. */
  logKeys: ReadonlyArray<string | NoteVerifier>;
  /** The origin the checkpoint must carry; by default the log key's name (tlog-checkpoint: the key name SHOULD match the origin). */
  origin?: string;
  /** The witnesses' cosignature verifier keys (type 0x04). */
  witnesses?: ReadonlyArray<string | NoteVerifier>;
  /** How many distinct witnesses must have cosigned (k of the n above); default 0. */
  quorum?: number;
}

/** A checkpoint whose signatures met the policy. */
export interface VerifiedCheckpoint {
  readonly checkpoint: Checkpoint;
  /** The note text (the checkpoint lines). */
  readonly text: string;
  /** The log's signature that verified. */
  readonly logSignature: VerifiedSignature;
  /** The valid cosignatures of known witnesses, one per witness. */
  readonly cosignatures: readonly VerifiedSignature[];
}

const verifierOfKey = (k: string | NoteVerifier): NoteVerifier => (typeof k === 'string' ? parseVerifierKey(k) : k);

/**
 * Verifies a signed checkpoint: the note format; every signature of a known key (log or
 * witness) valid (a bad one refuses the note, signed-note "Signatures"); a log
 * signature; the origin; at least `quorum` distinct witness cosignatures. Throws a
 * TlogError (malformed_note, bad_signature, no_verified_signature, malformed_checkpoint,
 * unknown_origin, quorum_not_met).
 */
export function verifyCheckpoint(note: string | Uint8Array, policy: CheckpointPolicy): VerifiedCheckpoint {
  const logKeys = policy.logKeys.map(verifierOfKey);
  if (logKeys.length === 0) throw new TlogError('malformed_key', 'a checkpoint policy needs a log key');
  for (const k of logKeys) if (k.type !== SIG_ED25519) throw new TlogError('malformed_key', `the log key ${k.name} is not an Ed25519 (0x01) key`);
  const witnesses = (policy.witnesses ?? []).map(verifierOfKey);
  for (const w of witnesses) if (w.type !== SIG_COSIGNATURE_V1) throw new TlogError('malformed_key', `the witness key ${w.name} is not a cosignature/v1 (0x04) key`);
  const quorum = policy.quorum ?? 0;
  if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnesses.length) throw new TlogError('malformed_key', `a quorum of ${String(quorum)} out of ${witnesses.length} witnesses cannot be met`);

  let opened;
  try {
    opened = openNote(note, [...logKeys, ...witnesses]);
  } catch (e) {
    // a note signed only by witnesses still lacks the log's signature
    if (e instanceof TlogError && e.code === 'no_verified_signature') throw new TlogError('no_verified_signature', 'the checkpoint has no signature of the log key');
    throw e;
  }
  const logSignature = opened.verified.find((s) => logKeys.includes(s.verifier));
  if (logSignature === undefined) throw new TlogError('no_verified_signature', 'the checkpoint has no signature of the log key');
  const checkpoint = parseCheckpoint(opened.text);
  const origin = policy.origin ?? logSignature.verifier.name;
  if (checkpoint.origin !== origin) throw new TlogError('unknown_origin', 'the checkpoint is of another origin than the log key');
  const cosignatures = opened.verified.filter((s) => witnesses.includes(s.verifier));
  if (cosignatures.length < quorum) throw new TlogError('quorum_not_met', `${cosignatures.length} of the ${quorum} witness cosignatures required`);
  return { checkpoint, text: opened.text, logSignature, cosignatures };
}
