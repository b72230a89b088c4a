// Local features (issue 32; docs/features.md): keypoints with 256-bit binary
// descriptors over an image pyramid, extracted from decoded pixels, and the geometric
// check of two sets (the features kernel: assembly/features/). A set is the strongest
// features spread over the picture, strongest first, so any prefix of a set is a set:
// a record keeps its first RECORD_FEATURES_MAX, a query uses up to QUERY_FEATURES_MAX,
// and the retrieval index (feature-index.ts) takes the first INDEXED_FEATURES of a record
// and is asked with the first RETRIEVAL_FEATURES of a query.
//
// ```ts
// const a = extractFeatures({ data, width, height, channels: 3 });   // null: too few
// const b = extractFeatures(otherPixels);
// matchFeatures(a!, b!);   // { inliers: 41, coverage: 0.52, mirrored: false, model: 'similarity', matrix: [...] } or null
// ```
import { loadKernel, wasmFlavor, type BaseExports, type Kernel, type WasmFlavor } from './wasm-core.js';

interface FeaturesExports extends BaseExports {
  extractFeatures(src: number, w: number, h: number, channels: number, max: number, keep: number, inner: number): number;
  featuresOutput(): number;
  innerPictureBox(): number;
  analysisWidth(): number;
  analysisHeight(): number;
  matchSets(a: number, na: number, aw: number, ah: number, b: number, nb: number, bw: number, bh: number, mirror: number): number;
  matchModel(): number;
  matchCoverage(): number;
  matchAffine(): number;
  matchCorrespondences(): number;
}

/** The extraction's parameters (assembly/features/config.ts); a set of another version is not comparable. */
export const FEATURES_VERSION = 1;
/** Bytes of one packed feature: x, y (u16 fractions of the analysis image), angle, level, 2 zero bytes, 32 descriptor bytes. */
export const FEATURE_BYTES = 40;
/** Where a feature's descriptor begins within its FEATURE_BYTES. */
export const FEATURE_DESCRIPTOR_OFFSET = 8;
/** Levels of the pyramid (a feature's level is below it). */
export const FEATURE_LEVELS = 6;
/** Features a query is matched with, a record keeps, and the retrieval index takes of a record. */
export const QUERY_FEATURES_MAX = 512;
export const RECORD_FEATURES_MAX = 256;
export const INDEXED_FEATURES = 64;
/**
 * The query's features the retrieval index is asked with: its strongest 128 find the
 * copy as often as all 512 (the weaker ones are the least repeatable) at a quarter of the
 * cells scanned (docs/features.md).
 */
export const RETRIEVAL_FEATURES = 128;
/** An image with fewer features than this gets none (flat graphics, tiny icons): the global hashes' rule applies to it. */
export const MIN_FEATURES = 48;
/** A match needs this many geometric inliers (docs/features.md: no false match in the dev corpus's pairs at it). */
export const MIN_INLIERS = 26;
/** ... and its inliers must span this share of the query's area (a clump of inliers on a logo is not a picture). */
export const MIN_COVERAGE = 0.06;
/**
 * A match whose inliers are spread over much of the query (their hull on SPREAD_COVERAGE
 * of it or more) needs SPREAD_MIN_INLIERS, two fewer: chance agreement between different
 * pictures clumps on what they share (a label, a dialog, a logo), and a crop of a figure
 * or a photo rotated and cut keeps a few inliers less over the whole of it
 * (docs/features.md: 5 pairs of different pictures of the dev corpus's 951,510 come in
 * at it, against 4 copies of the 67 photos' crops).
 */
export const SPREAD_MIN_INLIERS = MIN_INLIERS - 2;
export const SPREAD_COVERAGE = 0.4;
/**
 * A picture shown small inside a larger canvas (a phone screenshot puts it on 23-28 % of
 * the query, the bench's wide frame on 46 %): when the record's frame, mapped into the
 * query, covers MIN_SHOWN to MAX_SHOWN of it, MIN_COVERAGE counts against that part alone,
 * and the match then needs FRAMED_MIN_INLIERS (docs/features.md: the distinct pairs of
 * the dev corpus that 6 % of the shown part alone would admit have 26-56 inliers, and
 * 30-40 where the part is MIN_SHOWN to MAX_SHOWN).
 */
export const MIN_SHOWN = 0.1;
export const MAX_SHOWN = 1 / 3;
export const FRAMED_MIN_INLIERS = 2 * MIN_INLIERS;
/**
 * A verify-file candidate PDQ finds within this many bits (of 256, the query's dihedral
 * hashes, both of quality >= 50) stands when the geometric check fails: a copy too small
 * or too soft for its features to agree (a quarter-size copy), which PDQ still finds.
 * Meta's own threshold: distinct pictures of the dev corpus come this close in 0.03 % of
 * pairs, against 6 % for ImagePHash at 60 (docs/features.md).
 */
