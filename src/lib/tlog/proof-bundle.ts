// Offline proofs (c2sp.org/tlog-proof@v1): a record's index, its inclusion proof and the
// signed checkpoint it is proven against, in one text file (`.tlog-proof`).
//
//   c2sp.org/tlog-proof@v1
//   [extra <base64>]
//   index <n>
//   <base64 hash>...        (leaf's sibling first, up to the root's child)
//   <blank line>
//   <the checkpoint, a signed note, verbatim>
import { verifyCheckpoint, parseCheckpoint, type CheckpointPolicy, type VerifiedCheckpoint } from './checkpoint.js';
import { TlogError } from './errors.js';
import { HASH_SIZE, decodeBase64, encodeBase64, leafHash, parseHash } from './hash.js';
import { proveInclusion, verifyInclusion, type HashReader } from './merkle.js';
import { parseNote } from './note.js';

export const PROOF_BUNDLE_HEADER = 'c2sp.org/tlog-proof@v1';
/** A tree below 2^63 leaves has at most 63 hashes on a leaf's path. */
const MAX_PROOF_HASHES = 63;

export interface ProofBundle {
  /** Opaque, unauthenticated extra data (never trust it implicitly). */
  readonly extra?: Uint8Array;
  readonly index: number;
  readonly proof: readonly Uint8Array[];
  /** The signed checkpoint note, verbatim. */
  readonly checkpoint: string;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

export function formatProofBundle(b: ProofBundle): string {
  if (!Number.isSafeInteger(b.index) || b.index < 0) throw new TlogError('malformed_proof_bundle', 'the index must be a non-negative integer');
  if (b.proof.length > MAX_PROOF_HASHES || b.proof.some((h) => h.length !== HASH_SIZE)) throw new TlogError('malformed_proof_bundle', 'the proof must be at most 63 hashes of 32 bytes');
  parseNote(b.checkpoint);
  const lines = [PROOF_BUNDLE_HEADER];
  if (b.extra !== undefined) lines.push(`extra ${encodeBase64(b.extra)}`);
  lines.push(`index ${b.index}`, ...b.proof.map(encodeBase64), '');
  return `${lines.join('\n')}\n${b.checkpoint}`;
}

export function parseProofBundle(text: string): ProofBundle {
  const bad = (why: string): never => {
    throw new TlogError('malformed_proof_bundle', `not a ${PROOF_BUNDLE_HEADER} proof (${why})`);
  };
  if (typeof text !== 'string') bad('not text');
  const blank = text.indexOf('\n\n');
  if (blank < 0) bad('no blank line before the checkpoint');
  const head = text.slice(0, blank).split('\n');
  const checkpoint = text.slice(blank + 2);
  let i = 0;
  if (head[i++] !== PROOF_BUNDLE_HEADER) bad('first line');
  let extra: Uint8Array | undefined;
  if (head[i]?.startsWith('extra ')) {
    const e = decodeBase64(head[i].slice(6));
    if (e === null) bad('extra is not base64');
    extra = e!;
    i++;
  }
  const indexLine = head[i++];
  if (indexLine === undefined || !indexLine.startsWith('index ') || !DECIMAL.test(indexLine.slice(6))) bad('index line');
  const index = Number(indexLine.slice(6));
  if (!Number.isSafeInteger(index)) bad('index above 2^53');
  const proofLines = head.slice(i);
  if (proofLines.length > MAX_PROOF_HASHES) bad('more than 63 proof hashes');
  const proof = proofLines.map((l) => {
    try {
      return parseHash(l, 'a proof hash');
    } catch {
      return bad('a proof line is not the base64 of 32 bytes');
    }
  });
  return extra === undefined ? { index, proof, checkpoint } : { extra, index, proof, checkpoint };
}

/** What a proof bundle proves. */
export interface VerifiedProofBundle {
  readonly index: number;
  readonly extra?: Uint8Array;
  readonly checkpoint: VerifiedCheckpoint;
}

/**
 * Verifies a tlog-proof (its "Verifying a tlog proof" steps): 1. the leaf hash, from the
 * entry (or given); 2. the checkpoint's origin and log signature; 3. the witnesses' k
 * of n; 4. the inclusion proof of the leaf at the index in the checkpoint's tree.
 * Throws a TlogError when any step fails.
 */
export function verifyProofBundle(text: string, leaf: { entry: Uint8Array } | { leafHash: Uint8Array }, policy: CheckpointPolicy): VerifiedProofBundle {
  const bundle = parseProofBundle(text);
  const hash = 'entry' in leaf ? leafHash(leaf.entry) : leaf.leafHash;
  const checkpoint = verifyCheckpoint(bundle.checkpoint, policy);
  verifyInclusion(hash, bundle.index, checkpoint.checkpoint.size, bundle.proof, checkpoint.checkpoint.rootHash);
  return bundle.extra === undefined ? { index: bundle.index, checkpoint } : { index: bundle.index, extra: bundle.extra, checkpoint };
}

/**
 * The proof bundle of the entry at `index` against the signed checkpoint `checkpoint`
 * (its tree size taken from it), with the inclusion proof read through `reader` (a
 * tileHashReader over the stored tiles, say).
 */
export async function buildProofBundle(args: { index: number; checkpoint: string; reader: HashReader; extra?: Uint8Array }): Promise<string> {
  const { size } = parseCheckpoint(parseNote(args.checkpoint).text);
  const proof = await proveInclusion(size, args.index, args.reader);
  return formatProofBundle({ index: args.index, proof, checkpoint: args.checkpoint, ...(args.extra === undefined ? {} : { extra: args.extra }) });
}
