// ISCC Image-Code (src/lib/iscc.ts, src/media/iscc.ts) against the reference in the same
// run: iscc-core 1.3.0's gen_image_code_v0 over the ISCC SDK's normalisation on Pillow
// (Debian's python3-pil), bench/iscc_reference.py as a subprocess timing its own loop.
//   1. the Image-Code of a decoded 12 MP image (4000 x 3000 RGB): ours from the decoded
//      pixels (copy into WebAssembly memory, trim, grey, Pillow's bicubic to 32 x 32,
//      DCT); the reference from a loaded Pillow image;
//   2. the Image-Code of the same image as a JPEG file on disk: read, decode (sharp /
//      Pillow's libjpeg), the rest as in 1.
// The image is fruits.jpg enlarged to 4000 x 3000 with a uniform border added, so the
// trim has work to do. Each figure is the best of N runs (wall and process CPU time);
// every timed call of ours checks its code, and the reference's code must equal ours.
//   3. the Data-Code of 50 MiB of random bytes from a file, and the Text-Code of 900,000
//      characters of English (the reference's Data-Code is Python over xxhash's C).
// Needs ISCC_CORE_SRC (an iscc-core checkout); without it only our rows are printed.
//   ISCC_CORE_SRC=/path/to/iscc-core node --import tsx bench/iscc.bench.ts
import { spawnSync } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { dataCode, isccImageCodeFromPixels, textCode } from '../src/lib/iscc.js';
import { decodeImagePixels } from '../src/media/image.js';
import { isccOfFile } from '../src/media/iscc.js';
import { packageRoot, wasmFlavor } from '../src/lib/wasm.js';
import { tempDir } from '../test/helpers/temp.js';

const N = 10;
const dir = tempDir('provenant-iscc-bench-');
const path = join(dir, 'photo-12mp.jpg');
await sharp(join(packageRoot, 'test/fixtures/media/fruits.jpg'))
  .resize(3900, 2900, { fit: 'fill', kernel: 'lanczos3' })
  .extend({ top: 50, bottom: 50, left: 50, right: 50, background: '#fafafa' })
  .jpeg({ quality: 90 })
  .toFile(path);
const bytes = new Uint8Array(readFileSync(path));
const px = await decodeImagePixels(bytes, 'jpeg', { ignoreIcc: true });

async function best(fn: () => unknown): Promise<{ wall: number; cpu: number }> {
  await fn();
  let wall = Infinity;
  let cpu = Infinity;
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    await fn();
    const u = process.cpuUsage(c);
    wall = Math.min(wall, performance.now() - t);
    cpu = Math.min(cpu, (u.user + u.system) / 1000);
  }
  return { wall, cpu };
}

const expected = isccImageCodeFromPixels(px.data, px.width, px.height, px.channels).iscc;
const check = (iscc: string): void => {
  if (iscc !== expected) throw new Error(`wrong code ${iscc}`);
};
const decoded = await best(() => check(isccImageCodeFromPixels(px.data, px.width, px.height, px.channels).iscc));
const fromFile = await best(async () => {
  const p = await decodeImagePixels(new Uint8Array(readFileSync(path)), 'jpeg', { ignoreIcc: true });
  check(isccImageCodeFromPixels(p.data, p.width, p.height, p.channels).iscc);
});
const whole = await best(async () => check((await isccOfFile(path)).content!.code));
const decodeAlone = await best(async () => {
  const p = await decodeImagePixels(new Uint8Array(readFileSync(path)), 'jpeg', { ignoreIcc: true });
  if (p.width !== px.width) throw new Error('wrong decode');
});

function reference(what: 'decoded' | 'file' | 'data' | 'text', file = path, n = N): { seconds: number; cpu_seconds: number; iscc: string } | string {
  if (!process.env.ISCC_CORE_SRC) return 'ISCC_CORE_SRC not set';
  const r = spawnSync('/usr/bin/python3', [join(packageRoot, 'bench/iscc_reference.py'), what, file, String(n)], { encoding: 'utf8' });
  if (r.status !== 0) return `reference failed: ${r.stderr.trim().split('\n').pop()}`;
  return JSON.parse(r.stdout) as { seconds: number; cpu_seconds: number; iscc: string };
}
const refDecoded = reference('decoded');
const refFile = reference('file');

