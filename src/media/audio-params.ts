// Stream parameters of an audio file, read from its own headers before any decoder
// runs (issue 25 item 14). A header is a stranger's claim: a 38 KB Ogg Vorbis file whose
// identification header says 536,915,012 Hz made ffmpeg's resampler grow to 1 GB, and
// the WebAssembly Vorbis decoder to 2 GB (it collects 120 s at the declared rate). So
// the rate, channels, frame size and declared duration of every stream are checked
// against AUDIO_STREAM_LIMITS first, and a file outside them is refused (decode_failed)
// without decoding a sample. The same limits are checked again on what the JavaScript
// decoders report (audio.ts) and on the streams ffmpeg prints before it decodes
// (ffmpeg.ts), and every ffmpeg process runs under the decoders' memory limit.
//
// What is read, per format (the header parsing here is cheap: no sample is decoded):
// - WAV: the fmt chunk (channels, rate, block align) and the data chunk's declared size;
// - FLAC: STREAMINFO (rate, channels, block sizes, total samples);
// - Ogg: every page's header, the whole file through, and the identification header of
//   each logical stream that begins (BOS page: Vorbis, Opus, FLAC): a chained file can
//   start a second stream anywhere;
// - MP3: nothing: its rates and channels come from fixed tables (at most 48 kHz, 2 channels).
import { open } from 'node:fs/promises';
import type { AudioFormat } from './audio-format.js';

/** What an audio stream may declare (docs/media.md). */
export const AUDIO_STREAM_LIMITS = {
  /** Hz: nothing real is sampled slower. */
  minSampleRate: 1_000,
  /** Hz: the highest rate in use (DXD and 768 kHz converters). */
  maxSampleRate: 768_000,
  /** The most ffmpeg's resampler takes (SWR_CH_MAX); ambisonics of 7th order fit. */
  maxChannels: 64,
  /** Samples per channel in one frame or block: FLAC's largest block (65535); Vorbis stops at 8192. */
  maxFrameSamples: 65_535,
  /** Seconds a stream may declare (FLAC's total samples, a WAV data chunk's size): one week. */
  maxDeclaredSeconds: 7 * 86_400,
} as const;

/** Parameters as a header declares them; absent ones it does not state. */
export interface AudioStreamParameters {
  sampleRate?: number;
  channels?: number;
  /** Samples per channel in the largest frame or block. */
  frameSamples?: number;
  durationSeconds?: number;
}

/** A stream's declared parameters are outside AUDIO_STREAM_LIMITS: refused before decoding. */
export class StreamParametersError extends Error {
  override name = 'StreamParametersError';
}

/** Throws StreamParametersError when `p` (from `where`) is outside AUDIO_STREAM_LIMITS. */
export function checkStreamParameters(p: AudioStreamParameters, where: string): void {
  const L = AUDIO_STREAM_LIMITS;
  const refuse = (what: string) => {
    throw new StreamParametersError(`refused before decoding: ${where} declares ${what}`);
  };
  if (p.sampleRate !== undefined && !(p.sampleRate >= L.minSampleRate && p.sampleRate <= L.maxSampleRate)) {
    refuse(`a sample rate of ${p.sampleRate} Hz (accepted: ${L.minSampleRate} to ${L.maxSampleRate})`);
  }
  if (p.channels !== undefined && !(p.channels >= 1 && p.channels <= L.maxChannels)) {
    refuse(`${p.channels} channels (accepted: 1 to ${L.maxChannels})`);
  }
  if (p.frameSamples !== undefined && !(p.frameSamples >= 1 && p.frameSamples <= L.maxFrameSamples)) {
    refuse(`frames of ${p.frameSamples} samples (accepted: 1 to ${L.maxFrameSamples})`);
  }
  if (p.durationSeconds !== undefined && !(p.durationSeconds >= 0 && p.durationSeconds <= L.maxDeclaredSeconds)) {
    refuse(`a duration of ${Math.round(p.durationSeconds)} s (accepted: up to ${L.maxDeclaredSeconds})`);
  }
}