export const NEAR_COPY_PDQ_DISTANCE = 31;
/** The encoded set's header: 'PF', version, 0, width u16, height u16, count u16 (little-endian). */
const HEADER_BYTES = 10;
/** The most features one set holds (the kernel's MAX_FEATURES). */
export const FEATURES_MAX = 1024;

export interface FeatureSet {
  version: number;
  /** The analysis image's size in pixels (the coordinates' frame). */
  width: number;
  height: number;
  count: number;
  /** count x FEATURE_BYTES packed features, strongest first (a query's with `inner`: the inner picture's and the whole image's alternating). */
  bytes: Uint8Array;
}

export interface FeaturePixels {
  data: Uint8Array;
  width: number;
  height: number;
  /** 1 grey, 3 RGB, 4 RGBA (composited over white). */
  channels: number;
}

export interface FeatureMatch {
  /** Correspondences the transform maps (one to one). */
  inliers: number;
  /** Descriptor correspondences that passed the ratio test, before the geometry. */
  correspondences: number;
  /** Share (0-1) of the query's area the inliers' convex hull covers. */
  coverage: number;
  /** Share (0-1) of the query's area the record's picture shows in: its frame mapped by the transform, clipped to the query's. */
  shown: number;
  /** The query matched as its mirror image. */
  mirrored: boolean;
  model: 'similarity' | 'affine';
  /** [a, b, tx, c, d, ty]: record = [a b; c d] query + [tx; ty], in analysis pixels (the query mirrored first when `mirrored`). */
  matrix: number[];
}

export class FeatureSetError extends Error {
  override name = 'FeatureSetError';
}

const kernels = new Map<WasmFlavor, Kernel<FeaturesExports>>();

function kernel(flavor: WasmFlavor = wasmFlavor): Kernel<FeaturesExports> {
  let k = kernels.get(flavor);
  if (k === undefined) {
    k = loadKernel<FeaturesExports>('features', flavor);
    kernels.set(flavor, k);
  }
  return k;
}

/** The analysis image's area (assembly/features/config.ts ANALYSIS_PIXELS); pictures under half of it are enlarged first. */
const ANALYSIS_PIXELS = 640 * 480;
const UPSCALE_BELOW = ANALYSIS_PIXELS / 2;

/**
 * A small picture as grey enlarged (bilinear, at most 2x) towards the analysis size: the
 * pyramid only goes down, so without this a copy at half the size of a small original
 * has its features below the smallest scale the original's were found at. Luma as the
 * kernel takes it (299 R + 587 G + 114 B, RGBA over white).
 */
function upscaled({ data, width, height, channels }: FeaturePixels): { data: Uint8Array; width: number; height: number } {
  const f = Math.min(2, Math.sqrt(ANALYSIS_PIXELS / (width * height)));
  const grey = new Float32Array(width * height);
  for (let i = 0; i < width * height; i++) {
    if (channels === 1) {
      grey[i] = data[i];
      continue;
    }
    const o = i * channels;
    const a = channels === 4 ? data[o + 3] / 255 : 1;
    const y = (299 * data[o] + 587 * data[o + 1] + 114 * data[o + 2]) / 1000;
    grey[i] = y * a + 255 * (1 - a);
  }
  const ow = Math.max(1, Math.round(width * f));
  const oh = Math.max(1, Math.round(height * f));
  const out = new Uint8Array(ow * oh);
  for (let y = 0; y < oh; y++) {
    const sy = Math.min(height - 1, Math.max(0, ((y + 0.5) * height) / oh - 0.5));
    const y0 = Math.floor(sy);
    const y1 = Math.min(height - 1, y0 + 1);
    const fy = sy - y0;
    for (let x = 0; x < ow; x++) {
      const sx = Math.min(width - 1, Math.max(0, ((x + 0.5) * width) / ow - 0.5));
      const x0 = Math.floor(sx);
      const x1 = Math.min(width - 1, x0 + 1);
      const fx = sx - x0;
      const top = grey[y0 * width + x0] * (1 - fx) + grey[y0 * width + x1] * fx;
      const bottom = grey[y1 * width + x0] * (1 - fx) + grey[y1 * width + x1] * fx;
      out[y * ow + x] = Math.round(top * (1 - fy) + bottom * fy);
    }
  }
  return { data: out, width: ow, height: oh };
}

