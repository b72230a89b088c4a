// AudioChromaprint (decisions.md section 3): chromaprint's default "test2" fingerprint,
// computed by the chromaprint kernel (assembly/chromaprint/), plus the LSH bands.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';
import type { Fingerprint } from './types.js';
import { audioBands } from './audio-bands.js';

export { audioBands } from './audio-bands.js';

interface ChromaprintExports extends BaseExports {
  fingerprintReset(): void;
  fingerprintConsume(ptr: number, len: number): void;
  int16FromFloat(src: number, dst: number, len: number): void;
  fingerprintWordCount(): number;
  fingerprintWords(): number;
}

/** The sample rate `chromaprint()` expects (mono). */
export const CHROMAPRINT_SAMPLE_RATE = 11025;

const CHUNK = 32768; // samples copied into the kernel per call

// The kernel holds one fingerprint's state at a time. `owner` is whoever last reset it:
// a ChromaprintStream that finds another owner there replays its samples from the start.
let owner: object | null = null;
const ONE_SHOT = {};

/** Feeds samples to the kernel; floats are converted to int16 in it, as swresample would. */
function consume(kernel: Kernel<ChromaprintExports>, samples: Int16Array | Float32Array): void {
  const k = kernel.exports;
  for (let from = 0; from < samples.length; from += CHUNK) {
    const to = Math.min(samples.length, from + CHUNK);
    const n = to - from;
    if (samples instanceof Int16Array) {
      const ptr = k.scratch(n * 2);
      kernel.view(Int16Array, ptr, n).set(samples.subarray(from, to));
      k.fingerprintConsume(ptr, n);
    } else {
      const ptr = k.scratch(n * 4);
      kernel.view(Float32Array, ptr, n).set(samples.subarray(from, to));
      k.int16FromFloat(ptr, ptr, n);
      k.fingerprintConsume(ptr, n);
    }
  }
}

function words(kernel: Kernel<ChromaprintExports>): Uint32Array {
  const k = kernel.exports;
  return kernel.view(Uint32Array, k.fingerprintWords(), k.fingerprintWordCount()).slice();
}

/**
 * The raw Chromaprint words of 11025 Hz mono audio: one 32-bit word per 1365 samples
 * (about 0.124 s) once 4096 + 19 * 1365 samples are available. Float samples are in
 * [-1, 1] and become int16 as swresample converts them (x * 32768 rounded to nearest,
 * ties to even, clipped); int16 samples are used as they are.
 */
export function chromaprint(samples: Int16Array | Float32Array): Uint32Array {
  const kernel = loadKernel<ChromaprintExports>('chromaprint');
  owner = ONE_SHOT;
  kernel.exports.fingerprintReset();
  consume(kernel, samples);
  const out = words(kernel);
  owner = null;
  return out;
}

/**
 * Chromaprint words of audio that arrives in pieces (11025 Hz mono), computed as the
 * pieces arrive: `push` each piece, then `finish`. Gives the same words as
 * `chromaprint()` of all pieces joined. Streams and `chromaprint()` may interleave in
 * one thread: a stream that lost the kernel to another computation recomputes from
 * the samples it keeps.
 */
export class ChromaprintStream {
  private readonly kernel = loadKernel<ChromaprintExports>('chromaprint');
  private readonly pieces: (Int16Array | Float32Array)[] = [];
  private fed = 0;
  private done = false;

  /** Adds a piece; it is kept (not copied) until `finish`, so it must not change meanwhile. */
  push(samples: Int16Array | Float32Array): void {
    if (this.done) throw new Error('ChromaprintStream: push after finish');
    this.pieces.push(samples);
    // feed now unless another stream is mid-way (it keeps the kernel until it finishes)
    if (owner === null || owner === this) this.feed();
  }

  private feed(): void {
    if (owner !== this) {
      owner = this;
      this.kernel.exports.fingerprintReset();
      this.fed = 0;
    }
    while (this.fed < this.pieces.length) consume(this.kernel, this.pieces[this.fed++]);
  }

  /** The words of everything pushed. */
  finish(): Uint32Array {
    this.done = true;
    this.feed();
    const out = words(this.kernel);
    owner = null;
    this.pieces.length = 0;
    return out;
  }
}

/** `hash_value` bytes of a word sequence: each word little-endian. */
export function wordsToBytes(words: Uint32Array): number[] {
  const out = new Array<number>(words.length * 4);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    out[4 * i] = w & 0xff;
    out[4 * i + 1] = (w >>> 8) & 0xff;
    out[4 * i + 2] = (w >>> 16) & 0xff;
    out[4 * i + 3] = w >>> 24;
  }
  return out;
}

/** The words back from `hash_value` bytes (little-endian; a trailing partial word is ignored). */
export function bytesToWords(bytes: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(Math.floor(bytes.length / 4));
  for (let i = 0; i < out.length; i++) {
    out[i] = (bytes[4 * i] | (bytes[4 * i + 1] << 8) | (bytes[4 * i + 2] << 16) | (bytes[4 * i + 3] << 24)) >>> 0;
  }
  return out;
}

/** The AudioChromaprint fingerprint of 11025 Hz mono samples (callers cut them to the first 120 s). */
export function audioFingerprintFromSamples(samples: Int16Array | Float32Array): Fingerprint {
  return audioFingerprintFromWords(chromaprint(samples));
}

/** The AudioChromaprint fingerprint of Chromaprint words. */
export function audioFingerprintFromWords(words: Uint32Array): Fingerprint {
  return { hash_type: 'AudioChromaprint', hash_value: wordsToBytes(words), bands: audioBands(words) };
}
