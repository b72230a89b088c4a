// Integrity reports end to end: files made suspicious by the test (appended archives
// and executables, LSB payloads, GPS EXIF, PDF JavaScript, Unicode tricks) are
// flagged; clean real fixtures are not; truncated and corrupted files still give a
// report; checks_performed follows decisions.md 4 for each type.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as zlibCrc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { integrityReport } from '../../src/media/integrity.js';
import type { IntegrityReport, IntegrityCheck } from '../../src/lib/integrity.js';

const FIX = new URL('../fixtures/integrity/', import.meta.url);
const MEDIA = new URL('../fixtures/media/', import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, FIX)));
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

let seed = 0xdecafbad;
function rand(): number {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 0x100000000;
}

function makeZip(name: string, data: Uint8Array): Uint8Array {
  const n = Buffer.from(name);
  const crc = zlibCrc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14); local.writeUInt32LE(data.length, 18); local.writeUInt32LE(data.length, 22); local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16); central.writeUInt32LE(data.length, 20); central.writeUInt32LE(data.length, 24); central.writeUInt16LE(n.length, 28);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(1, 8); eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(46 + n.length, 12); eocd.writeUInt32LE(30 + n.length + data.length, 16);
  return concat(local, n, data, central, n, eocd);
}

function makeElf(): Uint8Array {
  const b = Buffer.alloc(4096);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  b.writeUInt16LE(2, 16); b.writeUInt16LE(0x3e, 18); b.writeUInt32LE(1, 20);
  return new Uint8Array(b);
}

/** A 24-bit bottom-up BMP of RGB pixels (our own writer: sharp writes no BMP). */
function makeBmp(rgb: Uint8Array, width: number, height: number): Uint8Array {
  const stride = (width * 3 + 3) & ~3;
  const b = Buffer.alloc(54 + stride * height);
  b.write('BM', 0, 'latin1'); b.writeUInt32LE(b.length, 2); b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14); b.writeInt32LE(width, 18); b.writeInt32LE(height, 22); b.writeUInt16LE(1, 26); b.writeUInt16LE(24, 28);
  b.writeUInt32LE(stride * height, 34);
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const s = (y * width + x) * 3;
      b[row + x * 3] = rgb[s + 2]; b[row + x * 3 + 1] = rgb[s + 1]; b[row + x * 3 + 2] = rgb[s];
    }
  }
  return new Uint8Array(b);
}

/** Random message bits into the LSB of `fraction` of the colour samples. */
function embedLsb(px: Uint8Array, fraction: number): Uint8Array {
  return px.map((v) => (rand() < fraction ? (v & 0xfe) | (rand() < 0.5 ? 1 : 0) : v));
}

async function photoPixels() {
  const { data, info } = await sharp(fixture('baboon-crop.png')).raw().toBuffer({ resolveWithObject: true });
  return { px: new Uint8Array(data), width: info.width, height: info.height, channels: info.channels as 3 };
}

const worst = (r: IntegrityReport, check?: IntegrityCheck) => {
  const order = { Info: 0, Warning: 1, Critical: 2 } as const;
  let w = -1;
  for (const i of r.issues_found) if (!check || i.check === check) w = Math.max(w, order[i.severity]);
  return (['none', 'Info', 'Warning', 'Critical'] as const)[w + 1];
};
const has = (r: IntegrityReport, check: IntegrityCheck, severity: string) => r.issues_found.some((i) => i.check === check && i.severity === severity);

function assertShape(r: IntegrityReport): void {
  assert.ok(Array.isArray(r.checks_performed) && r.checks_performed.length > 0);
  assert.ok(Number.isInteger(r.checked_at) && Math.abs(r.checked_at - Date.now()) < 60_000);
  for (const i of r.issues_found) {
    assert.ok(r.checks_performed.includes(i.check), `${i.check} reported but not performed`);
    assert.ok(['Info', 'Warning', 'Critical'].includes(i.severity));
    assert.ok(typeof i.description === 'string' && i.description.length > 0 && i.description.length <= 200);
    if (i.offset !== undefined) assert.ok(Number.isInteger(i.offset) && i.offset >= 0);
    if (i.length !== undefined) assert.ok(Number.isInteger(i.length) && i.length > 0);
  }
}

