// Recall and collisions of the VideoPHash bands (src/media/video.ts videoBands) for
// several BAND_BITS: each corpus video (or fixture; long ones cut into 20 s pieces) is
// re-encoded smaller (H.264 crf 35 at half size), trimmed by 2.3 s, and converted to VP8;
// prints how many copies share at least one band with their original (recall), how
// many bands they share, and how many pairs of different videos share one (collisions).
//   node --import tsx bench/video-bands.ts
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath } from '../src/media/ffmpeg.js';
import { bandPositions, videoBands, videoFrameHashes } from '../src/media/video.js';
import { alignedSimilarity } from '../src/lib/hamming.js';

const CORPUS = '/tmp/provenant-corpus/files/video';
const FIXTURES = new URL('../test/fixtures/media/', import.meta.url).pathname;
const sources = existsSync(CORPUS)
  ? readdirSync(CORPUS).flatMap((d) => readdirSync(join(CORPUS, d)).map((f) => join(CORPUS, d, f)))
  : readdirSync(FIXTURES).filter((f) => /\.(mp4|webm|avi)$/.test(f)).map((f) => join(FIXTURES, f));
const tmp = mkdtempSync(join(tmpdir(), 'provenant-bands-'));
const ff = (...a: string[]) => execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...a]);
const duration = (f: string) => {
  try { execFileSync(ffmpegPath(), ['-hide_banner', '-i', f], { stdio: 'pipe' }); } catch (e) {
    const m = /Duration: (\d+):(\d\d):(\d\d\.\d+)/.exec(String((e as { stderr: Buffer }).stderr));
    if (m) return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  }
  return 0;
};

// Originals: each source, long ones as 20 s pieces (re-encoded losslessly enough: crf 18).
const originals: string[] = [];
const sourceOf = new Map<string, number>();
let n = 0;
for (const s of sources) {
  const d = duration(s);
  if (d < 6) continue;
  for (let start = 0; start + 6 <= d && start < 80; start += 20) {
    const out = join(tmp, `o${n++}.mp4`);
    ff('-ss', String(start), '-t', '20', '-i', s, '-an', '-c:v', 'libx264', '-crf', '18', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', out);
    originals.push(out);
    sourceOf.set(out, sources.indexOf(s));
  }
}
const variants: Record<string, (i: string, o: string) => void> = {
  'half size crf 35': (i, o) => ff('-i', i, '-vf', 'scale=trunc(iw/4)*2:trunc(ih/4)*2', '-c:v', 'libx264', '-crf', '35', '-preset', 'veryfast', o),
  'trimmed 2.3 s': (i, o) => ff('-ss', '2.3', '-i', i, '-c:v', 'libx264', '-crf', '23', '-preset', 'veryfast', o),
  'VP8 400k': (i, o) => ff('-i', i, '-c:v', 'libvpx', '-b:v', '400k', o.replace(/\.mp4$/, '.webm')),
};
const hashes = new Map<string, Uint8Array>();
for (const o of originals) hashes.set(o, await videoFrameHashes(o, 'mp4'));
const copies: [string, string, Uint8Array][] = [];
for (const o of originals) for (const [name, make] of Object.entries(variants)) {
  const out = o.replace('.mp4', `-${name.replace(/\W+/g, '_')}.mp4`);
  make(o, out);
  const file = name.startsWith('VP8') ? out.replace(/\.mp4$/, '.webm') : out;
  copies.push([o, name, await videoFrameHashes(file, name.startsWith('VP8') ? 'webm' : 'mp4')]);
}
const shared = (a: number[][], b: number[][]) => a.filter((band, i) => band.every((v, j) => v === b[i][j])).length;
console.log(`${originals.length} originals (20 s pieces of ${sources.length} videos), ${copies.length} copies`);
let sims = 0;
for (const [o, , h] of copies) sims += alignedSimilarity(hashes.get(o)!, h, 8, 30, 4);
console.log(`mean similarity copy/original: ${(sims / copies.length).toFixed(1)}`);
for (const bits of [8, 10, 12, 14, 16, 20]) {
  const pos = bandPositions(bits);
  const row: string[] = [];
  for (const name of Object.keys(variants)) {
    const cs = copies.filter((c) => c[1] === name);
    const hits = cs.filter(([o, , h]) => shared(videoBands(hashes.get(o)!, pos), videoBands(h, pos)) > 0).length;
    const mean = cs.reduce((t, [o, , h]) => t + shared(videoBands(hashes.get(o)!, pos), videoBands(h, pos)), 0) / cs.length;
    row.push(`${name}: ${hits}/${cs.length} (${mean.toFixed(1)} bands)`);
  }
  let pairs = 0, collide = 0, samePairs = 0, sameCollide = 0;
  for (let i = 0; i < originals.length; i++) for (let j = i + 1; j < originals.length; j++) {
    const same = sourceOf.get(originals[i]) === sourceOf.get(originals[j]);
    const hit = shared(videoBands(hashes.get(originals[i])!, pos), videoBands(hashes.get(originals[j])!, pos)) > 0;
    if (same) { samePairs++; if (hit) sameCollide++; } else { pairs++; if (hit) collide++; }
  }
  console.log(`bits ${bits}: ${row.join('; ')}; pieces of different videos sharing a band: ${collide}/${pairs}, other pieces of the same video: ${sameCollide}/${samePairs}`);
}
rmSync(tmp, { recursive: true, force: true });
