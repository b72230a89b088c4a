// BLAKE3 (the BLAKE3 specification, O'Connor, Aumasson, Neves, Wilcox-O'Hearn, 2021):
// the unkeyed hash with its default 32-byte output, as the ISCC Instance-Code uses it
// (ISO 24138, iscc-core code_instance.py). A streaming context at a pointer, and a
// one-shot digest; no allocation: contexts live in blocks the host owns (from `alloc`),
// the one-shot path uses a static one.
//
// Input is cut into 1024-byte chunks, each hashed as a chain of 64-byte blocks; chunk
// chaining values are merged pairwise into a binary tree whose root is compressed with
// the ROOT flag. A chunk (or a parent) is merged only once more input is known to
// follow it, so nothing compressed early can turn out to have been the root: the
// stack then holds one chaining value per set bit of the number of chunks so far
// (spec section 5.1.2, "add_chunk_chaining_value").
//
// The scalar build keeps the sixteen state words and sixteen message words in locals,
// each of the seven rounds unrolled (one G per line). The SIMD build compresses four
// whole chunks at once, one per i32x4 lane (the message words transposed so lane j
// holds chunk j's word: the G functions then need no shuffles), and single blocks
// (a partial chunk, parents, the root) with the state as four row vectors, the
// diagonal step by lane rotations. Round bodies are generated; the script is in
// docs/iscc.md.
//
// Context layout (BLAKE3_CTX_SIZE bytes):
//   0    the current chunk's chaining value (8 x u32)
//   32   the chunk's partial block (64 bytes)
//   96   bytes in that block (u32)
//   100  blocks of the chunk already compressed (u32)
//   104  chunks finished before the current one (u64): the current chunk's counter
//   112  chaining values on the stack (u32)
//   128  the stack: 54 entries (2^54 chunks are 2^64 bytes), and one slot more where a
//        merge puts the right child next to the left one to compress them as one block

// @ts-ignore: decorator
@inline const CTX_CV: usize = 0;
// @ts-ignore: decorator
@inline const CTX_BUF: usize = 32;
// @ts-ignore: decorator
@inline const CTX_BUF_LEN: usize = 96;
// @ts-ignore: decorator
@inline const CTX_BLOCKS: usize = 100;
// @ts-ignore: decorator
@inline const CTX_CHUNKS: usize = 104;
// @ts-ignore: decorator
@inline const CTX_STACK_LEN: usize = 112;
// @ts-ignore: decorator
@inline const CTX_STACK: usize = 128;
export const BLAKE3_CTX_SIZE: usize = CTX_STACK + 55 * 32;

// @ts-ignore: decorator
@inline const CHUNK_LEN: usize = 1024;
// @ts-ignore: decorator
@inline const CHUNK_START: u32 = 1;
// @ts-ignore: decorator
@inline const CHUNK_END: u32 = 2;
// @ts-ignore: decorator
@inline const PARENT: u32 = 4;
// @ts-ignore: decorator
@inline const ROOT: u32 = 8;

// The IV (the SHA-256 initial hash value, spec section 2.2), also the key of the unkeyed hash.
// @ts-ignore: decorator
@inline const IV0: u32 = 0x6a09e667;
// @ts-ignore: decorator
@inline const IV1: u32 = 0xbb67ae85;
// @ts-ignore: decorator
@inline const IV2: u32 = 0x3c6ef372;
// @ts-ignore: decorator
@inline const IV3: u32 = 0xa54ff53a;
// @ts-ignore: decorator
@inline const IV4: u32 = 0x510e527f;
// @ts-ignore: decorator
@inline const IV5: u32 = 0x9b05688c;
// @ts-ignore: decorator
@inline const IV6: u32 = 0x1f83d9ab;
// @ts-ignore: decorator
@inline const IV7: u32 = 0x5be0cd19;

const IV: usize = memory.data<u32>([IV0, IV1, IV2, IV3, IV4, IV5, IV6, IV7], 16);
/** A chaining value on its way to the stack. */
const CV: usize = memory.data(32, 16);
/** The four chaining values of a four-chunk group (SIMD build). */
const CV4: usize = memory.data(128, 16);
const ONESHOT: usize = memory.data(<i32>BLAKE3_CTX_SIZE, 16);