test('a ZIP appended to a PNG: PostEofData and AppendedFileDetection warnings at the right offset', async () => {
  const png = fixture('baboon-crop.png');
  const r = await integrityReport(concat(png, makeZip('secret.txt', utf8('the hidden message'))));
  assertShape(r);
  const post = r.issues_found.find((i) => i.check === 'PostEofData' && i.severity === 'Warning');
  assert.is(post?.offset, png.length);
  const app = r.issues_found.find((i) => i.check === 'AppendedFileDetection');
  assert.is(app?.severity, 'Warning');
  assert.is(app?.offset, png.length);
  assert.match(app!.description, /ZIP/);
});

test('a ZIP appended to a JPEG: the same two warnings', async () => {
  const jpg = fixture('happyfish.jpg');
  const r = await integrityReport(concat(jpg, makeZip('a.txt', utf8('x'.repeat(100)))));
  assertShape(r);
  assert.ok(has(r, 'PostEofData', 'Warning'));
  assert.ok(has(r, 'AppendedFileDetection', 'Warning'));
  assert.is(r.issues_found.find((i) => i.check === 'AppendedFileDetection')?.offset, jpg.length);
});

test('an ELF appended to a PNG, a JPEG and an Ogg file is Critical', async () => {
  for (const host of [fixture('plant-crop.png'), fixture('happyfish.jpg'), fixture('bell.oga')]) {
    const r = await integrityReport(concat(host, makeElf()));
    assert.is(worst(r, 'AppendedFileDetection'), 'Critical');
    assert.ok(has(r, 'PostEofData', 'Warning'));
  }
});

test('zero padding after the end is Info only', async () => {
  const r = await integrityReport(concat(fixture('plant-crop.png'), new Uint8Array(1000)));
  assert.ok(has(r, 'PostEofData', 'Info'));
  assert.is(worst(r), 'Info');
});

test('a Motion Photo video declared in XMP is explained; the same bytes without the XMP are not', async () => {
  const jpg = fixture('happyfish.jpg');
  const xmp = Buffer.concat([Buffer.from('http://ns.adobe.com/xap/1.0/\0'), Buffer.from('<x:xmpmeta><rdf:Description GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1"/></x:xmpmeta>')]);
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, ((xmp.length + 2) >> 8) & 255, (xmp.length + 2) & 255]), xmp]);
  const box = (type: string, n: number) => concat(new Uint8Array([0, 0, (8 + n) >> 8, (8 + n) & 255]), utf8(type), new Uint8Array(n).fill(7));
  const mp4 = concat(box('ftyp', 16), box('moov', 100), box('mdat', 3000));
  const motion = concat(jpg.subarray(0, 2), new Uint8Array(app1), jpg.subarray(2), mp4);
  const r = await integrityReport(motion);
  assert.is(worst(r), 'Info', JSON.stringify(r.issues_found));
  assert.ok(r.issues_found.some((i) => /Motion Photo/.test(i.description)));
  assert.ok(has(await integrityReport(concat(jpg, mp4)), 'PostEofData', 'Warning'));
});

test('LSB replacement in 100 % and 50 % of the samples of a real photo is flagged (PNG and BMP)', async () => {
  const { px, width, height, channels } = await photoPixels();
  for (const fraction of [1, 0.5]) {
    const stego = embedLsb(px, fraction);
    const png = new Uint8Array(await sharp(stego, { raw: { width, height, channels } }).png().toBuffer());
    const r = await integrityReport(png);
    assert.ok(r.checks_performed.includes('LsbAnalysis'));
    assert.ok(['Warning', 'Critical'].includes(worst(r, 'LsbAnalysis')), `PNG ${fraction}: ${JSON.stringify(r.issues_found)}`);
    const bmp = await integrityReport(makeBmp(stego, width, height));
    assert.ok(['Warning', 'Critical'].includes(worst(bmp, 'LsbAnalysis')), `BMP ${fraction}: ${JSON.stringify(bmp.issues_found)}`);
  }
  const tiff = new Uint8Array(await sharp(embedLsb(px, 1), { raw: { width, height, channels } }).tiff({ compression: 'lzw' }).toBuffer());
  assert.ok(['Warning', 'Critical'].includes(worst(await integrityReport(tiff), 'LsbAnalysis')));
});

