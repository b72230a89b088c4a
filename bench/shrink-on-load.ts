// How often does shrink-on-load (decoding a JPEG/WebP at reduced size, see
// src/media/image.ts SHRINK_MIN_CELL) change the ImagePHash against a full decode?
// For each JPEG of the dev corpus (or the fixtures), the hash from a full decode is
// compared with the hash at several shrink targets; prints the share of files whose
// hash differs by 0, 1, 2+ bits and the decode time per setting.
//   node --import tsx bench/shrink-on-load.ts [maxFiles]
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { decodeImageForHash } from '../src/media/image.js';
import { detectType } from '../src/lib/detect.js';
import sharp from 'sharp';

const CORPUS = '/tmp/provenant-corpus/files/image';
const FIXTURES = new URL('../test/fixtures/media/', import.meta.url).pathname;
const maxFiles = Number(process.argv[2] ?? 150);

function listFiles(): string[] {
  const dirs = ['jpg', 'jpeg', 'webp'].map((d) => join(CORPUS, d)).filter(existsSync);
  const files = dirs.flatMap((d) => readdirSync(d).map((f) => join(d, f)));
  if (files.length === 0 && existsSync(FIXTURES)) return readdirSync(FIXTURES).filter((f) => /\.(jpe?g|webp)$/i.test(f)).map((f) => join(FIXTURES, f));
  // An even spread over the sorted list (the corpus groups files by package).
  files.sort();
  const step = Math.max(1, files.length / maxFiles);
  const out: string[] = [];
  for (let i = 0; i < files.length && out.length < maxFiles; i += step) out.push(files[Math.floor(i)]);
  return out;
}

const bits = (a: Uint8Array, b: Uint8Array) => a.reduce((d, x, i) => { let v = x ^ b[i]; while (v) { d += v & 1; v >>= 1; } return d; }, 0);

const cells = [4, 8, 16, 32];
const files = listFiles();
const diff = new Map<number, number[]>(cells.map((c) => [c, [0, 0, 0]]));
const time = new Map<number | 'full', number>([['full', 0], ...cells.map((c) => [c, 0] as [number, number])]);
let used = 0;
for (const f of files) {
  const bytes = new Uint8Array(readFileSync(f));
  const type = detectType(bytes);
  if (type?.kind !== 'image') continue;
  let full: Uint8Array;
  try {
    const meta = await sharp(bytes).metadata();
    // Only files large enough to be shrunk at the largest target say anything.
    if (meta.width < 3 * 9 * Math.max(...cells) || meta.height < 3 * 8 * Math.max(...cells)) continue;
    let t = performance.now();
    full = await decodeImageForHash(bytes, type.format, { shrinkOnLoad: false });
    time.set('full', time.get('full')! + performance.now() - t);
    for (const c of cells) {
      t = performance.now();
      const h = await decodeImageForHash(bytes, type.format, { shrinkOnLoad: true, shrinkMinCell: c, fastShrinkOnLoad: process.env.FAST === '1' });
      time.set(c, time.get(c)! + performance.now() - t);
      const d = bits(full, h);
      diff.get(c)![Math.min(d, 2)] += 1;
    }
  } catch {
    continue;
  }
  used += 1;
}
console.log(`${used} JPEG/WebP files of at least ${27 * Math.max(...cells)}x${24 * Math.max(...cells)} (of ${files.length} listed)`);
console.log(`full decode: ${(time.get('full')! / used).toFixed(1)} ms/file`);
for (const c of cells) {
  const [same, one, more] = diff.get(c)!;
  const pct = (n: number) => ((100 * n) / used).toFixed(1);
  console.log(`cell ${c} (target ${9 * c}x${8 * c}): identical ${pct(same)} %, 1 bit ${pct(one)} %, 2+ bits ${pct(more)} %; ${(time.get(c)! / used).toFixed(1)} ms/file`);
}
