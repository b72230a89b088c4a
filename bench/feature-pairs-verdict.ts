// Which of the pairs bench/feature-pairs.ts lists show one picture, judged by their pixels:
//   node --import tsx bench/feature-pairs.ts > pairs.txt   (or its PART runs, concatenated)
//   node --import tsx bench/feature-pairs-verdict.ts pairs.txt [DIR]
// A corpus of distinct files still holds one picture many times: a tutorial's input and
// its annotated result, a figure and its crop, an icon at two sizes. For each listed pair
// the query's features are matched with the record's again (verify-file's rule, as
// feature-pairs.ts applies it) and the record's grey image is warped into the query's
// frame by the transform found (identity and scale for a pair PDQ returned). Then the
// pixels, not the features, decide: over the overlap, in 8 x 8 blocks of the analysis
// images (a block's mean), the textured blocks (either side's standard deviation >= 6
// grey levels: flat page and window backgrounds agree in any two screenshots) whose means
// are within 20 grey levels. A pair is *one picture* when at least 80 % of at least 24
// textured blocks agree; otherwise *distinct pictures*, the false matches. Prints both
// counts, each pair with its verdict and numbers, and the rate of distinct pictures among
// all pairs with features on both sides (feature-pairs.ts's count).
import '../src/lib/wasm.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectType } from '../src/lib/detect.js';
import { decodeImagePixels } from '../src/media/image.js';
import { compareFeatures, extractFeatures, matchFeatures, RECORD_FEATURES_MAX, type FeatureSet } from '../src/lib/features.js';
import sharp from 'sharp';

const [listFile, dir = '/tmp/provenant-corpus/files/image'] = process.argv.slice(2);
if (listFile === undefined) throw new Error('usage: feature-pairs-verdict.ts PAIRS.txt [DIR]');
const BLOCK = 8;
const TEXTURE_STD = 6;
const AGREE_GREY = 20;
const ONE_PICTURE_SHARE = 0.8;
const MIN_BLOCKS = 24;

interface Image { grey: Uint8Array; width: number; height: number; record: FeatureSet | null; query: FeatureSet | null }
const cache = new Map<string, Image>();

async function image(name: string): Promise<Image> {
  const hit = cache.get(name);
  if (hit) return hit;
  const bytes = new Uint8Array(readFileSync(join(dir, name)));
  const type = detectType(bytes);
  if (type === null || type.kind !== 'image') throw new Error(`${name}: not an image`);
  const px = await decodeImagePixels(bytes, type.format, { shrinkOnLoad: false });
  const pixels = { data: px.data, width: px.width, height: px.height, channels: px.channels };
  const record = extractFeatures(pixels, { keep: RECORD_FEATURES_MAX });
  const query = extractFeatures(pixels, { inner: true });
  const size = record ?? query;
  if (size === null) throw new Error(`${name}: no features`);
  // the grey image at the analysis size (the transform's frame), RGBA flattened over white as the kernel does
  const g = await sharp(Buffer.from(px.data), { raw: { width: px.width, height: px.height, channels: px.channels } })
    .flatten({ background: '#ffffff' }).resize(size.width, size.height, { fit: 'fill' }).greyscale().raw()
    .toBuffer({ resolveWithObject: true });
  const img = { grey: new Uint8Array(g.data.buffer, g.data.byteOffset, g.info.width * g.info.height), width: g.info.width, height: g.info.height, record, query };
  cache.set(name, img);
  return img;
}

/** Bilinear sample of `img` at (x, y), or -1 outside it. */
function sample(img: Image, x: number, y: number): number {
  if (x < 0 || y < 0 || x > img.width - 1 || y > img.height - 1) return -1;
  const x0 = Math.floor(x), y0 = Math.floor(y);
  const x1 = Math.min(x0 + 1, img.width - 1), y1 = Math.min(y0 + 1, img.height - 1);
  const fx = x - x0, fy = y - y0;
  const g = img.grey, w = img.width;
  const top = g[y0 * w + x0] * (1 - fx) + g[y0 * w + x1] * fx;
  const bottom = g[y1 * w + x0] * (1 - fx) + g[y1 * w + x1] * fx;
  return top * (1 - fy) + bottom * fy;
}

