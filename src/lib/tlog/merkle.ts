// Merkle inclusion and consistency proofs of RFC 9162 section 2.1: verification exactly
// as 2.1.3.2 and 2.1.4.2 write it, and production (2.1.3.1 PATH, 2.1.4.1 SUBPROOF) over
// a reader of complete-subtree hashes, so that a server can answer from the tiles it
// stores (tileHashReader in tiles.ts) without holding the tree in memory.
//
// Sizes and indexes are JavaScript numbers: any safe integer (below 2^53) is a valid
// tree size; anything else is refused, never rounded.
import { TlogError } from './errors.js';
import { EMPTY_ROOT, HASH_SIZE, hashEqual, nodeHash } from './hash.js';

/** A complete (perfect) subtree: the 2^level leaves from index * 2^level on. */
export interface SubtreeCoord {
  readonly level: number;
  readonly index: number;
}

/**
 * Reads the hashes of complete subtrees, in the order asked. Batched so that a reader
 * backed by a store or the network fetches what one proof needs in one go.
 */
export interface HashReader {
  readHashes(coords: readonly SubtreeCoord[]): Promise<Uint8Array[]> | Uint8Array[];
}

function checkSize(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new TlogError('bad_index', `${what} must be a non-negative integer below 2^53, got ${String(n)}`);
}

function checkProofHashes(proof: readonly Uint8Array[]): void {
  for (const p of proof) {
    if (!(p instanceof Uint8Array) || p.length !== HASH_SIZE) throw new TlogError('malformed_hash', 'a proof hash is not 32 bytes');
  }
}

const half = (n: number): number => Math.floor(n / 2);
const odd = (n: number): boolean => n % 2 === 1;

/**
 * Checks an inclusion proof (RFC 9162 2.1.3.2): that the leaf with hash `leaf` is at
 * `index` in the tree of size `treeSize` whose root is `root`. Throws a TlogError
 * (inclusion_failed, bad_index or malformed_hash) when it is not proven.
 */
export function verifyInclusion(leaf: Uint8Array, index: number, treeSize: number, proof: readonly Uint8Array[], root: Uint8Array): void {
  checkSize(index, 'the leaf index');
  checkSize(treeSize, 'the tree size');
  checkProofHashes(proof);
  if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_SIZE) throw new TlogError('malformed_hash', 'the leaf hash is not 32 bytes');
  // 1. leaf_index must be below tree_size
  if (index >= treeSize) throw new TlogError('inclusion_failed', `leaf index ${index} is not below the tree size ${treeSize}`);
  // 2., 3.
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  // 4.
  for (const p of proof) {
    if (sn === 0) throw new TlogError('inclusion_failed', 'the inclusion proof is longer than the path to the root');
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // 5.
  if (sn !== 0) throw new TlogError('inclusion_failed', 'the inclusion proof is shorter than the path to the root');
  if (!hashEqual(r, root)) throw new TlogError('inclusion_failed', 'the inclusion proof leads to another root');
}

/**
 * Checks a consistency proof (RFC 9162 2.1.4.2): that the tree of size `size1` and root
 * `root1` is a prefix of the tree of size `size2` and root `root2`. Equal sizes need an
 * empty proof and equal roots (the empty tree's root being SHA-256 of nothing). A
 * proof from the empty tree proves nothing and is refused: a caller that accepts any
 * tree after an empty one (a witness at old size 0) decides that itself. Throws a
 * TlogError (consistency_failed, bad_index or malformed_hash) when not proven.
 */
export function verifyConsistency(size1: number, size2: number, proof: readonly Uint8Array[], root1: Uint8Array, root2: Uint8Array): void {
  checkSize(size1, 'the old tree size');
  checkSize(size2, 'the new tree size');
  checkProofHashes(proof);
  if (size2 < size1) throw new TlogError('consistency_failed', `the new tree size ${size2} is below the old ${size1}`);
  if (size1 === size2) {
    if (proof.length !== 0) throw new TlogError('consistency_failed', 'equal tree sizes need an empty proof');
    if (size1 === 0 && !hashEqual(root1, EMPTY_ROOT)) throw new TlogError('consistency_failed', 'the empty tree has another root');
    if (!hashEqual(root1, root2)) throw new TlogError('consistency_failed', 'equal tree sizes with different roots');
    return;
  }
  if (size1 === 0) throw new TlogError('consistency_failed', 'a consistency proof from the empty tree proves nothing');
  // 1.
  if (proof.length === 0) throw new TlogError('consistency_failed', 'the consistency proof is empty');
  // 2. a power-of-two first tree is itself a node of the second: its root starts the path
  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  // 3.
  let fn = size1 - 1;
  let sn = size2 - 1;
  // 4.
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // 5.
  let fr = path[0];
  let sr = path[0];
  if (fr.length !== HASH_SIZE) throw new TlogError('consistency_failed', 'the old root is not 32 bytes');
  // 6.
  for (let i = 1; i < path.length; i++) {
    const c = path[i];
    if (sn === 0) throw new TlogError('consistency_failed', 'the consistency proof is too long');
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // 7.
  if (sn !== 0) throw new TlogError('consistency_failed', 'the consistency proof is too short');
  if (!hashEqual(fr, root1)) throw new TlogError('consistency_failed', 'the consistency proof does not lead to the old root');
  if (!hashEqual(sr, root2)) throw new TlogError('consistency_failed', 'the consistency proof does not lead to the new root');
}

function isPowerOfTwo(n: number): boolean {
  if (n < 1) return false;
  while (n % 2 === 0) n /= 2;
  return n === 1;
}

/** The largest power of two below n (n >= 2): RFC 9162's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A range [lo, hi) of leaves whose Merkle Tree Hash a proof holds. */
interface Range { lo: number; hi: number }

/**
 * The complete subtrees whose hashes make MTH(D[lo:hi]), left to right. In every range a
 * proof names, lo is a multiple of the largest power of two not above hi - lo, so the
 * pieces follow the binary digits of hi - lo, largest first (the RFC's right-leaning split).
 */
export function rangeSubtrees(lo: number, hi: number): SubtreeCoord[] {
  const out: SubtreeCoord[] = [];
  let size = 1;
  let level = 0;
  while (size * 2 <= hi - lo) {
    size *= 2;
    level++;
  }
  while (lo < hi) {
    if (lo + size <= hi) {
      out.push({ level, index: lo / size });
      lo += size;
    }
    size /= 2;
    level--;
  }
  return out;
}

/** MTH of a range from the hashes of its complete subtrees (rangeSubtrees order). */
function foldRange(hashes: Uint8Array[]): Uint8Array {
  let h = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) h = nodeHash(hashes[i], h);
  return h;
}

