// Audio files whose headers declare absurd stream parameters (issue 25 item 14), made
// from the audio fixtures with their checksums kept valid (an Ogg page's CRC is
// recomputed), so that a decoder takes them at their word.
import { readFileSync } from 'node:fs';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url)));

// ---- Ogg ----

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    t[i] = r >>> 0;
  }
  return t;
})();

/** Ogg's page checksum (CRC-32, polynomial 0x04c11db7, no reflection, init 0). */
export function oggCrc(page: Uint8Array): number {
  let c = 0;
  for (const x of page) c = ((c << 8) ^ CRC_TABLE[((c >>> 24) ^ x) & 0xff]) >>> 0;
  return c;
}

/** The pages of an Ogg file: [start, end) of each. */
function oggPages(b: Uint8Array): [number, number][] {
  const pages: [number, number][] = [];
  for (let o = 0; o + 27 <= b.length;) {
    const n = b[o + 26];
    let end = o + 27 + n;
    for (let i = 0; i < n; i++) end += b[o + 27 + i];
    pages.push([o, end]);
    o = end;
  }
  return pages;
}

/** A copy of an Ogg file with `edit` applied to each page (its bytes, its index), every CRC recomputed. */
function editOgg(src: Uint8Array, edit: (page: Uint8Array, index: number) => void): Uint8Array {
  const b = src.slice();
  oggPages(b).forEach(([start, end], i) => {
    const page = b.subarray(start, end);
    edit(page, i);
    new DataView(page.buffer, page.byteOffset).setUint32(22, 0, true);
    new DataView(page.buffer, page.byteOffset).setUint32(22, oggCrc(page), true);
  });
  return b;
}

const headerAt = (page: Uint8Array) => 27 + page[26];

/** The Vorbis fixture (44.1 kHz stereo) with its identification header declaring `rate` Hz and/or `channels`. */
export function hostileVorbis(declared: { rate?: number; channels?: number }): Uint8Array {
  return editOgg(fixture('drascula-track2-18s.ogg'), (page, i) => {
    if (i !== 0) return;
    const h = headerAt(page);
    if (declared.channels !== undefined) page[h + 11] = declared.channels;
    if (declared.rate !== undefined) new DataView(page.buffer, page.byteOffset).setUint32(h + 12, declared.rate, true);
  });
}

/** The Opus fixture with its OpusHead declaring `channels`. */
export function hostileOpus(channels: number): Uint8Array {
  return editOgg(fixture('drascula-track1-20s.opus'), (page, i) => {
    if (i === 0) page[headerAt(page) + 9] = channels;
  });
}

/**
 * A chained Ogg file: the Vorbis fixture as it is, then a second logical stream (a new
 * serial number) whose header declares `rate` Hz. Its first link is valid.
 */
export function chainedVorbis(rate: number): Uint8Array {
  const first = fixture('drascula-track2-18s.ogg');
  const second = editOgg(hostileVorbis({ rate }), (page) => {
    const v = new DataView(page.buffer, page.byteOffset);
    v.setUint32(14, v.getUint32(14, true) ^ 0x5a5a5a5a, true);
  });
  const out = new Uint8Array(first.length + second.length);
  out.set(first);
  out.set(second, first.length);
  return out;
}

// ---- FLAC ----

/** The FLAC fixture (22.05 kHz mono) with its STREAMINFO declaring `rate` Hz and/or `totalSamples`. */
export function hostileFlac(declared: { rate?: number; totalSamples?: number }): Uint8Array {
  const b = fixture('time-to-strike-8s.flac');
  const o = 8; // STREAMINFO's body, after "fLaC" and its block header
  if (declared.rate !== undefined) {
    const r = declared.rate;
    b[o + 10] = (r >> 12) & 0xff;
    b[o + 11] = (r >> 4) & 0xff;
    b[o + 12] = ((r & 0x0f) << 4) | (b[o + 12] & 0x0f);
  }
  if (declared.totalSamples !== undefined) {
    const t = declared.totalSamples;
    b[o + 13] = (b[o + 13] & 0xf0) | (Math.floor(t / 2 ** 32) & 0x0f);
    new DataView(b.buffer).setUint32(o + 14, t >>> 0, false);
  }
  return b;
}

// ---- WAV ----

/** A 16-bit PCM WAV with one second of a 440 Hz tone at 8 kHz, whose fmt chunk declares `rate` Hz and `channels`. */
export function hostileWav(declared: { rate: number; channels: number }): Uint8Array {
  const frames = 8000;
  const blockAlign = (declared.channels * 2) & 0xffff;
  const data = new Int16Array(frames);
  for (let i = 0; i < frames; i++) data[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  const b = Buffer.alloc(44 + data.byteLength);
  b.write('RIFF', 0);
  b.writeUInt32LE(b.length - 8, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(declared.channels, 22);
  b.writeUInt32LE(declared.rate, 24);
  b.writeUInt32LE((declared.rate * blockAlign) >>> 0, 28);
  b.writeUInt16LE(blockAlign, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(data.byteLength, 40);
  Buffer.from(data.buffer).copy(b, 44);
  return new Uint8Array(b);
}
