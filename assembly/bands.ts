// LSH bands (decisions.md section 3). An ImagePHash has 8 bands of 1 byte: band i is
// hash byte i. Audio and video use 8 bands of 4 bytes (their own files derive them).
// A match index looks bands up by a key that includes the band's position, because
// candidates share a band *at the same position*.

/** Writes the 8 one-byte bands of the 8-byte image hash at `hash` to `out` (band i = byte i). */
export function imageBands(hash: usize, out: usize): void {
  store<u64>(out, load<u64>(hash));
}

/**
 * Position-qualified keys of `count` bands of `bandBytes` (1 to 4) bytes each at `bands`:
 * key i = (i << 32) | the band's bytes read big-endian, as u64 at `out`.
 */
export function bandKeys(bands: usize, count: i32, bandBytes: i32, out: usize): void {
  for (let i = 0; i < count; i++) {
    const p = bands + <usize>(i * bandBytes);
    let v: u64 = 0;
    for (let j = 0; j < bandBytes; j++) v = (v << 8) | <u64>load<u8>(p + <usize>j);
    store<u64>(out + (<usize>i << 3), (<u64>i << 32) | v);
  }
}
