// The ISCC file pipeline (src/media/iscc.ts) against the references it follows: Pillow
// for the image normalisation (bit for bit on the same pixels; on whole files apart from
// what the decoders do differently), fpcalc for the audio features, ffmpeg's XML
// signature output for the video frame signatures, and the library's conformance-tested
// codes for the rest.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { isccOfFile, parseMp7Signature } from '../../src/media/iscc.js';
import { decodeImagePixels } from '../../src/media/image.js';
import { detectType } from '../../src/lib/detect.js';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import {
  audioCode, dataCode, imageCode, instanceCode, isccCode, isccDistance, isccImagePixels, textClean, textCode, videoCode,
  IsccError, type IsccPixelChannels,
} from '../../src/lib/iscc.js';
import { FingerprintError } from '../../src/media/errors.js';
import { fpcalcSigned, pillowFiles, pillowPixels, runWithReference } from '../helpers/iscc-reference.js';
import { randomBytes, rng } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const IMAGES = spawnSync('find', [FIXTURES, '-type', 'f', '(', '-name', '*.jpg', '-o', '-name', '*.png', '-o', '-name', '*.gif', '-o', '-name', '*.webp', ')'], { encoding: 'utf8' })
  .stdout.trim().split('\n').sort();
/** Files whose decoders differ on purpose: Pillow converts CMYK naively, libvips through a CMYK profile. */
const DECODER_DIFFERS = new Set(['CMYK.jpg']);
const tmp = tempDir('provenant-iscc-test-');

const pillow = suite('the image pipeline against Pillow');

pillow('the same pixels give Pillow\'s 1024 grey values exactly: every fixture image', async () => {
  let checked = 0;
  for (const path of IMAGES) {
    const bytes = new Uint8Array(readFileSync(path));
    const type = detectType(bytes)!;
    const px = await decodeImagePixels(bytes, type.format, { ignoreIcc: true });
    const ours = isccImagePixels(px.data, px.width, px.height, px.channels);
    const ref = pillowPixels(px.data, px.width, px.height, px.channels);
    assert.equal(Array.from(ours.grey), ref.grey, path);
    assert.equal(ours.box, ref.box, path);
    checked++;
  }
  assert.ok(checked >= 30, `${checked} fixture images`);
});

pillow('the same pixels, exactly: random images of every kind of size, alpha, borders', () => {
  const next = rng(21);
  const sizes: Array<[number, number]> = [[1, 1], [2, 3], [7, 40], [31, 31], [32, 32], [33, 31], [32, 500], [500, 32], [64, 64], [257, 129], [1999, 41], [40, 1999]];
  for (const [w, h] of sizes) {
    for (const c of [1, 3, 4] as IsccPixelChannels[]) {
      const px = randomBytes(next, w * h * c);
      // smooth areas and a uniform border of the top-left colour on some
      if (next() < 0.5) for (let i = 0; i < px.length; i++) px[i] = (px[i] >> 5) + (((i / c) % w) | 0) % 200;
      if (w > 8 && h > 8 && next() < 0.7) {
        const b = 1 + ((next() * 3) | 0);
        for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
          if (x < b || y < b || x >= w - b - 1 || y >= h - b) for (let k = 0; k < c; k++) px[(y * w + x) * c + k] = k === 3 ? 255 : 90 + k;
        }
      }
      if (c === 4 && next() < 0.5) for (let i = 3; i < px.length; i += 4) px[i] = next() < 0.3 ? 0 : px[i];
      const ours = isccImagePixels(px, w, h, c);
      const ref = pillowPixels(px, w, h, c);
      assert.equal(Array.from(ours.grey), ref.grey, `${w}x${h}x${c}`);
      assert.equal(ours.box, ref.box, `${w}x${h}x${c} box`);
    }
  }
});

pillow('whole files: the Image-Code equals the one of Pillow\'s pixels, except where the decoders differ', async () => {
  // made here: transparency (RGBA, palette with tRNS, grey with alpha), an EXIF-rotated JPEG, a bordered PNG
  const made: string[] = [];
  const { data, info } = await sharp(join(FIXTURES, 'media/fruits.jpg')).resize(300).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = 3; i < data.length; i += 4) data[i] = (i >> 2) % info.width < 100 ? 0 : (i >> 2) % 255;
  const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
  for (const [name, make] of [
    ['alpha.png', () => sharp(data, raw).png().toBuffer()],
    ['palette-trns.png', () => sharp(data, raw).png({ palette: true }).toBuffer()],
    ['grey-alpha.png', () => sharp(data, raw).toColourspace('b-w').png().toBuffer()],
    ['rotated.jpg', () => sharp(join(FIXTURES, 'media/fruits.jpg')).jpeg().withMetadata({ orientation: 6 }).toBuffer()],
    ['border.png', () => sharp(join(FIXTURES, 'media/fruits.jpg')).extend({ top: 20, left: 7, right: 30, bottom: 3, background: '#123456' }).png().toBuffer()],
  ] as const) {
    const path = join(tmp, name);
    writeFileSync(path, await make());
    made.push(path);
  }
  const paths = [...IMAGES, ...made];
  const refs = pillowFiles(paths);
  let exact = 0;
  for (const [i, path] of paths.entries()) {
    assert.not.ok(refs[i].error, `${path}: ${refs[i].error}`);
    const ours = await isccOfFile(path, { bits: 256 });
    const theirs = imageCode(refs[i].grey, 256).iscc;
    if (DECODER_DIFFERS.has(path.split('/').pop()!)) {
      assert.ok(isccDistance(ours.content!.code, theirs) <= 16, `${path}: ${isccDistance(ours.content!.code, theirs)} bits apart`);
      continue;
    }
    assert.is(ours.content!.code, theirs, path);
    exact++;
  }
  assert.is(exact, paths.length - DECODER_DIFFERS.size);
});

