// A plain reference of PDQ for differential tests, written from Meta's description of
// its C++ (pdqHash256FromFloatLuma after fillFloatLumaFromRGB) in the most literal form:
// full-size buffers, one line at a time, every f32 operation as Math.fround of the
// double result (exact for + - * /: a double holds the f32 result before its rounding).
// Slow; only for modest sizes.
const f = Math.fround;

function box1D(input: Float32Array, output: Float32Array, start: number, len: number, stride: number, window: number): void {
  const half = Math.trunc((window + 2) / 2);
  let sum = 0;
  let count = 0;
  let ri = start;
  let li = start;
  let oi = start;
  for (let i = 0; i < half - 1; i++) { sum = f(sum + input[ri]); count++; ri += stride; }
  for (let i = 0; i < window - half + 1; i++) { sum = f(sum + input[ri]); count++; output[oi] = f(sum / count); ri += stride; oi += stride; }
  for (let i = 0; i < len - window; i++) {
    sum = f(sum + input[ri]);
    sum = f(sum - input[li]);
    output[oi] = f(sum / count);
    ri += stride; li += stride; oi += stride;
  }
  for (let i = 0; i < half - 1; i++) { sum = f(sum - input[li]); count--; output[oi] = f(sum / count); li += stride; oi += stride; }
}

function median(values: Float32Array): number {
  // Torben's selection: returns an element of the input
  let min = values[0];
  let max = values[0];
  for (const v of values) { if (v < min) min = v; if (v > max) max = v; }
  const n = values.length;
  const mid = Math.trunc((n + 1) / 2);
  for (;;) {
    const guess = f(f(min + max) / 2);
    let less = 0; let greater = 0; let equal = 0;
    let maxBelow = min; let minAbove = max;
    for (const v of values) {
      if (v < guess) { less++; if (v > maxBelow) maxBelow = v; }
      else if (v > guess) { greater++; if (v < minAbove) minAbove = v; }
      else equal++;
    }
    if (less <= mid && greater <= mid) {
      if (less >= mid) return maxBelow;
      if (less + equal >= mid) return guess;
      return minAbove;
    }
    if (less > greater) max = maxBelow; else min = minAbove;
  }
}

/** PDQ hex and quality of RGB pixels. */
export function referencePdq(rgb: Uint8Array, width: number, height: number): { hex: string; quality: number } {
  if (width < 5 || height < 5) return { hex: '0'.repeat(64), quality: 0 };
  const cr = f(0.299); const cg = f(0.587); const cb = f(0.114);
  const a = new Float32Array(width * height);
  for (let i = 0; i < width * height; i++) a[i] = f(f(f(cr * rgb[3 * i]) + f(cg * rgb[3 * i + 1])) + f(cb * rgb[3 * i + 2]));
  const img = new Float32Array(64 * 64);
  if (width === 64 && height === 64) img.set(a);
  else {
    const b = new Float32Array(width * height);
    const wr = Math.trunc((width + 127) / 128);
    const wc = Math.trunc((height + 127) / 128);
    for (let pass = 0; pass < 2; pass++) {
      for (let y = 0; y < height; y++) box1D(a, b, y * width, width, 1, wr);
      for (let x = 0; x < width; x++) box1D(b, a, x, height, width, wc);
    }
    for (let i = 0; i < 64; i++) {
      const y = Math.trunc(((i + 0.5) * height) / 64);
      for (let j = 0; j < 64; j++) img[i * 64 + j] = a[y * width + Math.trunc(((j + 0.5) * width) / 64)];
    }
  }
  let gradients = 0;
  const grad = (u: number, v: number) => Math.abs(Math.trunc(f(f(f(u - v) * 100) / 255)));
  for (let i = 0; i < 63; i++) for (let j = 0; j < 64; j++) gradients += grad(img[i * 64 + j], img[(i + 1) * 64 + j]);
  for (let i = 0; i < 64; i++) for (let j = 0; j < 63; j++) gradients += grad(img[i * 64 + j], img[i * 64 + j + 1]);
  const quality = Math.min(100, Math.trunc(gradients / 90));
  const scale = f(Math.sqrt(2 / 64));
  const d = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) for (let k = 0; k < 64; k++) d[i * 64 + k] = f(scale * Math.cos((Math.PI / 2 / 64) * (i + 1) * (2 * k + 1)));
  const t = new Float32Array(16 * 64);
  for (let i = 0; i < 16; i++) for (let j = 0; j < 64; j++) { let s = 0; for (let k = 0; k < 64; k++) s = f(s + f(d[i * 64 + k] * img[k * 64 + j])); t[i * 64 + j] = s; }
  const c = new Float32Array(256);
  for (let i = 0; i < 16; i++) for (let j = 0; j < 16; j++) { let s = 0; for (let k = 0; k < 64; k++) s = f(s + f(t[i * 64 + k] * d[j * 64 + k])); c[i * 16 + j] = s; }
  const m = median(c);
  const words = new Uint16Array(16);
  for (let k = 0; k < 256; k++) if (c[k] > m) words[k >> 4] |= 1 << (k & 15);
  let hex = '';
  for (let w = 15; w >= 0; w--) hex += words[w].toString(16).padStart(4, '0');
  return { hex, quality };
}
