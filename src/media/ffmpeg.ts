// The ffmpeg child-process runner: the one place that starts ffmpeg. The binary is
// FFMPEG_PATH or the one shipped by @ffmpeg-installer/ffmpeg. Every run reads only
// its one input (-protocol_whitelist file,pipe, a forced demuxer so no playlist or
// concat demuxer can open other files), takes no commands on stdin (-nostdin), and is
// SIGKILLed at its deadline and when its output passes a byte cap. It runs under the
// decoders' memory limit (memory-limit.ts: RLIMIT_DATA, PROVENANT_DECODER_MEMORY_MB),
// and the streams it prints once it has probed its input are checked before it decodes
// (audio-params.ts): a stream outside the limits stops it (code `refused`).
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { deadlineOrDefault, msUntil } from './deadline.js';
import { checkStreamParameters, StreamParametersError } from './audio-params.js';
import { DECODER_DEFAULT_MEMORY_MB, memoryLimitScript } from './memory-limit.js';

export type FfmpegErrorCode = 'missing' | 'timeout' | 'output_limit' | 'refused' | 'failed';

export class FfmpegError extends Error {
  override name = 'FfmpegError';
  constructor(readonly code: FfmpegErrorCode, message: string, readonly stderr = '') {
    super(message);
  }
}

export interface FfmpegRun {
  /**
   * A file path, or the file's bytes: written to a private temp file for the run (demuxers
   * that seek, such as MP4's, need one), or with `pipeInput` streamed on stdin.
   */
  input: string | Uint8Array;
  /** Feed byte input through stdin (`pipe:0`) instead of a temp file. */
  pipeInput?: boolean;
  /** Receives stdout as it arrives (then `stdout` of the result is empty); still capped. */
  onStdout?: (chunk: Buffer) => void;
  /** The demuxer to force (`mov`, `matroska`, `avi`, ...). */
  demuxer: string;
  /** Options placed before `-i` (e.g. `-t 120`). */
  inputArgs?: string[];
  /** Output options; the output itself should be `-` (stdout). */
  outputArgs: string[];
  /** When ffmpeg is killed and the run rejects, epoch ms (default: FINGERPRINT_TIMEOUT_MS from now; deadline.ts). */
  deadline?: number;
  /** Largest stdout accepted (default 64 MiB). */
  maxOutputBytes?: number;
  /**
   * Asked after each stdout chunk, with the bytes so far and the stderr so far: true
   * means the caller has all it needs, so ffmpeg is stopped and the run succeeds.
   */
  enough?: (stdoutBytes: number, stderr: string) => boolean;
  /** The process's memory limit in MB (default DECODER_DEFAULT_MEMORY_MB; null: none). */
  memoryLimitMb?: number | null;
  /** Largest video frame an input stream may declare, in pixels (default: not checked). */
  maxFramePixels?: number;
}

export interface FfmpegResult {
  stdout: Buffer;
  /** The last 64 KiB of stderr. */
  stderr: string;
}

const DEFAULT_MAX_OUTPUT = 64 << 20;
const STDERR_KEEP = 64 << 10;

let cachedPath: string | undefined;

/** The ffmpeg binary: $FFMPEG_PATH, else @ffmpeg-installer/ffmpeg's. */
export function ffmpegPath(): string {
  const fromEnv = process.env.FFMPEG_PATH;
  if (fromEnv) return fromEnv;
  if (cachedPath === undefined) {
    try {
      const require = createRequire(import.meta.url);
      cachedPath = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    } catch (e) {
      throw new FfmpegError('missing', `no ffmpeg: set FFMPEG_PATH or install @ffmpeg-installer/ffmpeg (${(e as Error).message})`);
    }
  }
  return cachedPath;
}

/** Runs ffmpeg once over one input and collects its stdout. */
export async function runFfmpeg(run: FfmpegRun): Promise<FfmpegResult> {
  let tempDir: string | undefined;
  let inputPath: string;
  if (typeof run.input !== 'string' && run.pipeInput) {
    inputPath = 'pipe:0';
  } else if (typeof run.input === 'string') {
    inputPath = resolve(run.input);
  } else {
    tempDir = await mkdtemp(join(tmpdir(), 'provenant-ffmpeg-'));
    inputPath = join(tempDir, 'input');
    await writeFile(inputPath, run.input, { mode: 0o600 });
  }
  try {
    return await spawnFfmpeg(run, inputPath);
  } finally {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
  }
}

