import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { chromaprint } from '../src/lib/chromaprint.js';
import { decodeAudio } from '../src/media/audio.js';
function pop(x: number) { x = x - ((x >>> 1) & 0x55555555); x = (x & 0x33333333) + ((x >>> 2) & 0x33333333); return (((x + (x >>> 4)) & 0xf0f0f0f) * 0x1010101) >>> 24; }
function agreement(a: Uint32Array, b: ArrayLike<number>, maxOff = 20) {
  let best = 0, bestOff = 0;
  for (let off = -maxOff; off <= maxOff; off++) {
    let bits = 0, same = 0;
    for (let i = 0; i < a.length; i++) { const j = i + off; if (j < 0 || j >= b.length) continue; bits += 32; same += 32 - pop((a[i] ^ (b[j] >>> 0)) >>> 0); }
    if (bits >= 32 * Math.min(32, a.length) && same / bits > best) { best = same / bits; bestOff = off; }
  }
  return { best, bestOff };
}
const dec = (process.env.DEC ?? 'js') as 'js' | 'ffmpeg';
for (const f of process.argv.slice(2)) {
  const r = spawnSync('fpcalc', ['-raw', '-length', '120', '-json', f]);
  const ref = JSON.parse(r.stdout.toString());
  const ext = f.split('.').pop()!;
  const fmt = ext === 'ogg' ? 'ogg-vorbis' : ext as any;
  const t = performance.now();
  const pcm = await decodeAudio(readFileSync(f), fmt, { decoder: dec });
  const t1 = performance.now();
  const words = chromaprint(pcm);
  const t2 = performance.now();
  const a = agreement(words, ref.fingerprint);
  console.log(f.split('/').pop(), words.length, ref.fingerprint.length, a.best.toFixed(4), a.bestOff, (t1 - t).toFixed(0), (t2 - t1).toFixed(0));
}
