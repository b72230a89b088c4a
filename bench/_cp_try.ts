import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { chromaprint } from '/work/main/src/lib/chromaprint.ts';
import { decodeWithFfmpeg } from '/work/main/src/media/ffmpeg-audio.ts';
function agreement(a: Uint32Array, b: ArrayLike<number>, maxOff = 20) {
  let best = 0, bestOff = 0;
  for (let off = -maxOff; off <= maxOff; off++) {
    let bits = 0, same = 0;
    for (let i = 0; i < a.length; i++) { const j = i + off; if (j < 0 || j >= b.length) continue; const x = (a[i] ^ (b[j] >>> 0)) >>> 0; let c = x - ((x >>> 1) & 0x55555555); c = (c & 0x33333333) + ((c >>> 2) & 0x33333333); c = (((c + (c >>> 4)) & 0xf0f0f0f) * 0x1010101) >>> 24; bits += 32; same += 32 - c; }
    if (bits >= 32 * 32 && same / bits > best) { best = same / bits; bestOff = off; }
  }
  return { best, bestOff };
}
for (const f of process.argv.slice(2)) {
  const ref = JSON.parse(execFileSync('fpcalc', ['-raw', '-length', '120', '-json', f]).toString());
  const pcm = await decodeWithFfmpeg(readFileSync(f));
  const words = chromaprint(pcm);
  const a = agreement(words, ref.fingerprint);
  console.log(f.split('/').pop(), words.length, ref.fingerprint.length, a.best.toFixed(4), a.bestOff);
}
