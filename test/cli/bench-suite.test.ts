// The variant suite of `provenant bench` makes what it says: each variant is decoded
// again (sharp for images, the bundled ffmpeg and the library's audio decoder for sound
// and video) and its size, pixels, duration, level or codec checked against the edit.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { detectType, type MediaFormat } from '../../src/lib/detect.js';
import { decodeAudio } from '../../src/media/audio.js';
import { probeMedia } from '../../src/cli/bench/probe.js';
import { streamFor } from '../../src/cli/bench/random.js';
import { AUDIO_TRANSFORMS, IMAGE_TRANSFORMS, SUITE, VIDEO_TRANSFORMS, type Original, type Transform } from '../../src/cli/bench/suite.js';

const test = suite('cli/bench-suite');
const MEDIA = new URL('../fixtures/media/', import.meta.url).pathname;
const AUDIO = new URL('../fixtures/audio/', import.meta.url).pathname;
let dir: string;
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-bench-suite-'));
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function original(path: string): Original {
  const type = detectType(readFileSync(path))!;
  return { path, kind: type.kind, format: type.format };
}

const byId = (list: readonly Transform[], id: string) => list.find((t) => t.id === id)!;

async function make(list: readonly Transform[], id: string, path: string, seed = 1): Promise<string> {
  const o = original(path);
  return byId(list, id).make(o, new Uint8Array(readFileSync(path)), join(dir, `${id}-${seed}-${o.format}`), streamFor(seed, `${id}:x`));
}

