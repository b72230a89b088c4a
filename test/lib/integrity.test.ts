// The integrity kernels against independent references: node:zlib's CRC-32, a
// plain-TS entropy and LSB statistics, closed forms of the chi-square survival
// function, TextDecoder for code points, and structures built by hand. Then
// truncation and byte flips: the kernels return findings, never trap.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { crc32 as zlibCrc32 } from 'node:zlib';
import sharp from 'sharp';
import {
  IntegrityCode as C, PdfName, KernelBytes, walkPng, walkJpeg, jpegExtent, walkGif, pdfEnd, pdfScanNames, zipEnd, scanSignatures,
  walkTiff, containerEnd, entropyProfile, entropyOf, longestBase64Run, lsbStatistics, chiSquareSurvival, scanText, crc32,
  walkId3, walkFlac,
} from '../../src/lib/integrity.js';
import { loadKernel } from '../../src/lib/wasm.js';

const FIX = new URL('../fixtures/integrity/', import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, FIX)));

let seed = 0x12345678;
function rand(): number {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 0x100000000;
}
function randomBytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (rand() * 256) | 0;
  return b;
}
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const ascii = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

/** A stored (uncompressed) ZIP with one member and an archive comment. */
export function makeZip(name: string, data: Uint8Array, comment = ''): Uint8Array {
  const n = Buffer.from(name);
  const crc = zlibCrc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0, 8);
  local.writeUInt32LE(crc, 14); local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22); local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16); central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24); central.writeUInt16LE(n.length, 28);
  const cdOffset = 30 + n.length + data.length;
  const cdSize = 46 + n.length;
  const c = Buffer.from(comment);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(1, 8); eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(cdSize, 12); eocd.writeUInt32LE(cdOffset, 16); eocd.writeUInt16LE(c.length, 20);
  return concat(local, n, data, central, n, eocd, c);
}

/** A minimal ELF64 header (executable, x86-64) followed by padding. */
export function makeElf(): Uint8Array {
  const b = Buffer.alloc(256);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  b.writeUInt16LE(2, 16); // ET_EXEC
  b.writeUInt16LE(0x3e, 18);
  b.writeUInt32LE(1, 20);
  return new Uint8Array(b);
}

/** An "MZ" stub whose e_lfanew points at "PE\0\0". */
function makePe(): Uint8Array {
  const b = Buffer.alloc(512);
  b.write('MZ', 0, 'latin1');
  b.writeUInt32LE(0x80, 60);
  b.write('PE\0\0', 0x80, 'latin1');
  return new Uint8Array(b);
}

function tiffWithGps(lat: [number, number, number], lon: [number, number, number], little = true): Uint8Array {
  // IFD0: one entry (GPS IFD pointer); GPS IFD: LatRef, Lat, LonRef, Lon
  const b = Buffer.alloc(200);
  const w16 = (v: number, o: number) => (little ? b.writeUInt16LE(v, o) : b.writeUInt16BE(v, o));
  const w32 = (v: number, o: number) => (little ? b.writeUInt32LE(v, o) : b.writeUInt32BE(v, o));
  b.write(little ? 'II' : 'MM', 0, 'latin1'); w16(42, 2); w32(8, 4);
  w16(1, 8); w16(0x8825, 10); w16(4, 12); w32(1, 14); w32(26, 18); w32(0, 22);
  const gps = 26;
  w16(4, gps);
  const entry = (i: number, tag: number, type: number, count: number, value: number) => {
    const o = gps + 2 + i * 12;
    w16(tag, o); w16(type, o + 2); w32(count, o + 4); w32(value, o + 8);
  };
  const data = gps + 2 + 4 * 12 + 4;
  entry(0, 1, 2, 2, 0); b.write('S', gps + 2 + 8, 'latin1');
  entry(1, 2, 5, 3, data);
  entry(2, 3, 2, 2, 0); b.write('W', gps + 2 + 24 + 8, 'latin1');
  entry(3, 4, 5, 3, data + 24);
  [...lat, ...lon].forEach((v, i) => { w32(Math.round(v * 100), data + i * 8); w32(100, data + i * 8 + 4); });
  return new Uint8Array(b);
}