runWithReference('pillow', pillow);

const audio = suite('the audio pipeline against fpcalc');

audio('the Audio-Code of each fixture equals the one of fpcalc -raw -signed -length 0', async () => {
  for (const name of ['drascula-track1-20s.opus', 'drascula-track2-18s.ogg', 'frontiers-25s.mp3', 'machine-wars-6s.wav', 'time-to-strike-8s.flac']) {
    const path = join(FIXTURES, 'audio', name);
    const ref = fpcalcSigned(path);
    const ours = await isccOfFile(path, { bits: 256 });
    assert.is(ours.content!.kind, 'audio');
    assert.is(ours.content!.words, ref.length, name);
    assert.is(ours.content!.code, audioCode(ref, 256).iscc, name);
  }
});

runWithReference('fpcalc', audio);

const rest = suite('video, text, data and instance, errors');

/** Frame signatures from ffmpeg's XML output, parsed independently of the binary reader. */
function xmlFrames(path: string, demuxer: string): number[][] {
  const out = join(tmp, 'sig.xml');
  const res = spawnSync(ffmpegPath(), ['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', demuxer, '-i', path, '-map', '0:v:0', '-vf', `fps=fps=5,signature=format=xml:filename=${out}`, '-f', 'null', '-']);
  assert.is(res.status, 0, String(res.stderr));
  return [...readFileSync(out, 'utf8').matchAll(/<FrameSignature>([^<]*)<\/FrameSignature>/g)].map((m) => m[1].trim().split(/\s+/).map(Number));
}

rest('video: frame signatures as ffmpeg\'s XML gives them; the Video-Code of those', async () => {
  for (const [name, demuxer] of [['cockatoo.mp4', 'mov'], ['vtest.avi', 'avi'], ['cockatoo-vp8.webm', 'matroska']]) {
    const path = join(FIXTURES, 'media', name);
    const frames = xmlFrames(path, demuxer);
    assert.ok(frames.length > 5, name);
    const sig = join(tmp, 'sig.bin');
    spawnSync(ffmpegPath(), ['-nostdin', '-loglevel', 'error', '-f', demuxer, '-i', path, '-map', '0:v:0', '-vf', `fps=fps=5,signature=format=binary:filename=${sig}`, '-f', 'null', '-']);
    const parsed = parseMp7Signature(new Uint8Array(readFileSync(sig)));
    assert.is(parsed.count, frames.length);
    assert.equal(Array.from(parsed.values), frames.flat(), name);
    const ours = await isccOfFile(path, { bits: 256 });
    assert.is(ours.content!.code, videoCode(frames, 256).iscc, name);
    assert.is(ours.content!.frames, frames.length);
  }
});

rest('video: a truncated or lying signature is refused with a clear error', () => {
  const sig = join(tmp, 'sig.bin');
  const bytes = new Uint8Array(readFileSync(sig));
  assert.throws(() => parseMp7Signature(bytes.subarray(0, bytes.length - 10)), /truncated/);
  assert.throws(() => parseMp7Signature(new Uint8Array(3)), /truncated/);
  const lying = bytes.slice();
  lying[16] = 0x7f; // the frame count's top bits
  assert.throws(() => parseMp7Signature(lying), /declares more|truncated/);
});

rest('text: a UTF-8 file gets the Text-Code of its cleaned text; other bytes only the ISCC-SUM', async () => {
  const text = 'Der Kaffee ist  fertig.\r\n\r\n\r\nÉté — ﬁn! 雨が降る\n';
  const path = join(tmp, 'note.txt');
  writeFileSync(path, text);
  const r = await isccOfFile(path);
  const want = textCode(textClean(text));
  assert.equal(r.content, { kind: 'text', code: want.iscc, characters: want.characters });
  assert.is(r.format, 'text');
  const bin = join(tmp, 'blob.bin');
  writeFileSync(bin, randomBytes(rng(22), 5000));
  const b = await isccOfFile(bin);
  assert.is(b.content, null);
  assert.ok(b.iscc.startsWith('ISCC:KU'), b.iscc);
  assert.ok((await isccOfFile(bin, { wide: true })).iscc.startsWith('ISCC:K4'));
  const empty = join(tmp, 'empty');
  writeFileSync(empty, '');
  assert.is((await isccOfFile(empty)).content, null);
});

rest('data and instance: the file read in pieces gives the codes of its bytes; the ISCC-CODE of the units', async () => {
  const path = join(FIXTURES, 'media', 'vtest.avi');
  const bytes = new Uint8Array(readFileSync(path));
  const r = await isccOfFile(path);
  assert.is(r.data, dataCode(bytes).iscc);
  assert.equal({ iscc: r.instance, datahash: r.datahash, filesize: r.filesize }, instanceCode(bytes));
  assert.is(r.iscc, isccCode(r.units).iscc);
  const fromBytes = await isccOfFile(bytes);
  assert.equal(fromBytes, r);
});

rest('errors: a missing path, a corrupt image, bad options', async () => {
  const missing = await isccOfFile(join(tmp, 'nope.jpg')).catch((e: unknown) => e);
  assert.ok(missing instanceof FingerprintError && missing.code === 'not_found');
  const jpeg = new Uint8Array(readFileSync(join(FIXTURES, 'media', 'fruits.jpg'))).subarray(0, 2000);
  const corrupt = await isccOfFile(jpeg).catch((e: unknown) => e);
  assert.ok(corrupt instanceof FingerprintError && corrupt.code === 'decode_failed', String(corrupt));
  const bits = await isccOfFile(jpeg, { bits: 96 }).catch((e: unknown) => e);
  assert.ok(bits instanceof IsccError);
});

rest.run();
