// The variant suite: the edits whose copies a matcher should still find, named and
// versioned so that two reports say which edits they measured. Deterministic: the same
// original, suite version and seed give the same variant (placements come from the
// seed). Images are made with sharp (the package's decoder), audio and video with the
// bundled ffmpeg (src/media/ffmpeg.ts, the one place that starts it). A variant is
// written losslessly (PNG, FLAC) unless its edit is an encoding, so that it measures its
// edit alone. docs/bench-command.md lists the suite.
import sharp, { type Sharp } from 'sharp';
import type { MediaFormat, MediaKind } from '../../lib/detect.js';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { DEMUXER, probeMedia } from './probe.js';
import { below, type Random } from './random.js';

/**
 * The suite's versions: bump whenever a transform's output changes, so that reports of
 * different versions say so when compared. Every version stays reproducible
 * (`provenant bench --suite 1`): v2 (issue 32) keeps v1's edits, unchanged, and adds the
 * edits copies meet as they travel (large off-centre crops, frames, screenshots, rotation,
 * perspective, colour filters, combinations).
 */
export const SUITE_NAME = 'provenant-variants';
export const SUITE_VERSIONS = [1, 2] as const;
export type SuiteVersion = (typeof SUITE_VERSIONS)[number];
export const LATEST_SUITE: SuiteVersion = 2;

/** The longest stretch of audio or video a variant keeps (the fingerprints read the first 120 s). */
export const MAX_MEDIA_SECONDS = 130;

export interface Original {
  path: string;
  kind: MediaKind;
  format: MediaFormat;
}

export interface Transform {
  /** Stable name, as in reports: `resize-50`. */
  id: string;
  kind: MediaKind;
  /** What the edit is, in a few words. */
  description: string;
  /** Writes the variant of `original` to `out` + its extension; returns the path written. */
  make(original: Original, bytes: Uint8Array, out: string, random: Random): Promise<string>;
}

// ---- images ------------------------------------------------------------------------

interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

/** The original as displayed (EXIF orientation applied, first frame), as raw pixels: each image variant starts here. */
async function displayed(bytes: Uint8Array): Promise<Pixels> {
  const { data, info } = await sharp(bytes, { autoOrient: true, pages: 1, limitInputPixels: 100_000_000 })
    .toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as Pixels['channels'] };
}

const fromPixels = (px: Pixels) => sharp(px.data, { raw: { width: px.width, height: px.height, channels: px.channels } });

async function png(pipeline: Sharp, out: string): Promise<string> {
  const path = `${out}.png`;
  await pipeline.png({ compressionLevel: 1 }).toFile(path);
  return path;
}

function imageTransform(id: string, description: string, edit: (px: Pixels, random: Random) => Sharp, encode = png): Transform {
  return {
    id,
    kind: 'image',
    description,
    async make(_original, bytes, out, random) {
      return encode(edit(await displayed(bytes), random), out);
    },
  };
}

const scaled = (n: number, f: number) => Math.max(1, Math.round(n * f));

function resize(percent: number): Transform {
  return imageTransform(`resize-${percent}`, `resized to ${percent} % of width and height`, (px) =>
    fromPixels(px).resize(scaled(px.width, percent / 100), scaled(px.height, percent / 100), { fit: 'fill' }));
}

function crop(percent: number): Transform {
  return imageTransform(`crop-${percent}`, `${percent} % of width and height cut away, the window placed at random`, (px, random) => {
    const width = scaled(px.width, 1 - percent / 100);
    const height = scaled(px.height, 1 - percent / 100);
    return fromPixels(px).extract({ left: below(random, px.width - width + 1), top: below(random, px.height - height + 1), width, height });
  });
}

const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };

/** A caption bar (a dark band with white text) across the picture, at a random height. */
function caption(width: number, height: number, random: Random): Buffer {
  const bar = Math.max(8, Math.round(height / 8));
  const y = below(random, height - bar + 1);
  const size = Math.max(6, Math.round(bar * 0.6));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect x="0" y="${y}" width="${width}" height="${bar}" fill="#000" fill-opacity="0.6"/>` +
      `<text x="${Math.round(width / 20)}" y="${y + Math.round(bar * 0.75)}" font-family="sans-serif" font-size="${size}" fill="#fff">© provenant bench · sample caption</text></svg>`,
  );
}

export const IMAGE_TRANSFORMS: readonly Transform[] = [
  resize(50),
  resize(25),
  imageTransform('jpeg-q40', 'JPEG at quality 40 (alpha over white)', (px) => fromPixels(px).flatten({ background: WHITE }), async (p, out) => {
    const path = `${out}.jpg`;
    await p.jpeg({ quality: 40 }).toFile(path);
    return path;
  }),
  imageTransform('brightness+20', 'every colour value x 1.2, clipped at 255 (alpha kept)', (px) =>
    fromPixels(px).linear(px.channels === 4 ? [1.2, 1.2, 1.2, 1] : Array(px.channels).fill(1.2), Array(px.channels).fill(0))),
  crop(5),
  crop(10),
  crop(20),
  imageTransform('rotate-5', 'rotated 5° clockwise, the canvas grown, corners white', (px) => fromPixels(px).rotate(5, { background: WHITE })),
  imageTransform('rotate-90', 'rotated 90° clockwise', (px) => fromPixels(px).rotate(90)),
  imageTransform('mirror', 'mirrored left to right', (px) => fromPixels(px).flop()),
  imageTransform('text-overlay', 'a caption bar with text, 1/8 of the height, at a random height', (px, random) =>
    fromPixels(px).composite([{ input: caption(px.width, px.height, random), top: 0, left: 0 }])),
  imageTransform('border', 'a black border of 5 % of width and height on every side', (px) => {
    const x = scaled(px.width, 0.05);
    const y = scaled(px.height, 0.05);
    return fromPixels(px).extend({ left: x, right: x, top: y, bottom: y, background: { r: 0, g: 0, b: 0, alpha: 1 } });
  }),
];

/**
 * A window of `keep` of the area (the picture's aspect kept) anchored at a corner the seed
 * picks: off centre, as a crop for a post or a thumbnail usually is.
 */
function cornerWindow(px: Pixels, keep: number, random: Random): { left: number; top: number; width: number; height: number } {
  const width = scaled(px.width, Math.sqrt(keep));
  const height = scaled(px.height, Math.sqrt(keep));
  const corner = below(random, 4);
  return { left: corner & 1 ? px.width - width : 0, top: corner & 2 ? px.height - height : 0, width, height };
}

function areaCrop(removed: number): Transform {
  return imageTransform(`crop-area-${removed}`, `${removed} % of the area cut away (aspect kept), the window at a corner`, (px, random) =>
    fromPixels(px).extract(cornerWindow(px, 1 - removed / 100, random)));
}

/** An SVG text element, the text escaped. */
function svgText(x: number, y: number, size: number, fill: string, text: string, weight = 'normal'): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<text x="${x}" y="${y}" font-family="sans-serif" font-size="${size}" font-weight="${weight}" fill="${fill}">${escaped}</text>`;
}

const FRAME_COLOURS = ['#ffffff', '#000000', '#f2efe6', '#1d2b3a', '#c8102e'];

/**
 * The picture as a phone shows it in a feed, captured as a screenshot: a 9:19.5 canvas
 * at most 1080 pixels wide, a status bar, an app bar with a title, the picture at the
 * screen's width less margins, a caption and a row of buttons below.
 */
