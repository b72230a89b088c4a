// TIFF / EXIF IFD walk (TIFF 6.0 section 2, EXIF 2.32 4.6): IFD0 and its chain,
// the EXIF, GPS, Interoperability and SubIFD directories. Used for EXIF blocks
// (JPEG APP1, PNG eXIf, WebP EXIF) and for whole TIFF files, where the largest
// extent of any directory, value or strip/tile is where the file's data ends.
import { emit, be16, be32, le16, le32 } from './output';
import { EXIF_GPS, EXIF_THUMBNAIL, EXIF_BAD, EXIF_TAG } from './codes';

const MAX_IFDS: i32 = 64;
const queue: usize = memory.data(MAX_IFDS * 4, 4);
let queued: i32 = 0;
let little: bool = true;
let extent: u64 = 0;

@inline function r16(p: usize): u32 { return little ? le16(p) : be16(p); }
@inline function r32(p: usize): u32 { return little ? le32(p) : be32(p); }

@inline
function typeSize(t: u32): u32 {
  if (t == 1 || t == 2 || t == 6 || t == 7) return 1;
  if (t == 3 || t == 8) return 2;
  if (t == 4 || t == 9 || t == 11 || t == 13) return 4;
  if (t == 5 || t == 10 || t == 12) return 8;
  return 0;
}

function enqueue(off: u32): void {
  if (off == 0 || queued >= MAX_IFDS) return;
  for (let i = 0; i < queued; i++) if (load<u32>(queue + (<usize>i << 2)) == off) return;
  store<u32>(queue + (<usize>queued << 2), off);
  queued++;
}

@inline
function grow(e: u64): void {
  if (e > extent) extent = e;
}

/** The i-th value (SHORT or LONG) of an array entry whose data is at `p`. */
@inline
function arrayValue(type: u32, p: usize, i: usize): u64 {
  return type == 3 ? <u64>r16(p + (i << 1)) : <u64>r32(p + (i << 2));
}

/** An unsigned RATIONAL at `p` as f64 (NaN for x/0). */
@inline
function rational(p: usize): f64 {
  const d = r32(p + 4);
  return d == 0 ? NaN : <f64>r32(p) / <f64>d;
}

/** Degrees from three RATIONALs (degrees, minutes, seconds). */
function degrees(ptr: usize, at: usize): f64 {
  return rational(ptr + at) + rational(ptr + at + 8) / 60.0 + rational(ptr + at + 16) / 3600.0;
}

/**
 * Walks the TIFF structure of `len` bytes at `ptr`. Reports GPS positions, the
 * IFD1 thumbnail, notable tags and broken directories. Returns the structure's
 * extent (the highest offset it references), or -1 when there is no TIFF header.
 */
