// An obviously-correct reference of ImagePHash (decisions.md section 3, steps 2 to 4),
// written from the definition with no attempt at speed; shared by the test and the bench.

export function refLuma(px: Uint8Array, w: number, h: number, ch: number): Float64Array {
  const out = new Float64Array(w * h);
  for (let i = 0; i < w * h; i++) {
    if (ch === 1) {
      out[i] = px[i];
      continue;
    }
    let r = px[i * ch];
    let g = px[i * ch + 1];
    let b = px[i * ch + 2];
    if (ch === 4) {
      const a = px[i * 4 + 3];
      r = (r * a) / 255 + 255 * (1 - a / 255);
      g = (g * a) / 255 + 255 * (1 - a / 255);
      b = (b * a) / 255 + 255 * (1 - a / 255);
    }
    out[i] = 0.299 * r + 0.587 * g + 0.114 * b;
  }
  return out;
}

/** weights[o][x] over every input x (zero outside the triangle), normalised. */
export function refWeights(inSize: number, outSize: number): number[][] {
  const s = inSize / outSize;
  const support = Math.max(s, 1);
  const all: number[][] = [];
  for (let o = 0; o < outSize; o++) {
    const centre = (o + 0.5) * s - 0.5;
    const w = [];
    for (let x = 0; x < inSize; x++) w.push(Math.max(0, 1 - Math.abs(x - centre) / support));
    const sum = w.reduce((a, b) => a + b, 0);
    all.push(w.map((v) => v / sum));
  }
  return all;
}

/** The 9 x 8 thumbnail before rounding: rows first, then columns. */
export function refResizeExact(px: Uint8Array, w: number, h: number, ch: number): Float64Array {
  const luma = refLuma(px, w, h, ch);
  const wx = refWeights(w, 9);
  const wy = refWeights(h, 8);
  const rows = new Float64Array(h * 9);
  for (let y = 0; y < h; y++) {
    for (let o = 0; o < 9; o++) {
      let acc = 0;
      for (let x = 0; x < w; x++) acc += wx[o][x] * luma[y * w + x];
      rows[y * 9 + o] = acc;
    }
  }
  const out = new Float64Array(72);
  for (let o = 0; o < 8; o++) {
    for (let x = 0; x < 9; x++) {
      let acc = 0;
      for (let y = 0; y < h; y++) acc += wy[o][y] * rows[y * 9 + x];
      out[o * 9 + x] = acc;
    }
  }
  return out;
}

export function refHash(grey: ArrayLike<number>): Uint8Array {
  const hash = new Uint8Array(8);
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) {
      if (grey[y * 9 + x] > grey[y * 9 + x + 1]) hash[y] |= 0x80 >> x;
    }
  }
  return hash;
}

/** The whole hash from pixels: resize, round to nearest, difference bits. */
export function refImageHash(px: Uint8Array, w: number, h: number, ch: number): Uint8Array {
  return refHash(Array.from(refResizeExact(px, w, h, ch), (v) => Math.floor(v + 0.5)));
}
