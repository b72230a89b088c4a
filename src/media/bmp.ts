// Our own BMP reader (libvips, and so sharp, reads no BMP). Uncompressed only:
// 1/4/8-bit palettes, 16-bit (5-5-5, or BI_BITFIELDS such as 5-6-5), 24-bit and
// 32-bit (BGRX, or BI_BITFIELDS with an optional alpha mask), bottom-up or top-down
// (negative height). Every read is bounds-checked: malformed or truncated input
// throws a BmpError naming the problem, never reads outside `bytes`.

export interface DecodedBmp {
  width: number;
  height: number;
  /** 3 (RGB) or 4 (RGBA: only when the file gives an alpha mask). */
  channels: 3 | 4;
  /** Top-down rows, `channels` bytes per pixel, no padding. */
  data: Uint8Array;
}

export interface BmpOptions {
  /** Largest width x height accepted (default 100 megapixels). */
  maxPixels?: number;
}

export class BmpError extends Error {
  override name = 'BmpError';
}

const BI_RGB = 0;
const BI_BITFIELDS = 3;
const BI_ALPHABITFIELDS = 6;
const FILE_HEADER = 14;
const DEFAULT_MAX_PIXELS = 100_000_000;

/** One colour channel of a BI_BITFIELDS mask: where it sits and how to widen it to 8 bits. */
interface Channel {
  mask: number;
  shift: number;
  max: number;
}

function channel(mask: number): Channel {
  mask >>>= 0;
  if (mask === 0) return { mask: 0, shift: 0, max: 0 };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  const max = mask >>> shift;
  if ((max & (max + 1)) !== 0) throw new BmpError('BMP: a colour mask is not one contiguous run of bits');
  return { mask, shift, max };
}

function widen(value: number, c: Channel): number {
  if (c.max === 0) return 0;
  const v = (value & c.mask) >>> c.shift;
  return c.max === 255 ? v : Math.round((v * 255) / c.max);
}

