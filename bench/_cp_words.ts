import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { chromaprint } from '../src/lib/chromaprint.js';
import { decodeAudio } from '../src/media/audio.js';
const tracks = readFileSync('/tmp/cp_tracks.txt', 'utf8').trim().split('\n');
const out: Record<string, Record<string, number[]>> = {};
for (const f of tracks) {
  const b = f.split('/').pop()!.replace(/\.[^.]+$/, '');
  const ext = f.split('.').pop()!;
  const rec: Record<string, number[]> = {};
  rec.orig = Array.from(chromaprint(await decodeAudio(readFileSync(f), ext === 'ogg' ? 'ogg-vorbis' : ext as any)));
  for (const [k, file, fmt] of [['mp64', `${b}.mp64.mp3`, 'mp3'], ['trim3', `${b}.trim3.flac`, 'flac'], ['trim7', `${b}.trim7.flac`, 'flac'], ['vol6', `${b}.vol6.flac`, 'flac']] as const) {
    rec[k] = Array.from(chromaprint(await decodeAudio(readFileSync(`/tmp/cp_var/${file}`), fmt)));
  }
  out[b] = rec;
}
writeFileSync('/tmp/cp_words.json', JSON.stringify(out));
console.log(Object.keys(out).length);
