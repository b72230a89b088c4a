// HMAC-SHA256 (RFC 2104, FIPS 198-1) on the SHA-256 kernel.
//
// A key is turned once into two SHA-256 midstates: H after compressing
// (K ^ ipad) and H after compressing (K ^ opad), K being the key zero-padded to one
// block, or its SHA-256 when longer than a block. Every message under that key then
// costs the message blocks plus one outer block, never the key blocks again.
//
// Context layout (HMAC_CTX_SIZE = 168 bytes):
//   0    the inner SHA-256 streaming context (SHA256_CTX_SIZE bytes)
//   104  the inner midstate H(K ^ ipad)
//   136  the outer midstate H(K ^ opad)
import {
  SHA256_CTX_SIZE, sha256Blocks, sha256Digest, sha256Final, sha256InitState, sha256Tail,
  sha256Update, sha256WriteDigest,
} from './sha256';

export const HMAC_CTX_SIZE: usize = 168;
// @ts-ignore: decorator
@inline const INNER: usize = 104;
// @ts-ignore: decorator
@inline const OUTER: usize = 136;
// @ts-ignore: decorator
@inline const CTX_LEN: usize = 96;

// The padded key block, then the inner digest.
const BLOCK: usize = memory.data(64, 16);
const INNER_DIGEST: usize = memory.data(32, 16);

// The one-shot path keeps the midstates of the last key it saw (keys up to
// CACHED_KEY_MAX bytes), so signing many messages with one secret skips the key blocks.
// @ts-ignore: decorator
@inline const CACHED_KEY_MAX: usize = 256;
const ONESHOT_CTX: usize = memory.data(<i32>HMAC_CTX_SIZE, 16);
const CACHED_KEY: usize = memory.data(<i32>CACHED_KEY_MAX, 16);
let cachedKeyLen: isize = -1;

/** Whether the `len` bytes at `a` and `b` are equal (word at a time; memory.compare goes byte by byte). */
function sameBytes(a: usize, b: usize, len: usize): bool {
  let i: usize = 0;
  for (; i + 8 <= len; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  for (; i < len; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
  return true;
}

/** Derives the inner and outer midstates of the key at `key` into `ctx`. */
function setKey(ctx: usize, key: usize, keyLen: usize): void {
  if (keyLen > 64) {
    sha256Digest(key, keyLen, BLOCK);
    keyLen = 32;
  } else {
    memory.copy(BLOCK, key, keyLen);
  }
  memory.fill(BLOCK + keyLen, 0, 64 - keyLen);
  // K ^ ipad, then (K ^ ipad) ^ (ipad ^ opad) = K ^ opad
  for (let i: usize = 0; i < 64; i += 8) store<u64>(BLOCK + i, load<u64>(BLOCK + i) ^ 0x3636363636363636);
  sha256InitState(ctx + INNER);
  sha256Blocks(ctx + INNER, BLOCK, 1);
  for (let i: usize = 0; i < 64; i += 8) store<u64>(BLOCK + i, load<u64>(BLOCK + i) ^ 0x6a6a6a6a6a6a6a6a);
  sha256InitState(ctx + OUTER);
  sha256Blocks(ctx + OUTER, BLOCK, 1);
}

/** Starts a new message under the key already set in `ctx`. */
export function hmacSha256Reset(ctx: usize): void {
  memory.copy(ctx, ctx + INNER, 32);
  store<u64>(ctx + CTX_LEN, 64);
}

/** Sets the key (`keyLen` bytes at `key`, any length) of `ctx` and starts a message. */
export function hmacSha256Init(ctx: usize, key: usize, keyLen: usize): void {
  setKey(ctx, key, keyLen);
  hmacSha256Reset(ctx);
}

/** Adds `len` bytes at `p` to the message in `ctx`. */
export function hmacSha256Update(ctx: usize, p: usize, len: usize): void {
  sha256Update(ctx, p, len);
}

/** Finishes the message in `ctx`, writes the 32-byte MAC to `out`, and starts the next one. */
export function hmacSha256Final(ctx: usize, out: usize): void {
  sha256Final(ctx, INNER_DIGEST);
  // Outer hash: H(K ^ opad) continued over the 32-byte inner digest (96 bytes in all).
  memory.copy(ctx, ctx + OUTER, 32);
  sha256Tail(ctx, INNER_DIGEST, 32, 96);
  sha256WriteDigest(ctx, out);
  hmacSha256Reset(ctx);
}

/** The MAC of `len` bytes at `p` under the key of `ctx`, in one call. */
export function hmacSha256Mac(ctx: usize, p: usize, len: usize, out: usize): void {
  hmacSha256Reset(ctx);
  sha256Update(ctx, p, len);
  hmacSha256Final(ctx, out);
}

/** HMAC-SHA256 of `msgLen` bytes at `msg` under `keyLen` bytes at `key`, to `out`. */
export function hmacSha256Digest(key: usize, keyLen: usize, msg: usize, msgLen: usize, out: usize): void {
  const ctx = ONESHOT_CTX;
  if (<isize>keyLen != cachedKeyLen || !sameBytes(key, CACHED_KEY, keyLen)) {
    setKey(ctx, key, keyLen);
    if (keyLen <= CACHED_KEY_MAX) {
      memory.copy(CACHED_KEY, key, keyLen);
      cachedKeyLen = <isize>keyLen;
    } else {
      cachedKeyLen = -1;
    }
  }
  hmacSha256Mac(ctx, msg, msgLen, out);
}

/** The size of an HMAC context, for the host to allocate. */
export function hmacSha256ContextSize(): usize {
  return HMAC_CTX_SIZE;
}
