// Image fingerprints end to end: decoding (sharp and our BMP reader) into the dHash
// kernel, checked against the plain-TS reference of decisions.md 3 and against
// edited copies of a real photo.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { fingerprintFile, similarity } from '../../src/media/fingerprint.js';
import { decodeImagePixels } from '../../src/media/image.js';
import type { Fingerprint } from '../../src/lib/types.js';
import { referenceDHash } from './reference-dhash.js';
import { decodeFailed } from '../helpers/media.js';

const FIX = new URL('../fixtures/media/', import.meta.url).pathname;
const photo = new Uint8Array(readFileSync(FIX + 'fruits.jpg'));

async function raw(input: Uint8Array | Buffer): Promise<{ data: Uint8Array; width: number; height: number; channels: 3 | 4 }> {
  const { data, info } = await sharp(input).raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: info.channels as 3 | 4 };
}

/** A bottom-up 24-bit BMP of RGB pixels (the layout most writers produce). */
function bmp24(px: Uint8Array, w: number, h: number): Uint8Array {
  const stride = Math.ceil((3 * w) / 4) * 4;
  const out = new Uint8Array(54 + stride * h);
  const dv = new DataView(out.buffer);
  out.set([0x42, 0x4d]);
  dv.setUint32(2, out.length, true); dv.setUint32(10, 54, true); dv.setUint32(14, 40, true);
  dv.setInt32(18, w, true); dv.setInt32(22, h, true); dv.setUint16(26, 1, true); dv.setUint16(28, 24, true);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const s = 3 * (y * w + x), d = 54 + (h - 1 - y) * stride + 3 * x;
    out[d] = px[s + 2]; out[d + 1] = px[s + 1]; out[d + 2] = px[s];
  }
  return out;
}

const fp = async (bytes: Uint8Array | Buffer) => {
  const f = await fingerprintFile(new Uint8Array(bytes));
  assert.ok(f, 'expected a fingerprint');
  return f as Fingerprint;
};

test('the same picture as JPEG-decoded pixels, PNG, BMP and TIFF gives the reference hash', async () => {
  const px = await raw(photo);
  const expected = Array.from(referenceDHash(px.data, px.width, px.height, px.channels));
  const rgb = { raw: { width: px.width, height: px.height, channels: px.channels } };
  const png = await sharp(Buffer.from(px.data), rgb).png().toBuffer();
  const tiff = await sharp(Buffer.from(px.data), rgb).tiff({ compression: 'lzw' }).toBuffer();
  const bmp = bmp24(px.data, px.width, px.height);
  for (const [name, bytes] of [['jpeg', photo], ['png', png], ['tiff', tiff], ['bmp', bmp]] as const) {
    const f = await fp(bytes);
    assert.is(f.hash_type, 'ImagePHash');
    assert.equal(f.hash_value, expected, name);
    assert.equal(f.bands, expected.map((b) => [b]), name);
  }
});

test('resized 50 %, JPEG quality 40 and brightness +20 % keep similarity >= 70', async () => {
  const original = await fp(photo);
  const meta = await sharp(photo).metadata();
  const edits = {
    half: await sharp(photo).resize(Math.round(meta.width! / 2)).png().toBuffer(),
    q40: await sharp(photo).jpeg({ quality: 40 }).toBuffer(),
    brighter: await sharp(photo).modulate({ brightness: 1.2 }).jpeg({ quality: 90 }).toBuffer(),
  };
  for (const [name, bytes] of Object.entries(edits)) {
    const s = similarity(original, await fp(bytes));
    assert.ok(s !== null && s >= 70, `${name}: similarity ${s}`);
  }
});

test('different pictures mostly score below 70', async () => {
  const meta = await sharp(photo).metadata();
  const w = meta.width!, h = meta.height!;
  const pictures: Uint8Array[] = [photo, new Uint8Array(readFileSync(FIX + 'cat.gif'))];
  // Quarter crops of the photo are different pictures of the same kind.
  for (const [left, top] of [[0, 0], [w / 2, 0], [0, h / 2], [w / 2, h / 2]]) {
    pictures.push(await sharp(photo).extract({ left: Math.floor(left), top: Math.floor(top), width: Math.floor(w / 2), height: Math.floor(h / 2) }).png().toBuffer());
  }
  pictures.push(await sharp(photo).flop().png().toBuffer());
  const fps = await Promise.all(pictures.map(fp));
  let pairs = 0, below = 0;
  for (let i = 0; i < fps.length; i++) for (let j = i + 1; j < fps.length; j++) {
    pairs++;
    if (similarity(fps[i], fps[j])! < 70) below++;
  }
  assert.ok(below >= 0.85 * pairs, `${below} of ${pairs} pairs below 70`);
});