/**
 * The local features of decoded pixels (the same decode as ImagePHash and PDQ: one
 * decode gives all three), at most `max` (default QUERY_FEATURES_MAX), strongest and
 * spread first; null when the picture has fewer than MIN_FEATURES. With `keep`, only the
 * first `keep` of those `max` (the same features, byte for byte, without describing the
 * rest: `{ keep: RECORD_FEATURES_MAX }` is recordFeatures of the whole extraction).
 *
 * With `inner` (a query's option, verify-file's): when the image shows a picture inside a
 * plain frame or a screen (flat margins, bars and text lines around it: innerPicture in
 * assembly/features/inner.ts), that picture's own features too, extracted from its pixels
 * at the analysis size and placed in the image's frame, the two lists alternating (so
 * the first features still hold the strongest of both) up to FEATURES_MAX. Not for a
 * record: a record keeps the first features of the whole image.
 */
export function extractFeatures(pixels: FeaturePixels, options: { max?: number; keep?: number; inner?: boolean; flavor?: WasmFlavor } = {}): FeatureSet | null {
  const { data, width, height, channels } = pixels;
  if (![1, 3, 4].includes(channels)) throw new RangeError('channels is 1, 3 or 4');
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || data.length !== width * height * channels) {
    throw new RangeError('data is width x height x channels bytes');
  }
  const max = options.max ?? QUERY_FEATURES_MAX;
  if (!Number.isInteger(max) || max < 1 || max > FEATURES_MAX) throw new RangeError(`max is an integer from 1 to ${FEATURES_MAX}`);
  const keep = options.keep ?? max;
  if (options.keep !== undefined && (!Number.isInteger(keep) || keep < MIN_FEATURES || keep > max)) throw new RangeError(`keep is an integer from MIN_FEATURES (${MIN_FEATURES}) to max`);
  const inner = options.inner === true;
  if (inner && options.keep !== undefined) throw new RangeError('inner is a query\'s option and keep a record\'s: not both');
  const k = kernel(options.flavor);
  const small = width * height < UPSCALE_BELOW ? upscaled(pixels) : null;
  const src = k.writeScratch(small?.data ?? data);
  const count = small === null
    ? k.exports.extractFeatures(src, width, height, channels, max, keep, inner ? 1 : 0)
    : k.exports.extractFeatures(src, small.width, small.height, 1, max, keep, inner ? 1 : 0);
  const frame = { width: k.exports.analysisWidth(), height: k.exports.analysisHeight() };
  const whole: FeatureSet | null = count < MIN_FEATURES ? null : { version: FEATURES_VERSION, ...frame, count, bytes: k.read(k.exports.featuresOutput(), count * FEATURE_BYTES) };
  if (!inner) return whole;
  const [left, top, right, bottom] = Array.from(k.view(Int32Array, k.exports.innerPictureBox(), 4));
  if (right === 0) return whole;
  // the box in the pixels' own coordinates (the analysis image is a scaled copy of them)
  const box = {
    left: Math.floor((left * width) / frame.width),
    top: Math.floor((top * height) / frame.height),
    right: Math.min(width, Math.ceil((right * width) / frame.width)),
    bottom: Math.min(height, Math.ceil((bottom * height) / frame.height)),
  };
  const picture = extractFeatures(croppedPixels(pixels, box), { max, flavor: options.flavor });
  return picture === null ? whole : withInnerPicture(whole, picture, box, width, height, frame);
}

interface PixelBox {
  left: number;
  top: number;
  /** Exclusive. */
  right: number;
  bottom: number;
}

/** The pixels of a box, as their own image. */
function croppedPixels({ data, width, channels }: FeaturePixels, box: PixelBox): FeaturePixels {
  const w = box.right - box.left;
  const h = box.bottom - box.top;
  const out = new Uint8Array(w * h * channels);
  for (let y = 0; y < h; y++) {
    const from = ((box.top + y) * width + box.left) * channels;
    out.set(data.subarray(from, from + w * channels), y * w * channels);
  }
  return { data: out, width: w, height: h, channels };
}

/**
 * The whole image's set (or null) and its inner picture's, one set in the whole image's
 * frame: the picture's coordinates (fractions of its box) mapped into the image's, the two
 * alternating, the picture's first.
 */
