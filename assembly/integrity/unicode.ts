// Unicode steganography scan of UTF-8 / UTF-16 text: invisible characters (zero
// width, Unicode tags U+E0000-E007F, variation selectors), bidirectional controls
// (the "Trojan Source" trick), words mixing Latin with Cyrillic or Greek look-alikes,
// and trailing-whitespace encodings (SNOW-style tabs and spaces at line ends).
// Context decides whether a character is explained: a ZWJ between emoji, ZWNJ in
// Arabic or Indic text, tags after the black flag (subdivision flags), VS16 after a
// symbol. Findings are capped per kind; the counts in the stats block are exact.
import { emit, setStat, getStat } from './output';
import {
  TEXT_ZERO_WIDTH, TEXT_TAG, TEXT_VARIATION, TEXT_BIDI, TEXT_CONFUSABLE, TEXT_TRAILING_WS, TEXT_INVALID,
} from './codes';

export const ENC_UTF8: i32 = 0;
export const ENC_UTF16LE: i32 = 1;
export const ENC_UTF16BE: i32 = 2;

// stats slots
const S_VALID = 0, S_CODEPOINTS = 1, S_FIRST_INVALID = 2, S_NUL = 3, S_CONTROL = 4;
const S_ZW = 5, S_ZW_OK = 6, S_TAG = 7, S_TAG_OK = 8, S_VS = 9, S_VS_OK = 10;
const S_BIDI_OVERRIDE = 11, S_BIDI_OPEN = 12, S_BIDI_CLOSE = 13, S_BIDI_MARK = 14, S_RTL = 15;
const S_CONFUSABLE = 16, S_LINES = 17, S_TRAILING = 18, S_TRAILING_SUSPECT = 19, S_BIDI_UNBALANCED = 20;
const S_PRINTABLE = 21, S_TRAILING_BYTES = 22;

const CAP: i32 = 64;
const emitted: usize = memory.data(16 * 4, 4); // findings emitted per kind

@inline
function bump(slot: i32): void {
  setStat(slot, getStat(slot) + 1);
}

function report(code: i32, aux: i32, offset: u32, length: u32, value: f64): void {
  const k = <usize>(code - TEXT_ZERO_WIDTH) << 2;
  const n = load<i32>(emitted + k);
  if (n < CAP) {
    store<i32>(emitted + k, n + 1);
    emit(code, aux, offset, length, value, 0);
  }
}

@inline function isEmoji(c: u32): bool {
  return (c >= 0x1f000 && c <= 0x1faff) || (c >= 0x2600 && c <= 0x27bf) || c == 0xfe0f || (c >= 0x2190 && c <= 0x21ff) ||
    (c >= 0x2300 && c <= 0x23ff) || (c >= 0x2b00 && c <= 0x2bff) || c == 0x00a9 || c == 0x00ae || c == 0x203c || c == 0x2049 ||
    c == 0x2122 || c == 0x2139 || c == 0x3030 || c == 0x303d || c == 0x3297 || c == 0x3299;
}

@inline function isJoiningScript(c: u32): bool {
  // Arabic, Syriac, Thaana, NKo, Arabic supplements, Indic (Devanagari..Malayalam, Sinhala),
  // Myanmar, Mongolian, Arabic presentation forms
  return (c >= 0x0600 && c <= 0x08ff) || (c >= 0x0900 && c <= 0x0dff) || (c >= 0x1000 && c <= 0x109f) ||
    (c >= 0x1800 && c <= 0x18af) || (c >= 0xa8e0 && c <= 0xa8ff) || (c >= 0xfb50 && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfeff);
}

@inline function isRtl(c: u32): bool {
  return (c >= 0x0590 && c <= 0x08ff) || (c >= 0xfb1d && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfefe) ||
    (c >= 0x10800 && c <= 0x10fff) || (c >= 0x1e800 && c <= 0x1efff);
}

@inline function isHan(c: u32): bool {
  return (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0x20000 && c <= 0x3ffff);
}

@inline function isVariationSelector(c: u32): bool {
  return (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0100 && c <= 0xe01ef);
}

