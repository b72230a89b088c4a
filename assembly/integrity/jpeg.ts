// JPEG marker walk (ITU-T T.81 annex B): segments with lengths, standalone markers
// (RSTn, TEM), entropy-coded data after SOS up to the next real marker, to EOI.
// After the primary EOI, secondary images listed by an MPF APP2 segment (CIPA
// DC-007: multi-picture previews, HDR gain maps) are walked too, so the end of the
// file is the last EOI the format itself explains.
import { emit, be16, be32, le16, le32 } from './output';
import {
  JPEG_BAD_SIGNATURE, JPEG_TRUNCATED, JPEG_BAD_MARKER, JPEG_SEGMENT, JPEG_FIRST_EOI, JPEG_MPF_IMAGE,
} from './codes';

const MAX_MPF: i32 = 64;
const mpfEntries: usize = memory.data(MAX_MPF * 8, 8); // (offset u32, size u32), absolute
let mpfCount: i32 = 0;

/** Index of the first byte 0xFF at or after `from`, or `end`. */
@inline
function findFF(ptr: usize, from: usize, end: usize): usize {
  let p = from;
  if (ASC_FEATURE_SIMD) {
    const ff = i8x16.splat(-1);
    while (p + 16 <= end) {
      const m = i8x16.bitmask(i8x16.eq(v128.load(ptr + p), ff));
      if (m != 0) return p + <usize>ctz(m);
      p += 16;
    }
  } else {
    while (p + 8 <= end) {
      const w = load<u64>(ptr + p);
      // a byte is 0xFF exactly when its complement is zero: the classic "has zero byte" test
      const x = ~w;
      const z = (x - 0x0101010101010101) & ~x & 0x8080808080808080;
      if (z != 0) return p + <usize>(ctz(z) >> 3);
      p += 8;
    }
  }
  while (p < end) {
    if (load<u8>(ptr + p) == 0xff) return p;
    p++;
  }
  return end;
}

/** Reads the MP Entry table of an MPF segment (`seg` = its data, after the length). */
function readMpf(ptr: usize, seg: usize, segLen: usize, len: usize): void {
  if (segLen < 8 + 8 || load<u32>(ptr + seg) != 0x0046504d) return; // "MPF\0"
  const tiff = seg + 4; // offsets in MPF are relative to this TIFF header
  const tlen = segLen - 4;
  const little = load<u8>(ptr + tiff) == 0x49;
  let ifd: usize = <usize>(little ? le32(ptr + tiff + 4) : be32(ptr + tiff + 4));
  if (ifd + 2 > tlen) return;
  const n = <usize>(little ? le16(ptr + tiff + ifd) : be16(ptr + tiff + ifd));
  for (let i: usize = 0; i < n; i++) {
    const e = ifd + 2 + i * 12;
    if (e + 12 > tlen) return;
    const tag = little ? le16(ptr + tiff + e) : be16(ptr + tiff + e);
    if (tag != 0xb002) continue; // MPEntry
    const count = <usize>(little ? le32(ptr + tiff + e + 4) : be32(ptr + tiff + e + 4));
    const off = <usize>(little ? le32(ptr + tiff + e + 8) : be32(ptr + tiff + e + 8));
    if (count > 16 * 4096 || off + count > tlen) return;
    const entries = count / 16;
    for (let k: usize = 0; k < entries; k++) {
      const ent = tiff + off + k * 16;
      const size = little ? le32(ptr + ent + 4) : be32(ptr + ent + 4);
      const imgOff = little ? le32(ptr + ent + 8) : be32(ptr + ent + 8);
      if (imgOff == 0) continue; // the primary image itself
      const abs = <u64>tiff + <u64>imgOff;
      if (abs >= <u64>len || mpfCount >= MAX_MPF) continue;
      store<u32>(mpfEntries + (<usize>mpfCount << 3), <u32>abs);
      store<u32>(mpfEntries + (<usize>mpfCount << 3), size, 4);
      mpfCount++;
    }
  }
}

/**
 * Walks one JPEG from SOI at `start`. Returns the offset just past its EOI, or -1.
 * Reports APPn and COM segments when `report` is set.
 */