function referenceEntropy(b: Uint8Array): number {
  if (b.length === 0) return 0;
  const h = new Array(256).fill(0);
  for (const x of b) h[x]++;
  let e = 0;
  for (const c of h) if (c) e -= (c / b.length) * Math.log2(c / b.length);
  return e;
}

test('crc32 matches node:zlib at lengths across the 4-byte stride', () => {
  for (const n of [0, 1, 3, 4, 5, 7, 8, 63, 64, 65, 1000, 4099]) {
    const b = randomBytes(n);
    assert.is(crc32(b), zlibCrc32(b), `length ${n}`);
  }
});

test('PNG walk ends after IEND; a flipped byte fails its CRC; truncation gives no end', async () => {
  const png = fixture('baboon-crop.png');
  assert.is(walkPng(png).end, png.length);
  assert.is(walkPng(concat(png, makeZip('a.txt', ascii('hello')))).end, png.length);
  const flipped = png.slice();
  flipped[png.length - 40] ^= 0x10; // inside the last IDAT
  const r = walkPng(flipped);
  assert.is(r.end, png.length);
  assert.ok(r.records.some((x) => x.code === C.PNG_CRC_MISMATCH));
  const cut = walkPng(png.subarray(0, png.length - 5));
  assert.is(cut.end, -1);
  assert.ok(cut.records.some((x) => x.code === C.PNG_TRUNCATED));
  // ancillary chunks are reported with their data
  const withText = await sharp(png).png().withMetadata().toBuffer();
  const ihdr = walkPng(new Uint8Array(withText)).records.find((x) => x.code === C.PNG_IHDR);
  assert.is(ihdr?.value, 2); // truecolour
  assert.is(walkPng(ascii('not a png at all')).records[0].code, C.PNG_BAD_SIGNATURE);
});

