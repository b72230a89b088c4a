// The features kernel's FAST-9 corners (assembly/features/fast.ts) against OpenCV's
// cv2.FAST (TYPE_9_16, non-maximum suppression on) on the same grey pixels: the same
// corners at the same places with the same scores, at several thresholds, in both
// builds (the SIMD build scores a corner's ring as 16 lanes, the scalar one walks it).
// Images: a real photo, noise (a corner on nearly every pixel), and hard edges.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import sharp from 'sharp';
import { loadKernel, simdSupported, type BaseExports, type WasmFlavor } from '../../src/lib/wasm.js';
import { PYTHON, runWithReference } from '../helpers/iscc-reference.js';

interface FastExports extends BaseExports {
  fastCornersOfImage(img: number, w: number, h: number, t: number): number;
  fastXY(): number;
  fastScores(): number;
}

const PHOTO = join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg');

const CV_FAST = `
import sys, json, numpy, cv2
w, h, t = (int(v) for v in sys.argv[1:4])
img = numpy.frombuffer(sys.stdin.buffer.read(), dtype=numpy.uint8).reshape(h, w)
fast = cv2.FastFeatureDetector_create(threshold=t, nonmaxSuppression=True, type=cv2.FAST_FEATURE_DETECTOR_TYPE_9_16)
print(json.dumps(sorted([int(k.pt[0]), int(k.pt[1]), int(k.response)] for k in fast.detect(img))))
`;

/** cv2.FAST's corners: [x, y, score], sorted. */
function opencvCorners(grey: Uint8Array, w: number, h: number, t: number): number[][] {
  const r = spawnSync(PYTHON, ['-c', CV_FAST, String(w), String(h), String(t)], { input: grey, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`cv2.FAST: ${r.stderr}`);
  return JSON.parse(r.stdout) as number[][];
}

function ourCorners(flavor: WasmFlavor, grey: Uint8Array, w: number, h: number, t: number): number[][] {
  const k = loadKernel<FastExports>('features', flavor);
  const n = k.exports.fastCornersOfImage(k.writeScratch(grey), w, h, t);
  const xy = k.view(Int16Array, k.exports.fastXY(), 2 * n);
  const scores = k.view(Uint8Array, k.exports.fastScores(), n);
  const out: number[][] = [];
  for (let i = 0; i < n; i++) out.push([xy[2 * i], xy[2 * i + 1], scores[i]]);
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

async function images(): Promise<{ name: string; grey: Uint8Array; w: number; h: number }[]> {
  const { data, info } = await sharp(PHOTO).greyscale().raw().toBuffer({ resolveWithObject: true });
  let seed = 7;
  const noise = Uint8Array.from({ length: 211 * 157 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24));
  const edges = Uint8Array.from({ length: 160 * 120 }, (_, i) => (((i % 160) >> 4) + ((i / 160) >> 3)) % 3 === 0 ? 250 : (i % 7) * 3);
  return [
    { name: 'photo', grey: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), w: info.width, h: info.height },
    { name: 'noise', grey: noise, w: 211, h: 157 },
    { name: 'edges', grey: edges, w: 160, h: 120 },
  ];
}

const fast = suite('FAST-9 against cv2.FAST');

fast('the same corners and scores as cv2.FAST, in both builds', async () => {
  const flavors: WasmFlavor[] = simdSupported ? ['simd', 'scalar'] : ['scalar'];
  for (const { name, grey, w, h } of await images()) {
    for (const t of [10, 16, 40]) {
      const theirs = opencvCorners(grey, w, h, t);
      assert.ok(theirs.length > 20, `${name} at ${t}: ${theirs.length} corners`);
      for (const flavor of flavors) assert.equal(ourCorners(flavor, grey, w, h, t), theirs, `${name} at threshold ${t}, ${flavor}`);
    }
  }
});

runWithReference('opencv', fast);