/** Decodes a BMP file to 8-bit RGB or RGBA pixels. Throws BmpError on anything else. */
export function decodeBmp(bytes: Uint8Array, options: BmpOptions = {}): DecodedBmp {
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_PIXELS;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (end: number, what: string): void => {
    if (end > bytes.length) throw new BmpError(`BMP: truncated (${what} needs ${end} bytes, file has ${bytes.length})`);
  };

  need(FILE_HEADER + 4, 'the headers');
  if (bytes[0] !== 0x42 || bytes[1] !== 0x4d) throw new BmpError('BMP: no "BM" signature');
  const dataOffset = dv.getUint32(10, true);
  const dibSize = dv.getUint32(14, true);
  if (dibSize < 12) throw new BmpError(`BMP: bad header size ${dibSize}`);
  need(FILE_HEADER + dibSize, 'the DIB header');

  let width: number;
  let rawHeight: number;
  let bpp: number;
  let compression = BI_RGB;
  let colorsUsed = 0;
  let paletteEntrySize = 4;
  if (dibSize === 12) {
    // BITMAPCOREHEADER (OS/2 1.x): 16-bit sizes, 3-byte palette entries.
    width = dv.getUint16(18, true);
    rawHeight = dv.getInt16(20, true);
    bpp = dv.getUint16(24, true);
    paletteEntrySize = 3;
  } else {
    if (dibSize < 40) throw new BmpError(`BMP: unsupported header size ${dibSize}`);
    width = dv.getInt32(18, true);
    rawHeight = dv.getInt32(22, true);
    bpp = dv.getUint16(28, true);
    compression = dv.getUint32(30, true);
    colorsUsed = dv.getUint32(46, true);
  }
  const topDown = rawHeight < 0;
  const height = Math.abs(rawHeight);
  if (width <= 0 || height <= 0) throw new BmpError(`BMP: bad dimensions ${width}x${rawHeight}`);
  if (width * height > maxPixels) throw new BmpError(`BMP: ${width}x${height} exceeds the ${maxPixels}-pixel limit`);
  if (![1, 4, 8, 16, 24, 32].includes(bpp)) throw new BmpError(`BMP: unsupported bit depth ${bpp}`);

  // Channel masks: defaults per depth, from the header (V2+) or the 12/16 bytes after a 40-byte header.
  let masks: number[] | null = null;
  if (compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS) {
    if (bpp !== 16 && bpp !== 32) throw new BmpError(`BMP: BI_BITFIELDS with ${bpp}-bit pixels`);
    const count = compression === BI_ALPHABITFIELDS || dibSize >= 56 ? 4 : 3;
    const at = dibSize >= 52 ? FILE_HEADER + 40 : FILE_HEADER + dibSize;
    need(at + 4 * count, 'the colour masks');
    masks = [];
    for (let i = 0; i < count; i++) masks.push(dv.getUint32(at + 4 * i, true));
    if (count === 3) masks.push(0);
  } else if (compression !== BI_RGB) {
    throw new BmpError(`BMP: compression ${compression} is not supported (uncompressed only)`);
  }
  if (masks === null && bpp === 16) masks = [0x7c00, 0x03e0, 0x001f, 0];
  if (masks === null && bpp === 32) masks = [0x00ff0000, 0x0000ff00, 0x000000ff, 0];

  // Palette (1/4/8 bits): right after the DIB header (and any masks, which cannot occur here).
  let palette: Uint8Array | null = null;
  if (bpp <= 8) {
    const entries = colorsUsed === 0 ? 1 << bpp : colorsUsed;
    if (entries > 1 << bpp) throw new BmpError(`BMP: ${entries} palette entries for ${bpp}-bit pixels`);
    const at = FILE_HEADER + dibSize;
    need(at + entries * paletteEntrySize, 'the palette');
    // Indexes past the palette read black (zeros), as Windows does.
    palette = new Uint8Array(3 << bpp);
    for (let i = 0; i < entries; i++) {
      const p = at + i * paletteEntrySize;
      palette[3 * i] = bytes[p + 2];
      palette[3 * i + 1] = bytes[p + 1];
      palette[3 * i + 2] = bytes[p];
    }
  }

  const stride = Math.floor((bpp * width + 31) / 32) * 4;
  const rowBytes = Math.ceil((bpp * width) / 8);
  if (dataOffset < FILE_HEADER + dibSize) throw new BmpError(`BMP: pixel data offset ${dataOffset} overlaps the headers`);
  need(dataOffset + stride * (height - 1) + rowBytes, 'the pixel rows');

  const [r, g, b, a] = (masks ?? [0, 0, 0, 0]).map(channel);
  const channels: 3 | 4 = a.mask !== 0 ? 4 : 3;
  const out = new Uint8Array(width * height * channels);
  let anyAlpha = false;
  for (let y = 0; y < height; y++) {
    const src = dataOffset + (topDown ? y : height - 1 - y) * stride;
    let o = y * width * channels;
    for (let x = 0; x < width; x++, o += channels) {
      if (palette !== null) {
        const bit = x * bpp;
        const byte = bytes[src + (bit >> 3)];
        const index = (byte >> (8 - bpp - (bit & 7))) & ((1 << bpp) - 1);
        out[o] = palette[3 * index];
        out[o + 1] = palette[3 * index + 1];
        out[o + 2] = palette[3 * index + 2];
      } else if (bpp === 24) {
        const p = src + 3 * x;
        out[o] = bytes[p + 2];
        out[o + 1] = bytes[p + 1];
        out[o + 2] = bytes[p];
      } else {
        const value = bpp === 16 ? dv.getUint16(src + 2 * x, true) : dv.getUint32(src + 4 * x, true);
        out[o] = widen(value, r);
        out[o + 1] = widen(value, g);
        out[o + 2] = widen(value, b);
        if (channels === 4) {
          const alpha = widen(value, a);
          out[o + 3] = alpha;
          if (alpha !== 0) anyAlpha = true;
        }
      }
    }
  }
  // Many writers declare an alpha mask and leave it zero: read that as opaque, not invisible.
  if (channels === 4 && !anyAlpha) for (let i = 3; i < out.length; i += 4) out[i] = 255;
  return { width, height, channels, data: out };
}