test('the clean photo, as PNG, BMP and TIFF, has no LSB warning', async () => {
  const { px, width, height, channels } = await photoPixels();
  assert.is(worst(await integrityReport(makeBmp(px, width, height))), 'none');
  const tiff = new Uint8Array(await sharp(px, { raw: { width, height, channels } }).tiff().toBuffer());
  assert.ok(!['Warning', 'Critical'].includes(worst(await integrityReport(tiff))));
});

test('text with zero-width, tag, bidi and look-alike characters is flagged under UnicodeSteg', async () => {
  const base = readFileSync(new URL('skimage-copyright.txt', FIX), 'utf8');
  const hidden = [...'exfiltrate'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
  const cases: [string, RegExp][] = [
    [base.replace('scikit-image', 'sci\u200bkit\u200c-im\u200bage\u2060'), /zero-width/],
    [base.replace('Copyright', `Copyright${hidden}`), /tag character/],
    [base.replace('Redistribution', 'Redistri\u202ebution\u202c'), /bidirectional/],
    [base.replace('software', 's\u043eftw\u0430re'), /look-alike/],
    [base.replace(/\n/g, ' \t \n'), /tabs and spaces/],
  ];
  for (const [text, what] of cases) {
    const r = await integrityReport(utf8(text));
    assert.equal(r.checks_performed, ['EntropyAnalysis', 'AppendedFileDetection', 'UnicodeSteg']);
    const hit = r.issues_found.find((i) => i.check === 'UnicodeSteg' && i.severity === 'Warning' && what.test(i.description));
    assert.ok(hit, `${what}: ${JSON.stringify(r.issues_found)}`);
  }
  // the same in UTF-16LE with a byte order mark
  const le = concat(new Uint8Array([0xff, 0xfe]), new Uint8Array(Buffer.from(cases[1][0], 'utf16le')));
  const r16 = await integrityReport(le);
  assert.ok(r16.checks_performed.includes('UnicodeSteg'));
  assert.ok(has(r16, 'UnicodeSteg', 'Warning'));
});

test('a JPEG with a GPS position in EXIF is a Warning naming the position', async () => {
  const jpg = await sharp(fixture('plant-crop.png')).jpeg()
    .withExif({ IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 3230/100', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 4366/100' } })
    .toBuffer();
  const r = await integrityReport(new Uint8Array(jpg));
  const gps = r.issues_found.find((i) => i.check === 'MetadataInspection' && /GPS position/.test(i.description));
  assert.is(gps?.severity, 'Warning');
  assert.match(gps!.description, /51\.5089\d, -0\.1287\d/);
  // EXIF without GPS is not a warning
  const plain = await sharp(fixture('plant-crop.png')).jpeg().withExif({ IFD0: { Copyright: 'test' } }).toBuffer();
  assert.ok(!['Warning', 'Critical'].includes(worst(await integrityReport(new Uint8Array(plain)))));
});

