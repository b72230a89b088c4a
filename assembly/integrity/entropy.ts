// Shannon entropy in bits per byte, over a whole input and per 4 KiB window.
// Histograms live in static memory; c*log2(c) for window counts comes from a
// table built once, so a window costs 256 lookups instead of 256 logarithms.
import { setStat } from './output';

export const WINDOW: i32 = 4096;
// four sub-histograms so consecutive equal bytes do not serialise on one counter
const hist4: usize = memory.data(4 * 256 * 4, 16);
const total: usize = memory.data(256 * 8, 16); // u64 counts for the whole input
const clogc: usize = memory.data((WINDOW + 1) * 8, 16);
let tableReady: bool = false;

function buildTable(): void {
  store<f64>(clogc, 0);
  for (let c = 1; c <= WINDOW; c++) store<f64>(clogc + (<usize>c << 3), <f64>c * Math.log2(<f64>c));
  tableReady = true;
}

/** Counts `n` bytes at `p` into hist4 (cleared first). */
@inline
function countWindow(p: usize, n: usize): void {
  memory.fill(hist4, 0, 4 * 256 * 4);
  let i: usize = 0;
  while (i + 4 <= n) {
    const w = load<u32>(p + i);
    const a = hist4 + ((<usize>(w & 0xff)) << 2);
    const b = hist4 + 1024 + ((<usize>((w >>> 8) & 0xff)) << 2);
    const c = hist4 + 2048 + ((<usize>((w >>> 16) & 0xff)) << 2);
    const d = hist4 + 3072 + ((<usize>(w >>> 24)) << 2);
    store<u32>(a, load<u32>(a) + 1);
    store<u32>(b, load<u32>(b) + 1);
    store<u32>(c, load<u32>(c) + 1);
    store<u32>(d, load<u32>(d) + 1);
    i += 4;
  }
  while (i < n) {
    const a = hist4 + (<usize>load<u8>(p + i) << 2);
    store<u32>(a, load<u32>(a) + 1);
    i++;
  }
}

/**
 * Entropy of each 4 KiB window of the `len` bytes at `ptr`, written as f32 to
 * `out` (ceil(len / 4096) values; the last window may be shorter). Returns the
 * entropy of the whole input; stats slot 0 = it, slot 1 = window count.
 */
export function entropyWindows(ptr: usize, len: usize, out: usize): f64 {
  if (!tableReady) buildTable();
  memory.fill(total, 0, 256 * 8);
  let w: usize = 0;
  for (let start: usize = 0; start < len; start += <usize>WINDOW) {
    const n = min<usize>(<usize>WINDOW, len - start);
    countWindow(ptr + start, n);
    let sum: f64 = 0;
    for (let b: usize = 0; b < 256; b++) {
      let c: u32 = load<u32>(hist4 + (b << 2)) + load<u32>(hist4 + 1024 + (b << 2)) +
        load<u32>(hist4 + 2048 + (b << 2)) + load<u32>(hist4 + 3072 + (b << 2));
      if (c != 0) {
        sum += load<f64>(clogc + (<usize>c << 3));
        store<u64>(total + (b << 3), load<u64>(total + (b << 3)) + <u64>c);
      }
    }
    // H = log2(n) - (1/n) sum c log2 c
    const h = Math.log2(<f64>n) - sum / <f64>n;
    if (out != 0) store<f32>(out + (w << 2), <f32>(h < 0 ? 0 : h));
    w++;
  }
  const overall = entropyOfCounts(total, len);
  setStat(0, overall);
  setStat(1, <f64>w);
  return overall;
}

function entropyOfCounts(counts: usize, n: usize): f64 {
  if (n == 0) return 0;
  let h: f64 = 0;
  const inv = 1.0 / <f64>n;
  for (let b: usize = 0; b < 256; b++) {
    const c = load<u64>(counts + (b << 3));
    if (c != 0) {
      const pr = <f64>c * inv;
      h -= pr * Math.log2(pr);
    }
  }
  return h;
}

/** Entropy of one range, without windows (metadata payloads, trailing data). */
export function entropyOf(ptr: usize, len: usize): f64 {
  memory.fill(total, 0, 256 * 8);
  for (let i: usize = 0; i < len; i++) {
    const a = total + (<usize>load<u8>(ptr + i) << 3);
    store<u64>(a, load<u64>(a) + 1);
  }
  return entropyOfCounts(total, len);
}

/** Length of the longest run of base64 characters (A-Z a-z 0-9 + / = and line breaks). */
export function longestBase64Run(ptr: usize, len: usize): i32 {
  let best = 0, run = 0, bestStart: usize = 0;
  for (let i: usize = 0; i < len; i++) {
    const c = <u32>load<u8>(ptr + i);
    const ok = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
      c == 0x2b || c == 0x2f || c == 0x3d || c == 0x0a || c == 0x0d || c == 0x2d || c == 0x5f;
    if (ok) {
      run++;
      if (run > best) {
        best = run;
        bestStart = i + 1 - <usize>run;
      }
    } else run = 0;
  }
  setStat(2, <f64>bestStart);
  return best;
}
