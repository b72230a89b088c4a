// The ISCC Text-Code's hash (ISO 24138; iscc-core code_content_text.py soft_hash_text_v0):
// over the collapsed text (the host normalises it: NFD, lower case, no whitespace, no
// control, mark or punctuation characters, NFKC), every window of 13 code points is a
// feature, the xxh32 of its UTF-8; a text of 13 code points or fewer is one window
// (the empty text too). The digest is the minhash of the features (minhash.ts).
import { xxh32 } from './xxh32';
import { minhashAdd, minhashDigest, minhashReset } from './minhash';

// @ts-ignore: decorator
@inline const NGRAM: u32 = 13;

const MINS: usize = memory.data(256, 16);
/** Byte offsets of the last 16 code points' starts (a ring; a window spans 13). */
const STARTS: usize = memory.data(64, 16);

/** The Text-Code digest (32 bytes, to `out`) of `len` bytes of collapsed UTF-8 text at `p`. */
export function textHash(p: usize, len: usize, out: usize): void {
  minhashReset(MINS);
  let count: u32 = 0;
  for (let i: usize = 0; i < len; i++) {
    if ((load<u8>(p + i) & 0xc0) == 0x80) continue; // a continuation byte
    store<u32>(STARTS + ((<usize>count & 15) << 2), <u32>i);
    if (count >= NGRAM) {
      const from = <usize>load<u32>(STARTS + ((<usize>(count - NGRAM) & 15) << 2));
      minhashAdd(MINS, xxh32(p + from, i - from));
    }
    count++;
  }
  // the last window ends with the text
  let from: usize = 0;
  if (count > NGRAM) from = <usize>load<u32>(STARTS + ((<usize>(count - NGRAM) & 15) << 2));
  minhashAdd(MINS, xxh32(p + from, len - from));
  minhashDigest(MINS, out);
}
