// AudioChromaprint of whole files: ours (`audioFingerprint`: decode + resample +
// fingerprint + bands, with the WebAssembly/TypeScript decoders and with ffmpeg, from bytes in
// memory and, for ffmpeg, from the path) against fpcalc
// (`fpcalc -raw -length 120`, Chromaprint 1.5.1 in C++) in the same run. Reported as
// seconds of work per minute of audio fingerprinted (up to 120 s per file). Every timed
// call checks its result (word count within 2 of fpcalc's).
// Inputs: long corpus tracks (MP3, Ogg Vorbis; FLAC and WAV made from a Vorbis track by
// ffmpeg) when /tmp/provenant-corpus exists, else the test fixtures.
// Run: node --import tsx bench/audio.bench.ts
import Benchmark from 'benchmark';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync, execFile } from 'node:child_process';
import { audioFingerprint, decodeAudio, type AudioFormat } from '../src/media/audio.js';
import { ffmpegPath } from '../src/media/ffmpeg-audio.js';
import { chromaprint } from '../src/lib/chromaprint.js';

const corpus = '/tmp/provenant-corpus/files/audio';
const fixtures = new URL('../test/fixtures/audio/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'provenant-audio-bench-'));

const inputs: { file: string; format: AudioFormat }[] = [];
if (existsSync(`${corpus}/mp3/asc-music__frontiers.mp3`) && existsSync(`${corpus}/ogg/drascula-music__track2.ogg`)) {
  const ogg = `${corpus}/ogg/drascula-music__track2.ogg`;
  inputs.push({ file: `${corpus}/mp3/asc-music__frontiers.mp3`, format: 'mp3' }, { file: ogg, format: 'ogg-vorbis' });
  for (const [ext, format, codec] of [['flac', 'flac', 'flac'], ['wav', 'wav', 'pcm_s16le']] as const) {
    const out = join(tmp, `track2.${ext}`);
    spawnSync(ffmpegPath(), ['-nostdin', '-v', 'error', '-y', '-i', ogg, '-t', '125', '-c:a', codec, out]);
    inputs.push({ file: out, format });
  }
} else {
  console.log('(no corpus at /tmp/provenant-corpus: using the test fixtures)');
  for (const [f, format] of [['frontiers-25s.mp3', 'mp3'], ['drascula-track2-18s.ogg', 'ogg-vorbis'], ['time-to-strike-8s.flac', 'flac'], ['machine-wars-6s.wav', 'wav']] as const) {
    inputs.push({ file: fixtures + f, format });
  }
}
const haveFpcalc = spawnSync('fpcalc', ['-version']).status === 0;
if (!haveFpcalc) console.log('(fpcalc not found: its rows are skipped)');

function fpcalc(file: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    // fpcalc 1.5.1 exits 3 after "Error decoding audio frame (End of file)" with complete output
    execFile('fpcalc', ['-raw', '-length', '120', '-json', file], { maxBuffer: 1 << 24 }, (_err, stdout) => {
      try {
        resolve((JSON.parse(stdout) as { fingerprint: number[] }).fingerprint);
      } catch (e) {
        reject(e);
      }
    });
  });
}

Benchmark.options.maxTime = 2;
Benchmark.options.minSamples = 4;
const results: string[] = [];
for (const { file, format } of inputs) {
  const bytes = new Uint8Array(readFileSync(file));
  const reference = haveFpcalc ? await fpcalc(file) : null;
  const seconds = (await decodeAudio(bytes, format, { decoder: 'ffmpeg' })).length / 11025;
  const expectWords = reference?.length ?? chromaprint(await decodeAudio(bytes, format)).length;
  const check = (n: number) => {
    if (Math.abs(n - expectWords) > 2) throw new Error(`${file}: ${n} words, expected ${expectWords}`);
  };
  const rows: { name: string; mean: number }[] = [];
  const suite = new Benchmark.Suite();
  // bytes in memory (what the server's workers get), and the file's path as fpcalc gets it
  const runs: ['js' | 'ffmpeg', Uint8Array | string][] = [['js', bytes], ['ffmpeg', bytes], ['ffmpeg', file]];
  if (format === 'wav') runs.push(['js', file]); // WAV's default: parsed in process, from a path too
  for (const [decoder, input] of runs) {
    if (format === 'ogg-opus' && decoder === 'js') continue;
    suite.add(`ours (${decoder}, ${typeof input === 'string' ? 'path' : 'bytes'})`, {
      defer: true,
      fn: (d: Benchmark.Deferred) => {
        audioFingerprint(input, format, { decoder }).then((fp) => {
          check((fp?.hash_value.length ?? 0) / 4);
          d.resolve();
        });
      },
    });
  }
  if (haveFpcalc) {
    suite.add('fpcalc -length 120', {
      defer: true,
      fn: (d: Benchmark.Deferred) => {
        fpcalc(file).then((w) => {
          check(w.length);
          d.resolve();
        });
      },
    });
  }
  suite.on('cycle', (e: Benchmark.Event) => {
    const b = e.target as unknown as Benchmark;
    rows.push({ name: String(b.name), mean: b.stats?.mean ?? NaN });
  });
  await new Promise<void>((done) => suite.on('complete', () => done()).run({ async: true }));
  const perMinute = (mean: number) => (mean / seconds) * 60;
  const peer = rows.find((r) => r.name.startsWith('fpcalc'));
  results.push(`\n${format}: ${file.split('/').pop()} (${seconds.toFixed(1)} s fingerprinted)`);
  for (const r of rows) {
    const ratio = peer ? `  ${(peer.mean / r.mean).toFixed(2)}x fpcalc's speed` : '';
    results.push(`  ${r.name.padEnd(24)} ${(r.mean * 1000).toFixed(0).padStart(6)} ms = ${perMinute(r.mean).toFixed(3)} s per minute of audio${ratio}`);
  }
}
rmSync(tmp, { recursive: true, force: true });
console.log(results.join('\n'));