test('EXIF orientation is applied before hashing', async () => {
  // Stored sideways with orientation 6 ("rotate 90 clockwise to display").
  const sideways = await sharp(photo).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
  const upright = await sharp(photo).jpeg({ quality: 95 }).toBuffer();
  const s = similarity(await fp(upright), await fp(sideways));
  assert.ok(s! >= 95, `similarity ${s}`);
  const plain = await sharp(photo).rotate(-90).jpeg({ quality: 95 }).toBuffer();
  assert.ok(similarity(await fp(upright), await fp(plain))! < 80, 'without the tag it is another picture');
});

test('an animated GIF is hashed by its first frame', async () => {
  const svg = (a: string, b: string) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="90" height="80" shape-rendering="crispEdges"><rect width="90" height="80" fill="${a}"/><rect x="10" y="30" width="60" height="20" fill="${b}"/><rect x="60" y="5" width="20" height="20" fill="${b}"/></svg>`);
  const frames = [await sharp(svg('#ffffff', '#000000')).png().toBuffer(), await sharp(svg('#000000', '#ffffff')).png().toBuffer()];
  const strip = await sharp({ create: { width: 90, height: 160, channels: 3, background: '#fff' } })
    .composite([{ input: frames[0], top: 0, left: 0 }, { input: frames[1], top: 80, left: 0 }]).removeAlpha().raw().toBuffer();
  const anim = await sharp(strip, { raw: { width: 90, height: 160, channels: 3, pageHeight: 80 } as never }).gif().toBuffer();
  assert.is((await sharp(anim, { pages: -1 }).metadata()).pages, 2);
  const single = await Promise.all(frames.map((f) => sharp(f).gif().toBuffer().then(fp)));
  const a = await fp(anim);
  assert.equal(a.hash_value, single[0].hash_value);
  assert.not.equal(a.hash_value, single[1].hash_value);
});

test('alpha is composited over white; 16-bit samples are scaled to 8', async () => {
  const rgba = await raw(await sharp(photo).ensureAlpha().raw().toBuffer({ resolveWithObject: true }).then(({ data, info }) => {
    for (let i = 3; i < data.length; i += 4) data[i] = ((i >> 2) % info.width) * 2 % 256; // a horizontal alpha ramp
    return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
  }));
  assert.is(rgba.channels, 4);
  const png = await sharp(Buffer.from(rgba.data), { raw: { width: rgba.width, height: rgba.height, channels: 4 } }).png().toBuffer();
  assert.equal((await fp(png)).hash_value, Array.from(referenceDHash(rgba.data, rgba.width, rgba.height, 4)));

  const png16 = await sharp(photo).toColourspace('rgb16').png().toBuffer();
  assert.is((await sharp(png16).metadata()).depth, 'ushort');
  const px = await decodeImagePixels(new Uint8Array(png16), 'png');
  assert.equal([px.channels, px.data.length], [3, (await raw(photo)).data.length]);
  assert.equal((await fp(png16)).hash_value, (await fp(photo)).hash_value);
});

/** A PNG whose IHDR declares width x height, with one empty IDAT. */
function pngDeclaring(width: number, height: number): Uint8Array {
  const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
  const crc = (b: Uint8Array) => { let c = 0xffffffff; for (const x of b) c = crcTable[(c ^ x) & 255] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    const dv = new DataView(out.buffer);
    dv.setUint32(0, data.length);
    out.set(Buffer.from(type, 'latin1'), 4);
    out.set(data, 8);
    dv.setUint32(8 + data.length, crc(out.subarray(4, 8 + data.length)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, width); dv.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(1 + 3 * 16))), chunk('IEND', new Uint8Array(0))];
  return Buffer.concat(parts);
}

test('a tiny PNG declaring 65535 x 65535 is refused by the pixel cap, before decoding', async () => {
  const bomb = pngDeclaring(65535, 65535);
  assert.ok(bomb.length < 200);
  try {
    await decodeImagePixels(bomb, 'png');
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.match(String(e), /pixel/i);
  }
  await decodeFailed(fingerprintFile(bomb), 'bomb');
});

test('unsupported files give null; truncated and corrupt images reject with decode_failed', async () => {
  const png = await sharp(photo).png().toBuffer();
  const unsupported: Record<string, Uint8Array> = {
    empty: new Uint8Array(0),
    garbage: new Uint8Array(4096).map((_, i) => (i * 7919) % 251),
    pdf: Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n'),
    text: Buffer.from('just some text that is long enough to be looked at\n'),
  };
  for (const [name, bytes] of Object.entries(unsupported)) assert.is(await fingerprintFile(new Uint8Array(bytes)), null, name);
  const corrupt: Record<string, Uint8Array> = {
    'truncated jpeg': photo.subarray(0, photo.length >> 1),
    'truncated png': new Uint8Array(png.subarray(0, png.length >> 1)),
    'jpeg header only': photo.subarray(0, 600),
    'png signature then garbage': Buffer.concat([png.subarray(0, 8), Buffer.alloc(200, 7)]),
  };
  for (const [name, bytes] of Object.entries(corrupt)) await decodeFailed(fingerprintFile(new Uint8Array(bytes)), name);
});

test.run();
