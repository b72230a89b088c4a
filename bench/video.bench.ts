// VideoPHash speed: ours (videoFingerprint: ffmpeg decode, 1 fps pick, scale, dHash)
// against plain decoding of the same stream (`ffmpeg -i FILE -map 0:v:0 -f null -`,
// the floor: we must decode every frame too), same run, per video of the dev corpus
// (or the fixtures); also as times real time.
//   node --import tsx bench/video.bench.ts
import Benchmark from 'benchmark';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { detectType } from '../src/lib/detect.js';
import { ffmpegPath, parseDuration } from '../src/media/ffmpeg.js';
import { videoFingerprint } from '../src/media/video.js';

const CORPUS = '/tmp/provenant-corpus/files/video';
const FIXTURES = new URL('../test/fixtures/media/', import.meta.url).pathname;
const files = existsSync(CORPUS)
  ? readdirSync(CORPUS).flatMap((d) => readdirSync(join(CORPUS, d)).map((f) => join(CORPUS, d, f)))
  : readdirSync(FIXTURES).filter((f) => /\.(mp4|webm|avi|mkv)$/.test(f)).map((f) => join(FIXTURES, f));

/** ffmpeg decoding the first video stream to nothing; resolves with its stderr. */
function decodeToNull(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-t', '120', '-i', file, '-map', '0:v:0', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => (code === 0 ? resolve(err) : reject(new Error(`ffmpeg exit ${code}`))));
  });
}

console.log('video                                           seconds  ours (x real time)  decode floor (x real time)  ours/floor time');
for (const file of files) {
  const format = detectType(new Uint8Array(readFileSync(file).subarray(0, 4096)))?.format;
  if (format === undefined) continue;
  const seconds = Math.min(120, parseDuration(await decodeToNull(file)) ?? NaN);
  const mean: Record<string, number> = {};
  await new Promise<void>((done) => {
    new Benchmark.Suite()
      .add('ours', { defer: true, minSamples: 10, maxTime: 3, fn: (d: { resolve(): void }) => {
        videoFingerprint(file, format).then((fp) => { if (fp.hash_value.length === 0) throw new Error('no frames'); d.resolve(); });
      } })
      .add('floor', { defer: true, minSamples: 10, maxTime: 3, fn: (d: { resolve(): void }) => { decodeToNull(file).then(() => d.resolve()); } })
      .on('cycle', (e: { target: Benchmark }) => { mean[String(e.target.name)] = e.target.stats.mean; })
      .on('complete', () => done())
      .run({ async: true });
  });
  console.log(`${basename(file).padEnd(48)} ${seconds.toFixed(1).padStart(6)}  ${(seconds / mean.ours).toFixed(1).padStart(17)}  ${(seconds / mean.floor).toFixed(1).padStart(26)}  ${(mean.ours / mean.floor).toFixed(2).padStart(15)}`);
}