async function rgb(path: string) {
  const { data, info } = await sharp(path).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

const formatOf = (path: string): MediaFormat => detectType(readFileSync(path))!.format;
const close = (actual: number | null, expected: number, tolerance: number, what: string) =>
  assert.ok(actual !== null && Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} +- ${tolerance}`);

test('the suite is named and versioned, with the transforms the issue lists', () => {
  assert.is(SUITE.name, 'provenant-variants');
  assert.is(SUITE.version, 1);
  assert.equal(IMAGE_TRANSFORMS.map((t) => t.id), ['resize-50', 'resize-25', 'jpeg-q40', 'brightness+20', 'crop-5', 'crop-10', 'crop-20', 'rotate-5', 'rotate-90', 'mirror', 'text-overlay', 'border']);
  assert.equal(AUDIO_TRANSFORMS.map((t) => t.id), ['mp3-64k', 'trim-10s', 'gain-6db', 'speed-2pct']);
  assert.equal(VIDEO_TRANSFORMS.map((t) => t.id), ['reencode', 'half-size', 'trim-5s', 'codec']);
});

test('image variants: sizes, crops, rotation, mirror, border, brightness, caption and JPEG', async () => {
  const photo = join(MEDIA, 'fruits.jpg'); // 512 x 480
  const src = await rgb(photo);
  assert.equal([src.width, src.height], [512, 480]);
  const size = async (id: string) => {
    const m = await sharp(await make(IMAGE_TRANSFORMS, id, photo)).metadata();
    return [m.width, m.height];
  };
  assert.equal(await size('resize-50'), [256, 240]);
  assert.equal(await size('resize-25'), [128, 120]);
  assert.equal(await size('crop-5'), [486, 456]);
  assert.equal(await size('crop-10'), [461, 432]);
  assert.equal(await size('crop-20'), [410, 384]);
  assert.equal(await size('rotate-90'), [480, 512]);
  assert.equal(await size('border'), [512 + 2 * 26, 480 + 2 * 24]);
  // 5 degrees grows the canvas to the rotated rectangle's bounding box
  const [w5, h5] = await size('rotate-5');
  const r = (5 * Math.PI) / 180;
  close(w5!, 512 * Math.cos(r) + 480 * Math.sin(r), 2, 'rotate-5 width');
  close(h5!, 480 * Math.cos(r) + 512 * Math.sin(r), 2, 'rotate-5 height');

  // a crop is a window of the original's pixels (PNG, lossless), placed by the seed
  const crop = await rgb(await make(IMAGE_TRANSFORMS, 'crop-10', photo));
  let found: [number, number] | null = null;
  for (let top = 0; top <= src.height - crop.height && found === null; top++) {
    for (let left = 0; left <= src.width - crop.width && found === null; left++) {
      let same = true;
      for (let y = 0; y < crop.height && same; y += 37) {
        for (let x = 0; x < crop.width && same; x += 29) {
          for (let c = 0; c < 3; c++) if (crop.data[(y * crop.width + x) * 3 + c] !== src.data[((y + top) * src.width + x + left) * 3 + c]) same = false;
        }
      }
      if (same) found = [left, top];
    }
  }
  assert.ok(found !== null, 'the crop is a window of the original');
  const again = await rgb(await make(IMAGE_TRANSFORMS, 'crop-10', photo));
  assert.ok(again.data.equals(crop.data), 'the same seed places the window again at the same place');
  const other = await rgb(await make(IMAGE_TRANSFORMS, 'crop-20', photo, 2));
  const first = await rgb(await make(IMAGE_TRANSFORMS, 'crop-20', photo, 1));
  assert.ok(!other.data.equals(first.data), 'another seed, another window');

  // mirror: pixel (x, y) is the original's (w - 1 - x, y)
  const mirror = await rgb(await make(IMAGE_TRANSFORMS, 'mirror', photo));
  for (const [x, y] of [[0, 0], [100, 200], [511, 479], [300, 17]]) {
    for (let c = 0; c < 3; c++) assert.is(mirror.data[(y * 512 + x) * 3 + c], src.data[(y * 512 + (511 - x)) * 3 + c]);
  }
  // rotate-90 clockwise: new (x, y) = old (y, h - 1 - x)
  const r90 = await rgb(await make(IMAGE_TRANSFORMS, 'rotate-90', photo));
  for (const [x, y] of [[0, 0], [100, 200], [479, 511]]) {
    for (let c = 0; c < 3; c++) assert.is(r90.data[(y * 480 + x) * 3 + c], src.data[((479 - x) * 512 + y) * 3 + c]);
  }
  // border: black outside, the original inside
  const border = await rgb(await make(IMAGE_TRANSFORMS, 'border', photo));
  assert.equal([...border.data.subarray(0, 3)], [0, 0, 0]);
  for (let c = 0; c < 3; c++) assert.is(border.data[((24 + 100) * 564 + 26 + 50) * 3 + c], src.data[(100 * 512 + 50) * 3 + c]);
  // brightness: every value x 1.2, clipped (libvips truncates the product: within 1)
  const bright = await rgb(await make(IMAGE_TRANSFORMS, 'brightness+20', photo));
  let off = 0;
  for (let i = 0; i < src.data.length; i++) if (Math.abs(bright.data[i] - Math.min(255, 1.2 * src.data[i])) >= 1) off++;
  assert.is(off, 0, 'values off by 1 or more');
  // caption: one band of rows changed (1/8 of the height), every other row untouched
  const caption = await rgb(await make(IMAGE_TRANSFORMS, 'text-overlay', photo));
  const changedRows: number[] = [];
  for (let y = 0; y < 480; y++) {
    const row = (b: Buffer) => b.subarray(y * 512 * 3, (y + 1) * 512 * 3);
    if (!row(caption.data).equals(row(src.data))) changedRows.push(y);
  }
  assert.is(changedRows.length, 60);
  assert.is(changedRows[59] - changedRows[0], 59, 'one contiguous band');
  // JPEG quality 40: a JPEG, same size, smaller than the original's quality
  const q40 = await make(IMAGE_TRANSFORMS, 'jpeg-q40', photo);
  assert.is(formatOf(q40), 'jpeg');
  const q40meta = await sharp(q40).metadata();
  assert.equal([q40meta.width, q40meta.height], [512, 480]);
  assert.ok(readFileSync(q40).length < readFileSync(photo).length);
  // lossless edits are PNG
  assert.is(formatOf(await make(IMAGE_TRANSFORMS, 'resize-50', photo)), 'png');
});

test('audio variants: MP3 64 kbit/s, 10 s trimmed, -6 dB, 2 % faster', async () => {
  const song = join(AUDIO, 'frontiers-25s.mp3');
  const source = await probeMedia(song, 'mp3');
  close(source.duration, 25.03, 0.05, 'original duration');
  const mp3 = await make(AUDIO_TRANSFORMS, 'mp3-64k', song);
  const m = await probeMedia(mp3, formatOf(mp3));
  assert.is(m.audioCodec, 'mp3');
  assert.is(m.audioKbps, 64);
  close(m.duration, 25.03, 0.15, 'mp3 duration');
  const trim = await make(AUDIO_TRANSFORMS, 'trim-10s', song);
  assert.is(formatOf(trim), 'flac');
  close((await probeMedia(trim, 'flac')).duration, 15.03, 0.1, 'trimmed duration');
  const fast = await make(AUDIO_TRANSFORMS, 'speed-2pct', song);
  close((await probeMedia(fast, 'flac')).duration, 25.03 / 1.02, 0.1, 'sped-up duration');
  // -6 dB: the level (RMS of the decoded samples) halves
  const quiet = await make(AUDIO_TRANSFORMS, 'gain-6db', song);
  const rms = (s: Float32Array) => Math.sqrt(s.reduce((a, v) => a + v * v, 0) / s.length);
  const ratio = rms(await decodeAudio(new Uint8Array(readFileSync(quiet)), 'flac')) / rms(await decodeAudio(new Uint8Array(readFileSync(song)), 'mp3'));
  close(ratio, 10 ** (-6 / 20), 0.01, 'level ratio');
});

test('video variants: re-encoded, half size, 5 s trimmed, another codec', async () => {
  const clip = join(MEDIA, 'cockatoo.mp4'); // 8 s H.264 320x180
  const probe = async (id: string, path = clip) => {
    const out = await make(VIDEO_TRANSFORMS, id, path);
    return { ...(await probeMedia(out, formatOf(out))), format: formatOf(out) };
  };
  const re = await probe('reencode');
  assert.equal([re.videoCodec, re.width, re.height, re.format], ['h264', 320, 180, 'mp4']);
  close(re.duration, 8, 0.1, 're-encoded duration');
  const half = await probe('half-size');
  assert.equal([half.videoCodec, half.width, half.height], ['h264', 160, 90]);
  const trim = await probe('trim-5s');
  close(trim.duration, 3, 0.15, 'trimmed duration');
  const vp8 = await probe('codec');
  assert.equal([vp8.videoCodec, vp8.format, vp8.width, vp8.height], ['vp8', 'webm', 320, 180]);
  close(vp8.duration, 8, 0.1, 'VP8 duration');
  // an MPEG-4 part 2 original becomes H.264
  const avi = await probe('codec', join(MEDIA, 'vtest.avi'));
  assert.equal([avi.videoCodec, avi.format, avi.width, avi.height], ['h264', 'mp4', 384, 288]);
  assert.is((await probeMedia(join(MEDIA, 'vtest.avi'), 'avi')).videoCodec, 'mpeg4');
});

test.run();