/** A JPEG assembled by hand: stuffed bytes, fill bytes and RSTn markers in the scan. */
function handJpeg(): Uint8Array {
  const seg = (m: number, body: number[]) => [0xff, m, ((body.length + 2) >> 8) & 255, (body.length + 2) & 255, ...body];
  return new Uint8Array([
    0xff, 0xd8,
    ...seg(0xe0, [...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    ...seg(0xfe, [...Buffer.from('a comment')]),
    ...seg(0xda, [1, 1, 0, 0, 63, 0]),
    0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56, 0xff, 0xff, 0xd1, 0x78, 0xff, 0x00,
    0xff, 0xff, 0xd9,
  ]);
}

test('JPEG walk: entropy-coded data with stuffing, fill bytes and RSTn reaches EOI', async () => {
  const j = handJpeg();
  const r = walkJpeg(j);
  assert.is(r.end, j.length);
  const segs = r.records.filter((x) => x.code === C.JPEG_SEGMENT);
  assert.equal(segs.map((s) => s.aux), [0xe0, 0xfe]);
  assert.is(Buffer.from(j.subarray(segs[1].offset, segs[1].offset + segs[1].length)).toString(), 'a comment');
  const real = new Uint8Array(await sharp(fixture('baboon-crop.png')).jpeg({ quality: 80 }).toBuffer());
  assert.is(walkJpeg(real).end, real.length);
  assert.is(jpegExtent(concat(real, makeElf())), real.length);
  const happy = fixture('happyfish.jpg');
  assert.is(walkJpeg(happy).end, happy.length);
});

/** Primary JPEG + MPF APP2 naming a secondary JPEG stored right after the primary. */
export function jpegWithMpf(primary: Uint8Array, secondary: Uint8Array): Uint8Array {
  // MPF body: "MPF\0" + TIFF header + IFD (1 entry: MPEntry, 2 x 16 bytes)
  const body = Buffer.alloc(4 + 8 + 2 + 12 + 4 + 32);
  body.write('MPF\0', 0, 'latin1');
  const t = 4;
  body.write('II', t, 'latin1'); body.writeUInt16LE(42, t + 2); body.writeUInt32LE(8, t + 4);
  body.writeUInt16LE(1, t + 8);
  body.writeUInt16LE(0xb002, t + 10); body.writeUInt16LE(7, t + 12); body.writeUInt32LE(32, t + 14); body.writeUInt32LE(8 + 2 + 12 + 4, t + 18);
  const entries = t + 8 + 2 + 12 + 4;
  const app2 = Buffer.concat([Buffer.from([0xff, 0xe2, ((body.length + 2) >> 8) & 255, (body.length + 2) & 255]), body]);
  const total = primary.length + app2.length;
  const tiffAbs = 2 + 4 + t; // SOI + marker/length + "MPF\0"
  body.writeUInt32LE(0x20030000, entries); body.writeUInt32LE(total, entries + 4); body.writeUInt32LE(0, entries + 8);
  body.writeUInt32LE(0, entries + 16); body.writeUInt32LE(secondary.length, entries + 20); body.writeUInt32LE(total - tiffAbs, entries + 24);
  const app2b = Buffer.concat([Buffer.from([0xff, 0xe2, ((body.length + 2) >> 8) & 255, (body.length + 2) & 255]), body]);
  return concat(primary.subarray(0, 2), app2b, primary.subarray(2), secondary);
}

test('JPEG walk: an MPF secondary image extends the end; an unlisted one does not', async () => {
  const a = new Uint8Array(await sharp(fixture('plant-crop.png')).jpeg().toBuffer());
  const b = new Uint8Array(await sharp(fixture('plant-crop.png')).resize(64, 64).jpeg().toBuffer());
  const mpf = jpegWithMpf(a, b);
  const r = walkJpeg(mpf);
  assert.is(r.end, mpf.length);
  const first = r.records.find((x) => x.code === C.JPEG_FIRST_EOI)!;
  assert.is(first.offset, mpf.length - b.length);
  const img = r.records.find((x) => x.code === C.JPEG_MPF_IMAGE)!;
  assert.is(img.offset, mpf.length - b.length);
  assert.is(img.value, 1);
  assert.is(walkJpeg(concat(a, b)).end, a.length);
});

test('GIF walk reaches the trailer; comments and application blocks are reported', async () => {
  const gif = fixture('tiny.gif');
  assert.is(walkGif(gif).end, gif.length);
  const made = new Uint8Array(await sharp(fixture('plant-crop.png')).gif().toBuffer());
  assert.is(walkGif(concat(made, ascii('trailing'))).end, made.length);
  assert.is(walkGif(made.subarray(0, made.length - 1)).end, -1);
  // insert a comment extension after the header and global colour table
  const flags = made[10];
  const at = 13 + (flags & 0x80 ? 3 * (2 << (flags & 7)) : 0);
  const withComment = concat(made.subarray(0, at), new Uint8Array([0x21, 0xfe, 5, ...ascii('hello'), 0]), made.subarray(at));
  const r = walkGif(withComment);
  assert.is(r.end, withComment.length);
  assert.ok(r.records.some((x) => x.code === C.GIF_EXTENSION && x.aux === 0xfe && x.offset === at));
});

test('PDF: last %%EOF plus whitespace; names decoded from #xx escapes; /JSON is not /JS', () => {
  const pdf = ascii('%PDF-1.7\n1 0 obj << /OpenAction 2 0 R /Names << /J#61vaScript 3 0 R >> /X /JSON >> endobj\n%%EOF\n');
  const upd = concat(pdf, ascii('2 0 obj << /S /JS /JS (app.alert(1)) >> endobj\n%%EOF\r\n'));
  assert.is(pdfEnd(pdf), pdf.length);
  assert.is(pdfEnd(upd), upd.length);
  assert.is(pdfEnd(concat(upd, ascii('garbage'))), upd.length);
  assert.is(pdfEnd(ascii('%PDF-1.4 no end')), -1);
  const names = pdfScanNames(upd).map((r) => r.aux);
  assert.equal(names.filter((k) => k === PdfName.JavaScript).length, 1);
  assert.equal(names.filter((k) => k === PdfName.JS).length, 2);
  assert.ok(names.includes(PdfName.OpenAction));
});

test('ZIP: end of central directory plus comment; archive start recovered when prefixed', () => {
  const zip = makeZip('hello.txt', ascii('hello world'), 'a comment');
  const r = zipEnd(zip);
  assert.is(r.end, zip.length);
  assert.is(r.records[0].value, 0);
  const prefixed = concat(randomBytes(1000), zip, ascii('after'));
  const p = zipEnd(prefixed);
  assert.is(p.end, 1000 + zip.length);
  assert.is(p.records[0].value, 1000);
  assert.is(zipEnd(randomBytes(100)).end, -1);
});

test('signature scan finds planted files at their offsets, with the right kind', async () => {
  const png = fixture('baboon-crop.png').subarray(0, 64);
  const jpg = fixture('happyfish.jpg').subarray(0, 64);
  const gif = fixture('tiny.gif').subarray(0, 64);
  const planted: [string, Uint8Array][] = [
    ['png', png], ['jpeg', jpg], ['gif', gif], ['zip', makeZip('x', ascii('y'))], ['pdf', ascii('%PDF-1.5\n%...')],
    ['rar', new Uint8Array([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00, 0, 0])], ['7z', new Uint8Array([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0, 4, ...new Array(32).fill(0)])],
    ['gzip', new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, ...new Array(16).fill(0)])], ['elf', makeElf()], ['pe', makePe()],
  ];
  const parts: Uint8Array[] = [];
  const expected: { kind: string; offset: number }[] = [];
  let pos = 0;
  for (const [kind, bytes] of planted) {
    const gap = new Uint8Array(100).fill(0x20);
    parts.push(gap, bytes);
    pos += gap.length;
    expected.push({ kind, offset: pos });
    pos += bytes.length;
  }
  const hits = scanSignatures(concat(...parts));
  for (const e of expected) assert.ok(hits.some((h) => h.kind === e.kind && h.offset === e.offset), `${e.kind} at ${e.offset}`);
  assert.is(hits.length, expected.length);
  // magic numbers without valid headers are not reported
  assert.equal(scanSignatures(ascii('MZ.......PK\x03\x04\x7fELF Rar! GIF89 %PDF-x')), []);
  // the range is honoured
  const all = concat(...parts);
  assert.equal(scanSignatures(all, expected[3].offset + 1, all.length).map((h) => h.kind), ['pdf', 'rar', '7z', 'gzip', 'elf', 'pe']);
});