export function walkTiff(ptr: usize, len: usize): i32 {
  if (len < 8) return -1;
  const order = load<u16>(ptr);
  if (order == 0x4949) little = true;
  else if (order == 0x4d4d) little = false;
  else return -1;
  if (r16(ptr + 2) != 42) return -1;
  queued = 0;
  extent = 8;
  enqueue(r32(ptr + 4));
  let gpsIfd: u32 = 0;
  for (let qi = 0; qi < queued; qi++) {
    const off = <usize>load<u32>(queue + (<usize>qi << 2));
    if (off + 2 > len) {
      emit(EXIF_BAD, 0, <u32>off, 0, 0, 0);
      continue;
    }
    const n = <usize>r16(ptr + off);
    if (off + 2 + n * 12 + 4 > len) {
      emit(EXIF_BAD, 1, <u32>off, 0, 0, 0);
      continue;
    }
    grow(<u64>(off + 2 + n * 12 + 4));
    let stripOff: usize = 0, stripOffType: u32 = 0, stripOffCount: usize = 0;
    let stripLen: usize = 0, stripLenType: u32 = 0, stripLenCount: usize = 0;
    let thumbOff: u32 = 0, thumbLen: u32 = 0;
    for (let i: usize = 0; i < n; i++) {
      const e = ptr + off + 2 + i * 12;
      const tag = r16(e);
      const type = r16(e + 2);
      const count = <u64>r32(e + 4);
      const size = count * <u64>typeSize(type);
      let dataAt: usize = off + 2 + i * 12 + 8; // inline value
      if (size > 4) {
        const at = <u64>r32(e + 8);
        if (at + size > <u64>len) {
          emit(EXIF_BAD, <i32>tag, <u32>(off + 2 + i * 12), 0, 0, 0);
          continue;
        }
        dataAt = <usize>at;
        grow(at + size);
      }
      if (tag == 0x8769 || tag == 0xa005 || tag == 0x8825) { // EXIF, Interop, GPS IFD pointers
        const sub = r32(e + 8);
        if (tag == 0x8825) gpsIfd = sub;
        enqueue(sub);
      } else if (tag == 0x014a && (type == 4 || type == 13)) { // SubIFDs
        for (let k: usize = 0; k < <usize>count && k < 16; k++) enqueue(r32(ptr + dataAt + (k << 2)));
      } else if (tag == 0x0111 || tag == 0x0144) { // StripOffsets, TileOffsets
        stripOff = dataAt; stripOffType = type; stripOffCount = <usize>count;
      } else if (tag == 0x0117 || tag == 0x0145) { // StripByteCounts, TileByteCounts
        stripLen = dataAt; stripLenType = type; stripLenCount = <usize>count;
      } else if (tag == 0x0201) {
        thumbOff = r32(e + 8);
      } else if (tag == 0x0202) {
        thumbLen = r32(e + 8);
      } else if (tag == 700 || tag == 33723 || tag == 34377 || tag == 34675 || tag == 0x9286 || tag == 0x010e || tag == 0x927c) {
        emit(EXIF_TAG, <i32>tag, <u32>dataAt, <u32>min<u64>(size, 0xffffffff), 0, 0);
      }
    }
    if (stripOffCount > 0 && stripOffCount == stripLenCount && (stripOffType == 3 || stripOffType == 4) && (stripLenType == 3 || stripLenType == 4)) {
      for (let k: usize = 0; k < stripOffCount; k++) {
        const e = arrayValue(stripOffType, ptr + stripOff, k) + arrayValue(stripLenType, ptr + stripLen, k);
        if (e <= <u64>len) grow(e);
        else emit(EXIF_BAD, 0x0111, <u32>min<u64>(e, 0xffffffff), 0, 0, 0);
      }
    }
    if (thumbLen > 0) {
      if (<u64>thumbOff + <u64>thumbLen <= <u64>len) {
        emit(EXIF_THUMBNAIL, 0, thumbOff, thumbLen, 0, 0);
        grow(<u64>thumbOff + <u64>thumbLen);
      } else emit(EXIF_BAD, 0x0201, thumbOff, thumbLen, 0, 0);
    }
    enqueue(r32(ptr + off + 2 + n * 12)); // the next IFD in the chain
    if (gpsIfd != 0 && off == <usize>gpsIfd) gpsPosition(ptr, off, n, len);
  }
  return <i32>extent;
}

/** Reports the GPS position of the GPS IFD at `off` when latitude and longitude are present. */
function gpsPosition(ptr: usize, off: usize, n: usize, len: usize): void {
  let lat: f64 = NaN, lon: f64 = NaN;
  let latRef: u32 = 0, lonRef: u32 = 0;
  for (let i: usize = 0; i < n; i++) {
    const e = ptr + off + 2 + i * 12;
    const tag = r16(e);
    const type = r16(e + 2);
    const count = r32(e + 4);
    if (tag == 1 || tag == 3) {
      const c = <u32>load<u8>(e + 8);
      if (tag == 1) latRef = c; else lonRef = c;
    } else if ((tag == 2 || tag == 4) && type == 5 && count == 3) {
      const at = <u64>r32(e + 8);
      if (at + 24 > <u64>len) continue;
      const d = degrees(ptr, <usize>at);
      if (tag == 2) lat = d; else lon = d;
    }
  }
  if (isNaN(lat) && isNaN(lon)) return;
  if (latRef == 0x53) lat = -lat; // 'S'
  if (lonRef == 0x57) lon = -lon; // 'W'
  emit(EXIF_GPS, 0, <u32>off, 0, lat, lon);
}
