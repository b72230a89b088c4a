// AudioChromaprint (decisions.md section 3): chromaprint's default "test2" fingerprint,
// computed by the chromaprint kernel (assembly/chromaprint/), plus the LSH bands.
import { loadKernel, type BaseExports } from './wasm.js';
import type { Fingerprint } from './types.js';
import { audioBands } from './audio-bands.js';

export { audioBands } from './audio-bands.js';

interface ChromaprintExports extends BaseExports {
  fingerprintReset(): void;
  fingerprintConsume(ptr: number, len: number): void;
  fingerprintWordCount(): number;
  fingerprintWords(): number;
}

/** The sample rate `chromaprint()` expects (mono). */
export const CHROMAPRINT_SAMPLE_RATE = 11025;

const CHUNK = 32768; // samples copied into the kernel per call
let block: Int16Array | null = null; // float-to-int16 staging, reused across calls

function toInt16(src: Float32Array, from: number, to: number, out: Int16Array): void {
  // as swresample converts float to s16: scale by 2^15, round, clip
  for (let i = from; i < to; i++) {
    let v = Math.round(src[i] * 32768);
    if (v > 32767) v = 32767;
    else if (v < -32768) v = -32768;
    out[i - from] = v;
  }
}

/**
 * The raw Chromaprint words of 11025 Hz mono audio: one 32-bit word per 1365 samples
 * (about 0.124 s) once 4096 + 19 * 1365 samples are available. Float samples are in
 * [-1, 1]; int16 samples are used as they are.
 */
export function chromaprint(samples: Int16Array | Float32Array): Uint32Array {
  const kernel = loadKernel<ChromaprintExports>('chromaprint');
  const k = kernel.exports;
  k.fingerprintReset();
  for (let from = 0; from < samples.length; from += CHUNK) {
    const to = Math.min(samples.length, from + CHUNK);
    let chunk: Int16Array;
    if (samples instanceof Int16Array) chunk = samples.subarray(from, to);
    else {
      block ??= new Int16Array(CHUNK);
      toInt16(samples, from, to, block);
      chunk = block.subarray(0, to - from);
    }
    const ptr = k.scratch(chunk.length * 2);
    kernel.view(Int16Array, ptr, chunk.length).set(chunk);
    k.fingerprintConsume(ptr, chunk.length);
  }
  const count = k.fingerprintWordCount();
  return kernel.view(Uint32Array, k.fingerprintWords(), count).slice();
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
  const words = chromaprint(samples);
  return { hash_type: 'AudioChromaprint', hash_value: wordsToBytes(words), bands: audioBands(words) };
}
