// LSH bands (decisions.md section 3). An ImagePHash has 8 bands of 1 byte: band i is
// hash byte i. Audio and video use 8 bands of 4 bytes (their own files derive them).

/** Writes the 8 one-byte bands of the 8-byte image hash at `hash` to `out` (band i = byte i). */
export function imageBands(hash: usize, out: usize): void {
  store<u64>(out, load<u64>(hash));
}