test('TIFF/EXIF walk: GPS position in degrees with hemisphere, both byte orders', () => {
  for (const little of [true, false]) {
    const r = walkTiff(tiffWithGps([51, 30, 32.3], [0, 7, 43.66], little));
    const gps = r.records.find((x) => x.code === C.EXIF_GPS)!;
    assert.ok(gps, 'GPS record');
    assert.ok(Math.abs(gps.value - -(51 + 30 / 60 + 32.3 / 3600)) < 1e-9);
    assert.ok(Math.abs(gps.value2 - -(7 / 60 + 43.66 / 3600)) < 1e-9);
  }
  assert.is(walkTiff(ascii('II*\0\xff\xff\xff\x7f')).records[0].code, C.EXIF_BAD);
  assert.is(walkTiff(ascii('nope')).end, -1);
});

test('TIFF walk: the extent covers every strip of a real TIFF', async () => {
  const tiff = new Uint8Array(await sharp(fixture('plant-crop.png')).tiff({ compression: 'lzw' }).toBuffer());
  const r = walkTiff(tiff);
  assert.ok(r.end > tiff.length - 64 && r.end <= tiff.length, `${r.end} vs ${tiff.length}`);
});

test('container ends: RIFF size, BMP size, Ogg pages, MP4 boxes', () => {
  const riff = concat(ascii('RIFF'), new Uint8Array([4 + 8 + 3, 0, 0, 0]), ascii('WAVEdata'), new Uint8Array([3, 0, 0, 0, 1, 2, 3, 0]));
  assert.is(containerEnd('riff', concat(riff, ascii('extra'))).end, riff.length);
  const oga = fixture('bell.oga');
  assert.is(containerEnd('ogg', oga).end, oga.length);
  assert.is(containerEnd('ogg', concat(oga, makeZip('a', ascii('b')))).end, oga.length);
  const box = (type: string, n: number) => concat(new Uint8Array([0, 0, 0, 8 + n]), ascii(type), new Uint8Array(n));
  const mp4 = concat(box('ftyp', 8), box('moov', 16), box('mdat', 32));
  assert.is(containerEnd('isobmff', concat(mp4, ascii('tail'))).end, mp4.length + 0); // 'tail' is not a box
  const bmp = new Uint8Array(70);
  bmp.set(ascii('BM'));
  new DataView(bmp.buffer).setUint32(2, 70, true);
  new DataView(bmp.buffer).setUint32(10, 54, true);
  assert.is(containerEnd('bmp', concat(bmp, ascii('x'))).end, 70);
});

