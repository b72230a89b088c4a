// Signature scan for files hidden after (or inside) a host file: PNG, JPEG, GIF,
// ZIP, PDF, RAR, 7z, GZIP, ELF and PE. A magic number alone is short, so each hit is
// validated against the fields that follow it (header sanity), which keeps chance
// matches in compressed data rare.
import { emit, le16, le32, be16 } from './output';
import { isPng } from './png';
import { isGif } from './gif';
import { SIGNATURE, SIG_PNG, SIG_JPEG, SIG_GIF, SIG_ZIP, SIG_PDF, SIG_RAR, SIG_7Z, SIG_GZIP, SIG_ELF, SIG_PE } from './codes';

@inline
function isJpeg(p: usize, n: usize): bool {
  if (n < 6 || load<u8>(p) != 0xff || load<u8>(p + 1) != 0xd8 || load<u8>(p + 2) != 0xff) return false;
  const m = <u32>load<u8>(p + 3);
  // APPn, DQT, DHT, SOF0-2, COM, DRI: the markers that start real files
  if (!((m >= 0xe0 && m <= 0xef) || m == 0xdb || m == 0xc4 || m == 0xc0 || m == 0xc1 || m == 0xc2 || m == 0xfe || m == 0xdd)) return false;
  const l = be16(p + 4);
  return l >= 2 && (m != 0xe0 || l >= 16);
}

@inline
function isZip(p: usize, n: usize): bool {
  if (n < 30 || load<u32>(p) != 0x04034b50) return false;
  const version = le16(p + 4);
  const method = le16(p + 8);
  const nameLen = le16(p + 26);
  return version <= 63 && (method == 0 || method == 8 || method == 9 || method == 12 || method == 14 || method == 93 || method == 95 || method == 99) &&
    nameLen > 0 && nameLen < 1024;
}

@inline
function isPdf(p: usize, n: usize): bool {
  // "%PDF-1." or "%PDF-2." followed by a digit
  if (n < 8 || load<u32>(p) != 0x46445025 || load<u8>(p + 4) != 0x2d) return false;
  const major = load<u8>(p + 5);
  const minor = load<u8>(p + 7);
  return (major == 0x31 || major == 0x32) && load<u8>(p + 6) == 0x2e && minor >= 0x30 && minor <= 0x39;
}

@inline
function isRar(p: usize, n: usize): bool {
  // "Rar!\x1A\x07\x00" (RAR 4) or "Rar!\x1A\x07\x01\x00" (RAR 5)
  if (n < 8 || load<u32>(p) != 0x21726152 || load<u8>(p + 4) != 0x1a || load<u8>(p + 5) != 0x07) return false;
  const v = load<u8>(p + 6);
  return v == 0 || (v == 1 && load<u8>(p + 7) == 0);
}

@inline
function is7z(p: usize, n: usize): bool {
  // '7z' BC AF 27 1C, major version 0
  return n >= 32 && load<u32>(p) == 0xafbc7a37 && load<u16>(p + 4) == 0x1c27 && load<u8>(p + 6) == 0;
}

@inline
function isGzip(p: usize, n: usize): bool {
  // RFC 1952: ID1 ID2 CM=8, FLG reserved bits zero, XFL 0/2/4, OS <= 13 or 255
  if (n < 18 || load<u8>(p) != 0x1f || load<u8>(p + 1) != 0x8b || load<u8>(p + 2) != 8) return false;
  const flg = load<u8>(p + 3);
  const xfl = load<u8>(p + 8);
  const os = load<u8>(p + 9);
  return (flg & 0xe0) == 0 && (xfl == 0 || xfl == 2 || xfl == 4) && (os <= 13 || os == 255);
}

@inline
function isElf(p: usize, n: usize): bool {
  // e_ident: class 1/2, data 1/2, version 1; e_type 1-4; e_version 1
  if (n < 52 || load<u32>(p) != 0x464c457f) return false;
  const cls = load<u8>(p + 4);
  const data = load<u8>(p + 5);
  if ((cls != 1 && cls != 2) || (data != 1 && data != 2) || load<u8>(p + 6) != 1) return false;
  const type = data == 1 ? le16(p + 16) : be16(p + 16);
  const version = data == 1 ? le32(p + 20) : <u32>load<u8>(p + 23);
  return type >= 1 && type <= 4 && version == 1;
}

@inline
function isPe(p: usize, n: usize): bool {
  // "MZ" with e_lfanew pointing at "PE\0\0" inside the data
  if (n < 64 || load<u16>(p) != 0x5a4d) return false;
  const lfanew = <usize>le32(p + 60);
  if (lfanew < 64 || lfanew > 0x10000 || lfanew + 24 > n) return false;
  return load<u32>(p + lfanew) == 0x00004550;
}

