// GIF block walk (GIF89a spec, sections 17-27): header, logical screen descriptor
// and global colour table, then image descriptors and extensions made of data
// sub-blocks, to the trailer 0x3B.
import { emit, le16 } from './output';
import { GIF_BAD_SIGNATURE, GIF_TRUNCATED, GIF_BAD_BLOCK, GIF_EXTENSION } from './codes';

export function isGif(ptr: usize, len: usize): bool {
  if (len < 13) return false;
  // "GIF87a" or "GIF89a"
  if (load<u8>(ptr) != 0x47 || load<u8>(ptr + 1) != 0x49 || load<u8>(ptr + 2) != 0x46 || load<u8>(ptr + 3) != 0x38) return false;
  const v = load<u8>(ptr + 4);
  return (v == 0x37 || v == 0x39) && load<u8>(ptr + 5) == 0x61;
}

/** Skips data sub-blocks from `pos`; returns the offset past the terminator or -1. */
@inline
function skipSubBlocks(ptr: usize, pos: usize, len: usize): isize {
  let p = pos;
  while (true) {
    if (p >= len) return -1;
    const n = <usize>load<u8>(ptr + p);
    p += 1;
    if (n == 0) return <isize>p;
    p += n;
  }
}

/** Returns the offset just past the trailer, or -1 when the walk cannot reach it. */
export function walkGif(ptr: usize, len: usize, report: bool): i32 {
  if (!isGif(ptr, len)) {
    if (report) emit(GIF_BAD_SIGNATURE, 0, 0, 0, 0, 0);
    return -1;
  }
  const flags = <u32>load<u8>(ptr + 10);
  let pos: usize = 13;
  if (flags & 0x80) pos += 3 * (<usize>2 << (flags & 7));
  while (true) {
    if (pos >= len) {
      if (report) emit(GIF_TRUNCATED, 0, <u32>min(pos, len), 0, 0, 0);
      return -1;
    }
    const b = <u32>load<u8>(ptr + pos);
    if (b == 0x3b) return <i32>(pos + 1);
    if (b == 0x2c) {
      if (pos + 10 > len) {
        if (report) emit(GIF_TRUNCATED, b, <u32>pos, 0, 0, 0);
        return -1;
      }
      const lf = <u32>load<u8>(ptr + pos + 9);
      let p = pos + 10;
      if (lf & 0x80) p += 3 * (<usize>2 << (lf & 7));
      p += 1; // LZW minimum code size
      const e = skipSubBlocks(ptr, p, len);
      if (e < 0) {
        if (report) emit(GIF_TRUNCATED, b, <u32>pos, 0, 0, 0);
        return -1;
      }
      pos = <usize>e;
      continue;
    }
    if (b == 0x21) {
      if (pos + 2 > len) {
        if (report) emit(GIF_TRUNCATED, b, <u32>pos, 0, 0, 0);
        return -1;
      }
      const label = <i32>load<u8>(ptr + pos + 1);
      const e = skipSubBlocks(ptr, pos + 2, len);
      if (e < 0) {
        if (report) emit(GIF_TRUNCATED, b, <u32>pos, 0, 0, 0);
        return -1;
      }
      if (report && (label == 0xfe || label == 0xff)) emit(GIF_EXTENSION, label, <u32>pos, <u32>(<usize>e - pos), 0, 0);
      pos = <usize>e;
      continue;
    }
    if (report) emit(GIF_BAD_BLOCK, <i32>b, <u32>pos, 0, 0, 0);
    return -1;
  }
}

/** Width * height of the logical screen, for signature validation. */
export function gifScreen(ptr: usize): u32 {
  return le16(ptr + 6) * le16(ptr + 8);
}