/** Reads the hashes of `ranges` (each a Merkle Tree Hash) in one batch. */
async function readRanges(ranges: Range[], reader: HashReader): Promise<Uint8Array[]> {
  const pieces = ranges.map((r) => rangeSubtrees(r.lo, r.hi));
  const coords = pieces.flat();
  const hashes = coords.length === 0 ? [] : await reader.readHashes(coords);
  if (hashes.length !== coords.length) throw new TlogError('missing_hash', `the hash reader answered ${hashes.length} hashes for ${coords.length}`);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of pieces) {
    const part = hashes.slice(at, at + p.length);
    for (const h of part) if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE) throw new TlogError('missing_hash', 'the hash reader answered a hash that is not 32 bytes');
    out.push(foldRange(part));
    at += p.length;
  }
  return out;
}

/** RFC 9162 2.1.3.1 PATH(m, D[lo:hi]) as the ranges whose hashes it lists, leaf upwards. */
function inclusionRanges(m: number, lo: number, hi: number, out: Range[]): void {
  const n = hi - lo;
  if (n === 1) return;
  const k = splitPoint(n);
  if (m < k) {
    inclusionRanges(m, lo, lo + k, out);
    out.push({ lo: lo + k, hi });
  } else {
    inclusionRanges(m - k, lo + k, hi, out);
    out.push({ lo, hi: lo + k });
  }
}

/** RFC 9162 2.1.4.1 SUBPROOF(m, D[lo:hi], b) as ranges. */
function consistencyRanges(m: number, lo: number, hi: number, b: boolean, out: Range[]): void {
  const n = hi - lo;
  if (m === n) {
    if (!b) out.push({ lo, hi });
    return;
  }
  const k = splitPoint(n);
  if (m <= k) {
    consistencyRanges(m, lo, lo + k, b, out);
    out.push({ lo: lo + k, hi });
  } else {
    consistencyRanges(m - k, lo + k, hi, false, out);
    out.push({ lo, hi: lo + k });
  }
}

/** The inclusion proof of the leaf at `index` in the tree of size `treeSize` (RFC 9162 2.1.3.1). */
export async function proveInclusion(treeSize: number, index: number, reader: HashReader): Promise<Uint8Array[]> {
  checkSize(treeSize, 'the tree size');
  checkSize(index, 'the leaf index');
  if (index >= treeSize) throw new TlogError('bad_index', `leaf index ${index} is not below the tree size ${treeSize}`);
  const ranges: Range[] = [];
  inclusionRanges(index, 0, treeSize, ranges);
  return readRanges(ranges, reader);
}

/**
 * The consistency proof from the tree of size `size1` to the one of size `size2`
 * (RFC 9162 2.1.4.1); empty when the sizes are equal or size1 is 0.
 */
export async function proveConsistency(size1: number, size2: number, reader: HashReader): Promise<Uint8Array[]> {
  checkSize(size1, 'the old tree size');
  checkSize(size2, 'the new tree size');
  if (size1 > size2) throw new TlogError('bad_index', `the old tree size ${size1} is above the new ${size2}`);
  if (size1 === 0 || size1 === size2) return [];
  const ranges: Range[] = [];
  consistencyRanges(size1, 0, size2, true, ranges);
  return readRanges(ranges, reader);
}

/** The root hash of the tree of size `treeSize` (EMPTY_ROOT for 0). */
export async function treeHash(treeSize: number, reader: HashReader): Promise<Uint8Array> {
  checkSize(treeSize, 'the tree size');
  if (treeSize === 0) return EMPTY_ROOT.slice();
  return (await readRanges([{ lo: 0, hi: treeSize }], reader))[0];
}
