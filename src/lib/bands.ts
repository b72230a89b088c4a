// LSH bands (decisions.md section 3). An ImagePHash has 8 bands of 1 byte: band i is
// hash byte i. Two fingerprints are candidates when they share a band at the same
// position, so an index keys each band by (position, bytes): see bandKey.

/** The 8 one-byte bands of an 8-byte ImagePHash (band i = [byte i]). */
export function imageBands(hash: Uint8Array | ArrayLike<number>): number[][] {
  if (hash == null || hash.length !== 8) throw new RangeError('an ImagePHash has exactly 8 bytes');
  const bands: number[][] = [];
  for (let i = 0; i < 8; i++) {
    const b = hash[i];
    if (!Number.isInteger(b) || b < 0 || b > 255) throw new RangeError(`hash[${i}] must be a byte`);
    bands.push([b]);
  }
  return bands;
}

/**
 * A position-qualified key of one band of 1 to 4 bytes: position * 2^32 + the bytes
 * read big-endian. Exact as a JS number for positions below 2^21.
 */
export function bandKey(position: number, band: ArrayLike<number>): number {
  if (band.length < 1 || band.length > 4) throw new RangeError('a band has 1 to 4 bytes');
  let v = 0;
  for (let j = 0; j < band.length; j++) {
    const b = band[j];
    if (!Number.isInteger(b) || b < 0 || b > 255) throw new RangeError('band values must be bytes');
    v = v * 256 + b;
  }
  return position * 0x1_0000_0000 + v;
}
