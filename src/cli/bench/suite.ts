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

/** Bump `version` whenever a transform's output changes: reports of different versions do not compare. */
export const SUITE = { name: 'provenant-variants', version: 1 } as const;

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

export const TRANSFORMS: Record<MediaKind, readonly Transform[]> = {
  image: IMAGE_TRANSFORMS,
  audio: AUDIO_TRANSFORMS,
  video: VIDEO_TRANSFORMS,
};

