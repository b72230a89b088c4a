// ZIP (APPNOTE.TXT 4.3.16): the archive ends with the end-of-central-directory
// record (22 bytes) and its comment. The EOCD is searched backwards over the last
// 64 KiB + 22 bytes; the one whose comment fits is taken.
import { emit, le16, le32 } from './output';
import { ZIP_EOCD, ZIP_NO_EOCD } from './codes';

/** Offset past the EOCD record and its comment, or -1 when there is none. */
export function zipEnd(ptr: usize, len: usize, report: bool): i32 {
  if (len < 22) {
    if (report) emit(ZIP_NO_EOCD, 0, 0, 0, 0, 0);
    return -1;
  }
  const lowest: isize = <isize>len - 22 - 65535 > 0 ? <isize>len - 22 - 65535 : 0;
  let i = <isize>len - 22;
  while (i >= lowest) {
    const p = ptr + <usize>i;
    if (load<u32>(p) == 0x06054b50) {
      const commentLen = <usize>le16(p + 20);
      const cdSize = <u64>le32(p + 12);
      const cdOffset = <u64>le32(p + 16);
      if (<usize>i + 22 + commentLen <= len && (cdSize <= <u64>i || cdSize == 0xffffffff)) {
        const start = <f64>(<i64>i - <i64>cdSize - <i64>cdOffset);
        if (report) emit(ZIP_EOCD, 0, <u32>i, <u32>(22 + <u32>commentLen), start, 0);
        return <i32>(<usize>i + 22 + commentLen);
      }
    }
    i--;
  }
  if (report) emit(ZIP_NO_EOCD, 0, 0, 0, 0, 0);
  return -1;
}
