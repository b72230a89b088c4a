// The built-in sample, for a run without DIR (so that `provenant bench` works on a fresh
// install): textured pictures of shapes, music-like tracks and short videos, drawn from
// the seed. Synthetic: fine for trying the command; measure on real files for decisions. Made on the
// fly into the run's private work directory; small enough to run in about a minute.
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { writeWav } from './wav-out.js';
import { below, streamFor, type Random } from './random.js';

export const SAMPLE = { images: 12, audio: 4, video: 3 } as const;

const colour = (r: Random) => `rgb(${below(r, 256)},${below(r, 256)},${below(r, 256)})`;

/** A picture of a few random shapes on a random gradient, as SVG. */
function scene(random: Random, width: number, height: number): string {
  const shapes: string[] = [];
  const n = 6 + below(random, 6);
  for (let i = 0; i < n; i++) {
    const x = below(random, width);
    const y = below(random, height);
    const s = 20 + below(random, Math.round(width / 3));
    const fill = colour(random);
    const pick = below(random, 3);
    if (pick === 0) shapes.push(`<circle cx="${x}" cy="${y}" r="${s / 2}" fill="${fill}"/>`);
    else if (pick === 1) shapes.push(`<rect x="${x - s / 2}" y="${y - s / 3}" width="${s}" height="${(2 * s) / 3}" fill="${fill}" transform="rotate(${below(random, 90)} ${x} ${y})"/>`);
    else shapes.push(`<polygon points="${x},${y - s / 2} ${x + s / 2},${y + s / 2} ${x - s / 2},${y + s / 2}" fill="${fill}"/>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${colour(random)}"/><stop offset="1" stop-color="${colour(random)}"/></linearGradient>` +
    // a texture, as photos have: flat shapes alone give PDQ a low quality score
    `<filter id="t"><feTurbulence type="fractalNoise" baseFrequency="${(0.01 + 0.03 * random()).toFixed(3)}" numOctaves="4" seed="${below(random, 10000)}"/><feColorMatrix type="saturate" values="0"/></filter></defs>` +
    `<rect width="${width}" height="${height}" fill="url(#g)"/><rect width="${width}" height="${height}" filter="url(#t)" opacity="0.45"/>${shapes.join('')}</svg>`;
}

/** A melody of random notes of a pentatonic scale with two harmonics, 22050 Hz mono. */
function melody(random: Random, seconds: number): Float32Array {
  const rate = 22050;
  const out = new Float32Array(seconds * rate);
  const scale = [0, 2, 4, 7, 9, 12, 14, 16];
  const base = 180 + below(random, 140);
  let at = 0;
  while (at < out.length) {
    const length = Math.round(rate * (0.2 + 0.1 * below(random, 4)));
    const f = base * 2 ** (scale[below(random, scale.length)] / 12);
    const g = f * 2 ** (scale[below(random, scale.length)] / 12);
    for (let i = 0; i < length && at + i < out.length; i++) {
      const t = i / rate;
      const env = Math.min(1, i / 200) * Math.exp(-3 * t);
      out[at + i] = 0.3 * env * (Math.sin(2 * Math.PI * f * t) + 0.5 * Math.sin(4 * Math.PI * f * t) + 0.6 * Math.sin(2 * Math.PI * g * t));
    }
    at += length;
  }
  return out;
}

/** 10 frames a second of moving shapes over three scenes, raw RGB. */
function clip(random: Random, width: number, height: number, seconds: number): Uint8Array {
  const fps = 10;
  const frames = seconds * fps;
  const out = new Uint8Array(frames * width * height * 3);
  const scenes = Array.from({ length: 3 }, () => ({
    bg: [below(random, 256), below(random, 256), below(random, 256)],
    blobs: Array.from({ length: 5 }, () => ({
      x: below(random, width), y: below(random, height), r: 15 + below(random, 50),
      vx: below(random, 9) - 4, vy: below(random, 9) - 4, c: [below(random, 256), below(random, 256), below(random, 256)],
    })),
  }));
  for (let f = 0; f < frames; f++) {
    const s = scenes[Math.min(2, Math.floor((3 * f) / frames))];
    const base = f * width * height * 3;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let c = s.bg.map((v, k) => (v + ((k + 1) * (x + y)) / 8) & 255);
        for (const b of s.blobs) {
          const dx = x - (b.x + b.vx * f);
          const dy = y - (b.y + b.vy * f);
          if (dx * dx + dy * dy < b.r * b.r) c = b.c;
        }
        const p = base + (y * width + x) * 3;
        out[p] = c[0];
        out[p + 1] = c[1];
        out[p + 2] = c[2];
      }
    }
  }
  return out;
}

/** Makes the sample under `dir`; returns the paths written. */
export async function makeSample(dir: string, seed: number): Promise<string[]> {
  const random = streamFor(seed, 'sample');
  const paths: string[] = [];
  // the WAV an MP3 is encoded from is written beside the sample, not in it
  const scratch = await mkdtemp(join(dirname(dir), 'sample-scratch-'));
  for (let i = 0; i < SAMPLE.images; i++) {
    const svg = Buffer.from(scene(random, 640, 480));
    const path = join(dir, `sample-image-${String(i + 1).padStart(2, '0')}.${i % 2 === 0 ? 'jpg' : 'png'}`);
    const pipeline = sharp(svg);
    await (i % 2 === 0 ? pipeline.jpeg({ quality: 90 }) : pipeline.png()).toFile(path);
    paths.push(path);
  }
  for (let i = 0; i < SAMPLE.audio; i++) {
    const wav = join(i % 2 === 0 ? scratch : dir, `sample-audio-${i + 1}.wav`);
    await writeWav(wav, melody(random, 30), 22050);
    if (i % 2 === 0) {
      const mp3 = join(dir, `sample-audio-${i + 1}.mp3`);
      await runFfmpeg({ input: wav, demuxer: 'wav', outputArgs: ['-c:a', 'libmp3lame', '-b:a', '192k', '-y', `file:${mp3}`] });
      paths.push(mp3);
    } else paths.push(wav);
  }
  for (let i = 0; i < SAMPLE.video; i++) {
    const [width, height, seconds] = [320, 240, 12];
    const raw = clip(random, width, height, seconds);
    const webm = i === SAMPLE.video - 1;
    const path = join(dir, `sample-video-${i + 1}.${webm ? 'webm' : 'mp4'}`);
    const codec = webm
      ? ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '800k']
      : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20'];
    await runFfmpeg({
      input: raw,
      pipeInput: true,
      demuxer: 'rawvideo',
      inputArgs: ['-pixel_format', 'rgb24', '-video_size', `${width}x${height}`, '-framerate', '10'],
      outputArgs: [...codec, '-pix_fmt', 'yuv420p', '-y', `file:${path}`],
    });
    paths.push(path);
  }
  await rm(scratch, { recursive: true, force: true });
  return paths;
}
