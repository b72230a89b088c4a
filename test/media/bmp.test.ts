// decodeBmp against pixels made by sharp and written as BMP by a tiny encoder here,
// one per layout the reader supports, plus malformed and truncated files.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { decodeBmp, BmpError } from '../../src/media/bmp.js';

const W = 13; // odd widths exercise row padding at every depth
const H = 7;

/** RGBA pixels of a real sharp-rendered picture (noise plus a gradient overlay). */
async function samplePixels(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}">
    <defs><linearGradient id="g"><stop offset="0" stop-color="#f00" stop-opacity="0.2"/><stop offset="1" stop-color="#06c"/></linearGradient></defs>
    <rect width="${W}" height="${H}" fill="url(#g)"/><circle cx="4" cy="3" r="3" fill="#ee2"/></svg>`;
  const { data } = await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return new Uint8Array(data);
}

interface Layout {
  bpp: number;
  header: 12 | 40 | 108 | 124;
  compression?: number;
  masks?: [number, number, number, number?];
  topDown?: boolean;
  palette?: number[][]; // RGB entries
}

/** A minimal BMP writer: enough layouts to test the reader against known pixels. */
function encodeBmp(rgba: Uint8Array, w: number, h: number, L: Layout): Uint8Array {
  const stride = Math.floor((L.bpp * w + 31) / 32) * 4;
  const entry = L.header === 12 ? 3 : 4;
  const paletteBytes = (L.palette?.length ?? 0) * entry;
  const maskBytes = L.compression === 3 && L.header === 40 ? 12 : 0;
  const offset = 14 + L.header + maskBytes + paletteBytes;
  const out = new Uint8Array(offset + stride * h);
  const dv = new DataView(out.buffer);
  out[0] = 0x42; out[1] = 0x4d;
  dv.setUint32(2, out.length, true);
  dv.setUint32(10, offset, true);
  dv.setUint32(14, L.header, true);
  if (L.header === 12) {
    dv.setUint16(18, w, true); dv.setInt16(20, L.topDown ? -h : h, true);
    dv.setUint16(22, 1, true); dv.setUint16(24, L.bpp, true);
  } else {
    dv.setInt32(18, w, true); dv.setInt32(22, L.topDown ? -h : h, true);
    dv.setUint16(26, 1, true); dv.setUint16(28, L.bpp, true);
    dv.setUint32(30, L.compression ?? 0, true);
    dv.setUint32(46, L.palette?.length ?? 0, true);
    if (L.masks) L.masks.forEach((m, i) => dv.setUint32(14 + 40 + 4 * i, (m ?? 0) >>> 0, true));
  }
  let p = 14 + L.header + maskBytes;
  for (const [r, g, b] of L.palette ?? []) { out[p] = b; out[p + 1] = g; out[p + 2] = r; p += entry; }
  const pack = (v: number, mask: number) => {
    if (mask === 0) return 0;
    let shift = 0; while (((mask >>> shift) & 1) === 0) shift++;
    const max = mask >>> shift;
    return (Math.round((v * max) / 255) << shift) >>> 0;
  };
  for (let y = 0; y < h; y++) {
    const row = offset + (L.topDown ? y : h - 1 - y) * stride;
    for (let x = 0; x < w; x++) {
      const i = 4 * (y * w + x);
      const [r, g, b, a] = [rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]];
      if (L.palette) {
        const index = L.palette.findIndex(([pr, pg, pb]) => pr === r && pg === g && pb === b);
        const bit = x * L.bpp;
        out[row + (bit >> 3)] |= index << (8 - L.bpp - (bit & 7));
      } else if (L.bpp === 24) {
        out[row + 3 * x] = b; out[row + 3 * x + 1] = g; out[row + 3 * x + 2] = r;
      } else {
        const [mr, mg, mb, ma] = L.masks ?? (L.bpp === 16 ? [0x7c00, 0x3e0, 0x1f, 0] : [0xff0000, 0xff00, 0xff, 0]);
        const v = (pack(r, mr) | pack(g, mg) | pack(b, mb) | pack(a, ma ?? 0)) >>> 0;
        if (L.bpp === 16) dv.setUint16(row + 2 * x, v, true); else dv.setUint32(row + 4 * x, v, true);
      }
    }
  }
  return out;
}

/** What the reader should give: the input quantized to the layout's bits, then widened back. */
function expected(rgba: Uint8Array, bits: [number, number, number, number], channels: 3 | 4): Uint8Array {
  const out = new Uint8Array((rgba.length / 4) * channels);
  const q = (v: number, n: number) => { const max = (1 << n) - 1; return Math.round((Math.round((v * max) / 255) * 255) / max); };
  for (let i = 0, o = 0; i < rgba.length; i += 4, o += channels) {
    for (let c = 0; c < channels; c++) out[o + c] = q(rgba[i + c], bits[c]);
  }
  return out;
}

const opaque = (rgba: Uint8Array) => { const c = rgba.slice(); for (let i = 3; i < c.length; i += 4) c[i] = 255; return c; };

test('24-bit bottom-up and top-down, odd width (row padding)', async () => {
  const px = opaque(await samplePixels());
  for (const topDown of [false, true]) {
    const bmp = decodeBmp(encodeBmp(px, W, H, { bpp: 24, header: 40, topDown }));
    assert.equal([bmp.width, bmp.height, bmp.channels], [W, H, 3]);
    assert.equal(Array.from(bmp.data), Array.from(expected(px, [8, 8, 8, 8], 3)));
  }
});

test('BITMAPCOREHEADER (OS/2) 24-bit and 8-bit palette', async () => {
  const px = opaque(await samplePixels());
  assert.equal(Array.from(decodeBmp(encodeBmp(px, W, H, { bpp: 24, header: 12 })).data), Array.from(expected(px, [8, 8, 8, 8], 3)));
});

test('16-bit 5-5-5 (BI_RGB) and 5-6-5 (BI_BITFIELDS)', async () => {
  const px = opaque(await samplePixels());
  const b555 = decodeBmp(encodeBmp(px, W, H, { bpp: 16, header: 40 }));
  assert.equal(Array.from(b555.data), Array.from(expected(px, [5, 5, 5, 8], 3)));
  const b565 = decodeBmp(encodeBmp(px, W, H, { bpp: 16, header: 40, compression: 3, masks: [0xf800, 0x07e0, 0x001f] }));
  assert.equal(Array.from(b565.data), Array.from(expected(px, [5, 6, 5, 8], 3)));
  const v4 = decodeBmp(encodeBmp(px, W, H, { bpp: 16, header: 108, compression: 3, masks: [0xf800, 0x07e0, 0x001f, 0] }));
  assert.equal(Array.from(v4.data), Array.from(b565.data));
});

test('32-bit: BGRX without alpha, BI_BITFIELDS with an alpha mask (V5 header)', async () => {
  const px = await samplePixels();
  const x = decodeBmp(encodeBmp(opaque(px), W, H, { bpp: 32, header: 40 }));
  assert.is(x.channels, 3);
  assert.equal(Array.from(x.data), Array.from(expected(opaque(px), [8, 8, 8, 8], 3)));
  const a = decodeBmp(encodeBmp(px, W, H, { bpp: 32, header: 124, compression: 3, masks: [0xff0000, 0xff00, 0xff, 0xff000000], topDown: true }));
  assert.is(a.channels, 4);
  assert.equal(Array.from(a.data), Array.from(px));
  // An alpha mask with every alpha zero reads as opaque.
  const zero = decodeBmp(encodeBmp(opaque(px).map((v, i) => (i % 4 === 3 ? 0 : v)), W, H, { bpp: 32, header: 124, compression: 3, masks: [0xff0000, 0xff00, 0xff, 0xff000000] }));
  assert.ok(Array.from(zero.data).every((v, i) => i % 4 !== 3 || v === 255));
});

test('1, 4 and 8-bit palettes', async () => {
  for (const bpp of [1, 4, 8]) {
    // Posterize sharp's picture to the palette size so every pixel has an entry.
    const levels = Math.min(1 << bpp, 256);
    const { data } = await sharp(Buffer.from(opaque(await samplePixels())), { raw: { width: W, height: H, channels: 4 } })
      .removeAlpha().png({ palette: true, colours: levels, dither: 0 }).toBuffer().then((png) => sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true }));
    const px = new Uint8Array(data);
    const palette: number[][] = [];
    for (let i = 0; i < px.length; i += 4) {
      if (!palette.some(([r, g, b]) => r === px[i] && g === px[i + 1] && b === px[i + 2])) palette.push([px[i], px[i + 1], px[i + 2]]);
    }
    assert.ok(palette.length <= levels, `${palette.length} colours for ${bpp} bits`);
    const bmp = decodeBmp(encodeBmp(px, W, H, { bpp, header: 40, palette }));
    assert.equal(Array.from(bmp.data), Array.from(expected(px, [8, 8, 8, 8], 3)), `${bpp}-bit`);
  }
});

test('truncated, malformed and oversized files throw BmpError without reading past the end', async () => {
  const good = encodeBmp(opaque(await samplePixels()), W, H, { bpp: 24, header: 40 });
  for (let n = 0; n < good.length; n += 7) assert.throws(() => decodeBmp(good.subarray(0, n)), (e: unknown) => e instanceof BmpError);
  assert.throws(() => decodeBmp(good.subarray(0, good.length - 2)), /truncated/); // the last row may lack its padding byte
  assert.not.throws(() => decodeBmp(good.subarray(0, good.length - 1)));
  const bad = (patch: (dv: DataView) => void) => { const c = good.slice(); patch(new DataView(c.buffer)); return c; };
  assert.throws(() => decodeBmp(bad((dv) => dv.setUint16(28, 12, true))), /bit depth/);
  assert.throws(() => decodeBmp(bad((dv) => dv.setUint32(30, 1, true))), /compression/);
  assert.throws(() => decodeBmp(bad((dv) => dv.setInt32(18, 0, true))), /dimensions/);
  assert.throws(() => decodeBmp(bad((dv) => dv.setUint32(10, 20, true))), /overlaps/);
  assert.throws(() => decodeBmp(bad((dv) => { dv.setInt32(18, 60000, true); dv.setInt32(22, 60000, true); })), /limit/);
  assert.throws(() => decodeBmp(bad((dv) => dv.setInt32(18, 5000, true))), /truncated/);
  assert.throws(() => decodeBmp(good, { maxPixels: W * H - 1 }), /limit/);
  const masks = encodeBmp(opaque(await samplePixels()), W, H, { bpp: 32, header: 124, compression: 3, masks: [0xf0f0, 0xff00, 0xff, 0] });
  assert.throws(() => decodeBmp(masks), /contiguous/);
});

test.run();