@inline function isZeroWidth(c: u32, offset: usize): bool {
  return (c >= 0x200b && c <= 0x200d) || (c >= 0x2060 && c <= 0x2064) || c == 0x180e || c == 0x034f ||
    c == 0x115f || c == 0x1160 || c == 0x3164 || c == 0xffa0 || c == 0x17b4 || c == 0x17b5 || (c == 0xfeff && offset != 0);
}

@inline function isBidi(c: u32): bool {
  return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c;
}

@inline function isPrintable(c: u32): bool {
  if (c < 0x20) return c == 0x09 || c == 0x0a || c == 0x0d || c == 0x0c || c == 0x0b;
  if (c == 0x7f || (c >= 0x80 && c <= 0x9f)) return false;
  if ((c & 0xfffe) == 0xfffe) return false; // noncharacters U+xxFFFE/U+xxFFFF
  return true;
}

// scripts for look-alike words
const LATIN: i32 = 1, CYRILLIC: i32 = 2, GREEK: i32 = 4;

@inline function scriptOf(c: u32): i32 {
  if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c <= 0x24f && c != 0xd7 && c != 0xf7) || (c >= 0x1e00 && c <= 0x1eff)) return LATIN;
  if (c >= 0x400 && c <= 0x52f) return CYRILLIC;
  if ((c >= 0x370 && c <= 0x3ff) || (c >= 0x1f00 && c <= 0x1fff)) return GREEK;
  return 0;
}

@inline function latinLikeCyrillic(c: u32): bool {
  // a c e i j o p s x y h d and A B C E H I J K M O P S T X Y
  return c == 0x61 || c == 0x63 || c == 0x65 || c == 0x69 || c == 0x6a || c == 0x6f || c == 0x70 || c == 0x73 || c == 0x78 || c == 0x79 ||
    c == 0x68 || c == 0x64 || c == 0x41 || c == 0x42 || c == 0x43 || c == 0x45 || c == 0x48 || c == 0x49 || c == 0x4a || c == 0x4b ||
    c == 0x4d || c == 0x4f || c == 0x50 || c == 0x53 || c == 0x54 || c == 0x58 || c == 0x59;
}

@inline function latinLikeGreek(c: u32): bool {
  // o v i k p u and A B E H I K M N O P T X Y Z
  return c == 0x6f || c == 0x76 || c == 0x69 || c == 0x6b || c == 0x70 || c == 0x75 || c == 0x41 || c == 0x42 || c == 0x45 || c == 0x48 ||
    c == 0x49 || c == 0x4b || c == 0x4d || c == 0x4e || c == 0x4f || c == 0x50 || c == 0x54 || c == 0x58 || c == 0x59 || c == 0x5a;
}

@inline function cyrillicLikeLatin(c: u32): bool {
  return c == 0x430 || c == 0x435 || c == 0x43e || c == 0x440 || c == 0x441 || c == 0x443 || c == 0x445 || c == 0x455 || c == 0x456 ||
    c == 0x458 || c == 0x501 || c == 0x4bb || c == 0x410 || c == 0x412 || c == 0x415 || c == 0x41a || c == 0x41c || c == 0x41d ||
    c == 0x41e || c == 0x420 || c == 0x421 || c == 0x422 || c == 0x425 || c == 0x405 || c == 0x406 || c == 0x408 || c == 0x4ae;
}

@inline function greekLikeLatin(c: u32): bool {
  return c == 0x391 || c == 0x392 || c == 0x395 || c == 0x396 || c == 0x397 || c == 0x399 || c == 0x39a || c == 0x39c || c == 0x39d ||
    c == 0x39f || c == 0x3a1 || c == 0x3a4 || c == 0x3a5 || c == 0x3a7 || c == 0x3bf || c == 0x3bd || c == 0x3c1 || c == 0x3b9 ||
    c == 0x3ba || c == 0x3c5 || c == 0x3f2 || c == 0x3f3;
}