test('ID3v2 frames and FLAC metadata blocks are itemised', () => {
  const frame = (id: string, body: Uint8Array) => concat(ascii(id), new Uint8Array([0, 0, 0, body.length, 0, 0]), body);
  const frames = concat(frame('TIT2', ascii('\0Title')), frame('APIC', new Uint8Array(20)));
  const tag = concat(ascii('ID3'), new Uint8Array([3, 0, 0, 0, 0, 0, frames.length]), frames);
  const r = walkId3(concat(tag, new Uint8Array([0xff, 0xfb, 0x90, 0x00])));
  assert.is(r.end, tag.length);
  assert.equal(r.records.filter((x) => x.code === C.ID3_FRAME).map((x) => Buffer.from([x.aux >>> 24, (x.aux >> 16) & 255, (x.aux >> 8) & 255, x.aux & 255]).toString()), ['TIT2', 'APIC']);
  const flac = fixture('ambi_choir.flac');
  const f = walkFlac(flac);
  assert.ok(f.end > 42 && f.end < flac.length);
  assert.ok(f.records.some((x) => x.code === C.FLAC_BLOCK && x.aux === 0)); // STREAMINFO
});

test('entropy per 4 KiB window and overall match a plain-TS reference', () => {
  const parts = [new Uint8Array(5000).fill(7), randomBytes(9000), ascii('hello world '.repeat(500))];
  const b = concat(...parts);
  const p = entropyProfile(b);
  assert.ok(Math.abs(p.overall - referenceEntropy(b)) < 1e-9);
  assert.is(p.windows.length, Math.ceil(b.length / 4096));
  for (let i = 0; i < p.windows.length; i++) {
    const ref = referenceEntropy(b.subarray(i * 4096, (i + 1) * 4096));
    assert.ok(Math.abs(p.windows[i] - ref) < 1e-5, `window ${i}: ${p.windows[i]} vs ${ref}`);
  }
  assert.ok(Math.abs(entropyOf(b.subarray(100, 3000)) - referenceEntropy(b.subarray(100, 3000))) < 1e-9);
  assert.is(entropyProfile(new Uint8Array(0)).windows.length, 0);
});

test('longest base64 run', () => {
  const payload = Buffer.from(randomBytes(600)).toString('base64');
  const r = longestBase64Run(ascii(`text with words; ${payload}; more`));
  assert.is(r.length, payload.length);
  assert.is(r.start, 17);
});

test('chi-square survival function: closed forms and table values', () => {
  for (const x of [0.5, 2, 7.3]) assert.ok(Math.abs(chiSquareSurvival(2, x) - Math.exp(-x / 2)) < 1e-12);
  assert.ok(Math.abs(chiSquareSurvival(1, 3.841458820694124) - 0.05) < 1e-9);
  assert.ok(Math.abs(chiSquareSurvival(10, 18.307038053275146) - 0.05) < 1e-9);
  assert.ok(Math.abs(chiSquareSurvival(100, 124.34211340400407) - 0.05) < 1e-9);
  assert.ok(chiSquareSurvival(127, 1e6) < 1e-300 + 1e-12);
});

