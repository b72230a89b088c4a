// SHA-256 (FIPS 180-4): the compression function, a streaming context at a pointer,
// and a one-shot digest. No allocation: contexts live in blocks the host owns (from
// `alloc`), the one-shot path uses static blocks.
//
// Compression keeps the eight working variables in locals and is fully unrolled. The
// round bodies are generated (the script is in docs/crypto.md), one line per round t:
// the roles a..h are played by the locals rotated by t (round t+1's `a` is round t's
// `h`), so no value is ever moved between locals, and T1 = ((h + W[t] + K[t]) +
// Ch(e, f, g)) + Σ1(e) adds the terms that wait on `e` last. Maj(a, b, c) =
// b ^ ((a ^ b) & (b ^ c)), where a ^ b of one round is b ^ c of the next. The scalar
// build keeps the message schedule in sixteen rolling locals w0..w15 (w[t mod 16]); the
// SIMD build keeps it in four vectors and makes W[t..t+3] + K[t..t+3] per step (byte
// swap, σ0, σ1 and the +K in vector registers), which leaves the general registers to
// the working variables: about 10 % faster than the scalar build on x64.
//
// Context layout (SHA256_CTX_SIZE = 104 bytes):
//   0   H0..H7, u32 each, native byte order
//   32  the partial input block (64 bytes)
//   96  total input length in bytes (u64)

export const SHA256_CTX_SIZE: usize = 104;
// @ts-ignore: decorator
@inline const CTX_BUF: usize = 32;
// @ts-ignore: decorator
@inline const CTX_LEN: usize = 96;

// The round constants K[0..63] (FIPS 180-4 4.2.2), for the SIMD build: one vector load
// per four rounds costs less than materializing a v128 constant, which V8 builds from
// immediates in several instructions. The scalar build adds them as immediates.
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
], 16);

// Padding blocks of the one-shot digest (two blocks at most).
const TAIL: usize = memory.data(128, 16);

// Σ0, Σ1 (FIPS 180-4 4.1.2). V8 emits two-operand x64 code, where each separate
// rotate of x costs a register copy; the rotate-of-xor form needs none, which wins in
// the scalar build (short of registers), while the SIMD build measured faster with
// the shallower plain form.
// @ts-ignore: decorator
@inline function SIG0(x: u32): u32 {
  if (ASC_FEATURE_SIMD) return rotr<u32>(x, 2) ^ rotr<u32>(x, 13) ^ rotr<u32>(x, 22);
  return rotr<u32>(rotr<u32>(rotr<u32>(x, 9) ^ x, 11) ^ x, 2);
}
// @ts-ignore: decorator
@inline function SIG1(x: u32): u32 {
  if (ASC_FEATURE_SIMD) return rotr<u32>(x, 6) ^ rotr<u32>(x, 11) ^ rotr<u32>(x, 25);
  return rotr<u32>(rotr<u32>(rotr<u32>(x, 14) ^ x, 5) ^ x, 6);
}
// σ0, σ1 of the scalar message schedule: rotr 7 ^ rotr 18 ^ shr 3, rotr 17 ^ rotr 19 ^ shr 10.
// @ts-ignore: decorator
@inline function sig0(x: u32): u32 { return rotr<u32>(rotr<u32>(x, 11) ^ x, 7) ^ (x >>> 3); }
// @ts-ignore: decorator
@inline function sig1(x: u32): u32 { return rotr<u32>(rotr<u32>(x, 2) ^ x, 17) ^ (x >>> 10); }

