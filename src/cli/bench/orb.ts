// OpenCV's ORB as the peer of the local features (issue 32), through @techstark/opencv-js
// (OpenCV 4 compiled to WebAssembly; its build has no SIFT, AKAZE is there but not run):
// 500 ORB features of the same grey analysis image ours start from (about 640 x 480,
// aspect kept), matched by brute force in Hamming distance with Lowe's ratio test (0.8),
// then a homography fitted by RANSAC (5 pixels): the score is its inliers, and a match
// takes at least MIN_INLIERS of them, our own threshold. Found at run time, never
// required (npm's opencv-js is a devDependency).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import sharp from 'sharp';
import type { HashFamily, HashValue, Peer } from './hashes.js';
import { MIN_INLIERS } from '../../lib/features.js';

/** The opencv-js calls used here (its own types are not loaded: it is optional). */
interface Cv {
  Mat: new (...args: unknown[]) => CvMat;
  ORB: new (n: number) => { detectAndCompute(img: CvMat, mask: CvMat, kps: CvVector, desc: CvMat): void; delete(): void };
  KeyPointVector: new () => CvVector;
  DMatchVectorVector: new () => CvVector;
  BFMatcher: new (norm: number, cross: boolean) => { knnMatch(q: CvMat, t: CvMat, out: CvVector, k: number): void; delete(): void };
  matFromArray(rows: number, cols: number, type: number, data: ArrayLike<number>): CvMat;
  findHomography(src: CvMat, dst: CvMat, method: number, threshold: number, mask: CvMat): CvMat;
  countNonZero(m: CvMat): number;
  CV_8UC1: number;
  CV_32FC2: number;
  NORM_HAMMING: number;
  RANSAC: number;
}
interface CvMat { data: Uint8Array; rows: number; cols: number; delete(): void }
interface CvVector { size(): number; get(i: number): any; delete(): void }

const ANALYSIS_PIXELS = 640 * 480;
const ORB_FEATURES = 500;
const RATIO = 0.8;
/** Pairs of distinct originals the peer is scored on at most (a pair costs it milliseconds). */
export const ORB_MAX_PAIRS = 20_000;

let cv: Cv | null = null;

async function loadCv(): Promise<{ cv: Cv; version: string } | { missing: string }> {
  let mod: unknown;
  try {
    mod = (await import('@techstark/opencv-js')).default;
  } catch {
    return { missing: 'npm package @techstark/opencv-js not installed' };
  }
  // the Emscripten module is a thenable that resolves to itself: awaiting it never ends
  const m = mod as Cv & { onRuntimeInitialized?: () => void };
  if ((m as { Mat?: unknown }).Mat === undefined) await new Promise<void>((resolve) => { m.onRuntimeInitialized = resolve; });
  let version = 'unknown';
  try {
    version = createRequire(import.meta.url)('@techstark/opencv-js/package.json').version;
  } catch {
    // the version is for the report only
  }
  return { cv: m, version };
}

/** ORB keypoints (x, y) and descriptors of a file's grey analysis image. */
async function orbOf(path: string): Promise<HashValue> {
  const c = cv!;
  const meta = await sharp(await readFile(path), { pages: 1 }).metadata();
  const s = Math.min(1, Math.sqrt(ANALYSIS_PIXELS / ((meta.width ?? 1) * (meta.height ?? 1))));
  const { data, info } = await sharp(await readFile(path), { autoOrient: true, pages: 1 })
    .resize(Math.max(1, Math.round((meta.width ?? 1) * s)), null, { kernel: 'cubic' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  const img = c.matFromArray(info.height, info.width, c.CV_8UC1, data);
  const orb = new c.ORB(ORB_FEATURES);
  const kps = new c.KeyPointVector();
  const desc = new c.Mat();
  const none = new c.Mat();
  try {
    orb.detectAndCompute(img, none, kps, desc);
    const n = kps.size();
    const points = new Float32Array(2 * n);
    for (let i = 0; i < n; i++) {
      const p = kps.get(i).pt;
      points[2 * i] = p.x;
      points[2 * i + 1] = p.y;
    }
    return { bytes: Uint8Array.from(desc.data), bands: null, points };
  } finally {
    for (const o of [img, orb, kps, desc, none]) o.delete();
  }
}

/** Inliers of the RANSAC homography between the ratio-tested ORB matches of `query` onto `stored`. */
function orbInliers(stored: HashValue, query: HashValue): number | null {
  const c = cv!;
  const ns = stored.bytes.length / 32;
  const nq = query.bytes.length / 32;
  if (ns < 4 || nq < 4 || stored.points === undefined || query.points === undefined) return null;
  const a = c.matFromArray(ns, 32, c.CV_8UC1, stored.bytes);
  const b = c.matFromArray(nq, 32, c.CV_8UC1, query.bytes);
  const bf = new c.BFMatcher(c.NORM_HAMMING, false);
  const knn = new c.DMatchVectorVector();
  try {
    bf.knnMatch(b, a, knn, 2);
    const src: number[] = [];
    const dst: number[] = [];
    for (let i = 0; i < knn.size(); i++) {
      const pair = knn.get(i);
      if (pair.size() < 2) continue;
      const m = pair.get(0);
      if (m.distance < RATIO * pair.get(1).distance) {
        src.push(query.points[2 * m.queryIdx], query.points[2 * m.queryIdx + 1]);
        dst.push(stored.points[2 * m.trainIdx], stored.points[2 * m.trainIdx + 1]);
      }
    }
    if (src.length < 8) return 0;
    const s = c.matFromArray(src.length / 2, 1, c.CV_32FC2, src);
    const d = c.matFromArray(dst.length / 2, 1, c.CV_32FC2, dst);
    const mask = new c.Mat();
    try {
      const h = c.findHomography(s, d, c.RANSAC, 5, mask);
      const empty = h.rows === 0;
      h.delete();
      return empty ? 0 : c.countNonZero(mask);
    } finally {
      s.delete();
      d.delete();
      mask.delete();
    }
  } finally {
    for (const o of [a, b, bf, knn]) o.delete();
  }
}

export async function opencvOrb(): Promise<Peer> {
  const family: HashFamily = {
    name: 'opencv-orb',
    kind: 'image',
    origin: 'peer',
    score: 'inliers of a RANSAC homography between ratio-tested ORB matches',
    compare: orbInliers,
    maxPairs: ORB_MAX_PAIRS,
    rules: [{ name: `ransac>=${MIN_INLIERS}`, description: `at least ${MIN_INLIERS} RANSAC inliers (our features' threshold)`, match: (_a, _b, s) => s !== null && s >= MIN_INLIERS }],
  };
  const loaded = await loadCv();
  if ('missing' in loaded) return { family, status: { name: family.name, kind: 'image', found: false, detail: loaded.missing } };
  cv = loaded.cv;
  return { family, status: { name: family.name, kind: 'image', found: true, detail: `@techstark/opencv-js ${loaded.version}` }, hash: orbOf };
}