async function phoneScreenshot(px: Pixels, random: Random): Promise<Sharp> {
  const width = Math.max(360, Math.min(1080, px.width));
  const height = Math.round((width * 19.5) / 9);
  const u = width / 360; // one "dp"
  const status = Math.round(24 * u);
  const bar = Math.round(48 * u);
  const margin = Math.round((4 + below(random, 12)) * u);
  const pw = width - 2 * margin;
  const ph = Math.max(1, Math.min(Math.round((pw * px.height) / px.width), height - status - bar - Math.round(120 * u)));
  const picture = await fromPixels(px).resize(pw, ph, { fit: 'fill' }).png().toBuffer();
  const top = status + bar + Math.round(8 * u);
  const below_ = top + ph + Math.round(22 * u);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect width="${width}" height="${height}" fill="#ffffff"/>` +
    `<rect width="${width}" height="${status}" fill="#202124"/>` +
    svgText(Math.round(12 * u), Math.round(17 * u), Math.round(13 * u), '#ffffff', `${9 + below(random, 3)}:${String(below(random, 60)).padStart(2, '0')}`) +
    `<rect x="${width - Math.round(60 * u)}" y="${Math.round(8 * u)}" width="${Math.round(22 * u)}" height="${Math.round(10 * u)}" rx="${Math.round(2 * u)}" fill="#ffffff"/>` +
    `<circle cx="${width - Math.round(80 * u)}" cy="${Math.round(13 * u)}" r="${Math.round(5 * u)}" fill="#ffffff"/>` +
    `<rect y="${status}" width="${width}" height="${bar}" fill="#f1f3f4"/>` +
    svgText(Math.round(16 * u), status + Math.round(31 * u), Math.round(18 * u), '#202124', 'provenant.bench', 'bold') +
    svgText(margin, below_, Math.round(14 * u), '#202124', 'Seen today: what a view from up here.') +
    svgText(margin, below_ + Math.round(20 * u), Math.round(12 * u), '#5f6368', `${1 + below(random, 900)} likes · ${1 + below(random, 90)} comments`) +
    `<rect x="${margin}" y="${below_ + Math.round(34 * u)}" width="${Math.round(24 * u)}" height="${Math.round(24 * u)}" rx="${Math.round(6 * u)}" fill="#5f6368"/>` +
    `<rect x="${margin + Math.round(40 * u)}" y="${below_ + Math.round(34 * u)}" width="${Math.round(24 * u)}" height="${Math.round(24 * u)}" rx="${Math.round(6 * u)}" fill="#5f6368"/></svg>`;
  return sharp(Buffer.from(svg)).composite([{ input: picture, left: margin, top }]);
}

/**
 * The largest centred window of the picture's aspect that holds no corner of the canvas
 * a rotation by `degrees` added: an axis-aligned (s w) x (s h) rectangle inside the
 * rotated w x h one, s = min(w / (w cos + h sin), h / (w sin + h cos)).
 */
export function rotatedInnerScale(width: number, height: number, degrees: number): number {
  const t = (Math.abs(degrees) * Math.PI) / 180;
  const c = Math.cos(t);
  const sn = Math.sin(t);
  return Math.min(width / (width * c + height * sn), height / (width * sn + height * c));
}

async function rotateCropped(px: Pixels, degrees: number): Promise<Sharp> {
  const { data, info } = await fromPixels(px).rotate(degrees, { background: WHITE }).raw().toBuffer({ resolveWithObject: true });
  const s = rotatedInnerScale(px.width, px.height, degrees);
  // one pixel in from the exact bound: resampling blends the background into the edge
  const width = Math.max(1, Math.floor(px.width * s) - 2);
  const height = Math.max(1, Math.floor(px.height * s) - 2);
  const left = Math.floor((info.width - width) / 2);
  const top = Math.floor((info.height - height) / 2);
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } }).extract({ left, top, width, height });
}

/**
 * The 3x3 homography (row-major) taking the unit square's corners (0,0) (1,0) (1,1) (0,1)
 * to the four points given (Heckbert's square-to-quad).
 */
export function squareToQuad(q: readonly [number, number][]): number[] {
  const [[x0, y0], [x1, y1], [x2, y2], [x3, y3]] = q;
  const dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2;
  const sx = x0 - x1 + x2 - x3, sy = y0 - y1 + y2 - y3;
  const det = dx1 * dy2 - dx2 * dy1;
  const g = (sx * dy2 - dx2 * sy) / det;
  const h = (dx1 * sy - sx * dy1) / det;
  return [x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h, 1];
}

/** The inverse of a 3x3 matrix (row-major). */
function invert3(m: readonly number[]): number[] {
  const [a, b, c, d, e, f, g, h, i] = m;
  const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const det = a * A + b * B + c * C;
  return [A / det, -(b * i - c * h) / det, (b * f - c * e) / det, B / det, (a * i - c * g) / det, -(a * f - c * d) / det, C / det, -(a * h - b * g) / det, (a * e - b * d) / det];
}

/**
 * The picture seen at an angle: its corners moved to a trapezoid (one edge shortened by
 * `shrink` of its length on each side, the seed picking which edge), resampled
 * bilinearly onto a white canvas of the same size.
 */
function perspective(px: Pixels, shrink: number, random: Random): Sharp {
  const w = px.width, h = px.height, ch = px.channels;
  const side = below(random, 4);
  const dx = shrink * w, dy = shrink * h;
  const quad: [number, number][] =
    side === 0 ? [[dx, 0], [w - dx, 0], [w, h], [0, h]]
      : side === 1 ? [[0, 0], [w, 0], [w - dx, h], [dx, h]]
        : side === 2 ? [[0, dy], [w, 0], [w, h], [0, h - dy]]
          : [[0, 0], [w, dy], [w, h - dy], [0, h]];
  const toSquare = invert3(squareToQuad(quad));
  const out = Buffer.alloc(w * h * ch, 255);
  const src = px.data;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const X = x + 0.5, Y = y + 0.5;
      const z = toSquare[6] * X + toSquare[7] * Y + toSquare[8];
      const su = ((toSquare[0] * X + toSquare[1] * Y + toSquare[2]) / z) * w - 0.5;
      const sv = ((toSquare[3] * X + toSquare[4] * Y + toSquare[5]) / z) * h - 0.5;
      // a pixel whose centre maps outside the picture stays white; the edge pixels sample their edge
      if (su < -0.5 || sv < -0.5 || su > w - 0.5 || sv > h - 0.5) continue;
      const u = Math.min(w - 1, Math.max(0, su));
      const v = Math.min(h - 1, Math.max(0, sv));
      const u0 = Math.floor(u), v0 = Math.floor(v);
      const u1 = Math.min(w - 1, u0 + 1), v1 = Math.min(h - 1, v0 + 1);
      const fu = u - u0, fv = v - v0;
      for (let c = 0; c < ch; c++) {
        const p00 = src[(v0 * w + u0) * ch + c], p10 = src[(v0 * w + u1) * ch + c];
        const p01 = src[(v1 * w + u0) * ch + c], p11 = src[(v1 * w + u1) * ch + c];
        out[(y * w + x) * ch + c] = Math.round((p00 * (1 - fu) + p10 * fu) * (1 - fv) + (p01 * (1 - fu) + p11 * fu) * fv);
      }
    }
  }
  return sharp(out, { raw: { width: w, height: h, channels: ch } });
}

/** A caption band (dark, white text) added below the picture, a seventh of its height. */
async function withCaptionBand(px: Pixels): Promise<Pixels> {
  const band = Math.max(12, Math.round(px.height / 7));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${px.width}" height="${band}"><rect width="${px.width}" height="${band}" fill="#111111"/>` +
    svgText(Math.round(px.width / 30), Math.round(band * 0.65), Math.max(8, Math.round(band * 0.42)), '#ffffff', '“A caption, as a repost adds one” · @provenant') + '</svg>';
  const { data, info } = await fromPixels(px).flatten({ background: WHITE }).extend({ bottom: band, background: WHITE })
    .composite([{ input: Buffer.from(svg), left: 0, top: px.height }]).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels as Pixels['channels'] };
}

