// Audio decoding through an ffmpeg child process: the input goes in on stdin, 11025 Hz
// mono int16 comes out on stdout. Resampling uses the settings chromaprint's fpcalc
// gives swresample ("compatible mode": filter size 16, phase shift 8, linear
// interpolation, cutoff 0.8), so the samples match what fpcalc fingerprints.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The ffmpeg binary: $FFMPEG_PATH, else the one from @ffmpeg-installer/ffmpeg. */
export function ffmpegPath(): string {
  const fromEnv = process.env.FFMPEG_PATH;
  if (fromEnv) return fromEnv;
  return (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
}

export interface FfmpegAudioOptions {
  /** Seconds of audio to produce at most (default 120). */
  maxSeconds?: number;
  /** Kill ffmpeg and reject after this many milliseconds (default 60000). */
  deadlineMs?: number;
}

const RESAMPLER = 'aresample=11025:resampler=swr:filter_size=16:phase_shift=8:linear_interp=1:cutoff=0.8';

/** Decodes any audio ffmpeg reads to 11025 Hz mono int16, first `maxSeconds` seconds. Rejects on failure. */
export function decodeWithFfmpeg(bytes: Uint8Array, opts: FfmpegAudioOptions = {}): Promise<Int16Array> {
  const maxSeconds = opts.maxSeconds ?? 120;
  const deadlineMs = opts.deadlineMs ?? 60_000;
  const args = [
    '-hide_banner', '-nostdin', '-loglevel', 'error',
    '-protocol_whitelist', 'file,pipe',
    '-i', 'pipe:0',
    '-vn', '-sn', '-dn',
    '-af', `${RESAMPLER},aformat=sample_fmts=s16:channel_layouts=mono`,
    '-ac', '1', '-ar', '11025', '-t', String(maxSeconds),
    '-f', 's16le', 'pipe:1',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let settled = false;
    const finish = (err: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
        return;
      }
      const all = Buffer.concat(chunks, size);
      const samples = new Int16Array(all.length >> 1);
      new Uint8Array(samples.buffer).set(all.subarray(0, samples.length * 2));
      resolve(samples);
    };
    const timer = setTimeout(() => finish(new Error(`ffmpeg: no result within ${deadlineMs} ms`)), deadlineMs);
    child.stdout.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString();
    });
    child.on('error', (e) => finish(e));
    child.on('close', (code) => {
      if (code === 0) finish(null);
      else finish(new Error(`ffmpeg exited with ${code}: ${stderr.trim().split('\n')[0] ?? ''}`));
    });
    // ffmpeg stops reading once it has enough audio: a broken pipe here is expected
    child.stdin.on('error', () => {});
    child.stdin.end(bytes);
  });
}
