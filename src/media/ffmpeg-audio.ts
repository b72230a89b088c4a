// Audio decoding through ffmpeg (src/media/ffmpeg.ts runs it): the file goes in on
// stdin, 11025 Hz mono int16 comes out on stdout. Resampling uses the settings
// chromaprint's fpcalc gives swresample ("compatible mode": filter size 16, phase
// shift 8, linear interpolation, cutoff 0.8), so the samples match what fpcalc
// fingerprints.
import { runFfmpeg } from './ffmpeg.js';
import type { AudioFormat } from './audio-format.js';

export { ffmpegPath } from './ffmpeg.js';

export interface FfmpegAudioOptions {
  /** Seconds of audio to produce at most (default 120). */
  maxSeconds?: number;
  /** Kill ffmpeg and reject at this instant, epoch ms (default: FINGERPRINT_TIMEOUT_MS from now; deadline.ts). */
  deadline?: number;
  /** ffmpeg's memory limit in MB (default DECODER_DEFAULT_MEMORY_MB, memory-limit.ts; null: none). */
  memoryLimitMb?: number | null;
}

const RESAMPLER = 'aresample=11025:resampler=swr:filter_size=16:phase_shift=8:linear_interp=1:cutoff=0.8';

/** The demuxer forced for each format, so ffmpeg never probes into playlists or other inputs. */
const DEMUXER: Record<AudioFormat, string> = { mp3: 'mp3', wav: 'wav', flac: 'flac', 'ogg-vorbis': 'ogg', 'ogg-opus': 'ogg' };

/** Decodes audio of `format` to 11025 Hz mono int16, first `maxSeconds` seconds. Rejects on failure. */
export async function decodeWithFfmpeg(bytes: Uint8Array, format: AudioFormat, opts: FfmpegAudioOptions = {}): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  const total = await streamWithFfmpeg(bytes, format, opts, (s) => parts.push(s));
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
 * (a new array each time), so the caller can work while ffmpeg decodes. Resolves with
 * the number of samples.
 */
export async function streamWithFfmpeg(
  input: Uint8Array | string,
  format: AudioFormat,
  opts: FfmpegAudioOptions,
  onSamples: (samples: Int16Array) => void,
): Promise<number> {
  const maxSeconds = opts.maxSeconds ?? 120;
  let total = 0;
  let odd: number | null = null; // a byte of a sample split across two chunks
  await runFfmpeg({
    // a path is read by ffmpeg itself; bytes are streamed through stdin
    input,
    pipeInput: typeof input !== 'string',
    demuxer: DEMUXER[format],
    // the input's streams are printed (info), checked by runFfmpeg; no progress lines
    inputArgs: ['-nostats'],
    outputArgs: [
      '-vn', '-sn', '-dn',
      '-af', `${RESAMPLER},aformat=sample_fmts=s16:channel_layouts=mono`,
      '-ac', '1', '-ar', '11025', '-t', String(maxSeconds),
      // Write in full I/O blocks, not one small write per audio frame: thousands of
      // tiny pipe reads cost about a fifth of the whole run.
      '-flush_packets', '0',
      '-f', 's16le', 'pipe:1',
    ],
    deadline: opts.deadline,
    memoryLimitMb: opts.memoryLimitMb,
    // 11025 Hz * 2 bytes * maxSeconds, with room for the resampler's tail
    maxOutputBytes: Math.ceil(11025 * 2 * (maxSeconds + 1)),
    onStdout(chunk) {
      let bytesIn: Uint8Array = chunk;
      if (odd !== null) {
        const joined = new Uint8Array(chunk.length + 1);
        joined[0] = odd;
        joined.set(chunk, 1);
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
      onSamples(samples);
    },
  });
  return total;
}