/** Plain-TS chi-square and SPA for one channel (the reference). */
function referenceLsb(px: Uint8Array, w: number, h: number, ch: number, c: number) {
  const hist = new Array(256).fill(0);
  const pairs = newPairs();
  for (let r = 0; r < h; r++) for (let col = 0; col < w; col++) {
    const v = px[(r * w + col) * ch + c];
    hist[v]++;
    if (col > 0) countPair(pairs, px[(r * w + col - 1) * ch + c], v);
  }
  let chi = 0, cats = 0;
  for (let k = 0; k < 128; k++) {
    const e = (hist[2 * k] + hist[2 * k + 1]) / 2;
    if (e < 4) continue;
    chi += (hist[2 * k] - e) ** 2 / e;
    cats++;
  }
  return { chi, df: cats - 1, spa: spaOf(pairs), spaVertical: verticalSpa(px, w, h, ch, c) };
}

/** SPA's pair counts: x, y (differing pairs by parity order), z (equal), wc (same LSB-pair), P (all counted). */
interface Pairs { x: number; y: number; z: number; wc: number; P: number }

function newPairs(): Pairs {
  return { x: 0, y: 0, z: 0, wc: 0, P: 0 };
}

/** Counts the neighbour pair (u, v); pairs touching the extreme LSB-pairs are skipped. */
function countPair(n: Pairs, u: number, v: number): void {
  if (u >> 1 === 0 || u >> 1 === 127 || v >> 1 === 0 || v >> 1 === 127) return;
  n.P++;
  if (u === v) n.z++;
  else {
    if ((v % 2 === 0 && u < v) || (v % 2 === 1 && u > v)) n.x++; else n.y++;
    if (u >> 1 === v >> 1) n.wc++;
  }
}

function spaOf({ x, y, z, wc, P }: Pairs): number {
  const a = (wc + z) / 2, b = 2 * x - P, cc = y - x;
  const d = Math.sqrt(Math.max(0, b * b - 4 * a * cc));
  return Math.min((-b + d) / (2 * a), (-b - d) / (2 * a));
}

function verticalSpa(px: Uint8Array, w: number, h: number, ch: number, c: number): number {
  const pairs = newPairs();
  for (let r = 1; r < h; r++) for (let col = 0; col < w; col++) countPair(pairs, px[((r - 1) * w + col) * ch + c], px[(r * w + col) * ch + c]);
  return spaOf(pairs);
}

test('LSB statistics match the plain-TS reference per channel', async () => {
  const { data, info } = await sharp(fixture('baboon-crop.png')).raw().toBuffer({ resolveWithObject: true });
  const px = new Uint8Array(data);
  const stats = lsbStatistics(px, info.width, info.height, info.channels);
  assert.is(stats.length, 3);
  for (const s of stats) {
    const ref = referenceLsb(px, info.width, info.height, info.channels, s.channel);
    assert.ok(Math.abs(s.chiSquare - ref.chi) < 1e-6 * ref.chi);
    assert.is(s.degreesOfFreedom, ref.df);
    assert.ok(Math.abs(s.spaEstimate - ref.spa) < 1e-9);
    assert.ok(Math.abs(s.spaVertical - ref.spaVertical) < 1e-9);
    assert.ok(Math.abs(s.pValue - chiSquareSurvival(ref.df, ref.chi)) < 1e-12);
  }
  // RGBA: the alpha channel is skipped
  const rgba = new Uint8Array(64 * 64 * 4).map(() => (rand() * 256) | 0);
  assert.is(lsbStatistics(rgba, 64, 64, 4).length, 3);
  assert.throws(() => lsbStatistics(new Uint8Array(10), 64, 64, 3), /shorter/);
});

