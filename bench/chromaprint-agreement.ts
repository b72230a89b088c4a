// Agreement of our AudioChromaprint with fpcalc (Chromaprint 1.5.1) on the dev corpus:
// every audio file longer than 10 s under /tmp/provenant-corpus/files/audio, both our
// decoders (WebAssembly/TypeScript and ffmpeg), bits equal at the best alignment within
// +-20 words (decisions.md section 3). Target: >= 95 % of bits on >= 90 % of tracks.
// Run: node --import tsx bench/chromaprint-agreement.ts
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { decodeAudio, type AudioFormat } from '../src/media/audio.js';
import { chromaprint } from '../src/lib/chromaprint.js';
import { fpcalcAgreement } from '../test/helpers/fpcalc-agreement.js';

const root = '/tmp/provenant-corpus/files/audio';
const FORMATS: Record<string, AudioFormat> = { mp3: 'mp3', ogg: 'ogg-vorbis', oga: 'ogg-vorbis', flac: 'flac', wav: 'wav', opus: 'ogg-opus' };

if (spawnSync('fpcalc', ['-version']).status !== 0) {
  console.log('skipped: fpcalc is not installed (apt-get install libchromaprint-tools)');
  process.exit(0);
}
if (!existsSync(root)) {
  console.log(`skipped: no corpus at ${root}`);
  process.exit(0);
}

const files: { path: string; format: AudioFormat }[] = [];
for (const dir of readdirSync(root)) {
  const format = FORMATS[dir];
  if (!format) continue;
  for (const f of readdirSync(join(root, dir))) files.push({ path: join(root, dir, f), format });
}

const rows: { name: string; js: number; ffmpeg: number; seconds: number }[] = [];
for (const { path, format } of files) {
  const bytes = new Uint8Array(readFileSync(path));
  let ffmpegSamples: Float32Array;
  try {
    ffmpegSamples = await decodeAudio(bytes, format, { decoder: 'ffmpeg' });
  } catch {
    continue;
  }
  const seconds = ffmpegSamples.length / 11025;
  if (seconds <= 10) continue;
  // fpcalc 1.5.1 exits 3 after "Error decoding audio frame (End of file)" with complete output
  const out = spawnSync('fpcalc', ['-raw', '-length', '120', '-json', path], { maxBuffer: 1 << 24 });
  const ref = (JSON.parse(out.stdout.toString()) as { fingerprint: number[] }).fingerprint;
  const ours = fpcalcAgreement(chromaprint(ffmpegSamples), ref);
  const js = format === 'ogg-opus' ? NaN : fpcalcAgreement(chromaprint(await decodeAudio(bytes, format, { decoder: 'js' })), ref);
  rows.push({ name: path.slice(root.length + 1), js, ffmpeg: ours, seconds });
}

for (const r of rows) {
  console.log(`${r.name.padEnd(50)} ${r.seconds.toFixed(1).padStart(6)} s  js ${(r.js * 100).toFixed(2).padStart(6)} %  ffmpeg ${(r.ffmpeg * 100).toFixed(2).padStart(6)} %`);
}
for (const key of ['js', 'ffmpeg'] as const) {
  const measured = rows.filter((r) => !Number.isNaN(r[key]));
  const ok = measured.filter((r) => r[key] >= 0.95).length;
  const mean = measured.reduce((s, r) => s + r[key], 0) / Math.max(1, measured.length);
  const min = Math.min(...measured.map((r) => r[key]));
  console.log(`${key} decoder: ${ok}/${measured.length} tracks (${((100 * ok) / Math.max(1, measured.length)).toFixed(1)} %) at >= 95 % bits; mean ${(mean * 100).toFixed(2)} %, min ${(min * 100).toFixed(2)} %`);
}
