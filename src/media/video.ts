// VideoPHash (decisions.md 3): the ImagePHash of one frame per second of the first
// video stream, at t = 0.5 s, 1.5 s, ... (at most 120; a clip under 1 s gives its
// middle frame), concatenated, 8 bytes per frame; bands as in videoBands below.
//
// ffmpeg picks the frames with its fps filter: after shifting timestamps by +0.5 s,
// `fps=1:round=up` gives output slot n the last frame shown at or before n - 0.5 s,
// and only picked frames are scaled (to VIDEO_FRAME_CELL pixels per hash cell, area
// averaging) as grey: the frame's luma plane (for RGB codecs swscale's luma, the
// weights of decisions.md 3). The triangle filter of the dHash kernel does the rest.
import type { MediaFormat } from '../lib/detect.js';
import type { Fingerprint } from '../lib/types.js';
import { imageHashFromPixels } from '../lib/dhash.js';
import { pdqHash, type PdqHash } from '../lib/pdq.js';
import '../lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import { deadlineOrDefault } from './deadline.js';
import { parseDuration, runFfmpeg } from './ffmpeg.js';

export const MAX_VIDEO_FRAMES = 120;

/**
 * Pixels per 9x8 hash cell (on each side) of the frames ffmpeg outputs: 9m x 8m RGB.
 * Measured against full-size frames in bench/video-frame-size.ts (docs/media.md).
 */
export const VIDEO_FRAME_CELL = 8;

/** Largest decoded frame accepted, in pixels. */
export const MAX_VIDEO_FRAME_PIXELS = 40_000_000;

const DEMUXER: Partial<Record<MediaFormat, string>> = { mp4: 'mov', mkv: 'matroska', webm: 'matroska', avi: 'avi' };

export interface VideoOptions {
  /** When ffmpeg is stopped, epoch ms (default: FINGERPRINT_TIMEOUT_MS from the start; deadline.ts), for every run of one file. */
  deadline?: number;
  /** Override VIDEO_FRAME_CELL; 0 keeps frames at full size (for measurements). */
  frameCell?: number;
  /** ffmpeg's memory limit in MB (default DECODER_DEFAULT_MEMORY_MB, memory-limit.ts; null: none). */
  memoryLimitMb?: number | null;
}

export class VideoDecodeError extends Error {
  override name = 'VideoDecodeError';
}

interface Sampled {
  hashes: Uint8Array;
  duration: number | null;
}

/** How many sampled frames a clip of `duration` seconds has: t = 0.5, 1.5, ... inside it. */
function framesWanted(duration: number | null): number {
  if (duration === null || duration <= 0) return MAX_VIDEO_FRAMES;
  if (duration < 1) return 1;
  return Math.min(MAX_VIDEO_FRAMES, Math.ceil(duration - 0.5));
}

async function sampleFrames(input: string | Uint8Array, demuxer: string, shift: number, maxFrames: number, options: VideoOptions): Promise<Sampled> {
  const cell = options.frameCell ?? VIDEO_FRAME_CELL;
  // Scaled frames come as grey (the luma plane of YUV codecs, no colour conversion;
  // docs/media.md has the measurements); full-size frames as RGB, the exact hash input.
  const channels = cell > 0 ? 1 : 3;
  const filters = cell > 0 ? `,scale=${9 * cell}:${8 * cell}:flags=area,format=gray` : ',format=rgb24';
  // ffmpeg prints the container duration before it decodes anything; once the frames
  // wanted for it are out, the rest of the stream need not be decoded. Looked for until
  // the output header is printed (no duration by then: none is coming).
  let duration: number | null = null;
  let headerDone = false;
  const frameBytes0 = 72 * cell * cell * channels;
  const enough = (bytes: number, stderr: string): boolean => {
    if (duration === null && !headerDone) {
      duration = parseDuration(stderr);
      headerDone = stderr.includes('Output #0');
    }
    return cell > 0 && duration !== null && bytes >= Math.min(maxFrames, framesWanted(duration)) * frameBytes0;
  };
  const { stdout, stderr } = await runFfmpeg({
    input,
    demuxer,
    inputArgs: ['-max_pixels', String(MAX_VIDEO_FRAME_PIXELS), '-t', String(MAX_VIDEO_FRAMES)],
    outputArgs: [
      '-map', '0:v:0', '-an', '-sn', '-dn',
      '-vf', `setpts=PTS-STARTPTS+${shift}/TB,fps=fps=1:round=up${filters}`,
      '-frames:v', String(maxFrames),
      '-f', 'rawvideo', '-',
    ],
    deadline: options.deadline,
    memoryLimitMb: options.memoryLimitMb,
    maxFramePixels: MAX_VIDEO_FRAME_PIXELS,
    maxOutputBytes: cell > 0 ? maxFrames * frameBytes0 + 1 : 1 << 30,
    enough,
  });
  duration ??= parseDuration(stderr);
  let width = 9 * cell;
  let height = 8 * cell;
  if (cell === 0) {
    const m = /Video: rawvideo[^\n]*?, rgb24, (\d+)x(\d+)/.exec(stderr.slice(stderr.indexOf('Output #0')));
    if (m === null) throw new VideoDecodeError('cannot read the frame size from ffmpeg');
    width = Number(m[1]);
    height = Number(m[2]);
  }
  const frameBytes = width * height * channels;
  const frames = Math.min(Math.floor(stdout.length / frameBytes), maxFrames);
  const hashes = new Uint8Array(frames * 8);
  for (let i = 0; i < frames; i++) {
    const px = new Uint8Array(stdout.buffer, stdout.byteOffset + i * frameBytes, frameBytes);
    hashes.set(imageHashFromPixels(px, width, height, channels), i * 8);
  }
  return { hashes, duration };
}