function spawnFfmpeg(run: FfmpegRun, inputPath: string): Promise<FfmpegResult> {
  const args = [
    '-hide_banner', '-nostdin', '-loglevel', 'info',
    '-protocol_whitelist', 'file,pipe',
    ...(run.inputArgs ?? []),
    '-f', run.demuxer,
    '-i', inputPath === 'pipe:0' ? inputPath : `file:${inputPath}`,
    ...run.outputArgs,
  ];
  const deadline = deadlineOrDefault(run.deadline);
  const maxOutput = run.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolvePromise, reject) => {
    const piped = inputPath === 'pipe:0';
    const script = memoryLimitScript(run.memoryLimitMb === undefined ? DECODER_DEFAULT_MEMORY_MB : run.memoryLimitMb);
    const [file, argv] = script === null ? [ffmpegPath(), args] : ['/bin/sh', ['-c', script, ffmpegPath(), ...args]];
    const child = spawn(file, argv, { stdio: [piped ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let failure: FfmpegError | undefined;
    let satisfied = false;
    let streamsChecked = false;
    const kill = (error: FfmpegError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill(new FfmpegError('timeout', 'ffmpeg ran past its deadline')), msUntil(deadline));
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (failure) return;
      if (outBytes > maxOutput) kill(new FfmpegError('output_limit', `ffmpeg output passed ${maxOutput} bytes`));
      else if (run.onStdout) {
        try {
          run.onStdout(chunk);
        } catch (e) {
          kill(new FfmpegError('failed', `ffmpeg output consumer failed: ${(e as Error).message}`));
        }
      } else chunks.push(chunk);
      if (!satisfied && !failure && run.enough?.(outBytes, stderr)) {
        satisfied = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      stderr += text;
      if (!streamsChecked && !failure) {
        // the input's streams are printed in full once the output's begin
        const end = stderr.search(/^(Stream mapping:|Output #0)/m);
        if (end >= 0) {
          streamsChecked = true;
          const why = refusedStream(stderr.slice(0, end), run.maxFramePixels);
          if (why !== null) kill(new FfmpegError('refused', why));
        }
      }
      if (stderr.length > 2 * STDERR_KEEP) stderr = stderr.slice(-STDERR_KEEP);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new FfmpegError(e.code === 'ENOENT' ? 'missing' : 'failed', `cannot run ffmpeg: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      stderr = stderr.slice(-STDERR_KEEP);
      if (failure) return reject(new FfmpegError(failure.code, failure.message, stderr));
      if (code !== 0 && !satisfied) {
        const last = stderr.trim().split('\n').pop() ?? '';
        return reject(new FfmpegError('failed', `ffmpeg exited with ${code ?? signal}: ${last}`, stderr));
      }
      resolvePromise({ stdout: Buffer.concat(chunks), stderr });
    });
    if (piped && child.stdin) {
      // ffmpeg may stop reading once it has what it needs: a broken pipe is expected
      child.stdin.on('error', () => {});
      child.stdin.end(run.input as Uint8Array);
    }
  });
}

/**
 * Why an input stream that ffmpeg printed (its own probe: `Stream #0:1: Audio: vorbis,
 * 536915012 Hz, stereo, ...` or `Video: h264 ..., 1920x1080 ...`) is refused, or null.
 * Audio is held to AUDIO_STREAM_LIMITS (rate, and channels when printed as a number;
 * 0, printed for what the probe did not find, is left to the decoder),
 * video to `maxFramePixels`.
 */
export function refusedStream(dump: string, maxFramePixels?: number): string | null {
  for (const m of dump.matchAll(/Stream #\d+:\d+[^\n]*?: (Audio|Video): ([^\n]*)/g)) {
    try {
      if (m[1] === 'Audio') {
        // 0 is what ffmpeg prints for a value its probe did not find: that is not refused here
        const rate = Number(/, (\d+) Hz/.exec(m[2])?.[1] ?? 0);
        const channels = Number(/, (\d+) channels/.exec(m[2])?.[1] ?? 0);
        checkStreamParameters({ sampleRate: rate || undefined, channels: channels || undefined }, 'an input stream');
      } else if (maxFramePixels !== undefined) {
        const size = /, (\d+)x(\d+)\b/.exec(m[2]);
        if (size && Number(size[1]) * Number(size[2]) > maxFramePixels) {
          return `refused before decoding: an input stream declares ${size[1]}x${size[2]} frames (over ${maxFramePixels} pixels)`;
        }
      }
    } catch (e) {
      if (e instanceof StreamParametersError) return e.message;
      throw e;
    }
  }
  return null;
}

/** The container duration ffmpeg printed ("Duration: 00:01:02.50"), in seconds, or null. */
export function parseDuration(stderr: string): number | null {
  const m = /Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(stderr);
  if (m === null) return null;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}