/** The kind of file whose signature starts at `p` (`n` bytes available), or 0. */
export function signatureAt(p: usize, n: usize): i32 {
  const b = <u32>load<u8>(p);
  switch (b) {
    case 0x89: return isPng(p, n) ? SIG_PNG : 0;
    case 0xff: return isJpeg(p, n) ? SIG_JPEG : 0;
    case 0x47: return isGif(p, n) ? SIG_GIF : 0;
    case 0x50: return isZip(p, n) ? SIG_ZIP : 0;
    case 0x25: return isPdf(p, n) ? SIG_PDF : 0;
    case 0x52: return isRar(p, n) ? SIG_RAR : 0;
    case 0x37: return is7z(p, n) ? SIG_7Z : 0;
    case 0x1f: return isGzip(p, n) ? SIG_GZIP : 0;
    case 0x7f: return isElf(p, n) ? SIG_ELF : 0;
    case 0x4d: return isPe(p, n) ? SIG_PE : 0;
  }
  return 0;
}

// The first two bytes of every signature, as a 65536-bit table indexed by the
// little-endian u16 at each position: one load and one bit test per input byte.
const pairTable: usize = memory.data(8192, 16);
let pairTableReady: bool = false;

function markPair(b0: u32, b1: u32): void {
  const k = <usize>(b0 | (b1 << 8));
  store<u8>(pairTable + (k >> 3), <u8>(<u32>load<u8>(pairTable + (k >> 3)) | (<u32>1 << <u32>(k & 7))));
}

function buildPairTable(): void {
  markPair(0x89, 0x50); // PNG
  markPair(0xff, 0xd8); // JPEG
  markPair(0x47, 0x49); // GIF
  markPair(0x50, 0x4b); // ZIP
  markPair(0x25, 0x50); // PDF
  markPair(0x52, 0x61); // RAR
  markPair(0x37, 0x7a); // 7z
  markPair(0x1f, 0x8b); // GZIP
  markPair(0x7f, 0x45); // ELF
  markPair(0x4d, 0x5a); // PE
  pairTableReady = true;
}

@inline
function pairMask(a: v128, b: v128, first: i32, second: i32): v128 {
  return v128.and(i8x16.eq(a, i8x16.splat(<i8>first)), i8x16.eq(b, i8x16.splat(<i8>second)));
}

/**
 * Reports every validated signature in [from, to) of the `len` bytes at `ptr`
 * (validation may read past `to`, up to `len`). Returns how many were found.
 */
export function scanSignatures(ptr: usize, len: usize, from: usize, to: usize): i32 {
  if (!pairTableReady) buildPairTable();
  let found = 0;
  const end = to < len ? to : len;
  let i = from;
  if (ASC_FEATURE_SIMD) {
    // 16 positions at a time: the byte and its successor against every signature's
    // first two bytes; only marked positions are validated
    while (i + 17 <= len && i + 16 <= end) {
      const a = v128.load(ptr + i);
      const b = v128.load(ptr + i + 1);
      let m = pairMask(a, b, 0x89, 0x50);
      m = v128.or(m, pairMask(a, b, 0xff, 0xd8));
      m = v128.or(m, pairMask(a, b, 0x47, 0x49));
      m = v128.or(m, pairMask(a, b, 0x50, 0x4b));
      m = v128.or(m, pairMask(a, b, 0x25, 0x50));
      m = v128.or(m, pairMask(a, b, 0x52, 0x61));
      m = v128.or(m, pairMask(a, b, 0x37, 0x7a));
      m = v128.or(m, pairMask(a, b, 0x1f, 0x8b));
      m = v128.or(m, pairMask(a, b, 0x7f, 0x45));
      m = v128.or(m, pairMask(a, b, 0x4d, 0x5a));
      let bits = i8x16.bitmask(m);
      while (bits != 0) {
        const at = i + <usize>ctz(bits);
        bits &= bits - 1;
        const kind = signatureAt(ptr + at, len - at);
        if (kind != 0) {
          emit(SIGNATURE, kind, <u32>at, 0, 0, 0);
          found++;
        }
      }
      i += 16;
    }
  }
  for (; i < end; i++) {
    if (i + 1 >= len) break; // every signature is longer than one byte
    const k = <usize>load<u16>(ptr + i);
    if (((<u32>load<u8>(pairTable + (k >> 3)) >> <u32>(k & 7)) & 1) == 0) continue;
    const kind = signatureAt(ptr + i, len - i);
    if (kind != 0) {
      emit(SIGNATURE, kind, <u32>i, 0, 0, 0);
      found++;
    }
  }
  return found;
}