test('a PDF with JavaScript is Critical, also when hidden in a compressed object stream', async () => {
  const plain = utf8('%PDF-1.7\n1 0 obj << /Type /Catalog /OpenAction 2 0 R >> endobj\n2 0 obj << /S /JavaScript /JS (app.alert(1)) >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  const r = await integrityReport(plain);
  assert.equal(r.checks_performed, ['PostEofData', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection']);
  assert.is(worst(r, 'MetadataInspection'), 'Critical');
  const inner = deflateSync(Buffer.from('2 0 << /S /J#61vaScript /JS (x) >>'));
  const objstm = concat(utf8('%PDF-1.7\n5 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ' + inner.length + ' >>\nstream\n'),
    new Uint8Array(inner), utf8('\nendstream\nendobj\n%%EOF\n'));
  assert.is(worst(await integrityReport(objstm), 'MetadataInspection'), 'Critical');
  const clean = utf8('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n');
  assert.is(worst(await integrityReport(clean)), 'none');
  assert.ok(has(await integrityReport(concat(clean, utf8('appended text that is not padding'))), 'PostEofData', 'Warning'));
});

test('clean real fixtures give no Warning or Critical', async () => {
  const files = ['baboon-crop.png', 'plant-crop.png', 'butterfly.png', 'happyfish.jpg', 'tiny.gif', 'bell.oga', 'ambi_choir.flac', 'skimage-copyright.txt']
    .map((n) => new URL(n, FIX));
  for (const n of ['fruits.jpg', 'cat.gif', 'cockatoo.mp4', 'vtest.avi', 'cockatoo-vp8.webm']) if (existsSync(new URL(n, MEDIA))) files.push(new URL(n, MEDIA));
  for (const f of files) {
    const r = await integrityReport(new Uint8Array(readFileSync(f)));
    assertShape(r);
    assert.ok(!['Warning', 'Critical'].includes(worst(r)), `${f.pathname}: ${JSON.stringify(r.issues_found)}`);
  }
});

test('checks_performed per detected type (decisions.md 4)', async () => {
  const { px, width, height } = await photoPixels();
  const all: IntegrityCheck[] = ['PostEofData', 'LsbAnalysis', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection'];
  const noLsb: IntegrityCheck[] = ['PostEofData', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection'];
  const cases: [Uint8Array, IntegrityCheck[]][] = [
    [fixture('plant-crop.png'), all],
    [makeBmp(px, width, height), all],
    [new Uint8Array(await sharp(fixture('plant-crop.png')).tiff().toBuffer()), all],
    [fixture('happyfish.jpg'), noLsb],
    [fixture('tiny.gif'), noLsb],
    [new Uint8Array(await sharp(fixture('plant-crop.png')).webp().toBuffer()), noLsb],
    [fixture('bell.oga'), noLsb],
    [fixture('ambi_choir.flac'), noLsb],
    [utf8('%PDF-1.4\n%%EOF\n'), noLsb],
    [fixture('skimage-copyright.txt'), ['EntropyAnalysis', 'AppendedFileDetection', 'UnicodeSteg']],
    [makeZip('a.txt', utf8('hello')), ['PostEofData', 'EntropyAnalysis', 'AppendedFileDetection']],
    [new Uint8Array(4096).map(() => (rand() * 256) | 0), ['EntropyAnalysis', 'AppendedFileDetection']],
    [new Uint8Array(0), ['EntropyAnalysis', 'AppendedFileDetection']],
    [utf8('text\0with a NUL'), ['EntropyAnalysis', 'AppendedFileDetection']],
  ];
  for (const [bytes, checks] of cases) assert.equal((await integrityReport(bytes)).checks_performed, checks);
});

test('data after a ZIP end of central directory is PostEofData', async () => {
  const zip = makeZip('a.txt', utf8('hello'));
  const clean = await integrityReport(zip);
  assert.not.ok(clean.issues_found.some((i) => i.check === 'PostEofData'));
  const tail = utf8('hidden payload after the archive');
  const r = await integrityReport(concat(zip, tail));
  const post = r.issues_found.find((i) => i.check === 'PostEofData');
  assert.ok(post, 'PostEofData issue expected');
  assert.is(post!.severity, 'Warning');
  assert.is(post!.offset, zip.length);
  assert.is(post!.length, tail.length);
});

test('a path works as well as bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-integrity-'));
  try {
    const p = join(dir, 'x.png');
    writeFileSync(p, concat(fixture('plant-crop.png'), makeElf()));
    assert.is(worst(await integrityReport(p)), 'Critical');
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('truncated and corrupted files of every type give a report, never a throw', async () => {
  const { px, width, height } = await photoPixels();
  const inputs = [
    fixture('plant-crop.png'), fixture('happyfish.jpg'), fixture('tiny.gif'), fixture('bell.oga'), fixture('ambi_choir.flac'),
    fixture('skimage-copyright.txt'), makeBmp(px.subarray(0, 64 * 64 * 3), 64, 64),
    new Uint8Array(await sharp(fixture('plant-crop.png')).resize(64, 64).tiff().toBuffer()),
    new Uint8Array(await sharp(fixture('plant-crop.png')).resize(64, 64).jpeg().withExif({ IFD3: { GPSLatitude: '1/1 2/1 3/1' } }).toBuffer()),
    utf8('%PDF-1.7\n1 0 obj << /JS (x) >> endobj\n%%EOF\n'), makeZip('a', utf8('b')),
  ];
  for (const input of inputs) {
    for (let round = 0; round < 12; round++) {
      const b = input.subarray(0, Math.max(1, (rand() * input.length) | 0)).slice();
      if (round % 2) for (let k = 0; k < 4; k++) b[(rand() * b.length) | 0] ^= 1 << ((rand() * 8) | 0);
      const r = await integrityReport(b);
      assertShape(r);
    }
  }
});

test.run();
