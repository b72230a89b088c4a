// Audio decoding to what the Chromaprint kernel takes (11025 Hz mono, first 120 s), and
// the AudioChromaprint fingerprint of an audio file. WAV is parsed here; MP3, FLAC and
// Ogg Vorbis go through the WebAssembly decoders or ffmpeg, whichever
// bench/audio.bench.ts measured faster; Ogg Opus always through ffmpeg.
import { open, readFile } from 'node:fs/promises';
import { MPEGDecoder } from 'mpg123-decoder';
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { audioFingerprintFromSamples, audioFingerprintFromWords, ChromaprintStream } from '../lib/chromaprint.js';
import type { Fingerprint } from '../lib/types.js';
import { deadlineOrDefault } from './deadline.js';
import { FingerprintError } from './errors.js';
import { decodeWithFfmpeg, streamWithFfmpeg } from './ffmpeg-audio.js';
import { checkAudioStreams, checkStreamParameters } from './audio-params.js';
import { parseWavMono, wavPrefixLength } from './wav.js';
import { mixToMono, resampleTo11025, TARGET_RATE } from '../lib/resample.js';
import '../lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import type { AudioFormat } from './audio-format.js';

export type { AudioFormat };

export interface DecodeAudioOptions {
  /** Seconds of audio to return at most (default 120, the fingerprint's span). */
  maxSeconds?: number;
  /** Give up at this instant, epoch ms (default: FINGERPRINT_TIMEOUT_MS from now; deadline.ts). */
  deadline?: number;
  /** Force a decoder (benchmarks and tests); the default is the faster one per format. */
  decoder?: 'js' | 'ffmpeg';
  /** ffmpeg's memory limit in MB (default DECODER_DEFAULT_MEMORY_MB, memory-limit.ts; null: none). */
  memoryLimitMb?: number | null;
}

/** Which decoder each format uses by default (see docs/audio.md for the measurements). */
export const DEFAULT_DECODER: Record<AudioFormat, 'js' | 'ffmpeg'> = {
  wav: 'js',
  mp3: 'ffmpeg',
  flac: 'ffmpeg',
  'ogg-vorbis': 'ffmpeg',
  'ogg-opus': 'ffmpeg',
};

const CHUNK = 64 * 1024; // compressed bytes fed to a decoder per step

interface Decoded {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
}

/** Collects decoder output until `maxSeconds` are available. */
class Collector {
  private parts: Float32Array[][] = [];
  private frames = 0;
  sampleRate = 0;

  constructor(private readonly maxSeconds: number) {}

  add(d: Decoded): void {
    if (d.samplesDecoded === 0 || d.channelData.length === 0) return;
    // what the decoder found in the stream, which a chained stream can change midway (audio-params.ts)
    checkStreamParameters({ sampleRate: d.sampleRate, channels: d.channelData.length }, 'the decoded stream');
    if (this.sampleRate === 0) this.sampleRate = d.sampleRate;
    this.parts.push(d.channelData.map((c) => c.subarray(0, d.samplesDecoded)));
    this.frames += d.samplesDecoded;
  }

  get full(): boolean {
    return this.sampleRate > 0 && this.frames >= this.maxSeconds * this.sampleRate;
  }

  /** 11025 Hz mono of what was collected. */
  finish(): Float32Array {
    if (this.sampleRate === 0) throw new Error('audio: nothing decoded');
    const limit = Math.floor(this.maxSeconds * this.sampleRate);
    const n = Math.min(this.frames, limit);
    const mono = new Float32Array(n);
    let at = 0;
    for (const part of this.parts) {
      if (at >= n) break;
      const len = Math.min(part[0].length, n - at);
      if (part.length === 1) mono.set(part[0].subarray(0, len), at);
      else mono.set(mixToMono(part, len), at);
      at += len;
    }
    return resampleTo11025(mono, this.sampleRate, Math.floor(this.maxSeconds * TARGET_RATE));
  }
}

function checkDeadline(deadline: number): void {
  if (Date.now() > deadline) throw new FingerprintError('timeout', 'audio decoding ran past its deadline');
}

/** What the three WebAssembly decoders have in common. */
interface ChunkDecoder {
  ready: Promise<void>;
  decode(chunk: Uint8Array): Decoded | Promise<Decoded>;
  flush?(): Promise<Decoded>;
  free(): void;
}

/** Feeds `bytes` to `decoder` a chunk at a time until `out` has enough or the input ends. */
async function decodeChunks(decoder: ChunkDecoder, bytes: Uint8Array, out: Collector, deadline: number): Promise<void> {
  await decoder.ready;
  try {
    for (let o = 0; o < bytes.length && !out.full; o += CHUNK) {
      out.add(await decoder.decode(bytes.subarray(o, o + CHUNK)));
      checkDeadline(deadline);
    }
    if (!out.full && decoder.flush) out.add(await decoder.flush());
  } finally {
    decoder.free();
  }
}