// ---- reading: bytes in memory, or a file read in windows ----

interface Source {
  readonly size: number;
  /** Up to `length` bytes at `offset` (fewer at the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

const WINDOW = 1 << 20;

async function withSource<T>(input: Uint8Array | string, use: (s: Source) => Promise<T>): Promise<T> {
  if (typeof input !== 'string') {
    return use({ size: input.length, read: async (o, n) => input.subarray(o, Math.min(input.length, o + n)) });
  }
  const file = await open(input, 'r');
  try {
    const size = (await file.stat()).size;
    // one window of the file kept: the Ogg walk reads page headers in order
    let at = -1;
    let window = new Uint8Array(0);
    return await use({
      size,
      async read(o, n) {
        const end = Math.min(size, o + n);
        if (at < 0 || o < at || end > at + window.length) {
          const buf = new Uint8Array(Math.max(WINDOW, n));
          const { bytesRead } = await file.read(buf, 0, buf.length, o);
          at = o;
          window = buf.subarray(0, bytesRead);
        }
        return window.subarray(o - at, Math.max(o - at, Math.min(window.length, end - at)));
      },
    });
  } finally {
    await file.close();
  }
}

function ascii(b: Uint8Array, o: number, s: string): boolean {
  if (o + s.length > b.length) return false;
  for (let i = 0; i < s.length; i++) if (b[o + i] !== s.charCodeAt(i)) return false;
  return true;
}

const u16le = (b: Uint8Array, o: number) => b[o] | (b[o + 1] << 8);
const u32le = (b: Uint8Array, o: number) => (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;

// ---- per format ----

/** The fmt chunk and the data chunk's size of a WAV file (chunks before `data`, within its first 1 MiB). */
async function wavParameters(s: Source): Promise<AudioStreamParameters[]> {
  const b = await s.read(0, WINDOW);
  let p: AudioStreamParameters | null = null;
  let byteRate = 0;
  for (let o = 12; o + 8 <= b.length;) {
    const size = u32le(b, o + 4);
    if (ascii(b, o, 'fmt ') && o + 24 <= b.length) {
      const channels = u16le(b, o + 10);
      const sampleRate = u32le(b, o + 12);
      const blockAlign = u16le(b, o + 20);
      byteRate = blockAlign * sampleRate;
      p = { sampleRate, channels };
    } else if (ascii(b, o, 'data')) {
      // 0 and 0xffffffff stand for "unknown" (streamed, RF64)
      if (p !== null && byteRate > 0 && size !== 0 && size !== 0xffffffff) p.durationSeconds = size / byteRate;
      break;
    }
    o += 8 + size + (size & 1);
  }
  return p === null ? [] : [p];
}

/** FLAC's STREAMINFO block body (34 bytes at `o`) as parameters. */
function streamInfo(b: Uint8Array, o: number): AudioStreamParameters | null {
  if (o + 18 > b.length) return null;
  const minBlock = (b[o] << 8) | b[o + 1];
  const maxBlock = (b[o + 2] << 8) | b[o + 3];
  const sampleRate = (b[o + 10] << 12) | (b[o + 11] << 4) | (b[o + 12] >> 4);
  const channels = ((b[o + 12] >> 1) & 7) + 1;
  const totalSamples = (b[o + 13] & 0x0f) * 2 ** 32 + b[o + 14] * 2 ** 24 + ((b[o + 15] << 16) | (b[o + 16] << 8) | b[o + 17]);
  // a block size of 0 is read as "not stated" (the decoder judges the frames themselves)
  const p: AudioStreamParameters = { sampleRate, channels, frameSamples: Math.max(minBlock, maxBlock) || undefined };
  if (totalSamples > 0 && sampleRate > 0) p.durationSeconds = totalSamples / sampleRate;
  return p;
}

async function flacParameters(s: Source): Promise<AudioStreamParameters[]> {
  const b = await s.read(0, WINDOW);
  // an ID3v2 tag may come first
  let o = 0;
  if (ascii(b, 0, 'ID3') && b.length >= 10) o = 10 + ((b[6] << 21) | (b[7] << 14) | (b[8] << 7) | b[9]);
  if (!ascii(b, o, 'fLaC')) return [];
  const p = streamInfo(b, o + 8);
  return p === null ? [] : [p];
}

/** The identification header of a logical Ogg stream (the first packet of its BOS page). */
function oggStreamHeader(packet: Uint8Array): AudioStreamParameters | null {
  if (ascii(packet, 0, '\x01vorbis') && packet.length >= 29) {
    const blocks = packet[28];
    return { channels: packet[11], sampleRate: u32le(packet, 12), frameSamples: Math.max(1 << (blocks & 0x0f), 1 << (blocks >> 4)) };
  }
  // Opus always decodes at 48 kHz: its header's input rate is information only
  if (ascii(packet, 0, 'OpusHead') && packet.length >= 19) return { channels: packet[9] };
  if (ascii(packet, 0, '\x7fFLAC') && ascii(packet, 9, 'fLaC')) return streamInfo(packet, 17);
  return null;
}

/** Where "OggS" first starts in `w`, or -1 (a plain loop: Buffer.indexOf takes ~20 ns a byte on a run of "O"). */
function capturePattern(w: Uint8Array): number {
  for (let i = 0, end = w.length - 3; i < end; i++) {
    if (w[i] === 0x4f && w[i + 1] === 0x67 && w[i + 2] === 0x67 && w[i + 3] === 0x53) return i;
  }
  return -1;
}

/**
 * Every Ogg page, start to end (a page is found again after garbage, as demuxers
 * resync); the header of each stream a BOS page begins.
 */
async function oggParameters(s: Source): Promise<AudioStreamParameters[]> {
  const out: AudioStreamParameters[] = [];
  let o = 0;
  while (o + 27 <= s.size) {
    const head = await s.read(o, 27 + 255);
    if (!ascii(head, 0, 'OggS')) {
      // resync: the next capture pattern in this window, else the window's end
      const w = await s.read(o + 1, WINDOW);
      const next = capturePattern(w);
      if (next < 0) { o += 1 + Math.max(1, w.length - 3); continue; }
      o += 1 + next;
      continue;
    }
    if (head.length < 27) break;
    const segments = head[26];
    if (head.length < 27 + segments) break;
    let body = 0;
    for (let i = 0; i < segments; i++) body += head[27 + i];
    const bodyAt = o + 27 + segments;
    if (head[5] & 0x02) {
      // the first packet of the page: its lacing values up to the first under 255
      let first = 0;
      for (let i = 0; i < segments; i++) {
        first += head[27 + i];
        if (head[27 + i] < 255) break;
      }
      const p = oggStreamHeader(await s.read(bodyAt, Math.min(first, 64)));
      if (p !== null) out.push(p);
    }
    o = bodyAt + body;
  }
  return out;
}

/**
 * The declared parameters of each stream of an audio file (path or bytes); throws
 * StreamParametersError when one is outside AUDIO_STREAM_LIMITS. Reads headers only.
 */
export async function checkAudioStreams(input: Uint8Array | string, format: AudioFormat): Promise<AudioStreamParameters[]> {
  if (format === 'mp3') return [];
  const streams = await withSource(input, (s) => {
    switch (format) {
      case 'wav': return wavParameters(s);
      case 'flac': return flacParameters(s);
      case 'ogg-vorbis':
      case 'ogg-opus': return oggParameters(s);
    }
  });
  streams.forEach((p, i) => checkStreamParameters(p, streams.length > 1 ? `${format} stream ${i + 1}` : `this ${format} file`));
  return streams;
}