function withInnerPicture(whole: FeatureSet | null, picture: FeatureSet, box: PixelBox, width: number, height: number, frame: { width: number; height: number }): FeatureSet {
  const placed = picture.bytes.slice(0, picture.count * FEATURE_BYTES);
  const v = new DataView(placed.buffer);
  const place = (fraction: number, from: number, size: number, total: number) => Math.min(65535, Math.round(((from + (fraction / 65536) * size) / total) * 65536));
  for (let i = 0; i < picture.count; i++) {
    const o = i * FEATURE_BYTES;
    v.setUint16(o, place(v.getUint16(o, true), box.left, box.right - box.left, width), true);
    v.setUint16(o + 2, place(v.getUint16(o + 2, true), box.top, box.bottom - box.top, height), true);
  }
  const wholeCount = whole?.count ?? 0;
  const count = Math.min(FEATURES_MAX, wholeCount + picture.count);
  const bytes = new Uint8Array(count * FEATURE_BYTES);
  let n = 0;
  for (let i = 0; n < count; i++) {
    if (i < picture.count && n < count) bytes.set(placed.subarray(i * FEATURE_BYTES, (i + 1) * FEATURE_BYTES), FEATURE_BYTES * n++);
    if (i < wholeCount && n < count) bytes.set(whole!.bytes.subarray(i * FEATURE_BYTES, (i + 1) * FEATURE_BYTES), FEATURE_BYTES * n++);
  }
  return { version: FEATURES_VERSION, width: frame.width, height: frame.height, count, bytes };
}

/** The first `n` features of a set (a prefix is a set: strongest and spread first). */
export function prefixOf(set: FeatureSet, n: number): FeatureSet {
  const count = Math.min(set.count, n);
  return { ...set, count, bytes: set.bytes.subarray(0, count * FEATURE_BYTES) };
}

/** What a record keeps of an image's set: its first RECORD_FEATURES_MAX features. */
export function recordFeatures(set: FeatureSet): FeatureSet {
  return prefixOf(set, RECORD_FEATURES_MAX);
}

/** The descriptors (32 bytes each) of a set's first `limit` features, for the retrieval index. */
export function descriptorsOf(set: FeatureSet, limit = INDEXED_FEATURES): Uint8Array {
  const n = Math.min(set.count, limit);
  const out = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) out.set(set.bytes.subarray(i * FEATURE_BYTES + FEATURE_DESCRIPTOR_OFFSET, (i + 1) * FEATURE_BYTES), i * 32);
  return out;
}

/** A set as bytes (what a record's `features` digest is of, and what is stored beside it). */
export function encodeFeatureSet(set: FeatureSet): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + set.count * FEATURE_BYTES);
  const v = new DataView(out.buffer);
  out[0] = 0x50; // P
  out[1] = 0x46; // F
  out[2] = set.version;
  v.setUint16(4, set.width, true);
  v.setUint16(6, set.height, true);
  v.setUint16(8, set.count, true);
  out.set(set.bytes.subarray(0, set.count * FEATURE_BYTES), HEADER_BYTES);
  return out;
}

/** The set encodeFeatureSet made; throws FeatureSetError for bytes that are not one (the checks a stored set passed). */
export function decodeFeatureSet(bytes: Uint8Array): FeatureSet {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER_BYTES || bytes[0] !== 0x50 || bytes[1] !== 0x46) throw new FeatureSetError('not a feature set');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = bytes[2];
  if (version !== FEATURES_VERSION) throw new FeatureSetError(`feature set version ${version} (this build reads ${FEATURES_VERSION})`);
  if (bytes[3] !== 0) throw new FeatureSetError('a feature set\'s reserved byte is 0');
  const width = v.getUint16(4, true);
  const height = v.getUint16(6, true);
  const count = v.getUint16(8, true);
  if (width < 1 || height < 1) throw new FeatureSetError('a feature set\'s image is at least 1 x 1');
  if (count < 1 || count > FEATURES_MAX) throw new FeatureSetError(`a feature set holds 1 to ${FEATURES_MAX} features`);
  if (bytes.length !== HEADER_BYTES + count * FEATURE_BYTES) throw new FeatureSetError(`a feature set of ${count} features is ${HEADER_BYTES + count * FEATURE_BYTES} bytes`);
  for (let i = 0; i < count; i++) {
    const f = HEADER_BYTES + i * FEATURE_BYTES;
    if (bytes[f + 5] >= FEATURE_LEVELS || bytes[f + 6] !== 0 || bytes[f + 7] !== 0) throw new FeatureSetError(`feature ${i} has a level over ${FEATURE_LEVELS - 1} or non-zero reserved bytes`);
  }
  return { version, width, height, count, bytes: bytes.slice(HEADER_BYTES) };
}

/**
 * The geometric check of a query set against a record's, as it comes out (however weak):
 * the transform with the most inliers, the query as it is or (with `mirror`, default
 * true) mirrored.
 */