interface Verdict { textured: number; agreeing: number; overlap: number }

/** The record's pixels against the query's through `matrix` (query -> record; the query mirrored first when `mirrored`). */
function judge(query: Image, record: Image, matrix: number[], mirrored: boolean): Verdict {
  const [a, b, tx, c, d, ty] = matrix;
  const bw = Math.floor(query.width / BLOCK), bh = Math.floor(query.height / BLOCK);
  let textured = 0, agreeing = 0, covered = 0;
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++) {
      let n = 0, sq = 0, sq2 = 0, sr = 0, sr2 = 0;
      for (let y = by * BLOCK; y < (by + 1) * BLOCK; y++) {
        for (let x = bx * BLOCK; x < (bx + 1) * BLOCK; x++) {
          const qx = mirrored ? query.width - x : x;
          const v = sample(record, a * qx + b * y + tx, c * qx + d * y + ty);
          if (v < 0) continue;
          const q = query.grey[y * query.width + x];
          n++; sq += q; sq2 += q * q; sr += v; sr2 += v * v;
        }
      }
      if (n < BLOCK * BLOCK) continue;
      covered++;
      const mq = sq / n, mr = sr / n;
      const stdQ = Math.sqrt(Math.max(0, sq2 / n - mq * mq)), stdR = Math.sqrt(Math.max(0, sr2 / n - mr * mr));
      if (stdQ < TEXTURE_STD && stdR < TEXTURE_STD) continue;
      textured++;
      if (Math.abs(mq - mr) <= AGREE_GREY) agreeing++;
    }
  }
  return { textured, agreeing, overlap: covered / Math.max(1, bw * bh) };
}

const lines = readFileSync(listFile, 'utf8').split('\n');
const total = lines.map((l) => /(\d+) with features on both sides/.exec(l)).filter(Boolean).map((m) => Number(m![1]))[0];
const pairs = lines.map((l) => /^\s+(\S+) ~ (\S+): /.exec(l)).filter(Boolean).map((m) => [m![1], m![2]] as const);
let one = 0;
let distinct = 0;
const rows: string[] = [];
for (const [aName, bName] of pairs) {
  const a = await image(aName);
  const b = await image(bName);
  // the direction verify-file returned (the query b against the record a first)
  let verdict: Verdict | null = null;
  let how = '';
  for (const [q, r] of [[b, a], [a, b]] as const) {
    const m = matchFeatures(q.query!, r.record!);
    if (m !== null) {
      verdict = judge(q, r, m.matrix, m.mirrored);
      how = `${m.inliers} inliers`;
      break;
    }
  }
  if (verdict === null) {
    // PDQ's near copy: the whole image, scaled (the better of as-is and mirrored)
    const scale = [a.width / b.width, 0, 0, 0, a.height / b.height, 0];
    const plain = judge(b, a, scale, false);
    const mirrored = judge(b, a, scale, true);
    verdict = plain.agreeing / Math.max(1, plain.textured) >= mirrored.agreeing / Math.max(1, mirrored.textured) ? plain : mirrored;
    how = `PDQ (check: ${compareFeatures(b.query!, a.record!).inliers} inliers)`;
  }
  const share = verdict.agreeing / Math.max(1, verdict.textured);
  const same = verdict.textured >= MIN_BLOCKS && share >= ONE_PICTURE_SHARE;
  if (same) one++;
  else distinct++;
  rows.push(`  ${same ? 'one picture' : 'DISTINCT   '} ${aName} ~ ${bName}: ${how}; ${verdict.agreeing} of ${verdict.textured} textured blocks agree (${(100 * share).toFixed(0)} %), overlap ${(100 * verdict.overlap).toFixed(0)} % of the query`);
}
for (const r of rows) console.log(r);
console.log(`${pairs.length} pairs listed: ${one} one picture, ${distinct} distinct pictures${total ? ` (${((100 * distinct) / total).toFixed(4)} % of ${total} pairs with features on both sides)` : ''}`);
