// False matches of local features over every pair of distinct images (issue 32's measure):
//   node --import tsx bench/feature-pairs.ts [DIR]     (default /tmp/provenant-corpus/files/image)
//   PART=0/2 node --import tsx bench/feature-pairs.ts & PART=1/2 node --import tsx bench/feature-pairs.ts
//     (a share of the pairs each, for more cores: the rows i = k mod n; add up their counts)
//   NEAR=14 node --import tsx bench/feature-pairs.ts
//     (also every pair whose check reaches 14 inliers either way, confirmed or not, as a
//     JSON line {a, b, ab: [inliers, coverage, shown], ba: [...]}: a rule to be tried can
//     be put to the pairs near the threshold without another run; docs/features.md)
// Every image file under DIR (duplicates by SHA-256 once) is decoded as verify-file decodes
// it (full resolution), and gets a record's features (the first 256, as the vault keeps
// them), a query's (as verify-file asks: 512 and the inner picture's) and PDQ's dihedral
// hashes. For every pair of distinct images i < j, both ways (the query j against the
// record i, and i against j), verify-file's rule for two images with features is applied:
// the geometric check confirms it, or PDQ finds it within NEAR_COPY_PDQ_DISTANCE (both of
// quality >= 50). Prints how many pairs there are, how many have features on both sides,
// how many of those either way matches, and each one (to be looked at: a corpus holds the
// same picture at other sizes). Not a timing bench: quality only.
import '../src/lib/wasm.js';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { detectType } from '../src/lib/detect.js';
import { decodeImagePixels } from '../src/media/image.js';
import { compareFeatures, confirms, extractFeatures, NEAR_COPY_PDQ_DISTANCE, RECORD_FEATURES_MAX, type FeatureMatch, type FeatureSet } from '../src/lib/features.js';
import { pdqDihedral, pdqDistance } from '../src/lib/pdq.js';
import { PDQ_MIN_QUALITY } from '../src/lib/pdq-index.js';

const DIR = process.argv[2] ?? '/tmp/provenant-corpus/files/image';
const [part, parts] = (process.env.PART ?? '0/1').split('/').map(Number);
if (!(Number.isInteger(part) && Number.isInteger(parts) && parts >= 1 && part >= 0 && part < parts)) throw new Error('PART is k/n, 0 <= k < n');

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}

interface Image {
  name: string;
  record: FeatureSet | null;
  query: FeatureSet | null;
  pdq: Uint8Array[];
  quality: number;
}

const seen = new Set<string>();
const images: Image[] = [];
let undecodable = 0;
const t0 = performance.now();
for (const path of files(DIR)) {
  const bytes = new Uint8Array(readFileSync(path));
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (seen.has(digest)) continue;
  seen.add(digest);
  const type = detectType(bytes);
  if (type === null || type.kind !== 'image') continue;
  try {
    const px = await decodeImagePixels(bytes, type.format, { shrinkOnLoad: false });
    const pixels = { data: px.data, width: px.width, height: px.height, channels: px.channels };
    const d = pdqDihedral(px.data, px.width, px.height, px.channels);
    images.push({
      name: relative(DIR, path),
      record: extractFeatures(pixels, { keep: RECORD_FEATURES_MAX }),
      query: extractFeatures(pixels, { inner: true }),
      pdq: d.hashes,
      quality: d.quality,
    });
  } catch {
    undecodable++;
  }
}
const featured = images.filter((x) => x.record !== null && x.query !== null);
console.log(`${images.length} distinct images (${undecodable} not decoded), ${featured.length} with features; ${((performance.now() - t0) / 1000).toFixed(0)} s to extract`);

/** The check of a query with a record that both have features. */
const check = (query: Image, record: Image) => compareFeatures(query.query!, record.record!);

/** verify-file's rule for a query and a record that both have features, given their check. */
function returned(query: Image, record: Image, m: FeatureMatch): { by: string; inliers: number; coverage: number } | null {
  if (confirms(m)) return { by: 'check', inliers: m.inliers, coverage: m.coverage };
  if (query.quality >= PDQ_MIN_QUALITY && record.quality >= PDQ_MIN_QUALITY) {
    const distance = Math.min(...query.pdq.map((h) => pdqDistance(record.pdq[0], h)));
    if (distance <= NEAR_COPY_PDQ_DISTANCE) return { by: `PDQ ${distance}`, inliers: 0, coverage: 0 };
  }
  return null;
}

const near = process.env.NEAR === undefined ? null : Number(process.env.NEAR);
if (near !== null && !(Number.isInteger(near) && near >= 0)) throw new Error('NEAR is a count of inliers');
const answer = (m: FeatureMatch) => [m.inliers, +m.coverage.toFixed(4), +m.shown.toFixed(4)];

const n = images.length;
let matched = 0;
let compared = 0;
const t1 = performance.now();
for (let i = part; i < featured.length; i += parts) {
  for (let j = i + 1; j < featured.length; j++) {
    compared++;
    const a = featured[i];
    const b = featured[j];
    const mab = check(b, a);
    const mba = check(a, b);
    if (near !== null && Math.max(mab.inliers, mba.inliers) >= near) console.log(JSON.stringify({ a: a.name, b: b.name, ab: answer(mab), ba: answer(mba) }));
    const ab = returned(b, a, mab);
    const ba = returned(a, b, mba);
    if (ab === null && ba === null) continue;
    matched++;
    const say = (r: typeof ab) => (r === null ? '-' : r.by === 'check' ? `${r.inliers} inliers, ${(100 * r.coverage).toFixed(0)} %` : r.by);
    console.log(`  ${a.name} ~ ${b.name}: ${say(ab)} / ${say(ba)}`);
  }
}
const withBoth = (featured.length * (featured.length - 1)) / 2;
console.log(`${(n * (n - 1)) / 2} pairs of distinct images; ${withBoth} with features on both sides${parts > 1 ? `, ${compared} of them in part ${part}/${parts}` : ''}; ${matched} of those returned either way (${((100 * matched) / compared).toFixed(4)} %); ${((performance.now() - t1) / 1000).toFixed(0)} s`);
