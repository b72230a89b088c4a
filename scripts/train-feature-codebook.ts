// Trains the local-features retrieval index's codebook (issue 32; src/lib/feature-index.ts):
// 256 codewords for the descriptors' 128-bit halves, by k-majority (binary k-means: each
// codeword the bitwise majority of the halves nearest to it), seeded k-means++ style,
// from the features of real photos; then each codeword's embedding places: the
// EMBED_BITS bits most balanced among the halves nearest to it (the index's Hamming
// embedding compares those). Writes src/lib/feature-codebook.ts.
//
//   node --import tsx scripts/train-feature-codebook.ts /tmp/provenant-corpus [--seed 1]
//
// The photos: the dev corpus's JPEG images (../shared/corpus/build-dev-corpus.sh) whose
// SHA-256 starts with an even hex digit, about half of them; the bench measures on all,
// and docs/features.md says so. The same corpus, seed and features version give the same
// codebook. Both halves of every descriptor are samples (the descriptor's pattern is
// mirror-symmetric: a mirrored keypoint's halves are the original's swapped, and the index
// quantizes both halves with this one codebook).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import '../src/lib/wasm.js';
import { descriptorsOf, extractFeatures, FEATURES_VERSION, RECORD_FEATURES_MAX } from '../src/lib/features.js';
import { FEATURE_CODEBOOK_BYTES, FEATURE_EMBEDDING_BITS as EMBED_BITS } from '../src/lib/feature-index.js';
import { seeded } from '../src/cli/bench/random.js';

const CODEWORDS = 256;
const HALF = 16;
const ITERATIONS = 20;
/** Halves sampled at most (memory and time: each iteration compares every sample with every codeword). */
const MAX_SAMPLES = 400_000;


const POP = Uint8Array.from({ length: 256 }, (_, i) => {
  let c = 0;
  for (let v = i; v; v &= v - 1) c++;
  return c;
});

function distance(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  let d = 0;
  for (let i = 0; i < HALF; i++) d += POP[a[ao + i] ^ b[bo + i]];
  return d;
}