test('LSB: full replacement equalises pairs (p near 1) and SPA tracks the embedded fraction', async () => {
  const { data, info } = await sharp(fixture('baboon-crop.png')).raw().toBuffer({ resolveWithObject: true });
  const clean = lsbStatistics(new Uint8Array(data), info.width, info.height, 3);
  for (const s of clean) assert.ok(s.spaEstimate < 0.1, `clean SPA ${s.spaEstimate}`);
  for (const f of [1, 0.5]) {
    const px = new Uint8Array(data).map((v) => (rand() < f ? (v & 0xfe) | (rand() < 0.5 ? 1 : 0) : v));
    const s = lsbStatistics(px, info.width, info.height, 3);
    for (const c of s) assert.ok(Math.abs(c.spaEstimate - f) < 0.12, `fraction ${f}: SPA ${c.spaEstimate}`);
    if (f === 1) for (const c of s) assert.ok(c.pValue > 0.5, `p ${c.pValue}`);
  }
});

test('text scan: code points agree with TextDecoder in UTF-8 and UTF-16', () => {
  const text = 'Plain ASCII, caf\u00e9, \u65e5\u672c\u8a9e, emoji \u{1F600}\n second line\n';
  const u8 = new Uint8Array(Buffer.from(text, 'utf8'));
  const le = new Uint8Array(Buffer.from(text, 'utf16le'));
  const be = new Uint8Array(Buffer.from(le).swap16());
  for (const [bytes, enc] of [[u8, 'utf-8'], [le, 'utf-16le'], [be, 'utf-16be']] as const) {
    const s = scanText(bytes, enc);
    assert.ok(s.valid, enc);
    assert.is(s.codePoints, [...text].length, enc);
    assert.is(s.lines, 3);
    assert.is(s.zeroWidth + s.tags + s.variationSelectors + s.confusableWords + s.bidiOverrides, 0);
  }
  const bad = scanText(new Uint8Array([0x61, 0xc3, 0x28, 0x62]));
  assert.is(bad.valid, false);
  assert.is(bad.firstInvalid, 1);
  assert.is(scanText(new Uint8Array([0xed, 0xa0, 0x80])).valid, false); // a surrogate in UTF-8
  assert.is(scanText(new Uint8Array([0xc0, 0xaf])).valid, false); // overlong
  assert.is(scanText(ascii('ab\0cd'), 'utf-8', true).valid, false);
});

