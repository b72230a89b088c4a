// Where a container format says its data ends: RIFF (WAV, AVI, WebP) by its size
// field, BMP by bfSize, Ogg by walking pages to the end-of-stream page, ISO BMFF
// (MP4, MOV) by walking top-level boxes. Each returns -1 when the walk breaks.
import { emit, le32, be32 } from './output';
import { CONTAINER_END, CONTAINER_BAD, ID3_FRAME, FLAC_BLOCK } from './codes';

/** RIFF: "RIFF" + u32le size of what follows + form type; padded to even. */
export function riffEnd(ptr: usize, len: usize): i32 {
  if (len < 12 || load<u32>(ptr) != 0x46464952) return -1;
  let end = <u64>le32(ptr + 4) + 8;
  if (end & 1) end++;
  if (end > <u64>len) {
    emit(CONTAINER_BAD, 0, <u32>len, 0, <f64>end, 0);
    return -1;
  }
  emit(CONTAINER_END, 0, <u32>end, 0, 0, 0);
  return <i32>end;
}

/** BMP: bfSize is the whole file size; 0 is tolerated by readers, so it tells nothing. */
export function bmpEnd(ptr: usize, len: usize): i32 {
  if (len < 26 || load<u16>(ptr) != 0x4d42) return -1;
  const size = <u64>le32(ptr + 2);
  const dataOffset = <u64>le32(ptr + 10);
  if (size == 0 || size < dataOffset) return -1;
  if (size > <u64>len) {
    emit(CONTAINER_BAD, 0, <u32>len, 0, <f64>size, 0);
    return -1;
  }
  emit(CONTAINER_END, 0, <u32>size, 0, 0, 0);
  return <i32>size;
}

/** Ogg (RFC 3533): pages "OggS" with segment tables; ends after the last page. */
export function oggEnd(ptr: usize, len: usize): i32 {
  let pos: usize = 0;
  let last: isize = -1;
  while (pos + 27 <= len && load<u32>(ptr + pos) == 0x5367674f) {
    const segs = <usize>load<u8>(ptr + pos + 26);
    if (pos + 27 + segs > len) break;
    let body: usize = 0;
    for (let i: usize = 0; i < segs; i++) body += <usize>load<u8>(ptr + pos + 27 + i);
    const next = pos + 27 + segs + body;
    if (next > len) break;
    pos = next;
    last = <isize>pos;
  }
  if (last < 0) return -1;
  if (<usize>last < len && (len - <usize>last) >= 4 && load<u32>(ptr + <usize>last) == 0x5367674f) {
    emit(CONTAINER_BAD, 0, <u32>last, 0, 0, 0); // a truncated page
    return -1;
  }
  emit(CONTAINER_END, 0, <u32>last, 0, 0, 0);
  return <i32>last;
}

@inline
function boxTypeOk(t: u32): bool {
  // four printable ASCII characters (or (c) 0xA9 as in QuickTime)
  for (let i = 0; i < 4; i++) {
    const c = (t >>> (i * 8)) & 0xff;
    if (!((c >= 0x20 && c <= 0x7e) || c == 0xa9)) return false;
  }
  return true;
}

/** ISO BMFF (ISO/IEC 14496-12 4.2): top-level boxes with 32- or 64-bit sizes. */
export function isoBmffEnd(ptr: usize, len: usize): i32 {
  let pos: u64 = 0;
  let boxes = 0;
  while (pos + 8 <= <u64>len) {
    const p = ptr + <usize>pos;
    let size = <u64>be32(p);
    const type = load<u32>(p + 4);
    if (!boxTypeOk(type)) break;
    if (size == 1) {
      if (pos + 16 > <u64>len) break;
      size = (<u64>be32(p + 8) << 32) | <u64>be32(p + 12);
      if (size < 16) break;
    } else if (size == 0) {
      size = <u64>len - pos; // to the end of the file
    } else if (size < 8) break;
    if (pos + size > <u64>len) {
      emit(CONTAINER_BAD, 0, <u32>pos, 0, <f64>(pos + size), 0);
      return -1;
    }
    pos += size;
    boxes++;
  }
  if (boxes == 0) return -1;
  emit(CONTAINER_END, 0, <u32>pos, 0, 0, 0);
  return <i32>pos;
}