// 3. Data- and Text-Code
const dataPath = join(dir, 'random-50mib.bin');
const random = new Uint8Array(50 << 20);
for (let i = 0, x = 0x9e3779b9; i < random.length; i++) {
  x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
  random[i] = x;
}
writeFileSync(dataPath, random);
const textPath = join(dir, 'english.txt');
const text = 'The quick brown fox jumps over the lazy dog, and then it naps by the river. '.repeat(12_000);
writeFileSync(textPath, text);
const wantData = dataCode(random).iscc;
const wantText = textCode(text).iscc;
const data = await best(async () => {
  if ((await dataCode(createReadStream(dataPath, { highWaterMark: 1 << 20 }))).iscc !== wantData) throw new Error('wrong Data-Code');
});
const textTime = await best(() => {
  if (textCode(text).iscc !== wantText) throw new Error('wrong Text-Code');
});
const refData = reference('data', dataPath, 2);
const refText = reference('text', textPath, 2);

const ms = (x: number): string => `${x.toFixed(1)} ms`;
console.log(`ISCC Image-Code of a ${px.width} x ${px.height} JPEG (${(bytes.length / 1e6).toFixed(1)} MB), ${wasmFlavor} build, node ${process.version}; best of ${N}; ratio = reference / ours (>1: ours faster)\n`);
console.log('| what | ours wall | ours CPU | reference wall | reference CPU | ratio (wall) | ratio (CPU) |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, ours, ref] of [['decoded 12 MP image', decoded, refDecoded], ['the JPEG file from disk', fromFile, refFile]] as const) {
  if (typeof ref === 'string') {
    console.log(`| ${name} | ${ms(ours.wall)} | ${ms(ours.cpu)} | ${ref} | | | |`);
    continue;
  }
  if (ref.iscc !== expected) throw new Error(`the reference's code ${ref.iscc} is not ours ${expected}`);
  console.log(`| ${name} | ${ms(ours.wall)} | ${ms(ours.cpu)} | ${ms(ref.seconds * 1000)} | ${ms(ref.cpu_seconds * 1000)} | ${(ref.seconds * 1000 / ours.wall).toFixed(1)} | ${(ref.cpu_seconds * 1000 / ours.cpu).toFixed(1)} |`);
}
console.log(`| of which: reading and decoding (sharp) | ${ms(decodeAlone.wall)} | ${ms(decodeAlone.cpu)} | | | | |`);
console.log(`| isccOfFile (Image-, Data-, Instance-Code, ISCC-CODE) | ${ms(whole.wall)} | ${ms(whole.cpu)} | | | | |`);
for (const [name, ours, ref, want] of [['Data-Code of a 50 MiB file', data, refData, wantData], [`Text-Code of ${text.length} characters`, textTime, refText, wantText]] as const) {
  if (typeof ref === 'string') {
    console.log(`| ${name} | ${ms(ours.wall)} | ${ms(ours.cpu)} | ${ref} | | | |`);
    continue;
  }
  if (ref.iscc !== want) throw new Error(`the reference's ${name} ${ref.iscc} is not ours ${want}`);
  console.log(`| ${name} | ${ms(ours.wall)} | ${ms(ours.cpu)} | ${ms(ref.seconds * 1000)} | ${ms(ref.cpu_seconds * 1000)} | ${(ref.seconds * 1000 / ours.wall).toFixed(1)} | ${(ref.cpu_seconds * 1000 / ours.cpu).toFixed(1)} |`);
}
console.log(`\ncode ${expected}; reference ${typeof refDecoded === 'string' ? refDecoded : refDecoded.iscc}`);
writeFileSync(join(dir, 'done'), '');
