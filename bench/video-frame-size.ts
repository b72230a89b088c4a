// How small may ffmpeg scale each sampled frame before the dHash kernel's triangle
// filter gives different bits than on the full frame? For each corpus video (or
// fixture), frame hashes at several VIDEO_FRAME_CELL values are compared with hashes
// of full-size frames: prints the share of differing bits and the time.
//   node --import tsx bench/video-frame-size.ts
import { readdirSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectType } from '../src/lib/detect.js';
import { videoFrameHashes } from '../src/media/video.js';

const CORPUS = '/tmp/provenant-corpus/files/video';
const FIXTURES = new URL('../test/fixtures/media/', import.meta.url).pathname;
const files = existsSync(CORPUS)
  ? readdirSync(CORPUS).flatMap((d) => readdirSync(join(CORPUS, d)).map((f) => join(CORPUS, d, f)))
  : readdirSync(FIXTURES).filter((f) => /\.(mp4|webm|avi|mkv)$/.test(f)).map((f) => join(FIXTURES, f));

const bits = (a: Uint8Array, b: Uint8Array) => a.reduce((d, x, i) => { let v = x ^ b[i]; while (v) { d += v & 1; v >>= 1; } return d; }, 0);
const cells = [2, 4, 8, 16];
const flipped = new Map(cells.map((c) => [c, 0]));
const times = new Map<number, number>([[0, 0], ...cells.map((c) => [c, 0] as [number, number])]);
let totalBits = 0;
for (const f of files) {
  const format = detectType(new Uint8Array(readFileSync(f).subarray(0, 4096)))?.format;
  if (!format) continue;
  let t = performance.now();
  const full = await videoFrameHashes(f, format, { frameCell: 0 });
  times.set(0, times.get(0)! + performance.now() - t);
  totalBits += full.length * 8;
  for (const c of cells) {
    t = performance.now();
    const h = await videoFrameHashes(f, format, { frameCell: c });
    times.set(c, times.get(c)! + performance.now() - t);
    flipped.set(c, flipped.get(c)! + bits(full, h));
  }
}
console.log(`${files.length} videos, ${totalBits / 64} frames; full-size frames: ${times.get(0)!.toFixed(0)} ms`);
for (const c of cells) console.log(`cell ${c} (${9 * c}x${8 * c}): ${((100 * flipped.get(c)!) / totalBits).toFixed(2)} % of bits differ; ${times.get(c)!.toFixed(0)} ms`);