async function jpeg(pipeline: Sharp, out: string, quality: number): Promise<string> {
  const path = `${out}.jpg`;
  await pipeline.flatten({ background: WHITE }).jpeg({ quality }).toFile(path);
  return path;
}

/** A transform whose edit needs awaiting (a composite made first, a rotation's size read back). */
function asyncImageTransform(id: string, description: string, edit: (px: Pixels, random: Random) => Promise<Sharp>, encode = png): Transform {
  return {
    id,
    kind: 'image',
    description,
    async make(_original, bytes, out, random) {
      return encode(await edit(await displayed(bytes), random), out);
    },
  };
}

/** v2's added edits (issue 32), after v1's. */
const IMAGE_TRANSFORMS_V2_ADDED: readonly Transform[] = [
  areaCrop(30),
  areaCrop(50),
  imageTransform('frame-wide', 'in a wide frame: 40 % of the width added on each side, 10 % of the height above and below, a plain colour', (px, random) => {
    const c = FRAME_COLOURS[below(random, FRAME_COLOURS.length)];
    const x = scaled(px.width, 0.4);
    const y = scaled(px.height, 0.1);
    return fromPixels(px).flatten({ background: WHITE }).extend({ left: x, right: x, top: y, bottom: y, background: c });
  }),
  asyncImageTransform('screenshot', 'inside a phone screenshot: status bar, app bar, the picture at the screen width, caption and buttons', phoneScreenshot),
  asyncImageTransform('rotate-15-crop', 'rotated 15° and cropped to the largest window without the corners the rotation adds', (px) => rotateCropped(px, 15)),
  imageTransform('perspective', 'seen at an angle: one edge shortened by 12 % of its length at each end', (px, random) => perspective(px, 0.12, random)),
  imageTransform('colour-filter', 'a warm colour filter: channels mixed, saturation lowered, contrast raised', (px) =>
    fromPixels(px).flatten({ background: WHITE }).recomb([[1.08, 0.12, 0], [0.06, 1.0, 0], [0, 0.14, 0.78]]).modulate({ saturation: 0.75 }).linear(1.15, -18)),
  asyncImageTransform('caption-crop', 'a caption band added below, then 15 % of the area cut away at a corner', async (px, random) => {
    const captioned = await withCaptionBand(px);
    return fromPixels(captioned).extract(cornerWindow(captioned, 0.85, random));
  }),
  asyncImageTransform('mirror-crop-jpeg', 'mirrored, 20 % of the area cut away at a corner, JPEG at quality 20', async (px, random) =>
    fromPixels(px).flop().extract(cornerWindow(px, 0.8, random)), (p, out) => jpeg(p, out, 20)),
];