/** The codeword nearest to half `i` (the lowest on ties, as the kernel's cellOf) and its distance. */
function nearestCodeword(halves: Uint8Array, i: number, book: Uint8Array): [number, number] {
  let best = 0;
  let bestD = 129;
  for (let k = 0; k < CODEWORDS; k++) {
    const d = distance(halves, i * HALF, book, k * HALF);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return [best, bestD];
}

async function samplesFrom(corpus: string, random: () => number): Promise<{ halves: Uint8Array; photos: number; features: number }> {
  const manifest = readFileSync(join(corpus, 'MANIFEST.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  const photos = manifest.filter(([, kind, ext, , , sha]) => kind === 'image' && (ext === 'jpg' || ext === 'jpeg') && parseInt(sha[0], 16) % 2 === 0);
  const chunks: Uint8Array[] = [];
  let features = 0;
  for (const [path] of photos) {
    const { data, info } = await sharp(join(corpus, path), { autoOrient: true, pages: 1, limitInputPixels: 100_000_000 }).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    const set = extractFeatures({ data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height, channels: info.channels }, { max: RECORD_FEATURES_MAX });
    if (set === null) continue;
    const d = descriptorsOf(set);
    features += d.length / 32;
    chunks.push(d);
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  // every half a sample, a seeded subset when there are too many
  const total = all.length / HALF;
  const take = Math.min(total, MAX_SAMPLES);
  const order = Array.from({ length: total }, (_, i) => i);
  for (let i = 0; i < take; i++) {
    const j = i + Math.floor(random() * (total - i));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const halves = new Uint8Array(take * HALF);
  for (let i = 0; i < take; i++) halves.set(all.subarray(order[i] * HALF, order[i] * HALF + HALF), i * HALF);
  return { halves, photos: photos.length, features };
}

/** k-means++ seeding (each next codeword drawn with probability ~ squared distance to the nearest so far), then k-majority. */
function train(halves: Uint8Array, random: () => number): { codebook: Uint8Array; meanDistance: number } {
  const n = halves.length / HALF;
  const book = new Uint8Array(CODEWORDS * HALF);
  const nearest = new Float64Array(n).fill(Infinity);
  book.set(halves.subarray(0, HALF), 0);
  for (let k = 1; k < CODEWORDS; k++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const d = distance(halves, i * HALF, book, (k - 1) * HALF);
      if (d * d < nearest[i]) nearest[i] = d * d;
      sum += nearest[i];
    }
    let pick = random() * sum;
    let i = 0;
    for (; i < n - 1 && pick >= nearest[i]; i++) pick -= nearest[i];
    book.set(halves.subarray(i * HALF, i * HALF + HALF), k * HALF);
  }
  const assign = new Uint16Array(n);
  let meanDistance = 0;
  for (let it = 0; it < ITERATIONS; it++) {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const [best, bestD] = nearestCodeword(halves, i, book);
      assign[i] = best;
      total += bestD;
    }
    meanDistance = total / n;
    // each codeword: the bitwise majority of its halves (an empty one keeps its value)
    const ones = new Uint32Array(CODEWORDS * HALF * 8);
    const counts = new Uint32Array(CODEWORDS);
    for (let i = 0; i < n; i++) {
      const k = assign[i];
      counts[k]++;
      for (let b = 0; b < HALF * 8; b++) if (halves[i * HALF + (b >> 3)] & (1 << (b & 7))) ones[k * HALF * 8 + b]++;
    }
    for (let k = 0; k < CODEWORDS; k++) {
      if (counts[k] === 0) continue;
      for (let byte = 0; byte < HALF; byte++) {
        let v = 0;
        for (let bit = 0; bit < 8; bit++) if (2 * ones[k * HALF * 8 + byte * 8 + bit] > counts[k]) v |= 1 << bit;
        book[k * HALF + byte] = v;
      }
    }
    process.stderr.write(`iteration ${it + 1}: mean distance to the nearest codeword ${meanDistance.toFixed(2)} of 128 bits\n`);
  }
  return { codebook: book, meanDistance };
}

/**
 * Each codeword's EMBED_BITS places: the bits whose share of ones among the halves
 * nearest to it (lowest codeword on ties, as the kernel's cellOf) is nearest one half,
 * the lower place on ties, in ascending order of place. A codeword no half is nearest to
 * gets places 0 to EMBED_BITS - 1.
 */
function embeddingPlaces(halves: Uint8Array, book: Uint8Array): Uint8Array {
  const n = halves.length / HALF;
  const ones = new Uint32Array(CODEWORDS * HALF * 8);
  const counts = new Uint32Array(CODEWORDS);
  for (let i = 0; i < n; i++) {
    const [best] = nearestCodeword(halves, i, book);
    counts[best]++;
    for (let b = 0; b < HALF * 8; b++) if (halves[i * HALF + (b >> 3)] & (1 << (b & 7))) ones[best * HALF * 8 + b]++;
  }
  const places = new Uint8Array(CODEWORDS * EMBED_BITS);
  for (let k = 0; k < CODEWORDS; k++) {
    const imbalance = (b: number) => Math.abs(2 * ones[k * HALF * 8 + b] - counts[k]);
    const chosen = Array.from({ length: HALF * 8 }, (_, b) => b).sort((x, y) => imbalance(x) - imbalance(y) || x - y).slice(0, EMBED_BITS).sort((x, y) => x - y);
    places.set(chosen, k * EMBED_BITS);
  }
  return places;
}

const args = process.argv.slice(2);
const corpus = args.find((a) => !a.startsWith('--'));
const seedAt = args.indexOf('--seed');
const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 1;
if (corpus === undefined || !Number.isInteger(seed)) {
  process.stderr.write('usage: node --import tsx scripts/train-feature-codebook.ts CORPUS_DIR [--seed N]\n');
  process.exit(2);
}
const random = seeded(seed);
const { halves, photos, features } = await samplesFrom(corpus, random);
const { codebook: codewords, meanDistance } = train(halves, random);
if (codewords.length + CODEWORDS * EMBED_BITS !== FEATURE_CODEBOOK_BYTES) throw new Error('codebook of the wrong size');
const codebook = new Uint8Array(FEATURE_CODEBOOK_BYTES);
codebook.set(codewords, 0);
codebook.set(embeddingPlaces(halves, codewords), codewords.length);
const b64 = Buffer.from(codebook).toString('base64');
const lines = b64.match(/.{1,100}/g)!.map((l) => `  '${l}',`).join('\n');
const out = `// The local-features retrieval index's codebook (src/lib/feature-index.ts): 256
// codewords of 128 bits and each one's ${EMBED_BITS} embedding places, trained by
// scripts/train-feature-codebook.ts (k-majority, seed ${seed}, ${ITERATIONS} iterations) on
// ${halves.length / HALF} descriptor halves of ${features} features of FEATURES_VERSION ${FEATURES_VERSION} from ${photos}
// dev-corpus photos (JPEGs whose SHA-256 starts with an even digit).
// Mean distance of a half to its codeword: ${meanDistance.toFixed(2)} bits. Embedding places: the ${EMBED_BITS}
// bits most balanced among the halves nearest to each codeword. Generated: do not edit;
// train again when the features change (a new FEATURES_VERSION).
// SHA-256 of the codewords: ${createHash('sha256').update(codewords).digest('hex')}
// SHA-256 of the codebook: ${createHash('sha256').update(codebook).digest('hex')}
const BASE64 = [
${lines}
].join('');

/** The codebook's ${FEATURE_CODEBOOK_BYTES} bytes (codeword i at i x 16, its embedding places at ${codewords.length} + i x ${EMBED_BITS}). */
export const FEATURE_CODEBOOK: Uint8Array = Uint8Array.from(atob(BASE64), (c) => c.charCodeAt(0));
`;
writeFileSync(new URL('../src/lib/feature-codebook.ts', import.meta.url), out);
process.stderr.write(`wrote src/lib/feature-codebook.ts from ${photos} photos, ${features} features\n`);