function walkOne(ptr: usize, start: usize, len: usize, report: bool): i32 {
  if (start + 3 > len || load<u8>(ptr + start) != 0xff || load<u8>(ptr + start + 1) != 0xd8) {
    if (report) emit(JPEG_BAD_SIGNATURE, 0, <u32>start, 0, 0, 0);
    return -1;
  }
  let pos = start + 2;
  while (true) {
    if (pos + 2 > len) {
      if (report) emit(JPEG_TRUNCATED, 0, <u32>pos, <u32>(len - pos), 0, 0);
      return -1;
    }
    if (load<u8>(ptr + pos) != 0xff) {
      if (report) emit(JPEG_BAD_MARKER, <i32>load<u8>(ptr + pos), <u32>pos, 0, 0, 0);
      return -1;
    }
    let m = <u32>load<u8>(ptr + pos + 1);
    if (m == 0xff) { // fill byte before a marker
      pos++;
      continue;
    }
    if (m == 0xd9) return <i32>(pos + 2); // EOI
    if ((m >= 0xd0 && m <= 0xd7) || m == 0x01) { // RSTn, TEM: no length
      pos += 2;
      continue;
    }
    if (m == 0xd8 || m == 0x00) {
      if (report) emit(JPEG_BAD_MARKER, <i32>m, <u32>pos, 0, 0, 0);
      return -1;
    }
    if (pos + 4 > len) {
      if (report) emit(JPEG_TRUNCATED, <i32>m, <u32>pos, <u32>(len - pos), 0, 0);
      return -1;
    }
    const segLen = <usize>be16(ptr + pos + 2);
    if (segLen < 2 || pos + 2 + segLen > len) {
      if (report) emit(JPEG_TRUNCATED, <i32>m, <u32>pos, <u32>(len - pos), 0, 0);
      return -1;
    }
    if (report && ((m >= 0xe0 && m <= 0xef) || m == 0xfe)) {
      emit(JPEG_SEGMENT, <i32>m, <u32>(pos + 4), <u32>(segLen - 2), 0, 0);
      if (m == 0xe2) readMpf(ptr, pos + 4, segLen - 2, len);
    }
    pos += 2 + segLen;
    if (m == 0xda) {
      // entropy-coded data: 0xFF is followed by 0x00 (stuffing), RSTn, or a real marker
      while (true) {
        const ff = findFF(ptr, pos, len);
        if (ff + 1 >= len) {
          if (report) emit(JPEG_TRUNCATED, 0xda, <u32>ff, <u32>(len - ff), 0, 0);
          return -1;
        }
        const next = <u32>load<u8>(ptr + ff + 1);
        if (next == 0x00 || (next >= 0xd0 && next <= 0xd7)) {
          pos = ff + 2;
          continue;
        }
        if (next == 0xff) { // fill byte: the marker (or stuffing) follows the last 0xFF of the run
          pos = ff + 1;
          continue;
        }
        pos = ff;
        break;
      }
    }
  }
}

/**
 * Walks the JPEG at `ptr` and the MPF secondary images after it. Returns the
 * offset past the last explained EOI, or -1 when the primary image is broken.
 */
export function walkJpeg(ptr: usize, len: usize): i32 {
  mpfCount = 0;
  const first = walkOne(ptr, 0, len, true);
  if (first < 0) return -1;
  emit(JPEG_FIRST_EOI, 0, <u32>first, 0, 0, 0);
  let end = first;
  // secondary images in file order
  for (let i = 0; i < mpfCount; i++) {
    for (let j = i + 1; j < mpfCount; j++) {
      const a = load<u32>(mpfEntries + (<usize>i << 3));
      const b = load<u32>(mpfEntries + (<usize>j << 3));
      if (b < a) {
        const sa = load<u32>(mpfEntries + (<usize>i << 3), 4);
        store<u32>(mpfEntries + (<usize>i << 3), b);
        store<u32>(mpfEntries + (<usize>i << 3), load<u32>(mpfEntries + (<usize>j << 3), 4), 4);
        store<u32>(mpfEntries + (<usize>j << 3), a);
        store<u32>(mpfEntries + (<usize>j << 3), sa, 4);
      }
    }
  }
  for (let i = 0; i < mpfCount; i++) {
    const off = <usize>load<u32>(mpfEntries + (<usize>i << 3));
    const size = load<u32>(mpfEntries + (<usize>i << 3), 4);
    const e = walkOne(ptr, off, len, false);
    emit(JPEG_MPF_IMAGE, 0, <u32>off, size, e >= 0 ? 1 : 0, 0);
    if (e > end) end = e;
  }
  return end;
}

/** Walks one JPEG at `ptr` without reporting segments: its end, or -1. */
export function jpegExtent(ptr: usize, len: usize): i32 {
  return walkOne(ptr, 0, len, false);
}