test('text scan: invisible characters, bidi controls, look-alikes, trailing whitespace', () => {
  const zw = scanText(ascii('') .length ? ascii('') : new Uint8Array(Buffer.from('pass\u200bword se\u200ccret \u200d\u2060x')));
  assert.is(zw.zeroWidth, 4);
  const emoji = scanText(new Uint8Array(Buffer.from('family \u{1F468}\u200d\u{1F469}\u200d\u{1F467} ok')));
  assert.is(emoji.zeroWidth, 0);
  assert.is(emoji.zeroWidthExplained, 2);
  const persian = scanText(new Uint8Array(Buffer.from('\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645')));
  assert.is(persian.zeroWidth, 0);
  const hidden = [...'secret'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
  const tags = scanText(new Uint8Array(Buffer.from(`hello${hidden} world`)));
  assert.is(tags.tags, 6);
  const flag = scanText(new Uint8Array(Buffer.from('\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F} England')));
  assert.is(flag.tags, 0);
  assert.is(flag.tagsExplained, 6);
  const vs = scanText(new Uint8Array(Buffer.from('a\ufe00\ufe01\ufe02 b \u2764\ufe0f \u845b\u{E0100}')));
  assert.is(vs.variationSelectors, 3);
  assert.is(vs.variationSelectorsExplained, 2);
  const bidi = scanText(new Uint8Array(Buffer.from('if (isAdmin) { \u202e } \u2066// check later\u2069 {')));
  assert.is(bidi.bidiOverrides, 1);
  assert.is(bidi.bidiUnbalanced, 1);
  const look = scanText(new Uint8Array(Buffer.from('Log in to p\u0430ypal.com or \u0440\u0430y\u0440\u0430l; \u041c\u043e\u0441\u043a\u0432\u0430 and Paris are fine, \u03bcm too')));
  assert.is(look.confusableWords, 2);
  const trailing = scanText(ascii('line one \t \nline two\t  \t\nline three        \nclean\n   \n'));
  assert.is(trailing.suspiciousTrailingLines, 3);
  assert.is(trailing.trailingWhitespaceLines, 3);
});

test('memory stays flat over many kernel calls', () => {
  const k = loadKernel('integrity');
  const png = fixture('tiny.gif');
  const text = new Uint8Array(Buffer.from('abc \u200b def\n'.repeat(50)));
  const px = new Uint8Array(64 * 64 * 3).map((_, i) => (i * 7) & 255);
  for (let i = 0; i < 2000; i++) { walkGif(png); scanText(text); entropyProfile(png); lsbStatistics(px, 64, 64, 3); }
  const before = k.exports.memory.buffer.byteLength;
  for (let i = 0; i < 100_000; i++) {
    walkGif(png);
    scanText(text);
    scanSignatures(png);
    if (i % 10 === 0) entropyProfile(png);
    if (i % 10 === 0) lsbStatistics(px, 64, 64, 3);
    if (i % 10 === 0) {
      const kb = KernelBytes.load(png);
      walkPng(kb.at(3));
      kb.release();
    }
  }
  assert.is(k.exports.memory.buffer.byteLength, before);
});

test('truncated and corrupted inputs: every kernel returns, never traps', async () => {
  const inputs = [
    fixture('baboon-crop.png').subarray(0, 20000), fixture('happyfish.jpg'), fixture('tiny.gif'), fixture('bell.oga'),
    fixture('ambi_choir.flac').subarray(0, 20000), makeZip('a.txt', ascii('hello'), 'c'),
    ascii('%PDF-1.4\n/JavaScript /J#4 /#\n%%EOF'), tiffWithGps([1, 2, 3], [4, 5, 6]),
    new Uint8Array(await sharp(fixture('plant-crop.png')).resize(32, 32).tiff().toBuffer()),
  ];
  const kernels = [
    (b: Uint8Array) => walkPng(b), (b: Uint8Array) => walkJpeg(b), (b: Uint8Array) => walkGif(b), (b: Uint8Array) => pdfEnd(b),
    (b: Uint8Array) => pdfScanNames(b), (b: Uint8Array) => zipEnd(b), (b: Uint8Array) => scanSignatures(b), (b: Uint8Array) => walkTiff(b),
    (b: Uint8Array) => containerEnd('riff', b), (b: Uint8Array) => containerEnd('ogg', b), (b: Uint8Array) => containerEnd('isobmff', b),
    (b: Uint8Array) => containerEnd('bmp', b), (b: Uint8Array) => walkId3(b), (b: Uint8Array) => walkFlac(b),
    (b: Uint8Array) => entropyProfile(b), (b: Uint8Array) => scanText(b), (b: Uint8Array) => scanText(b, 'utf-16le'),
  ];
  for (const input of inputs) {
    for (let round = 0; round < 40; round++) {
      let b = input.subarray(0, (rand() * (input.length + 1)) | 0).slice();
      if (round % 2 === 1) for (let k = 0; k < 1 + ((rand() * 8) | 0); k++) if (b.length) b[(rand() * b.length) | 0] ^= 1 << ((rand() * 8) | 0);
      if (round % 5 === 4) b = concat(b, randomBytes(50));
      for (const run of kernels) run(b);
    }
  }
  // lengths that claim more than there is
  walkTiff(concat(ascii('MM\0*'), new Uint8Array([0, 0, 0, 8, 0xff, 0xff])));
  walkPng(concat(fixture('baboon-crop.png').subarray(0, 8), new Uint8Array([0x7f, 0xff, 0xff, 0xff, 0x49, 0x44, 0x41, 0x54])));
  walkJpeg(new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 0x00]));
  walkJpeg(new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0xff]));
  walkGif(ascii('GIF89a\x01\x00\x01\x00\xff\x00\x00'));
});

test.run();
