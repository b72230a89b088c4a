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
import { AUDIO_TRANSFORMS, IMAGE_TRANSFORMS, SUITE, SUITE_TRANSFORMS, VIDEO_TRANSFORMS, rotatedInnerScale, squareToQuad, type Original, type Transform } from '../../src/cli/bench/suite.js';

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
  assert.is(SUITE.version, 2);
  // v1 stays reproducible: its edits, unchanged, are v2's first ones
  assert.equal(SUITE_TRANSFORMS[1].image, IMAGE_TRANSFORMS);
  assert.equal(SUITE_TRANSFORMS[2].image.slice(0, IMAGE_TRANSFORMS.length), [...IMAGE_TRANSFORMS]);
  assert.equal(SUITE_TRANSFORMS[2].image.slice(IMAGE_TRANSFORMS.length).map((t) => t.id), [
    'crop-area-30', 'crop-area-50', 'frame-wide', 'screenshot', 'rotate-15-crop', 'perspective', 'colour-filter', 'caption-crop', 'mirror-crop-jpeg',
  ]);
  assert.equal(SUITE_TRANSFORMS[2].audio, AUDIO_TRANSFORMS);
  assert.equal(SUITE_TRANSFORMS[2].video, VIDEO_TRANSFORMS);
  assert.equal(IMAGE_TRANSFORMS.map((t) => t.id), ['resize-50', 'resize-25', 'jpeg-q40', 'brightness+20', 'crop-5', 'crop-10', 'crop-20', 'rotate-5', 'rotate-90', 'mirror', 'text-overlay', 'border']);
  assert.equal(AUDIO_TRANSFORMS.map((t) => t.id), ['mp3-64k', 'trim-10s', 'gain-6db', 'speed-2pct']);
  assert.equal(VIDEO_TRANSFORMS.map((t) => t.id), ['reencode', 'half-size', 'trim-5s', 'codec']);
});

const V2 = SUITE_TRANSFORMS[2].image;

test('v2 image variants (issue 32): area crops at a corner, frame, screenshot, rotation without corners, perspective, filter, combinations', async () => {
  const photo = join(MEDIA, 'fruits.jpg'); // 512 x 480
  const src = await rgb(photo);
  const dims = async (path: string) => { const m = await sharp(path).metadata(); return [m.width!, m.height!]; };
  for (const [id, keep] of [['crop-area-30', 0.7], ['crop-area-50', 0.5]] as const) {
    const out = await make(V2, id, photo);
    const [w, h] = await dims(out);
    close(w * h / (512 * 480), keep, 0.01, `${id} area kept`);
    // the window is at a corner: its pixels are the original's at one of the four offsets
    const got = await rgb(out);
    const offsets = [[0, 0], [512 - w, 0], [0, 480 - h], [512 - w, 480 - h]];
    const at = offsets.find(([x, y]) => [0, w - 1].every((cx) => [0, h - 1].every((cy) => [0, 1, 2].every((c) => got.data[(cy * w + cx) * 3 + c] === src.data[((cy + y) * 512 + cx + x) * 3 + c]))));
    assert.ok(at !== undefined, `${id}: a corner window`);
  }
  const frame = await make(V2, 'frame-wide', photo);
  assert.equal(await dims(frame), [512 + 2 * 205, 480 + 2 * 48]);
  const shot = await make(V2, 'screenshot', photo);
  const [sw, sh] = await dims(shot);
  assert.is(sw, 512);
  close(sh / sw, 19.5 / 9, 0.01, 'screenshot aspect');
  const rot = await make(V2, 'rotate-15-crop', photo);
  const [rw, rh] = await dims(rot);
  const s = rotatedInnerScale(512, 480, 15);
  close(rw, Math.floor(512 * s) - 2, 1, 'rotated window width');
  close(rh, Math.floor(480 * s) - 2, 1, 'rotated window height');
  // no white corner is left: the window's corners are picture, not the rotation's background
  const r = await rgb(rot);
  for (const [x, y] of [[0, 0], [rw - 1, 0], [0, rh - 1], [rw - 1, rh - 1]]) {
    const i = (y * rw + x) * 3;
    assert.ok(r.data[i] + r.data[i + 1] + r.data[i + 2] < 3 * 250, `corner ${x},${y} is not background`);
  }
  const persp = await make(V2, 'perspective', photo);
  assert.equal(await dims(persp), [512, 480]);
  const p = await rgb(persp);
  const whiteCorners = [[0, 0], [511, 0], [0, 479], [511, 479]].filter(([x, y]) => p.data.subarray((y * 512 + x) * 3, (y * 512 + x) * 3 + 3).every((v) => v === 255));
  assert.is(whiteCorners.length, 2, 'the shortened edge leaves two corners of white');
  const filtered = await rgb(await make(V2, 'colour-filter', photo));
  assert.equal([filtered.width, filtered.height], [512, 480]);
  assert.ok(filtered.data.some((v, i) => v !== src.data[i]));
  const cap = await make(V2, 'caption-crop', photo);
  const [cw, ch] = await dims(cap);
  close(cw * ch / (512 * (480 + Math.round(480 / 7))), 0.85, 0.01, 'caption-crop area kept');
  const mirrored = await make(V2, 'mirror-crop-jpeg', photo);
  assert.is(formatOf(mirrored), 'jpeg');
  const [mw, mh] = await dims(mirrored);
  close(mw * mh / (512 * 480), 0.8, 0.01, 'mirror-crop area kept');
  // deterministic: the same seed gives the same bytes
  assert.ok(readFileSync(await make(V2, 'screenshot', photo, 7)).equals(readFileSync(await make(V2, 'screenshot', photo, 7))));
});

test('the geometry of v2: the inscribed rotation window and the square-to-quad homography', () => {
  assert.ok(Math.abs(rotatedInnerScale(100, 100, 0) - 1) < 1e-12);
  // a square rotated 45° holds an axis-aligned square of side 1 / sqrt(2)
  assert.ok(Math.abs(rotatedInnerScale(100, 100, 45) - Math.SQRT1_2) < 1e-12);
  const quad: [number, number][] = [[10, 5], [90, 0], [100, 80], [0, 100]];
  const m = squareToQuad(quad);
  for (const [[u, v], [x, y]] of [[[0, 0], quad[0]], [[1, 0], quad[1]], [[1, 1], quad[2]], [[0, 1], quad[3]]] as const) {
    const z = m[6] * u + m[7] * v + m[8];
    assert.ok(Math.abs((m[0] * u + m[1] * v + m[2]) / z - x) < 1e-9 && Math.abs((m[3] * u + m[4] * v + m[5]) / z - y) < 1e-9, `corner ${u},${v}`);
  }
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
