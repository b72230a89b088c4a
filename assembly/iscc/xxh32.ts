// xxHash32 (Yann Collet, xxHash specification "XXH32 algorithm description"), seed 0:
// the feature hash of the ISCC Data-Code's chunks and of the Text-Code's n-grams
// (iscc-core uses xxhash.xxh32_intdigest).

// @ts-ignore: decorator
@inline const P1: u32 = 0x9e3779b1;
// @ts-ignore: decorator
@inline const P2: u32 = 0x85ebca77;
// @ts-ignore: decorator
@inline const P3: u32 = 0xc2b2ae3d;
// @ts-ignore: decorator
@inline const P4: u32 = 0x27d4eb2f;
// @ts-ignore: decorator
@inline const P5: u32 = 0x165667b1;

// @ts-ignore: decorator
@inline function round(acc: u32, lane: u32): u32 {
  return rotl<u32>(acc + lane * P2, 13) * P1;
}

/** XXH32 of `len` bytes at `p`, seed 0. */
export function xxh32(p: usize, len: usize): u32 {
  const end = p + len;
  let h: u32;
  if (len >= 16) {
    let v1: u32 = P1 + P2, v2: u32 = P2, v3: u32 = 0, v4: u32 = 0 - P1;
    const limit = end - 16;
    do {
      v1 = round(v1, load<u32>(p, 0));
      v2 = round(v2, load<u32>(p, 4));
      v3 = round(v3, load<u32>(p, 8));
      v4 = round(v4, load<u32>(p, 12));
      p += 16;
    } while (p <= limit);
    h = rotl<u32>(v1, 1) + rotl<u32>(v2, 7) + rotl<u32>(v3, 12) + rotl<u32>(v4, 18);
  } else {
    h = P5;
  }
  h += <u32>len;
  while (p + 4 <= end) {
    h = rotl<u32>(h + load<u32>(p) * P3, 17) * P4;
    p += 4;
  }
  while (p < end) {
    h = rotl<u32>(h + <u32>load<u8>(p) * P5, 11) * P1;
    p++;
  }
  h ^= h >> 15;
  h *= P2;
  h ^= h >> 13;
  h *= P3;
  h ^= h >> 16;
  return h;
}

/** xxh32 for the host (tests): the bytes at `p`. */
export function xxh32Digest(p: usize, len: usize): u32 {
  return xxh32(p, len);
}