// ---- audio and video ----------------------------------------------------------------

/** A generous deadline for one ffmpeg run making a variant of up to MAX_MEDIA_SECONDS. */
const ENCODE_DEADLINE_MS = 10 * 60_000;

function ffmpegTransform(id: string, kind: MediaKind, description: string, ext: string, args: (o: Original) => Promise<string[]> | string[]): Transform {
  return {
    id,
    kind,
    description,
    async make(original, _bytes, out) {
      const path = `${out}.${ext}`;
      const map = kind === 'audio' ? ['-map', '0:a:0', '-vn'] : ['-map', '0:v:0', '-an'];
      await runFfmpeg({
        input: original.path,
        demuxer: DEMUXER[original.format]!,
        outputArgs: [...map, '-sn', '-dn', '-map_metadata', '-1', ...(await args(original)), '-y', `file:${path}`],
        deadline: Date.now() + ENCODE_DEADLINE_MS,
        maxOutputBytes: 1 << 20,
      });
      return path;
    },
  };
}

const keep = (seconds = MAX_MEDIA_SECONDS) => ['-t', String(seconds)];
const FLAC = ['-c:a', 'flac'];

export const AUDIO_TRANSFORMS: readonly Transform[] = [
  ffmpegTransform('mp3-64k', 'audio', 'MP3 at 64 kbit/s', 'mp3', () => [...keep(), '-c:a', 'libmp3lame', '-b:a', '64k']),
  ffmpegTransform('trim-10s', 'audio', 'the first 10 s cut away', 'flac', () => ['-ss', '10', ...keep(), ...FLAC]),
  ffmpegTransform('gain-6db', 'audio', 'volume lowered by 6 dB', 'flac', () => [...keep(), '-af', 'volume=-6dB', ...FLAC]),
  ffmpegTransform('speed-2pct', 'audio', 'played 2 % faster (tempo, pitch kept)', 'flac', () => [...keep(), '-af', 'atempo=1.02', ...FLAC]),
];

const X264 = (crf: number) => ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(crf), '-pix_fmt', 'yuv420p'];
const VP8 = ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '1M', '-crf', '10', '-pix_fmt', 'yuv420p'];

export const VIDEO_TRANSFORMS: readonly Transform[] = [
  ffmpegTransform('reencode', 'video', 'H.264 again at CRF 28', 'mp4', () => [...keep(), ...X264(28)]),
  ffmpegTransform('half-size', 'video', 'half the width and height (H.264, CRF 23)', 'mp4', () => [...keep(), '-vf', 'scale=trunc(iw/4)*2:trunc(ih/4)*2', ...X264(23)]),
  ffmpegTransform('trim-5s', 'video', 'the first 5 s cut away (H.264, CRF 18)', 'mp4', () => ['-ss', '5', ...keep(), ...X264(18)]),
  {
    ...ffmpegTransform('codec', 'video', 'another codec: VP8 (WebM) for H.264 originals, else H.264', 'webm', () => []),
    async make(original, bytes, out, random) {
      const { videoCodec } = await probeMedia(original.path, original.format);
      const other = videoCodec === 'h264'
        ? ffmpegTransform('codec', 'video', '', 'webm', () => [...keep(), ...VP8])
        : ffmpegTransform('codec', 'video', '', 'mp4', () => [...keep(), ...X264(23)]);
      return other.make(original, bytes, out, random);
    },
  },
];

/** The edits of each suite version, per kind. */
export const SUITE_TRANSFORMS: Record<SuiteVersion, Record<MediaKind, readonly Transform[]>> = {
  1: { image: IMAGE_TRANSFORMS, audio: AUDIO_TRANSFORMS, video: VIDEO_TRANSFORMS },
  2: { image: [...IMAGE_TRANSFORMS, ...IMAGE_TRANSFORMS_V2_ADDED], audio: AUDIO_TRANSFORMS, video: VIDEO_TRANSFORMS },
};

/** The latest suite, and its edits (what `provenant bench` runs unless told --suite). */
export const SUITE = { name: SUITE_NAME, version: LATEST_SUITE } as const;
export const TRANSFORMS: Record<MediaKind, readonly Transform[]> = SUITE_TRANSFORMS[LATEST_SUITE];