/**
 * The frames decisions.md 3 samples, through `run` (a sampler started with its time
 * shift and frame limit, answering how many frames it has): t = 0.5 s, 1.5 s, ... inside
 * the clip, or for a clip under a second the one frame shown at its middle. Returns the
 * run to take frames from, how many, and their times. VideoPHash and vPDQ both sample
 * through it, so they hash the same frames.
 */
async function sampleClip<R extends { count: number; duration: number | null }>(
  run: (shift: number, maxFrames: number) => Promise<R>,
): Promise<{ sampled: R; keep: number; times: number[] }> {
  const first = await run(0.5, MAX_VIDEO_FRAMES);
  const d = first.duration;
  if (d !== null && d > 0 && d < 1) {
    // Under a second: the one frame shown at d / 2.
    const middle = await run(1 - d / 2, 1);
    if (middle.count > 0) return { sampled: middle, keep: middle.count, times: [d / 2] };
  }
  // The fps filter may flush one slot past the end; t = k + 0.5 must fall inside the clip.
  const wanted = d !== null && d >= 1 ? framesWanted(d) : MAX_VIDEO_FRAMES;
  const keep = Math.min(first.count, wanted);
  if (keep === 0) throw new VideoDecodeError('no video frame decoded');
  return { sampled: first, keep, times: Array.from({ length: keep }, (_, k) => k + 0.5) };
}

/** The concatenated frame hashes (8 bytes per sampled frame) of a video file. Throws when it cannot be decoded. */
export async function videoFrameHashes(input: string | Uint8Array, format: MediaFormat, options: VideoOptions = {}): Promise<Uint8Array> {
  const demuxer = DEMUXER[format];
  if (demuxer === undefined) throw new VideoDecodeError(`not a video format: ${format}`);
  options = { ...options, deadline: deadlineOrDefault(options.deadline) };
  const { sampled, keep } = await sampleClip(async (shift, maxFrames) => {
    const s = await sampleFrames(input, demuxer, shift, maxFrames, options);
    return { ...s, count: s.hashes.length / 8 };
  });
  return sampled.hashes.subarray(0, keep * 8);
}

// ---- vPDQ ------------------------------------------------------------------------
//
// vPDQ (Meta's video PDQ) here: the PDQ hash of each frame VideoPHash samples (the same
// fps filter and times, through sampleClip). ffmpeg scales each picked frame to a
// VPDQ_FRAME_SIZE square of RGB (area averaging), as Meta's vpdq-hash-video does with
// its -s option: PDQ samples a 64 x 64 grid whatever the aspect, and a fixed size keeps
// the stream's memory bounded. Frames are hashed as they arrive, one frame held at a time.

/** Side of the square RGB frames vPDQ hashes. */
export const VPDQ_FRAME_SIZE = 512;

/** One vPDQ frame: its time in seconds, its PDQ hash and quality. */
export interface VpdqFrameHash {
  timestamp: number;
  pdq: PdqHash;
}