// @ts-ignore: decorator
@inline function rot16(x: v128): v128 { return i8x16.shuffle(x, x, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13); }
// @ts-ignore: decorator
@inline function rot12(x: v128): v128 { return v128.or(i32x4.shr_u(x, 12), i32x4.shl(x, 20)); }
// @ts-ignore: decorator
@inline function rot8(x: v128): v128 { return i8x16.shuffle(x, x, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12); }
// @ts-ignore: decorator
@inline function rot7(x: v128): v128 { return v128.or(i32x4.shr_u(x, 7), i32x4.shl(x, 25)); }

/** Message words at byte offsets a, b, c, d of the block at p, as one vector. */
// @ts-ignore: decorator
@inline function msg(p: usize, a: usize, b: usize, c: usize, d: usize): v128 {
  return v128.load32_lane(p + d, v128.load32_lane(p + c, v128.load32_lane(p + b, v128.load32_zero(p + a), 1), 2), 3);
}

/**
 * The compression function (spec section 2.2) of the 64-byte block at `p` under the
 * chaining value at `cv`, truncated to the 8-word chaining value written to `out`
 * (which may be `cv`).
 */
function compress(cv: usize, p: usize, counter: u64, blockLen: u32, flags: u32, out: usize): void {
  if (ASC_FEATURE_SIMD) {
    let r0 = v128.load(cv);
    let r1 = v128.load(cv, 16);
    let r2 = v128.load(IV);
    let r3 = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(<i32>counter), 1, <i32>(counter >>> 32)), 2, blockLen), 3, flags);
    // round 0
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 0, 8, 16, 24)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 4, 12, 20, 28)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 32, 40, 48, 56)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 36, 44, 52, 60)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 1
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 8, 12, 28, 16)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 24, 40, 0, 52)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 4, 48, 36, 60)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 44, 20, 56, 32)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 2
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 12, 40, 52, 28)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 16, 48, 8, 56)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 24, 36, 44, 32)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 20, 0, 60, 4)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 3
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 40, 48, 56, 52)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 28, 36, 12, 60)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 16, 44, 20, 4)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 0, 8, 32, 24)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 4
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 48, 36, 60, 56)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 52, 44, 40, 32)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 28, 20, 0, 24)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 8, 12, 4, 16)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 5
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 36, 44, 32, 60)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 56, 20, 48, 4)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 52, 0, 8, 16)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 12, 40, 24, 28)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    // round 6
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 44, 20, 4, 32)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 60, 0, 36, 24)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 1, 2, 3, 0); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 3, 0, 1, 2);
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 56, 8, 12, 28)); r3 = rot16(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot12(v128.xor(r1, r2));
    r0 = i32x4.add(i32x4.add(r0, r1), msg(p, 40, 48, 16, 52)); r3 = rot8(v128.xor(r3, r0)); r2 = i32x4.add(r2, r3); r1 = rot7(v128.xor(r1, r2));
    r1 = i32x4.shuffle(r1, r1, 3, 0, 1, 2); r2 = i32x4.shuffle(r2, r2, 2, 3, 0, 1); r3 = i32x4.shuffle(r3, r3, 1, 2, 3, 0);
    v128.store(out, v128.xor(r0, r2));
    v128.store(out, v128.xor(r1, r3), 16);
    return;
  }
  let v0 = load<u32>(cv, 0), v1 = load<u32>(cv, 4), v2 = load<u32>(cv, 8), v3 = load<u32>(cv, 12);
  let v4 = load<u32>(cv, 16), v5 = load<u32>(cv, 20), v6 = load<u32>(cv, 24), v7 = load<u32>(cv, 28);
  let v8 = IV0, v9 = IV1, v10 = IV2, v11 = IV3;
  let v12 = <u32>counter, v13 = <u32>(counter >>> 32), v14 = blockLen, v15 = flags;
  const m0 = load<u32>(p, 0), m1 = load<u32>(p, 4), m2 = load<u32>(p, 8), m3 = load<u32>(p, 12);
  const m4 = load<u32>(p, 16), m5 = load<u32>(p, 20), m6 = load<u32>(p, 24), m7 = load<u32>(p, 28);
  const m8 = load<u32>(p, 32), m9 = load<u32>(p, 36), m10 = load<u32>(p, 40), m11 = load<u32>(p, 44);
  const m12 = load<u32>(p, 48), m13 = load<u32>(p, 52), m14 = load<u32>(p, 56), m15 = load<u32>(p, 60);
  v0 += v4 + m0; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m1; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m2; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m3; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m4; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m5; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m6; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m7; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m8; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m9; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m10; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m11; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m12; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m13; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m14; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m15; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m2; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m6; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m3; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m10; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m7; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m0; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m4; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m13; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m1; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m11; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m12; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m5; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m9; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m14; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m15; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m8; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m3; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m4; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m10; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m12; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m13; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m2; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m7; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m14; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m6; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m5; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m9; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m0; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m11; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m15; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m8; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m1; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m10; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m7; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m12; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m9; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m14; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m3; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m13; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m15; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m4; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m0; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m11; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m2; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m5; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m8; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m1; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m6; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m12; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m13; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m9; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m11; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m15; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m10; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m14; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m8; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m7; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m2; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m5; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m3; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m0; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m1; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m6; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m4; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m9; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m14; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m11; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m5; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m8; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m12; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m15; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m1; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m13; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m3; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m0; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m10; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m2; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m6; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m4; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m7; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  v0 += v4 + m11; v12 = rotr<u32>(v12 ^ v0, 16); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 12); v0 += v4 + m15; v12 = rotr<u32>(v12 ^ v0, 8); v8 += v12; v4 = rotr<u32>(v4 ^ v8, 7);
  v1 += v5 + m5; v13 = rotr<u32>(v13 ^ v1, 16); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 12); v1 += v5 + m0; v13 = rotr<u32>(v13 ^ v1, 8); v9 += v13; v5 = rotr<u32>(v5 ^ v9, 7);
  v2 += v6 + m1; v14 = rotr<u32>(v14 ^ v2, 16); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 12); v2 += v6 + m9; v14 = rotr<u32>(v14 ^ v2, 8); v10 += v14; v6 = rotr<u32>(v6 ^ v10, 7);
  v3 += v7 + m8; v15 = rotr<u32>(v15 ^ v3, 16); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 12); v3 += v7 + m6; v15 = rotr<u32>(v15 ^ v3, 8); v11 += v15; v7 = rotr<u32>(v7 ^ v11, 7);
  v0 += v5 + m14; v15 = rotr<u32>(v15 ^ v0, 16); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 12); v0 += v5 + m10; v15 = rotr<u32>(v15 ^ v0, 8); v10 += v15; v5 = rotr<u32>(v5 ^ v10, 7);
  v1 += v6 + m2; v12 = rotr<u32>(v12 ^ v1, 16); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 12); v1 += v6 + m12; v12 = rotr<u32>(v12 ^ v1, 8); v11 += v12; v6 = rotr<u32>(v6 ^ v11, 7);
  v2 += v7 + m3; v13 = rotr<u32>(v13 ^ v2, 16); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 12); v2 += v7 + m4; v13 = rotr<u32>(v13 ^ v2, 8); v8 += v13; v7 = rotr<u32>(v7 ^ v8, 7);
  v3 += v4 + m7; v14 = rotr<u32>(v14 ^ v3, 16); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 12); v3 += v4 + m13; v14 = rotr<u32>(v14 ^ v3, 8); v9 += v14; v4 = rotr<u32>(v4 ^ v9, 7);
  store<u32>(out, v0 ^ v8, 0);
  store<u32>(out, v1 ^ v9, 4);
  store<u32>(out, v2 ^ v10, 8);
  store<u32>(out, v3 ^ v11, 12);
  store<u32>(out, v4 ^ v12, 16);
  store<u32>(out, v5 ^ v13, 20);
  store<u32>(out, v6 ^ v14, 24);
  store<u32>(out, v7 ^ v15, 28);
}

