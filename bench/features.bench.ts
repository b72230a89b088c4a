// Local features (issue 32): their cost beside the global hashes, against OpenCV's ORB.
//   node --import tsx bench/features.bench.ts [N]     (N dev-corpus photos, default 60)
//   PROVENANT_WASM=scalar node --import tsx bench/features.bench.ts
// On the same decoded pixels of N dev-corpus photos (JPEGs of at least 640 x 480 from
// /tmp/provenant-corpus, every other one), process CPU time, best of three:
// 1. extraction: ours (extractFeatures, 512 features) against OpenCV's ORB through
//    @techstark/opencv-js (500 features, detectAndCompute) on the grey analysis image ours
//    works on (ORB given that image: its own grey conversion and resize are not timed);
// 2. verify-file's work per image: today (decode, ImagePHash, PDQ) and with features
//    (those, extraction as verify-file asks, the inner picture's included, retrieval in a
//    10,000-image FeatureIndex and the geometric check of 3 candidates), the ratio;
// 3. the check of one pair: ours (compareFeatures, 512 x 256) against ORB's ratio-tested
//    brute-force matches and RANSAC homography (cv.findHomography) on their own 500;
// 4. the vault's draft of a photo (examineFile and the integrity report, as vault sign
//    makes them; the features included) against the same less the features' extraction
//    (the record's: the first 256 of the 512, the rest not described).
import '../src/lib/wasm.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import cvModule from '@techstark/opencv-js';
import { compareFeatures, descriptorsOf, extractFeatures, recordFeatures, RECORD_FEATURES_MAX, RETRIEVAL_FEATURES, type FeatureSet } from '../src/lib/features.js';
import { FeatureIndex } from '../src/lib/feature-index.js';
import { FEATURE_CODEBOOK } from '../src/lib/feature-codebook.js';
import { decodeImagePixels } from '../src/media/image.js';
import { imageHashesFromPixels } from '../src/lib/pdq.js';
import { wasmFlavor } from '../src/lib/wasm-core.js';
import { examineFile } from '../src/media/examine.js';
import { integrityReport } from '../src/media/integrity.js';

const N = Number(process.argv[2] ?? 60);
const DIR = '/tmp/provenant-corpus/files/image/jpg';

/** Process CPU ms of `fn`, best of three runs. */
async function cpu(fn: () => Promise<void> | void): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const c0 = process.cpuUsage();
    await fn();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return best;
}

// the Emscripten module is a thenable that resolves to itself: wait for its runtime instead
const cv: any = cvModule;
if (!cv.Mat) await new Promise<void>((r) => { cv.onRuntimeInitialized = r; });

const all = readdirSync(DIR).filter((f) => !f.startsWith('.')).sort().map((f) => join(DIR, f));
const photos: { bytes: Uint8Array; px: Awaited<ReturnType<typeof decodeImagePixels>>; grey: { data: Uint8Array; width: number; height: number } }[] = [];
for (const [i, f] of all.entries()) {
  if (photos.length >= N || i % 2 === 1) continue;
  const bytes = new Uint8Array(readFileSync(f));
  const meta = await sharp(bytes).metadata();
  if ((meta.width ?? 0) * (meta.height ?? 0) < 640 * 480) continue;
  const px = await decodeImagePixels(bytes, 'jpeg', { shrinkOnLoad: false });
  const s = Math.sqrt((640 * 480) / (px.width * px.height));
  const g = await sharp(bytes).resize(Math.round(px.width * s)).greyscale().raw().toBuffer({ resolveWithObject: true });
  photos.push({ bytes, px, grey: { data: new Uint8Array(g.data), width: g.info.width, height: g.info.height } });
}
const mean = (ms: number) => (ms / photos.length).toFixed(2);
console.log(`${photos.length} dev-corpus photos (mean ${(photos.reduce((n, p) => n + p.px.width * p.px.height, 0) / photos.length / 1e6).toFixed(1)} MP), ${wasmFlavor} build, process CPU, best of 3\n`);

// 1. extraction
const ours = await cpu(() => { for (const p of photos) extractFeatures(p.px); });
const oursGrey = await cpu(() => { for (const p of photos) extractFeatures({ ...p.grey, channels: 1 }); });
const orb = new cv.ORB(500);
const orbMs = await cpu(() => {
  for (const p of photos) {
    const img = cv.matFromArray(p.grey.height, p.grey.width, cv.CV_8UC1, p.grey.data);
    const kps = new cv.KeyPointVector();
    const desc = new cv.Mat();
    const none = new cv.Mat();
    orb.detectAndCompute(img, none, kps, desc);
    for (const o of [img, kps, desc, none]) o.delete();
  }
});
console.log('| extraction, per image | ms |');
console.log('|---|---|');
console.log(`| ours, from the decoded pixels (grey analysis image made in the kernel) | ${mean(ours)} |`);
console.log(`| ours, from the grey analysis image | ${mean(oursGrey)} |`);
console.log(`| OpenCV ORB (opencv-js), from the grey analysis image | ${mean(orbMs)} |`);
console.log(`| ratio ORB / ours, same grey image | ${(orbMs / oursGrey).toFixed(2)}x |\n`);