const JS_DECODERS: Record<'mp3' | 'flac' | 'ogg-vorbis', () => ChunkDecoder> = {
  mp3: () => new MPEGDecoder(),
  flac: () => new FLACDecoder(),
  'ogg-vorbis': () => new OggVorbisDecoder(),
};

function int16ToFloat(s: Int16Array): Float32Array {
  const out = new Float32Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s[i] / 32768;
  return out;
}

/**
 * Decodes audio to 11025 Hz mono in [-1, 1], the first `maxSeconds` (default 120) seconds.
 * Rejects when the bytes cannot be decoded, and before decoding when a stream declares
 * parameters outside AUDIO_STREAM_LIMITS (audio-params.ts).
 */
export async function decodeAudio(bytes: Uint8Array, format: AudioFormat, opts: DecodeAudioOptions = {}): Promise<Float32Array> {
  const maxSeconds = opts.maxSeconds ?? 120;
  const deadline = deadlineOrDefault(opts.deadline);
  const decoder = opts.decoder ?? DEFAULT_DECODER[format];
  await checkAudioStreams(bytes, format);
  // Opus has no WebAssembly decoder here: always ffmpeg.
  if (decoder === 'ffmpeg' || format === 'ogg-opus') {
    const pcm = await decodeWithFfmpeg(bytes, format, { maxSeconds, deadline, memoryLimitMb: opts.memoryLimitMb });
    if (pcm.length === 0) throw new Error(`audio: ffmpeg decoded no ${format} samples`);
    return int16ToFloat(pcm);
  }
  if (format === 'wav') {
    const wav = parseWavMono(bytes, maxSeconds);
    if (wav.samples.length === 0) throw new Error('audio: empty wav');
    return resampleTo11025(wav.samples, wav.sampleRate, Math.floor(maxSeconds * TARGET_RATE));
  }
  const out = new Collector(maxSeconds);
  await decodeChunks(JS_DECODERS[format](), bytes, out, deadline);
  return out.finish();
}

const WAV_HEAD = 64 * 1024;

/** A file's bytes for the in-process decoders; of a WAV file only what its first `maxSeconds` need. */
export async function readAudioFile(path: string, format: AudioFormat, maxSeconds: number): Promise<Uint8Array> {
  if (format !== 'wav') return new Uint8Array(await readFile(path));
  const file = await open(path, 'r');
  try {
    const head = new Uint8Array(WAV_HEAD);
    const { bytesRead } = await file.read(head, 0, WAV_HEAD, 0);
    const prefix = wavPrefixLength(head.subarray(0, bytesRead), maxSeconds);
    // the data chunk starts past the head (long metadata first): the whole file
    if (prefix === null) return new Uint8Array(await file.readFile());
    // never more than the file holds, whatever its header declares
    const need = Math.min(prefix, (await file.stat()).size);
    if (need <= bytesRead) return head.subarray(0, need);
    const bytes = new Uint8Array(need);
    bytes.set(head.subarray(0, bytesRead));
    let at = bytesRead;
    while (at < need) {
      const r = await file.read(bytes, at, need - at, at);
      if (r.bytesRead === 0) break; // shorter than its header says
      at += r.bytesRead;
    }
    return bytes.subarray(0, at);
  } finally {
    await file.close();
  }
}

/** Samples needed for one Chromaprint word: a 4096-sample frame plus 19 hops (filters of 5 and 16 frames). */
const MIN_SAMPLES = 4096 + 19 * 1365;

/**
 * The AudioChromaprint fingerprint of an audio file, or null when it is too short
 * (under about 2.7 s) to give a single word. Rejects when it cannot be read or decoded
 * (fingerprintFile turns that into a FingerprintError).
 */
export async function audioFingerprint(input: Uint8Array | string, format: AudioFormat, opts: DecodeAudioOptions = {}): Promise<Fingerprint | null> {
  const decoder = format === 'ogg-opus' ? 'ffmpeg' : (opts.decoder ?? DEFAULT_DECODER[format]);
  if (decoder === 'ffmpeg') {
    await checkAudioStreams(input, format);
    // fingerprint ffmpeg's int16 output while it is still decoding (a path is read by ffmpeg)
    const stream = new ChromaprintStream();
    const ffmpegOptions = { maxSeconds: opts.maxSeconds ?? 120, deadline: opts.deadline, memoryLimitMb: opts.memoryLimitMb };
    const count = await streamWithFfmpeg(input, format, ffmpegOptions, (s) => stream.push(s));
    if (count === 0) throw new Error(`audio: ffmpeg decoded no ${format} samples`);
    const words = stream.finish();
    return count < MIN_SAMPLES ? null : audioFingerprintFromWords(words);
  }
  const bytes = typeof input === 'string' ? await readAudioFile(input, format, opts.maxSeconds ?? 120) : input;
  const samples = await decodeAudio(bytes, format, opts);
  if (samples.length < MIN_SAMPLES) return null;
  return audioFingerprintFromSamples(samples);
}
