// A plain-TypeScript transcription of decisions.md 3 (ImagePHash), written for the
// media tests and the shrink-on-load bench as an independent check of the
// WebAssembly kernel's output (slow; not used by the library).

/** Steps 1 (alpha over white) to 3: the 9x8 grey cells before rounding. */
export function referenceCells(px: Uint8Array, width: number, height: number, channels: 1 | 3 | 4): Float64Array {
  const luma = new Float64Array(width * height);
  for (let i = 0; i < width * height; i++) {
    const p = i * channels;
    if (channels === 1) { luma[i] = px[p]; continue; }
    let r = px[p], g = px[p + 1], b = px[p + 2];
    if (channels === 4) {
      const a = px[p + 3] / 255;
      r = r * a + 255 * (1 - a); g = g * a + 255 * (1 - a); b = b * a + 255 * (1 - a);
    }
    luma[i] = 0.299 * r + 0.587 * g + 0.114 * b;
  }
  const weights = (inLen: number, outLen: number) => {
    const s = inLen / outLen;
    const support = Math.max(s, 1);
    return Array.from({ length: outLen }, (_, i) => {
      const centre = (i + 0.5) * s - 0.5;
      const taps: [number, number][] = [];
      let sum = 0;
      for (let x = Math.max(0, Math.floor(centre - support)); x <= Math.min(inLen - 1, Math.ceil(centre + support)); x++) {
        const w = Math.max(0, 1 - Math.abs(x - centre) / support);
        if (w > 0) { taps.push([x, w]); sum += w; }
      }
      return taps.map(([x, w]) => [x, w / sum] as [number, number]);
    });
  };
  const wx = weights(width, 9);
  const wy = weights(height, 8);
  const rows = new Float64Array(9 * height);
  for (let y = 0; y < height; y++) for (let i = 0; i < 9; i++) {
    let v = 0; for (const [x, w] of wx[i]) v += luma[y * width + x] * w; rows[y * 9 + i] = v;
  }
  const cells = new Float64Array(72);
  for (let j = 0; j < 8; j++) for (let i = 0; i < 9; i++) {
    let v = 0; for (const [y, w] of wy[j]) v += rows[y * 9 + i] * w; cells[j * 9 + i] = v;
  }
  return cells;
}

/** Step 4 over rounded cells: the 8-byte hash. */
export function referenceHashFromCells(cells: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(8);
  for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) {
    if (Math.round(cells[y * 9 + x]) > Math.round(cells[y * 9 + x + 1])) out[y] |= 0x80 >> x;
  }
  return out;
}

export function referenceDHash(px: Uint8Array, width: number, height: number, channels: 1 | 3 | 4): Uint8Array {
  return referenceHashFromCells(referenceCells(px, width, height, channels));
}

export function hammingBits(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) { let v = a[i] ^ b[i]; while (v) { d += v & 1; v >>= 1; } }
  return d;
}