// 2. verify-file's work per image
const sets = photos.map((p) => extractFeatures(p.px)!).filter(Boolean) as FeatureSet[];
const index = new FeatureIndex(FEATURE_CODEBOOK);
for (let i = 0; i < 10_000; i++) index.add(i, descriptorsOf(recordFeatures(sets[i % sets.length])));
const records = sets.map(recordFeatures);
const today = await cpu(async () => {
  for (const p of photos) {
    const px = await decodeImagePixels(p.bytes, 'jpeg', { shrinkOnLoad: false });
    imageHashesFromPixels(px.data, px.width, px.height, px.channels);
  }
});
const withFeatures = await cpu(async () => {
  for (const [i, p] of photos.entries()) {
    const px = await decodeImagePixels(p.bytes, 'jpeg', { shrinkOnLoad: false });
    imageHashesFromPixels(px.data, px.width, px.height, px.channels);
    const q = extractFeatures(px, { inner: true }); // as verify-file asks (src/media/image.ts)
    if (q === null) continue;
    index.query(descriptorsOf(q, RETRIEVAL_FEATURES));
    for (let k = 0; k < 3; k++) compareFeatures(q, records[(i + k) % records.length]);
  }
});
console.log('| verify-file work, per image | ms |');
console.log('|---|---|');
console.log(`| today: decode, ImagePHash, PDQ | ${mean(today)} |`);
console.log(`| with features: + extraction, retrieval (10k images), 3 checks | ${mean(withFeatures)} |`);
console.log(`| ratio | ${(withFeatures / today).toFixed(2)}x (goal <= 1.3x) |\n`);

// 3. one pair's check
const pairs = Math.min(200, sets.length * 3);
const ourPair = await cpu(() => { for (let i = 0; i < pairs; i++) compareFeatures(sets[i % sets.length], records[(i * 7 + 1) % records.length]); });
const orbSets = photos.map((p) => {
  const img = cv.matFromArray(p.grey.height, p.grey.width, cv.CV_8UC1, p.grey.data);
  const kps = new cv.KeyPointVector();
  const desc = new cv.Mat();
  const none = new cv.Mat();
  orb.detectAndCompute(img, none, kps, desc);
  const pts: number[] = [];
  for (let i = 0; i < kps.size(); i++) pts.push(kps.get(i).pt.x, kps.get(i).pt.y);
  img.delete(); kps.delete(); none.delete();
  return { desc, pts };
});
const bf = new cv.BFMatcher(cv.NORM_HAMMING, false);
const orbPair = await cpu(() => {
  for (let i = 0; i < pairs; i++) {
    const q = orbSets[i % orbSets.length];
    const s = orbSets[(i * 7 + 1) % orbSets.length];
    const knn = new cv.DMatchVectorVector();
    bf.knnMatch(q.desc, s.desc, knn, 2);
    const src: number[] = [];
    const dst: number[] = [];
    for (let k = 0; k < knn.size(); k++) {
      const m = knn.get(k);
      if (m.size() < 2 || m.get(0).distance >= 0.8 * m.get(1).distance) continue;
      src.push(q.pts[2 * m.get(0).queryIdx], q.pts[2 * m.get(0).queryIdx + 1]);
      dst.push(s.pts[2 * m.get(0).trainIdx], s.pts[2 * m.get(0).trainIdx + 1]);
    }
    if (src.length >= 8) {
      const a = cv.matFromArray(src.length / 2, 1, cv.CV_32FC2, src);
      const b = cv.matFromArray(dst.length / 2, 1, cv.CV_32FC2, dst);
      const mask = new cv.Mat();
      cv.findHomography(a, b, cv.RANSAC, 5, mask).delete();
      a.delete(); b.delete(); mask.delete();
    }
    knn.delete();
  }
});
console.log('| the check of one pair | ms |');
console.log('|---|---|');
console.log(`| ours (compareFeatures, 512 x 256, mirrored pass included) | ${(ourPair / pairs).toFixed(3)} |`);
console.log(`| ORB: knnMatch + ratio + findHomography RANSAC (500 x 500) | ${(orbPair / pairs).toFixed(3)} |`);
console.log(`| ratio ORB / ours | ${(orbPair / ourPair).toFixed(2)}x |`);

// 4. the vault's draft, and the extraction it makes (a record's 256 of the 512)
const draft = await cpu(async () => {
  for (const p of photos) await Promise.all([examineFile(p.bytes, { isccExact: true, recordFeatures: true }), integrityReport(p.bytes)]);
});
const oursRecord = await cpu(() => { for (const p of photos) extractFeatures(p.px, { keep: RECORD_FEATURES_MAX }); });
console.log('\n| vault sign, per photo (draft: examination and integrity report) | ms |');
console.log('|---|---|');
console.log(`| with features | ${mean(draft)} |`);
console.log(`| less the features' extraction (a record's: ${mean(oursRecord)} ms, against ${mean(ours)} for all 512) | ${mean(draft - oursRecord)} |`);
console.log(`| ratio | ${(draft / (draft - oursRecord)).toFixed(2)}x (goal <= 1.5x); a record's set 10,250 bytes (13,668 in base64) |`);