@inline function isWordChar(c: u32): bool {
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  if (c < 0xc0 || c == 0xd7 || c == 0xf7) return false;
  if ((c >= 0x2000 && c <= 0x2bff) || (c >= 0x3000 && c <= 0x303f) || (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff) return false;
  if (c >= 0xe0000 || (c >= 0x1f000 && c <= 0x1faff)) return false;
  return true;
}

// per-word state
let wordStart: u32 = 0, wordEnd: u32 = 0, wordLetters: i32 = 0;
let nLatin: i32 = 0, nCyr: i32 = 0, nGreek: i32 = 0;
let latConfCyr: i32 = 0, latConfGreek: i32 = 0, cyrConf: i32 = 0, greekConf: i32 = 0;

@inline function minorityConfusable(nA: i32, confA: i32, nB: i32, confB: i32): bool {
  if (nA == 0 || nB == 0) return false;
  if (nA < nB) return confA > 0;
  if (nB < nA) return confB > 0;
  return confA > 0 || confB > 0;
}

function endWord(): void {
  if (wordLetters >= 2) {
    const mixed = minorityConfusable(nLatin, latConfCyr, nCyr, cyrConf) || minorityConfusable(nLatin, latConfGreek, nGreek, greekConf) ||
      minorityConfusable(nCyr, cyrConf, nGreek, greekConf);
    if (mixed) {
      bump(S_CONFUSABLE);
      const scripts = (nLatin > 0 ? LATIN : 0) | (nCyr > 0 ? CYRILLIC : 0) | (nGreek > 0 ? GREEK : 0);
      report(TEXT_CONFUSABLE, scripts, wordStart, wordEnd - wordStart, 0);
    }
  }
  wordLetters = 0; nLatin = 0; nCyr = 0; nGreek = 0;
  latConfCyr = 0; latConfGreek = 0; cyrConf = 0; greekConf = 0;
}

// per-line state for trailing whitespace
let lineHasContent: bool = false;
let wsStart: u32 = 0, wsLen: i32 = 0, wsTabs: i32 = 0, wsSpaces: i32 = 0;
let bidiDepth: i32 = 0;
let inTagSequence: bool = false;

function endLine(offset: u32): void {
  bump(S_LINES);
  if (lineHasContent && wsLen > 0) {
    bump(S_TRAILING);
    setStat(S_TRAILING_BYTES, getStat(S_TRAILING_BYTES) + <f64>wsLen);
    const mixed = wsTabs > 0 && wsSpaces > 0;
    if (mixed || wsLen >= 8) {
      bump(S_TRAILING_SUSPECT);
      report(TEXT_TRAILING_WS, mixed ? 1 : 0, wsStart, offset - wsStart, <f64>wsLen);
    }
  }
  lineHasContent = false;
  wsLen = 0; wsTabs = 0; wsSpaces = 0;
}

/** Examines `cur` (at `off`, `n` bytes) between `prev` and `next` (0 at the ends). */
function visit(prev: u32, cur: u32, off: u32, n: u32, next: u32): void {
  if (cur == 0) bump(S_NUL);
  if (isPrintable(cur)) bump(S_PRINTABLE);
  else bump(S_CONTROL);
  if (isRtl(cur)) bump(S_RTL);

  // lines
  if (cur == 0x0a || cur == 0x0d || cur == 0x2028 || cur == 0x2029) {
    if (!(cur == 0x0a && prev == 0x0d)) endLine(off);
  } else if (cur == 0x20 || cur == 0x09) {
    if (wsLen == 0) wsStart = off;
    wsLen++;
    if (cur == 0x09) wsTabs++; else wsSpaces++;
  } else {
    lineHasContent = true;
    wsLen = 0; wsTabs = 0; wsSpaces = 0;
  }

  // words (invisible characters do not split a word: they are how look-alikes hide)
  const invisible = isZeroWidth(cur, off) || isVariationSelector(cur) || (cur >= 0xe0000 && cur <= 0xe007f);
  if (isWordChar(cur)) {
    if (wordLetters == 0 && nLatin == 0 && nCyr == 0 && nGreek == 0) wordStart = off;
    wordLetters++;
    wordEnd = off + n;
    const s = scriptOf(cur);
    if (s == LATIN) {
      nLatin++;
      if (latinLikeCyrillic(cur)) latConfCyr++;
      if (latinLikeGreek(cur)) latConfGreek++;
    } else if (s == CYRILLIC) {
      nCyr++;
      if (cyrillicLikeLatin(cur)) cyrConf++;
    } else if (s == GREEK) {
      nGreek++;
      if (greekLikeLatin(cur)) greekConf++;
    }
  } else if (!invisible && wordLetters > 0) endWord();

  if (isZeroWidth(cur, off)) {
    let explained = false;
    if (cur == 0x200d) explained = (isEmoji(prev) || (prev >= 0x1f3fb && prev <= 0x1f3ff)) && isEmoji(next);
    if ((cur == 0x200c || cur == 0x200d) && (isJoiningScript(prev) || isJoiningScript(next))) explained = true;
    if (explained) bump(S_ZW_OK);
    else bump(S_ZW);
    report(TEXT_ZERO_WIDTH, <i32>cur, off, n, explained ? 1 : 0);
  } else if (cur >= 0xe0000 && cur <= 0xe007f) {
    // emoji tag sequence: U+1F3F4 then tags E0020-E007E, closed by E007F
    let explained = false;
    if (cur >= 0xe0020 && cur <= 0xe007e && (prev == 0x1f3f4 || inTagSequence)) {
      inTagSequence = true;
      explained = true;
    } else if (cur == 0xe007f && inTagSequence) {
      inTagSequence = false;
      explained = true;
    } else inTagSequence = false;
    if (explained) bump(S_TAG_OK);
    else bump(S_TAG);
    report(TEXT_TAG, <i32>cur, off, n, explained ? 1 : 0);
  } else if (isVariationSelector(cur)) {
    let explained = false;
    if (!isVariationSelector(prev) && prev > 0x20) {
      if (cur == 0xfe0e || cur == 0xfe0f) explained = prev >= 0x80 || (prev >= 0x30 && prev <= 0x39) || prev == 0x23 || prev == 0x2a;
      else if (cur <= 0xfe0d) explained = isHan(prev) || (prev >= 0x2200 && prev <= 0x22ff) || (prev >= 0x1800 && prev <= 0x18af) ||
        (prev >= 0x1000 && prev <= 0x109f) || (prev >= 0xa840 && prev <= 0xa87f) || (prev >= 0x2e80 && prev <= 0x2fdf);
      else explained = isHan(prev);
    }
    if (explained) bump(S_VS_OK);
    else bump(S_VS);
    report(TEXT_VARIATION, <i32>cur, off, n, explained ? 1 : 0);
  } else if (isBidi(cur)) {
    if (cur == 0x202d || cur == 0x202e) {
      bump(S_BIDI_OVERRIDE);
      bidiDepth++;
    } else if (cur == 0x202a || cur == 0x202b || (cur >= 0x2066 && cur <= 0x2068)) {
      bump(S_BIDI_OPEN);
      bidiDepth++;
    } else if (cur == 0x202c || cur == 0x2069) {
      bump(S_BIDI_CLOSE);
      if (bidiDepth > 0) bidiDepth--;
      else bump(S_BIDI_UNBALANCED);
    } else bump(S_BIDI_MARK);
    report(TEXT_BIDI, <i32>cur, off, n, 0);
  }
  if (cur != 0xe007f && !(cur >= 0xe0020 && cur <= 0xe007e)) inTagSequence = false;
}

/**
 * Scans `len` bytes of text at `ptr` in encoding `enc` (ENC_*). Returns 1 when the
 * text decodes without error, else 0. With `stopOnInvalid` set, returns at the
 * first undecodable sequence or NUL (used to classify a file as text cheaply).
 */
export function scanText(ptr: usize, len: usize, enc: i32, stopOnInvalid: bool): i32 {
  memory.fill(emitted, 0, 16 * 4);
  wordLetters = 0; nLatin = 0; nCyr = 0; nGreek = 0;
  latConfCyr = 0; latConfGreek = 0; cyrConf = 0; greekConf = 0;
  lineHasContent = false; wsLen = 0; wsTabs = 0; wsSpaces = 0;
  bidiDepth = 0; inTagSequence = false;
  setStat(S_VALID, 1);
  setStat(S_FIRST_INVALID, -1);
  let i: usize = 0;
  // byte order mark
  if (enc == ENC_UTF8 && len >= 3 && load<u8>(ptr) == 0xef && load<u8>(ptr + 1) == 0xbb && load<u8>(ptr + 2) == 0xbf) i = 3;
  else if (enc == ENC_UTF16LE && len >= 2 && load<u16>(ptr) == 0xfeff) i = 2;
  else if (enc == ENC_UTF16BE && len >= 2 && load<u16>(ptr) == 0xfffe) i = 2;
  let prev: u32 = 0, cur: u32 = 0, curOff: u32 = 0, curLen: u32 = 0;
  let have = false;
  let codepoints: f64 = 0;
  while (i < len) {
    let cp: u32 = 0xfffffff;
    let n: usize = 1;
    if (enc == ENC_UTF8) {
      const b0 = <u32>load<u8>(ptr + i);
      if (b0 < 0x80) cp = b0;
      else if (b0 >= 0xc2 && b0 <= 0xdf) {
        if (i + 1 < len) {
          const b1 = <u32>load<u8>(ptr + i + 1);
          if ((b1 & 0xc0) == 0x80) { cp = ((b0 & 0x1f) << 6) | (b1 & 0x3f); n = 2; }
        }
      } else if (b0 >= 0xe0 && b0 <= 0xef) {
        if (i + 2 < len) {
          const b1 = <u32>load<u8>(ptr + i + 1), b2 = <u32>load<u8>(ptr + i + 2);
          if ((b1 & 0xc0) == 0x80 && (b2 & 0xc0) == 0x80) {
            const c = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
            if (c >= 0x800 && (c < 0xd800 || c > 0xdfff)) { cp = c; n = 3; }
          }
        }
      } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        if (i + 3 < len) {
          const b1 = <u32>load<u8>(ptr + i + 1), b2 = <u32>load<u8>(ptr + i + 2), b3 = <u32>load<u8>(ptr + i + 3);
          if ((b1 & 0xc0) == 0x80 && (b2 & 0xc0) == 0x80 && (b3 & 0xc0) == 0x80) {
            const c = ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
            if (c >= 0x10000 && c <= 0x10ffff) { cp = c; n = 4; }
          }
        }
      }
    } else {
      if (i + 1 < len) {
        const u = enc == ENC_UTF16LE ? <u32>load<u16>(ptr + i) : <u32>bswap<u16>(load<u16>(ptr + i));
        if (u < 0xd800 || u > 0xdfff) { cp = u; n = 2; }
        else if (u <= 0xdbff && i + 3 < len) {
          const l = enc == ENC_UTF16LE ? <u32>load<u16>(ptr + i + 2) : <u32>bswap<u16>(load<u16>(ptr + i + 2));
          if (l >= 0xdc00 && l <= 0xdfff) { cp = 0x10000 + ((u - 0xd800) << 10) + (l - 0xdc00); n = 4; }
        }
      }
    }
    if (cp == 0xfffffff) {
      if (getStat(S_VALID) == 1) {
        setStat(S_VALID, 0);
        setStat(S_FIRST_INVALID, <f64>i);
        emit(TEXT_INVALID, 0, <u32>i, 0, 0, 0);
      }
      if (stopOnInvalid) return 0;
      i += enc == ENC_UTF8 ? 1 : 2;
      continue;
    }
    if (cp == 0 && stopOnInvalid) {
      bump(S_NUL);
      return 0;
    }
    codepoints += 1;
    if (have) visit(prev, cur, curOff, curLen, cp);
    prev = have ? cur : 0;
    cur = cp;
    curOff = <u32>i;
    curLen = <u32>n;
    have = true;
    i += n;
  }
  if (have) visit(prev, cur, curOff, curLen, 0);
  if (wordLetters > 0) endWord();
  endLine(<u32>len);
  if (bidiDepth > 0) setStat(S_BIDI_UNBALANCED, getStat(S_BIDI_UNBALANCED) + <f64>bidiDepth);
  setStat(S_CODEPOINTS, codepoints);
  return getStat(S_VALID) == 1 ? 1 : 0;
}
