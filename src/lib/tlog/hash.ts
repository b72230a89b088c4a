// RFC 9162 section 2.1 hashing over our SHA-256 kernel (src/lib/sha256.ts): leaf hash
// SHA-256(0x00 || entry), node hash SHA-256(0x01 || left || right), the empty tree's
// hash SHA-256(""). The node hashes of a whole perfect subtree (a tile's 256 hashes)
// are reduced inside the kernel's memory: each pair is laid out as 0x01 || left ||
// right and its digest is written straight into its parent's slot, so a tile costs 255
// kernel calls and no JavaScript allocation.
import { base64 } from '@scure/base';
import { createSha256, hashIo, mem, SLICE } from '../sha256.js';
import { TlogError } from './errors.js';

export const HASH_SIZE = 32;

/** SHA-256 of the empty string: the root of the empty tree (RFC 9162 2.1.1). */
export const EMPTY_ROOT: Uint8Array = Uint8Array.from([
  0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
  0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
]);

/** The RFC 9162 leaf hash of an entry: SHA-256(0x00 || entry). */
export function leafHash(entry: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  leafHashInto(entry, out, 0);
  return out;
}

/** leafHash(entry) written to target[offset..offset+32], allocating nothing for entries below 64 KiB. */
export function leafHashInto(entry: Uint8Array, target: Uint8Array, offset: number): void {
  if (entry.length + 1 > SLICE) {
    target.set(createSha256().update(new Uint8Array([0])).update(entry).digest(), offset);
    return;
  }
  const k = hashIo();
  const u8 = mem(k);
  u8[k.input] = 0;
  u8.set(entry, k.input + 1);
  k.ex.sha256Digest(k.input, entry.length + 1, k.out);
  target.set(mem(k).subarray(k.out, k.out + 32), offset);
}

/** The RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  const k = hashIo();
  const u8 = mem(k);
  u8[k.input] = 1;
  u8.set(left, k.input + 1);
  u8.set(right, k.input + 33);
  k.ex.sha256Digest(k.input, 65, k.out);
  return mem(k).slice(k.out, k.out + 32);
}

/**
 * The Merkle Tree Hash of `count` consecutive hashes of `hashes` starting at hash
 * `first`, where `count` is a power of two of at most 256: the root of the perfect
 * subtree they are the leaves of.
 */
export function perfectRoot(hashes: Uint8Array, first: number, count: number): Uint8Array {
  if (!(count >= 1 && count <= 256 && (count & (count - 1)) === 0) || !Number.isInteger(first) || first < 0 || (first + count) * 32 > hashes.length) {
    throw new TlogError('malformed_hash', `perfectRoot needs a power of two of at most 256 hashes inside the input, got ${count} from ${first}`);
  }
  if (count === 1) return hashes.slice(first * 32, first * 32 + 32);
  const k = hashIo();
  let u8 = mem(k);
  // level 0: count/2 slots of 65 bytes; each later level follows the one before
  let base = k.input;
  let pairs = count >>> 1;
  for (let p = 0; p < pairs; p++) {
    const slot = base + 65 * p;
    u8[slot] = 1;
    u8.set(hashes.subarray((first + 2 * p) * 32, (first + 2 * p + 2) * 32), slot + 1);
  }
  const ex = k.ex;
  while (pairs > 1) {
    const next = base + 65 * pairs;
    const nextPairs = pairs >>> 1;
    for (let p = 0; p < nextPairs; p++) u8[next + 65 * p] = 1;
    for (let p = 0; p < pairs; p++) ex.sha256Digest(base + 65 * p, 65, next + 65 * (p >>> 1) + 1 + 32 * (p & 1));
    base = next;
    pairs = nextPairs;
    u8 = mem(k);
  }
  ex.sha256Digest(base, 65, k.out);
  return mem(k).slice(k.out, k.out + 32);
}

/** Whether two hashes are equal, in time that depends on their length only. */
export function hashEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

/** Standard base64 (RFC 4648 section 4) of bytes. */
export function encodeBase64(bytes: Uint8Array): string {
  return base64.encode(bytes);
}

/** Decodes standard base64, strictly (padding, no stray bits); null when malformed. */
export function decodeBase64(text: string): Uint8Array | null {
  try {
    return base64.decode(text);
  } catch {
    return null;
  }
}

/** A 32-byte hash from its base64, or a malformed_hash TlogError naming `what`. */
export function parseHash(text: string, what = 'hash'): Uint8Array {
  const bytes = decodeBase64(text);
  if (bytes === null || bytes.length !== HASH_SIZE) throw new TlogError('malformed_hash', `${what} is not the base64 of 32 bytes`);
  return bytes;
}