/**
 * Four inputs of `blocks` blocks each at p0..p3, hashed in parallel (SIMD build only):
 * input j has counter `counter + j * step`; every block has `flags`, the first also
 * `flagsStart`, the last also `flagsEnd`. Writes the four chaining values to `out`
 * (32 bytes each, in input order). Chunks: 16 blocks, step 1, CHUNK_START/CHUNK_END.
 */
function hash4(p0: usize, p1: usize, p2: usize, p3: usize, blocks: u32, counter: u64, step: u64, flags: u32, flagsStart: u32, flagsEnd: u32, out: usize): void {
  let h0 = i32x4.splat(IV0), h1 = i32x4.splat(IV1), h2 = i32x4.splat(IV2), h3 = i32x4.splat(IV3);
  let h4 = i32x4.splat(IV4), h5 = i32x4.splat(IV5), h6 = i32x4.splat(IV6), h7 = i32x4.splat(IV7);
  const c1 = counter + step, c2 = c1 + step, c3 = c2 + step;
  const ctrLo = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(<i32>counter), 1, <i32>c1), 2, <i32>c2), 3, <i32>c3);
  const ctrHi = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(<i32>(counter >>> 32)), 1, <i32>(c1 >>> 32)), 2, <i32>(c2 >>> 32)), 3, <i32>(c3 >>> 32));
  let a: v128, b: v128, c: v128, d: v128, t0: v128, t1: v128, t2: v128, t3: v128;
  let m0: v128, m1: v128, m2: v128, m3: v128, m4: v128, m5: v128, m6: v128, m7: v128;
  let m8: v128, m9: v128, m10: v128, m11: v128, m12: v128, m13: v128, m14: v128, m15: v128;
  for (let i: u32 = 0; i < blocks; i++) {
    a = v128.load(p0, 0); b = v128.load(p1, 0); c = v128.load(p2, 0); d = v128.load(p3, 0);
    t0 = i32x4.shuffle(a, b, 0, 4, 1, 5); t1 = i32x4.shuffle(a, b, 2, 6, 3, 7); t2 = i32x4.shuffle(c, d, 0, 4, 1, 5); t3 = i32x4.shuffle(c, d, 2, 6, 3, 7);
    m0 = i64x2.shuffle(t0, t2, 0, 2); m1 = i64x2.shuffle(t0, t2, 1, 3); m2 = i64x2.shuffle(t1, t3, 0, 2); m3 = i64x2.shuffle(t1, t3, 1, 3);
    a = v128.load(p0, 16); b = v128.load(p1, 16); c = v128.load(p2, 16); d = v128.load(p3, 16);
    t0 = i32x4.shuffle(a, b, 0, 4, 1, 5); t1 = i32x4.shuffle(a, b, 2, 6, 3, 7); t2 = i32x4.shuffle(c, d, 0, 4, 1, 5); t3 = i32x4.shuffle(c, d, 2, 6, 3, 7);
    m4 = i64x2.shuffle(t0, t2, 0, 2); m5 = i64x2.shuffle(t0, t2, 1, 3); m6 = i64x2.shuffle(t1, t3, 0, 2); m7 = i64x2.shuffle(t1, t3, 1, 3);
    a = v128.load(p0, 32); b = v128.load(p1, 32); c = v128.load(p2, 32); d = v128.load(p3, 32);
    t0 = i32x4.shuffle(a, b, 0, 4, 1, 5); t1 = i32x4.shuffle(a, b, 2, 6, 3, 7); t2 = i32x4.shuffle(c, d, 0, 4, 1, 5); t3 = i32x4.shuffle(c, d, 2, 6, 3, 7);
    m8 = i64x2.shuffle(t0, t2, 0, 2); m9 = i64x2.shuffle(t0, t2, 1, 3); m10 = i64x2.shuffle(t1, t3, 0, 2); m11 = i64x2.shuffle(t1, t3, 1, 3);
    a = v128.load(p0, 48); b = v128.load(p1, 48); c = v128.load(p2, 48); d = v128.load(p3, 48);
    t0 = i32x4.shuffle(a, b, 0, 4, 1, 5); t1 = i32x4.shuffle(a, b, 2, 6, 3, 7); t2 = i32x4.shuffle(c, d, 0, 4, 1, 5); t3 = i32x4.shuffle(c, d, 2, 6, 3, 7);
    m12 = i64x2.shuffle(t0, t2, 0, 2); m13 = i64x2.shuffle(t0, t2, 1, 3); m14 = i64x2.shuffle(t1, t3, 0, 2); m15 = i64x2.shuffle(t1, t3, 1, 3);
    let f = flags;
    if (i == 0) f |= flagsStart;
    if (i == blocks - 1) f |= flagsEnd;
    let v0 = h0, v1 = h1, v2 = h2, v3 = h3, v4 = h4, v5 = h5, v6 = h6, v7 = h7;
    let v8 = i32x4.splat(IV0), v9 = i32x4.splat(IV1), v10 = i32x4.splat(IV2), v11 = i32x4.splat(IV3);
    let v12 = ctrLo, v13 = ctrHi, v14 = i32x4.splat(64), v15 = i32x4.splat(f);
    v0 = i32x4.add(i32x4.add(v0, v4), m0); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m1); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m2); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m3); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m4); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m5); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m6); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m7); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m8); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m9); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m10); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m11); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m12); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m13); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m14); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m15); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m2); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m6); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m3); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m10); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m7); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m0); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m4); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m13); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m1); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m11); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m12); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m5); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m9); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m14); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m15); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m8); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m3); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m4); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m10); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m12); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m13); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m2); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m7); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m14); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m6); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m5); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m9); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m0); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m11); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m15); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m8); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m1); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m10); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m7); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m12); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m9); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m14); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m3); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m13); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m15); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m4); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m0); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m11); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m2); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m5); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m8); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m1); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m6); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m12); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m13); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m9); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m11); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m15); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m10); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m14); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m8); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m7); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m2); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m5); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m3); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m0); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m1); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m6); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m4); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m9); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m14); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m11); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m5); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m8); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m12); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m15); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m1); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m13); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m3); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m0); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m10); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m2); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m6); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m4); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m7); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    v0 = i32x4.add(i32x4.add(v0, v4), m11); v12 = rot16(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot12(v128.xor(v4, v8)); v0 = i32x4.add(i32x4.add(v0, v4), m15); v12 = rot8(v128.xor(v12, v0)); v8 = i32x4.add(v8, v12); v4 = rot7(v128.xor(v4, v8));
    v1 = i32x4.add(i32x4.add(v1, v5), m5); v13 = rot16(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot12(v128.xor(v5, v9)); v1 = i32x4.add(i32x4.add(v1, v5), m0); v13 = rot8(v128.xor(v13, v1)); v9 = i32x4.add(v9, v13); v5 = rot7(v128.xor(v5, v9));
    v2 = i32x4.add(i32x4.add(v2, v6), m1); v14 = rot16(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot12(v128.xor(v6, v10)); v2 = i32x4.add(i32x4.add(v2, v6), m9); v14 = rot8(v128.xor(v14, v2)); v10 = i32x4.add(v10, v14); v6 = rot7(v128.xor(v6, v10));
    v3 = i32x4.add(i32x4.add(v3, v7), m8); v15 = rot16(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot12(v128.xor(v7, v11)); v3 = i32x4.add(i32x4.add(v3, v7), m6); v15 = rot8(v128.xor(v15, v3)); v11 = i32x4.add(v11, v15); v7 = rot7(v128.xor(v7, v11));
    v0 = i32x4.add(i32x4.add(v0, v5), m14); v15 = rot16(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot12(v128.xor(v5, v10)); v0 = i32x4.add(i32x4.add(v0, v5), m10); v15 = rot8(v128.xor(v15, v0)); v10 = i32x4.add(v10, v15); v5 = rot7(v128.xor(v5, v10));
    v1 = i32x4.add(i32x4.add(v1, v6), m2); v12 = rot16(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot12(v128.xor(v6, v11)); v1 = i32x4.add(i32x4.add(v1, v6), m12); v12 = rot8(v128.xor(v12, v1)); v11 = i32x4.add(v11, v12); v6 = rot7(v128.xor(v6, v11));
    v2 = i32x4.add(i32x4.add(v2, v7), m3); v13 = rot16(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot12(v128.xor(v7, v8)); v2 = i32x4.add(i32x4.add(v2, v7), m4); v13 = rot8(v128.xor(v13, v2)); v8 = i32x4.add(v8, v13); v7 = rot7(v128.xor(v7, v8));
    v3 = i32x4.add(i32x4.add(v3, v4), m7); v14 = rot16(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot12(v128.xor(v4, v9)); v3 = i32x4.add(i32x4.add(v3, v4), m13); v14 = rot8(v128.xor(v14, v3)); v9 = i32x4.add(v9, v14); v4 = rot7(v128.xor(v4, v9));
    h0 = v128.xor(v0, v8); h1 = v128.xor(v1, v9); h2 = v128.xor(v2, v10); h3 = v128.xor(v3, v11);
    h4 = v128.xor(v4, v12); h5 = v128.xor(v5, v13); h6 = v128.xor(v6, v14); h7 = v128.xor(v7, v15);
    p0 += 64; p1 += 64; p2 += 64; p3 += 64;
  }
  // back to one chaining value per input: the same 4 x 4 transposition, twice
  t0 = i32x4.shuffle(h0, h1, 0, 4, 1, 5); t1 = i32x4.shuffle(h0, h1, 2, 6, 3, 7); t2 = i32x4.shuffle(h2, h3, 0, 4, 1, 5); t3 = i32x4.shuffle(h2, h3, 2, 6, 3, 7);
  v128.store(out, i64x2.shuffle(t0, t2, 0, 2), 0); v128.store(out, i64x2.shuffle(t0, t2, 1, 3), 32);
  v128.store(out, i64x2.shuffle(t1, t3, 0, 2), 64); v128.store(out, i64x2.shuffle(t1, t3, 1, 3), 96);
  t0 = i32x4.shuffle(h4, h5, 0, 4, 1, 5); t1 = i32x4.shuffle(h4, h5, 2, 6, 3, 7); t2 = i32x4.shuffle(h6, h7, 0, 4, 1, 5); t3 = i32x4.shuffle(h6, h7, 2, 6, 3, 7);
  v128.store(out, i64x2.shuffle(t0, t2, 0, 2), 16); v128.store(out, i64x2.shuffle(t0, t2, 1, 3), 48);
  v128.store(out, i64x2.shuffle(t1, t3, 0, 2), 80); v128.store(out, i64x2.shuffle(t1, t3, 1, 3), 112);
}

/** The chaining value of the whole 1024-byte chunk at `p` with counter `counter`, not the root. */
function chunkCv(p: usize, counter: u64, out: usize): void {
  compress(IV, p, counter, 64, CHUNK_START, out);
  for (let b: usize = 1; b < 15; b++) compress(out, p + (b << 6), counter, 64, 0, out);
  compress(out, p + 960, counter, 64, CHUNK_END, out);
}

/**
 * Puts the chaining value at `cv` (overwritten) of the chunk that makes `chunks` chunks
 * on the stack, first merging it with the subtrees it completes: one per trailing zero
 * bit of `chunks` (spec section 5.1.2).
 */
function pushCv(ctx: usize, cv: usize, chunks: u64): void {
  let n = load<u32>(ctx, CTX_STACK_LEN);
  while ((chunks & 1) == 0) {
    n--;
    const left = ctx + CTX_STACK + (<usize>n << 5);
    memory.copy(left + 32, cv, 32);
    compress(IV, left, 0, 64, PARENT, cv);
    chunks >>= 1;
  }
  memory.copy(ctx + CTX_STACK + (<usize>n << 5), cv, 32);
  store<u32>(ctx, n + 1, CTX_STACK_LEN);
}

/** Starts the next chunk in `ctx`. */
// @ts-ignore: decorator
@inline function chunkReset(ctx: usize): void {
  memory.copy(ctx + CTX_CV, IV, 32);
  store<u32>(ctx, 0, CTX_BUF_LEN);
  store<u32>(ctx, 0, CTX_BLOCKS);
}

/**
 * Adds `len` bytes (at most what the chunk still takes) to the current chunk. A full
 * block is compressed only when more input follows it: the chunk's last block is
 * compressed by whoever learns whether it is the root's.
 */
function chunkFeed(ctx: usize, p: usize, len: usize): void {
  let bufLen = <usize>load<u32>(ctx, CTX_BUF_LEN);
  let blocks = load<u32>(ctx, CTX_BLOCKS);
  const counter = load<u64>(ctx, CTX_CHUNKS);
  while (len > 0) {
    if (bufLen == 64) {
      compress(ctx, ctx + CTX_BUF, counter, 64, blocks == 0 ? CHUNK_START : 0, ctx);
      blocks++;
      bufLen = 0;
    }
    if (bufLen == 0 && len > 64) {
      compress(ctx, p, counter, 64, blocks == 0 ? CHUNK_START : 0, ctx);
      blocks++;
      p += 64;
      len -= 64;
      continue;
    }
    let take: usize = 64 - bufLen;
    if (take > len) take = len;
    memory.copy(ctx + CTX_BUF + bufLen, p, take);
    bufLen += take;
    p += take;
    len -= take;
  }
  store<u32>(ctx, <u32>bufLen, CTX_BUF_LEN);
  store<u32>(ctx, blocks, CTX_BLOCKS);
}

/** Compresses the current chunk's last block with `flags` added, its output to `out`. */
function chunkOutput(ctx: usize, flags: u32, out: usize): void {
  const bufLen = <usize>load<u32>(ctx, CTX_BUF_LEN);
  memory.fill(ctx + CTX_BUF + bufLen, 0, 64 - bufLen);
  const start = load<u32>(ctx, CTX_BLOCKS) == 0 ? CHUNK_START : 0;
  compress(ctx, ctx + CTX_BUF, load<u64>(ctx, CTX_CHUNKS), <u32>bufLen, flags | start | CHUNK_END, out);
}

/** Starts a streaming hash in the context at `ctx` (BLAKE3_CTX_SIZE bytes). */
export function blake3Init(ctx: usize): void {
  chunkReset(ctx);
  store<u64>(ctx, 0, CTX_CHUNKS);
  store<u32>(ctx, 0, CTX_STACK_LEN);
}

/** Adds `len` bytes at `p` to the context at `ctx`. */
export function blake3Update(ctx: usize, p: usize, len: usize): void {
  if (len == 0) return;
  const inChunk = (<usize>load<u32>(ctx, CTX_BLOCKS) << 6) + <usize>load<u32>(ctx, CTX_BUF_LEN);
  if (inChunk > 0) {
    let take = CHUNK_LEN - inChunk;
    if (take > len) take = len;
    chunkFeed(ctx, p, take);
    p += take;
    len -= take;
    if (len == 0) return;
    // the chunk is full and more input follows: it is not the root
    chunkOutput(ctx, 0, CV);
    const chunks = load<u64>(ctx, CTX_CHUNKS) + 1;
    store<u64>(ctx, chunks, CTX_CHUNKS);
    pushCv(ctx, CV, chunks);
    chunkReset(ctx);
  }
  // whole chunks with more input after them; the last chunk (1..1024 bytes) stays open
  if (ASC_FEATURE_SIMD) {
    while (len > 4 * CHUNK_LEN) {
      const chunks = load<u64>(ctx, CTX_CHUNKS);
      hash4(p, p + CHUNK_LEN, p + 2 * CHUNK_LEN, p + 3 * CHUNK_LEN, 16, chunks, 1, 0, CHUNK_START, CHUNK_END, CV4);
      pushCv(ctx, CV4, chunks + 1);
      pushCv(ctx, CV4 + 32, chunks + 2);
      pushCv(ctx, CV4 + 64, chunks + 3);
      pushCv(ctx, CV4 + 96, chunks + 4);
      store<u64>(ctx, chunks + 4, CTX_CHUNKS);
      p += 4 * CHUNK_LEN;
      len -= 4 * CHUNK_LEN;
    }
  }
  while (len > CHUNK_LEN) {
    const chunks = load<u64>(ctx, CTX_CHUNKS);
    chunkCv(p, chunks, CV);
    pushCv(ctx, CV, chunks + 1);
    store<u64>(ctx, chunks + 1, CTX_CHUNKS);
    p += CHUNK_LEN;
    len -= CHUNK_LEN;
  }
  chunkFeed(ctx, p, len);
}

/** Finishes the hash in `ctx` and writes the 32-byte digest to `out`. */
export function blake3Final(ctx: usize, out: usize): void {
  let n = load<u32>(ctx, CTX_STACK_LEN);
  if (n == 0) {
    chunkOutput(ctx, ROOT, out);
    return;
  }
  chunkOutput(ctx, 0, CV);
  while (n > 0) {
    n--;
    const left = ctx + CTX_STACK + (<usize>n << 5);
    memory.copy(left + 32, CV, 32);
    if (n == 0) compress(IV, left, 0, 64, PARENT | ROOT, out);
    else compress(IV, left, 0, 64, PARENT, CV);
  }
}

/** BLAKE3 of `len` bytes at `p`, written to `out` (32 bytes). */
export function blake3Digest(p: usize, len: usize, out: usize): void {
  blake3Init(ONESHOT);
  blake3Update(ONESHOT, p, len);
  blake3Final(ONESHOT, out);
}

/** The size of a streaming context, for the host to allocate. */
export function blake3ContextSize(): usize {
  return BLAKE3_CTX_SIZE;
}
