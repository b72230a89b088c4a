// RIFF/WAVE reader: PCM 8/16/24/32-bit integer and IEEE float 32/64-bit, including
// WAVE_FORMAT_EXTENSIBLE, into one Float32Array per channel in [-1, 1].

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

/** Parses a WAV file; only the first `maxSeconds` are read. Throws on a malformed file. */
export function parseWav(bytes: Uint8Array, maxSeconds = Infinity): PcmAudio {
  if (bytes.length < 12 || !ascii(bytes, 0, 'RIFF') || !ascii(bytes, 8, 'WAVE')) throw new Error('wav: not a RIFF/WAVE file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format = -1;
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  let blockAlign = 0;
  let dataStart = -1;
  let dataLength = 0;
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
      dataLength = Math.min(size, bytes.length - body); // tolerate a truncated last chunk
      break;
    }
    o = body + size + (size & 1);
  }
  if (format < 0 || dataStart < 0) throw new Error('wav: missing fmt or data chunk');
  if (channels < 1 || sampleRate < 1 || sampleRate > 768000) throw new Error('wav: bad channel count or sample rate');
  const bytesPerSample = bits / 8;
  const intOk = format === FORMAT_PCM && (bits === 8 || bits === 16 || bits === 24 || bits === 32);
  const floatOk = format === FORMAT_FLOAT && (bits === 32 || bits === 64);
  if (!intOk && !floatOk) throw new Error(`wav: unsupported format ${format} with ${bits} bits`);
  if (blockAlign < channels * bytesPerSample) blockAlign = channels * bytesPerSample;
  const frames = Math.min(Math.floor(maxSeconds * sampleRate), Math.floor(dataLength / blockAlign));
  const out: Float32Array[] = [];
  for (let c = 0; c < channels; c++) out.push(new Float32Array(frames));
  if (format === FORMAT_PCM && bits === 16 && blockAlign === 2 * channels) {
    // the common case: one aligned copy, then plain typed-array reads
    const pcm = new Int16Array(bytes.slice(dataStart, dataStart + frames * blockAlign).buffer);
    for (let c = 0; c < channels; c++) {
      const ch = out[c];
      for (let i = 0, p = c; i < frames; i++, p += channels) ch[i] = pcm[p] / 32768;
    }
    return { sampleRate, channels: out };
  }
  for (let c = 0; c < channels; c++) {
    const ch = out[c];
    let p = dataStart + c * bytesPerSample;
    for (let i = 0; i < frames; i++, p += blockAlign) {
      let v: number;
      if (format === FORMAT_FLOAT) v = bits === 32 ? view.getFloat32(p, true) : view.getFloat64(p, true);
      else if (bits === 8) v = (bytes[p] - 128) / 128;
      else if (bits === 16) v = view.getInt16(p, true) / 32768;
      else if (bits === 24) v = (((bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16)) << 8) >> 8) / 8388608;
      else v = view.getInt32(p, true) / 2147483648;
      ch[i] = v;
    }
  }
  return { sampleRate, channels: out };
}
