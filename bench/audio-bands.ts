// Recall and false-share rate of the AudioChromaprint LSH bands (src/lib/audio-bands.ts)
// on the dev corpus: each music track of 20 s or more against copies made with ffmpeg
// (MP3 64 kbps; the first 3 s / 7 s cut off; -6 dB), plus variants the band design was
// not chosen on (the first 12 s cut off; a combination of 4.2 s cut, -3 dB and Opus
// 48 kbps; MP3 128 kbps of a 2.5 s cut). Recall = the copy shares
// at least one band (same position) with the original; false share = two different
// tracks (original vs original, MP3 or 3-s-trimmed copy) share a band.
// Takes several minutes (ffmpeg encodes 7 copies per track).
// Run: node --import tsx bench/audio-bands.ts
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { decodeAudio, type AudioFormat } from '../src/media/audio.js';
import { ffmpegPath } from '../src/media/ffmpeg-audio.js';
import { chromaprint, audioBands } from '../src/lib/chromaprint.js';
import { fingerprintSimilarity } from '../src/lib/hamming.js';
import { wordsToBytes } from '../src/lib/chromaprint.js';

const run = promisify(execFile);
const root = '/tmp/provenant-corpus/files/audio';
if (!existsSync(root)) {
  console.log(`skipped: no corpus at ${root}`);
  process.exit(0);
}
const FORMATS: Record<string, AudioFormat> = { mp3: 'mp3', ogg: 'ogg-vorbis', flac: 'flac', wav: 'wav' };
const VARIANTS: [string, string[], string, AudioFormat][] = [
  ['mp3 64k', ['-b:a', '64k', '-c:a', 'libmp3lame'], 'mp3', 'mp3'],
  ['trim 3 s', ['-ss', '3', '-c:a', 'flac'], 'flac', 'flac'],
  ['trim 7 s', ['-ss', '7', '-c:a', 'flac'], 'flac', 'flac'],
  ['-6 dB', ['-af', 'volume=-6dB', '-c:a', 'flac'], 'flac', 'flac'],
  ['trim 12 s (held out)', ['-ss', '12', '-c:a', 'flac'], 'flac', 'flac'],
  ['4.2 s, -3 dB, opus (held out)', ['-ss', '4.2', '-af', 'volume=-3dB', '-c:a', 'libopus', '-b:a', '48k'], 'opus', 'ogg-opus'],
  ['2.5 s, mp3 128k (held out)', ['-ss', '2.5', '-c:a', 'libmp3lame', '-b:a', '128k'], 'mp3', 'mp3'],
];
const tmp = mkdtempSync(join(tmpdir(), 'provenant-bands-'));
const ffmpeg = ffmpegPath();

async function words(bytes: Uint8Array, format: AudioFormat): Promise<Uint32Array> {
  return chromaprint(await decodeAudio(bytes, format));
}

interface Track { name: string; bands: number[][]; words: Uint32Array; variants: Record<string, { bands: number[][]; words: Uint32Array }> }
const tracks: Track[] = [];
for (const dir of Object.keys(FORMATS)) {
  if (!existsSync(join(root, dir))) continue;
  for (const f of readdirSync(join(root, dir))) {
    const path = join(root, dir, f);
    const w = await words(new Uint8Array(readFileSync(path)), FORMATS[dir]).catch(() => new Uint32Array(0));
    if (w.length < 150) continue; // about 20 s
    const t: Track = { name: `${dir}/${f}`, words: w, bands: audioBands(w), variants: {} };
    await Promise.all(VARIANTS.map(async ([label, args, ext, format], i) => {
      const out = join(tmp, `v${i}.${ext}`);
      const pre = args[0] === '-ss' ? args.slice(0, 2) : [];
      const post = args[0] === '-ss' ? args.slice(2) : args;
      await run(ffmpeg, ['-nostdin', '-v', 'error', '-y', ...pre, '-i', path, '-t', '130', ...post, out]);
      const vw = await words(new Uint8Array(readFileSync(out)), format);
      t.variants[label] = { words: vw, bands: audioBands(vw) };
    }));
    tracks.push(t);
  }
}
rmSync(tmp, { recursive: true, force: true });

const shares = (a: number[][], b: number[][]) => a.filter((x, i) => x.join() === b[i].join()).length;
const fp = (w: Uint32Array) => ({ hash_type: 'AudioChromaprint' as const, hash_value: wordsToBytes(w) });
console.log(`${tracks.length} tracks of 20 s or more`);
for (const [label] of VARIANTS) {
  let hit = 0;
  let bands = 0;
  let simSum = 0;
  for (const t of tracks) {
    const n = shares(t.bands, t.variants[label].bands);
    if (n > 0) hit++;
    bands += n;
    simSum += fingerprintSimilarity(fp(t.words), fp(t.variants[label].words)) ?? 0;
  }
  console.log(`${label.padEnd(31)} recall ${hit}/${tracks.length} (${((100 * hit) / tracks.length).toFixed(1)} %), mean shared bands ${(bands / tracks.length).toFixed(2)} of 8, mean similarity ${(simSum / tracks.length).toFixed(1)}`);
}
let pairs = 0;
let falseShares = 0;
for (const a of tracks) {
  for (const b of tracks) {
    if (a === b) continue;
    for (const other of [b.bands, b.variants['mp3 64k'].bands, b.variants['trim 3 s'].bands]) {
      pairs++;
      if (shares(a.bands, other) > 0) falseShares++;
    }
  }
}
console.log(`false share: ${falseShares}/${pairs} ordered pairs of different tracks (${((100 * falseShares) / pairs).toFixed(2)} %)`);