export function compareFeatures(query: FeatureSet, record: FeatureSet, options: { mirror?: boolean; flavor?: WasmFlavor } = {}): FeatureMatch {
  const k = kernel(options.flavor);
  const qn = Math.min(query.count, FEATURES_MAX);
  const rn = Math.min(record.count, FEATURES_MAX);
  const joined = new Uint8Array((qn + rn) * FEATURE_BYTES);
  joined.set(query.bytes.subarray(0, qn * FEATURE_BYTES));
  joined.set(record.bytes.subarray(0, rn * FEATURE_BYTES), qn * FEATURE_BYTES);
  const a = k.writeScratch(joined);
  const r = k.exports.matchSets(a, qn, query.width, query.height, a + qn * FEATURE_BYTES, rn, record.width, record.height, options.mirror === false ? 0 : 1);
  const matrix = Array.from(k.view(Float64Array, k.exports.matchModel(), 6));
  const inliers = r & 0xffff;
  return {
    inliers,
    correspondences: k.exports.matchCorrespondences(),
    coverage: k.exports.matchCoverage(),
    shown: inliers === 0 ? 0 : shownShare(matrix, query, record),
    mirrored: (r & 0x10000) !== 0,
    model: k.exports.matchAffine() === 1 ? 'affine' : 'similarity',
    matrix,
  };
}

/**
 * The share of the query's frame (analysis pixels) that the record's frame covers when
 * mapped into it by the inverse of `matrix` (query to record): the record's rectangle, a
 * parallelogram in the query, clipped to the query's rectangle (Sutherland-Hodgman).
 */
export function shownShare(matrix: readonly number[], query: { width: number; height: number }, record: { width: number; height: number }): number {
  const [a, b, tx, c, d, ty] = matrix;
  const det = a * d - b * c;
  if (!(Math.abs(det) > 1e-12)) return 0;
  const toQuery = (x: number, y: number): [number, number] => [(d * (x - tx) - b * (y - ty)) / det, (a * (y - ty) - c * (x - tx)) / det];
  let polygon = [toQuery(0, 0), toQuery(record.width, 0), toQuery(record.width, record.height), toQuery(0, record.height)];
  // keep the side of each of the query's four edges where axis (0 x, 1 y) is within its bound
  for (const [axis, bound, below] of [[0, 0, false], [0, query.width, true], [1, 0, false], [1, query.height, true]] as const) {
    const inside = (p: [number, number]) => (below ? p[axis] <= bound : p[axis] >= bound);
    const cross = (p: [number, number], q: [number, number]): [number, number] => {
      const t = (bound - p[axis]) / (q[axis] - p[axis]);
      return [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])];
    };
    const kept: [number, number][] = [];
    for (let i = 0; i < polygon.length; i++) {
      const p = polygon[i];
      const q = polygon[(i + 1) % polygon.length];
      if (inside(q)) {
        if (!inside(p)) kept.push(cross(p, q));
        kept.push(q);
      } else if (inside(p)) kept.push(cross(p, q));
    }
    polygon = kept;
  }
  let twice = 0;
  for (let i = 0; i < polygon.length; i++) {
    const [x0, y0] = polygon[i];
    const [x1, y1] = polygon[(i + 1) % polygon.length];
    twice += x0 * y1 - x1 * y0;
  }
  return Math.min(1, Math.abs(twice) / 2 / (query.width * query.height));
}

/**
 * Whether a check's answer confirms the pair: MIN_INLIERS covering MIN_COVERAGE of the
 * query, or, for a picture shown small inside the query (MIN_SHOWN to MAX_SHOWN of it),
 * FRAMED_MIN_INLIERS covering MIN_COVERAGE of the part it shows in; or SPREAD_MIN_INLIERS
 * covering SPREAD_COVERAGE of the query.
 */
export function confirms(m: FeatureMatch): boolean {
  if (m.inliers >= SPREAD_MIN_INLIERS && m.coverage >= SPREAD_COVERAGE) return true;
  if (m.inliers < MIN_INLIERS) return false;
  if (m.coverage >= MIN_COVERAGE) return true;
  const framed = m.shown >= MIN_SHOWN && m.shown <= MAX_SHOWN;
  return framed && m.inliers >= FRAMED_MIN_INLIERS && m.coverage >= MIN_COVERAGE * m.shown;
}

/** The match of a query set with a record's when the check confirms it (confirms()), else null. */
export function matchFeatures(query: FeatureSet, record: FeatureSet, options: { mirror?: boolean; flavor?: WasmFlavor } = {}): FeatureMatch | null {
  if (query.version !== record.version) return null;
  const m = compareFeatures(query, record, options);
  return confirms(m) ? m : null;
}