/** Searches the top-level `moov` box of an MP4 for a location atom (QuickTime "\xA9xyz"). */
export function mp4HasLocation(ptr: usize, len: usize): i32 {
  for (let i: usize = 0; i + 4 <= len; i++) {
    if (load<u32>(ptr + i) == 0x7a7978a9) return <i32>i;
  }
  return -1;
}

/** ID3v2 synchsafe 28-bit integer. */
@inline
function synchsafe(p: usize): u32 {
  return ((<u32>load<u8>(p) & 0x7f) << 21) | ((<u32>load<u8>(p + 1) & 0x7f) << 14) |
    ((<u32>load<u8>(p + 2) & 0x7f) << 7) | (<u32>load<u8>(p + 3) & 0x7f);
}

/**
 * ID3v2 tag at the start of an MP3 (id3.org v2.3/v2.4): reports each frame as
 * ID3_FRAME (aux = frame id). Returns the tag's total size, or 0 when absent.
 */
export function walkId3(ptr: usize, len: usize): i32 {
  if (len < 10 || load<u8>(ptr) != 0x49 || load<u8>(ptr + 1) != 0x44 || load<u8>(ptr + 2) != 0x33) return 0;
  const major = <u32>load<u8>(ptr + 3);
  const flags = <u32>load<u8>(ptr + 5);
  const size = <usize>synchsafe(ptr + 6);
  let end: usize = 10 + size + ((flags & 0x10) != 0 ? 10 : 0);
  if (end > len) {
    emit(CONTAINER_BAD, 0x494433, <u32>len, 0, <f64>end, 0);
    end = len;
  }
  if (major < 3 || major > 4) return <i32>end; // v2.2 frames (3-byte ids) are not itemised
  let pos: usize = 10;
  if ((flags & 0x40) != 0 && pos + 4 <= end) { // extended header
    const ext = major == 4 ? <usize>synchsafe(ptr + pos) : <usize>be32(ptr + pos) + 4;
    pos += ext;
  }
  while (pos + 10 <= end) {
    const id = be32(ptr + pos);
    if (id == 0) break; // padding
    const fsize = major == 4 ? <usize>synchsafe(ptr + pos + 4) : <usize>be32(ptr + pos + 4);
    if (fsize > end - pos - 10) {
      emit(CONTAINER_BAD, <i32>id, <u32>pos, 0, 0, 0);
      break;
    }
    emit(ID3_FRAME, <i32>id, <u32>(pos + 10), <u32>fsize, 0, 0);
    pos += 10 + fsize;
  }
  return <i32>end;
}

/** FLAC metadata blocks after "fLaC" (RFC 9639 8.1): reports each, returns the audio start. */
export function walkFlac(ptr: usize, len: usize): i32 {
  if (len < 8 || load<u32>(ptr) != 0x43614c66) return -1;
  let pos: usize = 4;
  while (pos + 4 <= len) {
    const h = <u32>load<u8>(ptr + pos);
    const size = (<usize>load<u8>(ptr + pos + 1) << 16) | (<usize>load<u8>(ptr + pos + 2) << 8) | <usize>load<u8>(ptr + pos + 3);
    if (pos + 4 + size > len) {
      emit(CONTAINER_BAD, <i32>(h & 0x7f), <u32>pos, 0, 0, 0);
      return -1;
    }
    emit(FLAC_BLOCK, <i32>(h & 0x7f), <u32>(pos + 4), <u32>size, 0, 0);
    pos += 4 + size;
    if (h & 0x80) return <i32>pos;
  }
  return -1;
}
