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
export async function decodeWithFfmpeg(bytes: Uint8Array, opts: FfmpegAudioOptions = {}): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  const total = await streamWithFfmpeg(bytes, opts, (s) => parts.push(s));
  const out = new Int16Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Like `decodeWithFfmpeg`, but hands the samples to `onSamples` as ffmpeg produces them
 * (a new array each time), so the caller can work while ffmpeg decodes. Resolves with the number of samples.
 */
export function streamWithFfmpeg(bytes: Uint8Array, opts: FfmpegAudioOptions, onSamples: (samples: Int16Array) => void): Promise<number> {
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
    let total = 0;
    let odd: number | null = null; // a byte of a sample split across two chunks
    let stderr = '';
    let settled = false;
    const finish = (err: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else {
        resolve(total);
      }
    };
    const timer = setTimeout(() => finish(new Error(`ffmpeg: no result within ${deadlineMs} ms`)), deadlineMs);
    child.stdout.on('data', (c: Buffer) => {
      if (settled) return;
      let bytesIn: Uint8Array = c;
      if (odd !== null) {
        const joined = new Uint8Array(c.length + 1);
        joined[0] = odd;
        joined.set(c, 1);
        bytesIn = joined;
        odd = null;
      }
      const n = bytesIn.length >> 1;
      if (bytesIn.length & 1) odd = bytesIn[bytesIn.length - 1];
      if (n === 0) return;
      // an aligned copy: Buffer chunks may start at odd offsets of their pool
      const samples = new Int16Array(n);
      new Uint8Array(samples.buffer).set(bytesIn.subarray(0, n * 2));
      total += n;
      try {
        onSamples(samples);
      } catch (e) {
        finish(e instanceof Error ? e : new Error(String(e)));
      }
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
