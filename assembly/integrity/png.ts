// PNG chunk walk (ISO/IEC 15948 / PNG spec 5.3): length, type, data, CRC-32 over
// type + data, up to and including IEND. Ancillary and unknown chunks are reported
// so the host can inspect metadata and scan them for embedded files.
import { emit, be32 } from './output';
import { crc32 } from './crc32';
import { PNG_BAD_SIGNATURE, PNG_TRUNCATED, PNG_CRC_MISMATCH, PNG_CHUNK, PNG_IHDR } from './codes';

const IHDR: u32 = 0x49484452;
const IDAT: u32 = 0x49444154;
const IEND: u32 = 0x49454e44;
const PLTE: u32 = 0x504c5445;

/** True when the 8-byte PNG signature is at `ptr`. */
export function isPng(ptr: usize, len: usize): bool {
  return len >= 8 && load<u64>(ptr) == 0x0a1a0a0d474e5089;
}

/**
 * Walks the chunks of the PNG at `ptr`. Returns the offset just past IEND's CRC,
 * or -1 when the file is not a PNG or the walk cannot reach IEND. With
 * `verifyCrc` false only the structure is walked (for signatures found elsewhere).
 */
export function walkPng(ptr: usize, len: usize, base: u32, verifyCrc: bool): i32 {
  if (!isPng(ptr, len)) {
    emit(PNG_BAD_SIGNATURE, 0, base, 0, 0, 0);
    return -1;
  }
  let pos: usize = 8;
  while (true) {
    if (pos + 12 > len) {
      emit(PNG_TRUNCATED, 0, base + <u32>pos, <u32>(len - pos), 0, 0);
      return -1;
    }
    const length = <usize>be32(ptr + pos);
    const type = be32(ptr + pos + 4);
    if (length > 0x7fffffff || length > len - pos - 12) {
      emit(PNG_TRUNCATED, <i32>type, base + <u32>pos, <u32>(len - pos), 0, 0);
      return -1;
    }
    if (verifyCrc) {
      const want = be32(ptr + pos + 8 + length);
      if (crc32(ptr + pos + 4, length + 4) != want) {
        emit(PNG_CRC_MISMATCH, <i32>type, base + <u32>pos, <u32>(length + 12), 0, 0);
      }
    }
    if (type == IHDR && length >= 13) {
      emit(PNG_IHDR, 0, base + <u32>(pos + 8), <u32>length, <f64>load<u8>(ptr + pos + 17), <f64>load<u8>(ptr + pos + 16));
    } else if (type != IDAT && type != IEND && type != PLTE) {
      emit(PNG_CHUNK, <i32>type, base + <u32>(pos + 8), <u32>length, 0, 0);
    }
    pos += 12 + length;
    if (type == IEND) return <i32>pos;
  }
}