// @ts-ignore: decorator
@inline function rotrv(x: v128, n: i32): v128 { return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n)); }
// @ts-ignore: decorator
@inline function sig0v(x: v128): v128 { return v128.xor(v128.xor(rotrv(x, 7), rotrv(x, 18)), i32x4.shr_u(x, 3)); }
// @ts-ignore: decorator
@inline function sig1v(x: v128): v128 { return v128.xor(v128.xor(rotrv(x, 17), rotrv(x, 19)), i32x4.shr_u(x, 10)); }
// @ts-ignore: decorator
@inline function loadBe4(p: usize): v128 {
  return i8x16.shuffle(v128.load(p), v128.load(p), 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
}

/** W[t..t+3] from the four vectors holding W[t-16..t-1] (FIPS 180-4 6.2.2 step 1). */
// @ts-ignore: decorator
@inline function scheduleSimd(x0: v128, x1: v128, x2: v128, x3: v128): v128 {
  const w15 = i8x16.shuffle(x0, x1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19); // W[t+i-15]
  const w7 = i8x16.shuffle(x2, x3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19); // W[t+i-7]
  let n = i32x4.add(i32x4.add(x0, sig0v(w15)), w7);
  // σ1(W[t+i-2]): lanes 0, 1 from W[t-2], W[t-1]; lanes 2, 3 from lanes 0, 1 just made
  n = i32x4.add(n, v128.and(sig1v(i8x16.shuffle(x3, x3, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15)), i32x4(-1, -1, 0, 0)));
  return i32x4.add(n, v128.and(sig1v(i8x16.shuffle(n, n, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7)), i32x4(0, 0, -1, -1)));
}

/** Compresses `n` 64-byte blocks at `p` into the state at `state`. */
export function sha256Blocks(state: usize, p: usize, n: usize): void {
  let a = load<u32>(state, 0);
  let b = load<u32>(state, 4);
  let c = load<u32>(state, 8);
  let d = load<u32>(state, 12);
  let e = load<u32>(state, 16);
  let f = load<u32>(state, 20);
  let g = load<u32>(state, 24);
  let h = load<u32>(state, 28);
  const end = p + (n << 6);
  while (p < end) {
    const a0 = a, b0 = b, c0 = c, d0 = d, e0 = e, f0 = f, g0 = g, h0 = h;
    let ab: u32, bc: u32 = b ^ c;
    if (ASC_FEATURE_SIMD) {
      let x0 = loadBe4(p), x1 = loadBe4(p + 16), x2 = loadBe4(p + 32), x3 = loadBe4(p + 48);
      let wk: v128;
      wk = i32x4.add(x0, v128.load(K, 0));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      wk = i32x4.add(x1, v128.load(K, 16));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      wk = i32x4.add(x2, v128.load(K, 32));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      wk = i32x4.add(x3, v128.load(K, 48));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x0 = scheduleSimd(x0, x1, x2, x3);
      wk = i32x4.add(x0, v128.load(K, 64));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x1 = scheduleSimd(x1, x2, x3, x0);
      wk = i32x4.add(x1, v128.load(K, 80));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x2 = scheduleSimd(x2, x3, x0, x1);
      wk = i32x4.add(x2, v128.load(K, 96));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x3 = scheduleSimd(x3, x0, x1, x2);
      wk = i32x4.add(x3, v128.load(K, 112));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x0 = scheduleSimd(x0, x1, x2, x3);
      wk = i32x4.add(x0, v128.load(K, 128));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x1 = scheduleSimd(x1, x2, x3, x0);
      wk = i32x4.add(x1, v128.load(K, 144));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x2 = scheduleSimd(x2, x3, x0, x1);
      wk = i32x4.add(x2, v128.load(K, 160));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x3 = scheduleSimd(x3, x0, x1, x2);
      wk = i32x4.add(x3, v128.load(K, 176));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x0 = scheduleSimd(x0, x1, x2, x3);
      wk = i32x4.add(x0, v128.load(K, 192));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x1 = scheduleSimd(x1, x2, x3, x0);
      wk = i32x4.add(x1, v128.load(K, 208));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      x2 = scheduleSimd(x2, x3, x0, x1);
      wk = i32x4.add(x2, v128.load(K, 224));
      h += i32x4.extract_lane(wk, 0); h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += i32x4.extract_lane(wk, 1); g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += i32x4.extract_lane(wk, 2); f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += i32x4.extract_lane(wk, 3); e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      x3 = scheduleSimd(x3, x0, x1, x2);
      wk = i32x4.add(x3, v128.load(K, 240));
      d += i32x4.extract_lane(wk, 0); d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += i32x4.extract_lane(wk, 1); c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += i32x4.extract_lane(wk, 2); b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += i32x4.extract_lane(wk, 3); a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
    } else {
      let w0 = bswap<u32>(load<u32>(p, 0)), w1 = bswap<u32>(load<u32>(p, 4));
      let w2 = bswap<u32>(load<u32>(p, 8)), w3 = bswap<u32>(load<u32>(p, 12));
      let w4 = bswap<u32>(load<u32>(p, 16)), w5 = bswap<u32>(load<u32>(p, 20));
      let w6 = bswap<u32>(load<u32>(p, 24)), w7 = bswap<u32>(load<u32>(p, 28));
      let w8 = bswap<u32>(load<u32>(p, 32)), w9 = bswap<u32>(load<u32>(p, 36));
      let w10 = bswap<u32>(load<u32>(p, 40)), w11 = bswap<u32>(load<u32>(p, 44));
      let w12 = bswap<u32>(load<u32>(p, 48)), w13 = bswap<u32>(load<u32>(p, 52));
      let w14 = bswap<u32>(load<u32>(p, 56)), w15 = bswap<u32>(load<u32>(p, 60));
      h += w0 + 0x428a2f98; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += w1 + 0x71374491; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += w2 + 0xb5c0fbcf; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += w3 + 0xe9b5dba5; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      d += w4 + 0x3956c25b; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += w5 + 0x59f111f1; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += w6 + 0x923f82a4; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += w7 + 0xab1c5ed5; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      h += w8 + 0xd807aa98; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      g += w9 + 0x12835b01; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      f += w10 + 0x243185be; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      e += w11 + 0x550c7dc3; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      d += w12 + 0x72be5d74; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      c += w13 + 0x80deb1fe; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      b += w14 + 0x9bdc06a7; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      a += w15 + 0xc19bf174; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w0 += sig1(w14) + w9 + sig0(w1);
      h += w0 + 0xe49b69c1; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w1 += sig1(w15) + w10 + sig0(w2);
      g += w1 + 0xefbe4786; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w2 += sig1(w0) + w11 + sig0(w3);
      f += w2 + 0x0fc19dc6; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w3 += sig1(w1) + w12 + sig0(w4);
      e += w3 + 0x240ca1cc; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w4 += sig1(w2) + w13 + sig0(w5);
      d += w4 + 0x2de92c6f; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w5 += sig1(w3) + w14 + sig0(w6);
      c += w5 + 0x4a7484aa; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w6 += sig1(w4) + w15 + sig0(w7);
      b += w6 + 0x5cb0a9dc; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w7 += sig1(w5) + w0 + sig0(w8);
      a += w7 + 0x76f988da; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w8 += sig1(w6) + w1 + sig0(w9);
      h += w8 + 0x983e5152; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w9 += sig1(w7) + w2 + sig0(w10);
      g += w9 + 0xa831c66d; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w10 += sig1(w8) + w3 + sig0(w11);
      f += w10 + 0xb00327c8; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w11 += sig1(w9) + w4 + sig0(w12);
      e += w11 + 0xbf597fc7; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w12 += sig1(w10) + w5 + sig0(w13);
      d += w12 + 0xc6e00bf3; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w13 += sig1(w11) + w6 + sig0(w14);
      c += w13 + 0xd5a79147; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w14 += sig1(w12) + w7 + sig0(w15);
      b += w14 + 0x06ca6351; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w15 += sig1(w13) + w8 + sig0(w0);
      a += w15 + 0x14292967; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w0 += sig1(w14) + w9 + sig0(w1);
      h += w0 + 0x27b70a85; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w1 += sig1(w15) + w10 + sig0(w2);
      g += w1 + 0x2e1b2138; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w2 += sig1(w0) + w11 + sig0(w3);
      f += w2 + 0x4d2c6dfc; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w3 += sig1(w1) + w12 + sig0(w4);
      e += w3 + 0x53380d13; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w4 += sig1(w2) + w13 + sig0(w5);
      d += w4 + 0x650a7354; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w5 += sig1(w3) + w14 + sig0(w6);
      c += w5 + 0x766a0abb; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w6 += sig1(w4) + w15 + sig0(w7);
      b += w6 + 0x81c2c92e; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w7 += sig1(w5) + w0 + sig0(w8);
      a += w7 + 0x92722c85; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w8 += sig1(w6) + w1 + sig0(w9);
      h += w8 + 0xa2bfe8a1; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w9 += sig1(w7) + w2 + sig0(w10);
      g += w9 + 0xa81a664b; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w10 += sig1(w8) + w3 + sig0(w11);
      f += w10 + 0xc24b8b70; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w11 += sig1(w9) + w4 + sig0(w12);
      e += w11 + 0xc76c51a3; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w12 += sig1(w10) + w5 + sig0(w13);
      d += w12 + 0xd192e819; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w13 += sig1(w11) + w6 + sig0(w14);
      c += w13 + 0xd6990624; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w14 += sig1(w12) + w7 + sig0(w15);
      b += w14 + 0xf40e3585; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w15 += sig1(w13) + w8 + sig0(w0);
      a += w15 + 0x106aa070; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w0 += sig1(w14) + w9 + sig0(w1);
      h += w0 + 0x19a4c116; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w1 += sig1(w15) + w10 + sig0(w2);
      g += w1 + 0x1e376c08; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w2 += sig1(w0) + w11 + sig0(w3);
      f += w2 + 0x2748774c; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w3 += sig1(w1) + w12 + sig0(w4);
      e += w3 + 0x34b0bcb5; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w4 += sig1(w2) + w13 + sig0(w5);
      d += w4 + 0x391c0cb3; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w5 += sig1(w3) + w14 + sig0(w6);
      c += w5 + 0x4ed8aa4a; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w6 += sig1(w4) + w15 + sig0(w7);
      b += w6 + 0x5b9cca4f; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w7 += sig1(w5) + w0 + sig0(w8);
      a += w7 + 0x682e6ff3; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
      w8 += sig1(w6) + w1 + sig0(w9);
      h += w8 + 0x748f82ee; h += g ^ (e & (f ^ g)); h += SIG1(e); d += h; ab = a ^ b; h += SIG0(a) + (b ^ (ab & bc)); bc = ab;
      w9 += sig1(w7) + w2 + sig0(w10);
      g += w9 + 0x78a5636f; g += f ^ (d & (e ^ f)); g += SIG1(d); c += g; ab = h ^ a; g += SIG0(h) + (a ^ (ab & bc)); bc = ab;
      w10 += sig1(w8) + w3 + sig0(w11);
      f += w10 + 0x84c87814; f += e ^ (c & (d ^ e)); f += SIG1(c); b += f; ab = g ^ h; f += SIG0(g) + (h ^ (ab & bc)); bc = ab;
      w11 += sig1(w9) + w4 + sig0(w12);
      e += w11 + 0x8cc70208; e += d ^ (b & (c ^ d)); e += SIG1(b); a += e; ab = f ^ g; e += SIG0(f) + (g ^ (ab & bc)); bc = ab;
      w12 += sig1(w10) + w5 + sig0(w13);
      d += w12 + 0x90befffa; d += c ^ (a & (b ^ c)); d += SIG1(a); h += d; ab = e ^ f; d += SIG0(e) + (f ^ (ab & bc)); bc = ab;
      w13 += sig1(w11) + w6 + sig0(w14);
      c += w13 + 0xa4506ceb; c += b ^ (h & (a ^ b)); c += SIG1(h); g += c; ab = d ^ e; c += SIG0(d) + (e ^ (ab & bc)); bc = ab;
      w14 += sig1(w12) + w7 + sig0(w15);
      b += w14 + 0xbef9a3f7; b += a ^ (g & (h ^ a)); b += SIG1(g); f += b; ab = c ^ d; b += SIG0(c) + (d ^ (ab & bc)); bc = ab;
      w15 += sig1(w13) + w8 + sig0(w0);
      a += w15 + 0xc67178f2; a += h ^ (f & (g ^ h)); a += SIG1(f); e += a; ab = b ^ c; a += SIG0(b) + (c ^ (ab & bc)); bc = ab;
    }
    a += a0; b += b0; c += c0; d += d0; e += e0; f += f0; g += g0; h += h0;
    p += 64;
  }
  store<u32>(state, a, 0);
  store<u32>(state, b, 4);
  store<u32>(state, c, 8);
  store<u32>(state, d, 12);
  store<u32>(state, e, 16);
  store<u32>(state, f, 20);
  store<u32>(state, g, 24);
  store<u32>(state, h, 28);
}

/** Sets the state at `state` to the SHA-256 initial hash value. */
// @ts-ignore: decorator
@inline export function sha256InitState(state: usize): void {
  store<u32>(state, 0x6a09e667, 0);
  store<u32>(state, 0xbb67ae85, 4);
  store<u32>(state, 0x3c6ef372, 8);
  store<u32>(state, 0xa54ff53a, 12);
  store<u32>(state, 0x510e527f, 16);
  store<u32>(state, 0x9b05688c, 20);
  store<u32>(state, 0x1f83d9ab, 24);
  store<u32>(state, 0x5be0cd19, 28);
}

/** Writes the state as the 32-byte big-endian digest. */
// @ts-ignore: decorator
@inline export function sha256WriteDigest(state: usize, out: usize): void {
  store<u32>(out, bswap<u32>(load<u32>(state, 0)), 0);
  store<u32>(out, bswap<u32>(load<u32>(state, 4)), 4);
  store<u32>(out, bswap<u32>(load<u32>(state, 8)), 8);
  store<u32>(out, bswap<u32>(load<u32>(state, 12)), 12);
  store<u32>(out, bswap<u32>(load<u32>(state, 16)), 16);
  store<u32>(out, bswap<u32>(load<u32>(state, 20)), 20);
  store<u32>(out, bswap<u32>(load<u32>(state, 24)), 24);
  store<u32>(out, bswap<u32>(load<u32>(state, 28)), 28);
}

/**
 * Compresses the last `rest` (< 64) bytes at `p` with the FIPS 180-4 padding for a
 * message of `total` bytes: one block, or two when fewer than 9 bytes are left free.
 */
export function sha256Tail(state: usize, p: usize, rest: usize, total: u64): void {
  memory.copy(TAIL, p, rest);
  store<u8>(TAIL + rest, 0x80);
  const blocks: usize = rest < 56 ? 1 : 2;
  const end = TAIL + (blocks << 6);
  memory.fill(TAIL + rest + 1, 0, end - 8 - (TAIL + rest + 1));
  store<u64>(end - 8, bswap<u64>(total << 3));
  sha256Blocks(state, TAIL, blocks);
}

/** Starts a streaming hash in the context at `ctx` (SHA256_CTX_SIZE bytes). */
export function sha256Init(ctx: usize): void {
  sha256InitState(ctx);
  store<u64>(ctx + CTX_LEN, 0);
}

/** Adds `len` bytes at `p` to the context at `ctx`. */
export function sha256Update(ctx: usize, p: usize, len: usize): void {
  const total = load<u64>(ctx + CTX_LEN);
  store<u64>(ctx + CTX_LEN, total + <u64>len);
  const fill = <usize>(total & 63);
  if (fill != 0) {
    const need: usize = 64 - fill;
    if (len < need) {
      memory.copy(ctx + CTX_BUF + fill, p, len);
      return;
    }
    memory.copy(ctx + CTX_BUF + fill, p, need);
    sha256Blocks(ctx, ctx + CTX_BUF, 1);
    p += need;
    len -= need;
  }
  const blocks = len >> 6;
  if (blocks != 0) sha256Blocks(ctx, p, blocks);
  const rest = len & 63;
  if (rest != 0) memory.copy(ctx + CTX_BUF, p + (blocks << 6), rest);
}

/** Finishes the hash in `ctx` and writes the 32-byte digest to `out`. */
export function sha256Final(ctx: usize, out: usize): void {
  const total = load<u64>(ctx + CTX_LEN);
  sha256Tail(ctx, ctx + CTX_BUF, <usize>(total & 63), total);
  sha256WriteDigest(ctx, out);
}

const ONESHOT: usize = memory.data(32, 16);

/** SHA-256 of `len` bytes at `p`, written to `out` (32 bytes). */
export function sha256Digest(p: usize, len: usize, out: usize): void {
  const state = ONESHOT;
  sha256InitState(state);
  const blocks = len >> 6;
  if (blocks != 0) sha256Blocks(state, p, blocks);
  sha256Tail(state, p + (blocks << 6), len & 63, <u64>len);
  sha256WriteDigest(state, out);
}

/** The size of a streaming context, for the host to allocate. */
export function sha256ContextSize(): usize {
  return SHA256_CTX_SIZE;
}
