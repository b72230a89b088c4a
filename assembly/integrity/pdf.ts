// PDF: the end of the file is the last "%%EOF" plus end-of-line whitespace
// (ISO 32000-1 7.5.5; incremental updates append more, so the last one counts).
// Names that make a document active are found by tokenising every "/Name",
// with #xx escapes decoded (7.3.5), so "/J#61vaScript" is still JavaScript.
import { emit } from './output';
import {
  PDF_NO_EOF, PDF_NAME, PDF_NAME_JAVASCRIPT, PDF_NAME_JS, PDF_NAME_LAUNCH, PDF_NAME_EMBEDDED_FILE,
  PDF_NAME_OPEN_ACTION, PDF_NAME_AA, PDF_NAME_OBJSTM,
} from './codes';

/** Offset past the last %%EOF and its trailing whitespace, or -1. */
export function pdfEnd(ptr: usize, len: usize): i32 {
  if (len < 5) {
    emit(PDF_NO_EOF, 0, 0, 0, 0, 0);
    return -1;
  }
  let i = <isize>len - 5;
  while (i >= 0) {
    const p = ptr + <usize>i;
    if (load<u8>(p) == 0x25 && load<u8>(p + 1) == 0x25 && load<u8>(p + 2) == 0x45 && load<u8>(p + 3) == 0x4f && load<u8>(p + 4) == 0x46) {
      let e = <usize>i + 5;
      while (e < len) {
        const c = load<u8>(ptr + e);
        if (c != 0x0d && c != 0x0a && c != 0x20 && c != 0x09 && c != 0x0c) break;
        e++;
      }
      return <i32>e;
    }
    i--;
  }
  emit(PDF_NO_EOF, 0, 0, 0, 0, 0);
  return -1;
}

@inline
function isDelimiter(c: u32): bool {
  // whitespace and the delimiters ( ) < > [ ] { } / %
  return c == 0x00 || c == 0x09 || c == 0x0a || c == 0x0c || c == 0x0d || c == 0x20 ||
    c == 0x28 || c == 0x29 || c == 0x3c || c == 0x3e || c == 0x5b || c == 0x5d ||
    c == 0x7b || c == 0x7d || c == 0x2f || c == 0x25;
}

@inline
function hex(c: u32): i32 {
  if (c >= 0x30 && c <= 0x39) return <i32>(c - 0x30);
  if (c >= 0x41 && c <= 0x46) return <i32>(c - 0x37);
  if (c >= 0x61 && c <= 0x66) return <i32>(c - 0x57);
  return -1;
}

const nameBuf: usize = memory.data(32, 8);

@inline
function nameIs(n: usize, text: string): bool {
  // `text` is a compile-time literal; read it as UTF-16 code units without allocating
  if (n != <usize>text.length) return false;
  const s = changetype<usize>(text);
  for (let i: usize = 0; i < n; i++) {
    if (<u32>load<u8>(nameBuf + i) != <u32>load<u16>(s + (i << 1))) return false;
  }
  return true;
}

/** Reports every name token of interest in `len` bytes at `ptr`. Returns how many. */
export function pdfScanNames(ptr: usize, len: usize, base: u32): i32 {
  let found = 0;
  let i: usize = 0;
  while (i < len) {
    if (load<u8>(ptr + i) != 0x2f) {
      i++;
      continue;
    }
    const start = i;
    i++;
    let n: usize = 0;
    let overflow = false;
    while (i < len) {
      let c = <u32>load<u8>(ptr + i);
      if (isDelimiter(c)) break;
      if (c == 0x23 && i + 2 < len) {
        const h = hex(<u32>load<u8>(ptr + i + 1));
        const l = hex(<u32>load<u8>(ptr + i + 2));
        if (h >= 0 && l >= 0) {
          c = <u32>((h << 4) | l);
          i += 2;
        }
      }
      if (n < 32) store<u8>(nameBuf + n, <u8>c);
      else overflow = true;
      n++;
      i++;
    }
    if (overflow) continue;
    let kind = 0;
    if (nameIs(n, 'JavaScript')) kind = PDF_NAME_JAVASCRIPT;
    else if (nameIs(n, 'JS')) kind = PDF_NAME_JS;
    else if (nameIs(n, 'Launch')) kind = PDF_NAME_LAUNCH;
    else if (nameIs(n, 'EmbeddedFile')) kind = PDF_NAME_EMBEDDED_FILE;
    else if (nameIs(n, 'OpenAction')) kind = PDF_NAME_OPEN_ACTION;
    else if (nameIs(n, 'AA')) kind = PDF_NAME_AA;
    else if (nameIs(n, 'ObjStm')) kind = PDF_NAME_OBJSTM;
    if (kind != 0) {
      emit(PDF_NAME, kind, base + <u32>start, <u32>(i - start), 0, 0);
      found++;
    }
  }
  return found;
}
