// RIFF/WAVE reader: PCM 8/16/24/32-bit integer and IEEE float 32/64-bit, including
// WAVE_FORMAT_EXTENSIBLE, into one Float32Array per channel in [-1, 1], or straight
// into their mono mix.

export interface PcmAudio {
  sampleRate: number;
  channels: Float32Array[];
}

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;

function ascii(b: Uint8Array, o: number, s: string): boolean {
  for (let i = 0; i < s.length; i++) if (b[o + i] !== s.charCodeAt(i)) return false;
  return true;
}

/** Where the samples of a WAV file are and how they are stored. */
interface WavLayout {
  format: number;
  bits: number;
  channels: number;
  sampleRate: number;
  blockAlign: number;
  dataStart: number;
  /** Sample frames to read (all channels of one instant), at most `maxSeconds` of them. */
  frames: number;
  /** Frames the data chunk declares, at most `maxSeconds` of them (more than `frames` when the bytes end early). */
  declaredFrames: number;
}

function wavLayout(bytes: Uint8Array, maxSeconds: number): WavLayout {
  if (bytes.length < 12 || !ascii(bytes, 0, 'RIFF') || !ascii(bytes, 8, 'WAVE')) throw new Error('wav: not a RIFF/WAVE file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format = -1;
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  let blockAlign = 0;
  let dataStart = -1;
  let dataLength = 0;
  let dataSize = 0;
  let o = 12;
  while (o + 8 <= bytes.length) {
    const size = view.getUint32(o + 4, true);
    const body = o + 8;
    if (ascii(bytes, o, 'fmt ')) {
      if (size < 16 || body + 16 > bytes.length) throw new Error('wav: short fmt chunk');
      format = view.getUint16(body, true);
      channels = view.getUint16(body + 2, true);
      sampleRate = view.getUint32(body + 4, true);
      blockAlign = view.getUint16(body + 12, true);
      bits = view.getUint16(body + 14, true);
      if (format === FORMAT_EXTENSIBLE) {
        if (size < 40 || body + 26 > bytes.length) throw new Error('wav: short extensible fmt chunk');
        format = view.getUint16(body + 24, true); // first two bytes of the SubFormat GUID
      }
    } else if (ascii(bytes, o, 'data')) {
      dataStart = body;
      dataSize = size;
      dataLength = Math.min(size, bytes.length - body); // tolerate a truncated last chunk
      break;
    }
    o = body + size + (size & 1);
  }
  if (format < 0 || dataStart < 0) throw new Error('wav: missing fmt or data chunk');
  if (channels < 1 || sampleRate < 1 || sampleRate > 768000) throw new Error('wav: bad channel count or sample rate');
  const intOk = format === FORMAT_PCM && (bits === 8 || bits === 16 || bits === 24 || bits === 32);
  const floatOk = format === FORMAT_FLOAT && (bits === 32 || bits === 64);
  if (!intOk && !floatOk) throw new Error(`wav: unsupported format ${format} with ${bits} bits`);
  if (blockAlign < (channels * bits) / 8) blockAlign = (channels * bits) / 8;
  const frames = Math.min(Math.floor(maxSeconds * sampleRate), Math.floor(dataLength / blockAlign));
  const declaredFrames = Math.min(Math.floor(maxSeconds * sampleRate), Math.floor(dataSize / blockAlign));
  return { format, bits, channels, sampleRate, blockAlign, dataStart, frames, declaredFrames };
}

/**
 * How many bytes from the start of a WAV file hold its first `maxSeconds`, from the
 * file's first bytes `head`; null when `head` does not reach the data chunk's header
 * (or is not a WAV file the reader takes).
 */
export function wavPrefixLength(head: Uint8Array, maxSeconds: number): number | null {
  try {
    const w = wavLayout(head, maxSeconds);
    return w.dataStart + w.declaredFrames * w.blockAlign;
  } catch {
    return null;
  }
}

/** The sample at byte `p` in [-1, 1]. */
function sampleAt(bytes: Uint8Array, view: DataView, p: number, format: number, bits: number): number {
  if (format === FORMAT_FLOAT) return bits === 32 ? view.getFloat32(p, true) : view.getFloat64(p, true);
  if (bits === 8) return (bytes[p] - 128) / 128;
  if (bits === 16) return view.getInt16(p, true) / 32768;
  if (bits === 24) return (((bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16)) << 8) >> 8) / 8388608;
  return view.getInt32(p, true) / 2147483648;
}

/** The 16-bit samples of a plain interleaved 16-bit file, or null for any other layout. */
function int16Samples(bytes: Uint8Array, w: WavLayout): Int16Array | null {
  if (w.format !== FORMAT_PCM || w.bits !== 16 || w.blockAlign !== 2 * w.channels) return null;
  const start = bytes.byteOffset + w.dataStart;
  const count = w.frames * w.channels;
  // a view when aligned, else one aligned copy (samples are little-endian, as is every host Node runs on)
  return start % 2 === 0 ? new Int16Array(bytes.buffer, start, count) : new Int16Array(bytes.slice(w.dataStart, w.dataStart + 2 * count).buffer);
}

/** Parses a WAV file into one array per channel; only the first `maxSeconds` are read. Throws on a malformed file. */
export function parseWav(bytes: Uint8Array, maxSeconds = Infinity): PcmAudio {
  const w = wavLayout(bytes, maxSeconds);
  const { channels, frames } = w;
  const out: Float32Array[] = [];
  for (let c = 0; c < channels; c++) out.push(new Float32Array(frames));
  const pcm = int16Samples(bytes, w);
  if (pcm !== null) {
    for (let c = 0; c < channels; c++) {
      const ch = out[c];
      for (let i = 0, p = c; i < frames; i++, p += channels) ch[i] = pcm[p] / 32768;
    }
    return { sampleRate: w.sampleRate, channels: out };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let c = 0; c < channels; c++) {
    const ch = out[c];
    for (let i = 0, p = w.dataStart + (c * w.bits) / 8; i < frames; i++, p += w.blockAlign) ch[i] = sampleAt(bytes, view, p, w.format, w.bits);
  }
  return { sampleRate: w.sampleRate, channels: out };
}

/**
 * The mono mix of a WAV file, the mean of its channels, read in one pass (for one or
 * two channels the same values as `mixToMono` of `parseWav`'s channels); only the
 * first `maxSeconds`. Throws on a malformed file.
 */
export function parseWavMono(bytes: Uint8Array, maxSeconds = Infinity): { sampleRate: number; samples: Float32Array } {
  const w = wavLayout(bytes, maxSeconds);
  const { channels, frames } = w;
  const samples = new Float32Array(frames);
  const pcm = int16Samples(bytes, w);
  if (pcm !== null && channels <= 2) {
    if (channels === 1) for (let i = 0; i < frames; i++) samples[i] = pcm[i] / 32768;
    else for (let i = 0, p = 0; i < frames; i++, p += 2) samples[i] = (pcm[p] / 32768 + pcm[p + 1] / 32768) * 0.5;
    return { sampleRate: w.sampleRate, samples };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const step = w.bits / 8;
  for (let i = 0, p = w.dataStart; i < frames; i++, p += w.blockAlign) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += Math.fround(sampleAt(bytes, view, p + c * step, w.format, w.bits));
    samples[i] = channels === 2 ? sum * 0.5 : sum / channels;
  }
  return { sampleRate: w.sampleRate, samples };
}