async function samplePdqFrames(input: string | Uint8Array, demuxer: string, shift: number, maxFrames: number, options: VideoOptions): Promise<{ frames: PdqHash[]; count: number; duration: number | null }> {
  const side = VPDQ_FRAME_SIZE;
  const frameBytes = side * side * 3;
  const frames: PdqHash[] = [];
  const frame = new Uint8Array(frameBytes);
  let filled = 0;
  const take = (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length && frames.length < maxFrames) {
      const n = Math.min(frameBytes - filled, chunk.length - at);
      frame.set(chunk.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === frameBytes) {
        frames.push(pdqHash(frame, side, side, 3));
        filled = 0;
      }
    }
  };
  let duration: number | null = null;
  let headerDone = false;
  const enough = (_bytes: number, stderr: string): boolean => {
    if (duration === null && !headerDone) {
      duration = parseDuration(stderr);
      headerDone = stderr.includes('Output #0');
    }
    return frames.length >= maxFrames || (duration !== null && frames.length >= Math.min(maxFrames, framesWanted(duration)));
  };
  const { stderr } = await runFfmpeg({
    input,
    demuxer,
    inputArgs: ['-max_pixels', String(MAX_VIDEO_FRAME_PIXELS), '-t', String(MAX_VIDEO_FRAMES)],
    outputArgs: [
      '-map', '0:v:0', '-an', '-sn', '-dn',
      '-vf', `setpts=PTS-STARTPTS+${shift}/TB,fps=fps=1:round=up,scale=${side}:${side}:flags=area,format=rgb24`,
      '-frames:v', String(maxFrames),
      '-f', 'rawvideo', '-',
    ],
    deadline: options.deadline,
    memoryLimitMb: options.memoryLimitMb,
    maxFramePixels: MAX_VIDEO_FRAME_PIXELS,
    maxOutputBytes: maxFrames * frameBytes + 1,
    onStdout: take,
    enough,
  });
  duration ??= parseDuration(stderr);
  return { frames, count: frames.length, duration };
}

/**
 * The vPDQ of a video file: one PDQ hash per frame VideoPHash samples, with its time
 * (t = 0.5 s, 1.5 s, ...; a clip under a second: its middle). Throws when it cannot be decoded.
 */
export async function videoPdqFrames(input: string | Uint8Array, format: MediaFormat, options: VideoOptions = {}): Promise<VpdqFrameHash[]> {
  const demuxer = DEMUXER[format];
  if (demuxer === undefined) throw new VideoDecodeError(`not a video format: ${format}`);
  options = { ...options, deadline: deadlineOrDefault(options.deadline) };
  const { sampled, keep, times } = await sampleClip((shift, maxFrames) => samplePdqFrames(input, demuxer, shift, maxFrames, options));
  return sampled.frames.slice(0, keep).map((pdq, i) => ({ timestamp: times[i], pdq }));
}

// ---- Bands -----------------------------------------------------------------------
//
// Band i is a min-hash over the frames: each frame hash is cut down to BAND_BITS of its
// 64 bits (a fixed random choice per band, so that a few flipped bits after
// re-encoding spoil only some bands), mixed to 32 bits with a per-band seed, and the
// band is the smallest value over all frames. Two copies share band i when the frame
// that minimises it survives (trimming) with its sampled bits intact (re-encoding,
// resizing). docs/media.md gives the measured recall and the collision rate.

export const BAND_BITS = 16;

/** `bits` bit positions (0 = the first hash byte's most significant bit) for each of the 8 bands, from a fixed seed. */
export function bandPositions(bits: number = BAND_BITS): number[][] {
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state;
  };
  const bands: number[][] = [];
  for (let b = 0; b < 8; b++) {
    const pool = Array.from({ length: 64 }, (_, i) => i);
    for (let i = 63; i > 0; i--) {
      const j = next() % (i + 1);
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    bands.push(pool.slice(0, bits).sort((x, y) => x - y));
  }
  return bands;
}

const POSITIONS = bandPositions();

/** A 32-bit avalanche mix (murmur3's finalizer) of a key and a band seed. */
function mix32(key: number, seed: number): number {
  let h = (key ^ Math.imul(seed + 1, 0x9e3779b1)) >>> 0;
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The 8 bands of 4 bytes of a VideoPHash's frame hashes (8 bytes per frame). */
export function videoBands(hashes: Uint8Array, positions: number[][] = POSITIONS): number[][] {
  if (hashes.length === 0 || hashes.length % 8 !== 0) throw new RangeError('frame hashes come in whole 8-byte units');
  const bands: number[][] = [];
  for (let b = 0; b < 8; b++) {
    let min = 0xffffffff;
    for (let f = 0; f < hashes.length; f += 8) {
      let key = 0;
      for (const p of positions[b]) key = (key << 1) | ((hashes[f + (p >> 3)] >> (7 - (p & 7))) & 1);
      const v = mix32(key, b);
      if (v < min) min = v;
    }
    bands.push([min >>> 24, (min >>> 16) & 255, (min >>> 8) & 255, min & 255]);
  }
  return bands;
}

/** The VideoPHash fingerprint of a video file. Throws when it cannot be decoded. */
export async function videoFingerprint(input: string | Uint8Array, format: MediaFormat, options: VideoOptions = {}): Promise<Fingerprint> {
  const hashes = await videoFrameHashes(input, format, options);
  return { hash_type: 'VideoPHash', hash_value: Array.from(hashes), bands: videoBands(hashes) };
}
