// The geometric check of two feature sets (issue 32): do a query image and a record's
// image show the same picture, and where? docs/features.md says why each step is so.
//
// 1. Correspondences: each query feature's nearest record feature by the Hamming
//    distance of the 256-bit descriptors (brute force; i8x16.popcnt in the SIMD build),
//    kept when within MATCH_MAX_DISTANCE and clearly nearer than the second nearest
//    (Lowe's ratio test, RATIO_PERCENT); a record feature keeps only its nearest query
//    feature (one to one).
// 2. Hypotheses: a similarity transform (scale, rotation, shift) from each pair of the
//    best HYPOTHESIS_POOL correspondences whose keypoint angles agree with the rotation
//    they imply (a fixed, deterministic sample of pairs when there are many), counted by
//    the correspondences it maps within a tolerance with a consistent keypoint angle.
// 3. Refinement: the best hypothesis refitted by least squares on its inliers and
//    recounted (REFINE_ROUNDS); then an affine transform fitted on those inliers, kept
//    when it maps more of them (mild perspective and anisotropic scaling) and is sane.
// 4. The answer: the inliers (one to one), the transform (query analysis pixels to the
//    record's), and the share of the query's analysis image the inliers' convex hull
//    covers.
// The mirrored check runs the same on the query's features mirrored (x -> width - x,
// angle -> 128 - angle, descriptor halves swapped: descriptor.ts); the better one wins.

import { DESCRIPTOR_OFFSET, FEATURE_BYTES, MAX_FEATURES, SCALE_FACTOR } from './config';
import { Block, staticBlock } from './block';

/** A correspondence's descriptors differ in at most this many of the 256 bits. */
export const MATCH_MAX_DISTANCE: i32 = 64;
/** The nearest must be below this percentage of the second nearest's distance. */
export const RATIO_PERCENT: i32 = 80;
/** Correspondences (best first) that hypotheses are drawn from, and pairs tried at most. */
const HYPOTHESIS_POOL: i32 = 64;
const MAX_PAIRS: i32 = 1024;
/** Keypoint angles agree within this many 256ths of a turn (about 34 degrees). */
const ANGLE_TOLERANCE: i32 = 24;
/** Rounds of least-squares refitting. */
const REFINE_ROUNDS: i32 = 3;
/** A transform's scale stays within [1 / MAX_SCALE, MAX_SCALE]. */
const MAX_SCALE: f64 = 8.0;
/** An affine transform's axes' scales differ at most this much (ratio). */
const MAX_ANISOTROPY: f64 = 3.0;

const QUERY: Block = staticBlock(); // the query's features as used (mirrored or not): x, y f64 pairs
const CORR_A: Block = staticBlock(); // i32 query index
const CORR_B: Block = staticBlock(); // i32 record index
const CORR_D: Block = staticBlock(); // f64 distance (sort key, negated)
const CORR_ORDER: Block = staticBlock();
const BEST_FOR_B: Block = staticBlock(); // per record feature: i32 best corr, or -1
const INLIER: Block = staticBlock(); // u8 per corr
const BEST_INLIER: Block = staticBlock();
const HULL: Block = staticBlock(); // f64 points, then the hull
const RDESC: Block = staticBlock(); // the record's descriptors, 32 bytes each, packed (read once per query feature)
// per correspondence, once per pass (countInliers reads them in order for every hypothesis):
const CORR_QX: Block = staticBlock(); // f64 query x
const CORR_QY: Block = staticBlock(); // f64 query y
const CORR_RX: Block = staticBlock(); // f64 record x
const CORR_RY: Block = staticBlock(); // f64 record y
const CORR_TURN: Block = staticBlock(); // i32 the record keypoint's angle less the query's (angleDelta)

// The answer of the last match (read by the host after matchSets)
const MODEL: usize = memory.data(6 * 8); // a, b, tx, c, d, ty: [x'; y'] = [a b; c d][x; y] + [tx; ty]
let resultInliers: i32 = 0;
let resultCoverage: f64 = 0.0;
let resultAffine: i32 = 0;
let resultCorrespondences: i32 = 0;
let passAffine: i32 = 0;

export function matchModel(): usize { return MODEL; }
export function matchCoverage(): f64 { return resultCoverage; }
export function matchAffine(): i32 { return resultAffine; }
export function matchCorrespondences(): i32 { return resultCorrespondences; }

@inline function fx(set: usize, i: i32): u32 { return <u32>load<u16>(set + <usize>(i * FEATURE_BYTES)); }
@inline function fy(set: usize, i: i32): u32 { return <u32>load<u16>(set + <usize>(i * FEATURE_BYTES), 2); }
@inline function fangle(set: usize, i: i32): i32 { return <i32>load<u8>(set + <usize>(i * FEATURE_BYTES), 4); }
@inline function flevel(set: usize, i: i32): i32 { return <i32>load<u8>(set + <usize>(i * FEATURE_BYTES), 5); }

// the query as matched: descriptors (32 bytes each, mirrored or not), angles, points
const QDESC: Block = staticBlock();
const QANGLE: Block = staticBlock();

/** A signed difference of two angle bytes, in -128..127. */
@inline
function angleDelta(a: i32, b: i32): i32 {
  return (((a - b) & 255) ^ 128) - 128;
}

let nq: i32 = 0;
let nr: i32 = 0;
let rset: usize = 0;
let rw: f64 = 0;
let rh: f64 = 0;
let ncorr: i32 = 0;

@inline function qx(i: i32): f64 { return load<f64>(QUERY.ptr + (<usize>i << 4)); }
@inline function qy(i: i32): f64 { return load<f64>(QUERY.ptr + (<usize>i << 4) + 8); }
@inline function rx(j: i32): f64 { return <f64>fx(rset, j) / 65536.0 * rw; }
@inline function ry(j: i32): f64 { return <f64>fy(rset, j) / 65536.0 * rh; }
@inline function ca(k: i32): i32 { return load<i32>(CORR_A.ptr + (<usize>k << 2)); }
@inline function cb(k: i32): i32 { return load<i32>(CORR_B.ptr + (<usize>k << 2)); }

/** The query's features as matched, mirrored or not, into QUERY, QDESC, QANGLE. */
function prepareQuery(q: usize, n: i32, w: f64, h: f64, mirrored: bool): void {
  const pts = QUERY.reserve(<usize>n << 4);
  const desc = QDESC.reserve(<usize>n << 5);
  const ang = QANGLE.reserve(<usize>n << 2);
  for (let i = 0; i < n; i++) {
    const x = <f64>fx(q, i) / 65536.0 * w;
    store<f64>(pts + (<usize>i << 4), mirrored ? w - x : x);
    store<f64>(pts + (<usize>i << 4) + 8, <f64>fy(q, i) / 65536.0 * h);
    const a = fangle(q, i);
    store<i32>(ang + (<usize>i << 2), mirrored ? (128 - a) & 255 : a);
    const d = q + <usize>(i * FEATURE_BYTES + DESCRIPTOR_OFFSET);
    if (mirrored) {
      memory.copy(desc + (<usize>i << 5), d + 16, 16);
      memory.copy(desc + (<usize>i << 5) + 16, d, 16);
    } else {
      memory.copy(desc + (<usize>i << 5), d, 32);
    }
  }
}

// The nearest record descriptor to a query's (near1 bits away, the first such: nearJ, or
// -1) and the second smallest distance (near2; equal to near1 on a tie), set by nearestTwo.
let near1: i32 = 257;
let near2: i32 = 257;
let nearJ: i32 = -1;

/** Takes record descriptor j at distance d into (near1, near2, nearJ), as a scan in j order does. */
@inline
function takeDistance(d: i32, j: i32): void {
  if (d < near1) {
    near2 = near1;
    near1 = d;
    nearJ = j;
  } else if (d < near2) {
    near2 = d;
  }
}

/**
 * One query descriptor against the record's packed ones, by 64-bit popcounts in both
 * builds: i64.popcnt is one instruction on x86-64 and arm64, where i8x16.popcnt is a
 * table lookup of several (a four-at-a-time SIMD search measured 20 % slower per check).
 */
function nearestTwo(p: usize): void {
  near1 = 257;
  near2 = 257;
  nearJ = -1;
  const q0 = load<u64>(p);
  const q1 = load<u64>(p, 8);
  const q2 = load<u64>(p, 16);
  const q3 = load<u64>(p, 24);
  let r = RDESC.ptr;
  for (let j = 0; j < nr; j++, r += 32) {
    const d = <i32>(popcnt<u64>(q0 ^ load<u64>(r)) + popcnt<u64>(q1 ^ load<u64>(r, 8)) + popcnt<u64>(q2 ^ load<u64>(r, 16)) + popcnt<u64>(q3 ^ load<u64>(r, 24)));
    takeDistance(d, j);
  }
}

/** Step 1: the correspondences, best first in CORR_ORDER; returns how many. */
function correspond(): i32 {
  const cap = <usize>max<i32>(nq, 1);
  CORR_A.reserve(cap << 2);
  CORR_B.reserve(cap << 2);
  CORR_D.reserve(cap << 3);
  const bestForB = BEST_FOR_B.reserve(<usize>max<i32>(nr, 1) << 2);
  memory.fill(bestForB, 0xff, <usize>nr << 2);
  let n = 0;
  for (let i = 0; i < nq; i++) {
    const p = QDESC.ptr + (<usize>i << 5);
    nearestTwo(p);
    const d1 = near1;
    const d2 = near2;
    const j1 = nearJ;
    if (j1 < 0 || d1 > MATCH_MAX_DISTANCE || d1 * 100 >= RATIO_PERCENT * d2) continue;
    const prior = load<i32>(bestForB + (<usize>j1 << 2));
    if (prior >= 0) {
      // one to one: the record feature keeps its nearer query feature
      if (load<f64>(CORR_D.ptr + (<usize>prior << 3)) >= -<f64>d1) continue;
      store<i32>(CORR_A.ptr + (<usize>prior << 2), i);
      store<f64>(CORR_D.ptr + (<usize>prior << 3), -<f64>d1);
      continue;
    }
    store<i32>(bestForB + (<usize>j1 << 2), n);
    store<i32>(CORR_A.ptr + (<usize>n << 2), i);
    store<i32>(CORR_B.ptr + (<usize>n << 2), j1);
    store<f64>(CORR_D.ptr + (<usize>n << 3), -<f64>d1);
    n++;
  }
  const order = CORR_ORDER.reserve(<usize>max<i32>(n, 1) << 2);
  for (let k = 0; k < n; k++) store<u32>(order + (<usize>k << 2), <u32>k);
  sortByKeyDescendingLocal(order, n, CORR_D.ptr);
  return n;
}

// a small insertion sort is enough for a few hundred correspondences (keys are distances 0-64)
function sortByKeyDescendingLocal(idx: usize, n: i32, keys: usize): void {
  for (let i = 1; i < n; i++) {
    const v = load<u32>(idx + (<usize>i << 2));
    const key = load<f64>(keys + (<usize>v << 3));
    let j = i - 1;
    while (j >= 0 && load<f64>(keys + (<usize>load<u32>(idx + (<usize>j << 2)) << 3)) < key) {
      store<u32>(idx + (<usize>(j + 1) << 2), load<u32>(idx + (<usize>j << 2)));
      j--;
    }
    store<u32>(idx + (<usize>(j + 1) << 2), v);
  }
}

// the current model
let ma: f64 = 1;
let mb: f64 = 0;
let mtx: f64 = 0;
let mc: f64 = 0;
let md: f64 = 1;
let mty: f64 = 0;

/** The model's rotation in angle bytes (for a similarity, and the mean one of an affine map). */
@inline
function modelAngle(): i32 {
  const t = Math.atan2(mc - mb, ma + md);
  return (<i32>Math.round(t * 128.0 / Math.PI)) & 255;
}

/** The correspondences' points and angle turns in order (CORR_QX ... CORR_TURN), for countInliers. */
function gatherCorrespondences(): void {
  const bytes = <usize>max<i32>(ncorr, 1) << 3;
  const px = CORR_QX.reserve(bytes);
  const py = CORR_QY.reserve(bytes);
  const sx = CORR_RX.reserve(bytes);
  const sy = CORR_RY.reserve(bytes);
  const turn = CORR_TURN.reserve(bytes >> 1);
  for (let k = 0; k < ncorr; k++) {
    const i = ca(k);
    const j = cb(k);
    const o = <usize>k << 3;
    store<f64>(px + o, qx(i));
    store<f64>(py + o, qy(i));
    store<f64>(sx + o, rx(j));
    store<f64>(sy + o, ry(j));
    store<i32>(turn + (<usize>k << 2), angleDelta(fangle(rset, j), load<i32>(QANGLE.ptr + (<usize>i << 2))));
  }
}

/**
 * Counts (and marks in `marks`) the correspondences the model maps within `tol2`
 * (squared) with a consistent angle. Without marks, it stops once the count cannot
 * exceed `beat` (returning a count <= beat: the caller keeps only a count above it).
 */
function countInliers(tol2: f64, marks: usize, beat: i32 = -1): i32 {
  const rot = modelAngle();
  const px = CORR_QX.ptr;
  const py = CORR_QY.ptr;
  const sx = CORR_RX.ptr;
  const sy = CORR_RY.ptr;
  const turn = CORR_TURN.ptr;
  let n = 0;
  for (let k = 0; k < ncorr; k++) {
    if (marks == 0 && n + (ncorr - k) <= beat) return n;
    const o = <usize>k << 3;
    const x = load<f64>(px + o);
    const y = load<f64>(py + o);
    const ex = ma * x + mb * y + mtx - load<f64>(sx + o);
    const ey = mc * x + md * y + mty - load<f64>(sy + o);
    let ok = ex * ex + ey * ey <= tol2;
    if (ok) {
      const da = angleDelta(load<i32>(turn + (<usize>k << 2)), rot);
      ok = da <= ANGLE_TOLERANCE && da >= -ANGLE_TOLERANCE;
    }
    if (marks != 0) store<u8>(marks + <usize>k, ok ? 1 : 0);
    if (ok) n++;
  }
  return n;
}

/** The similarity mapping query points i1, i2 onto record points j1, j2; false when degenerate or out of range. */
function twoPointSimilarity(k1: i32, k2: i32): bool {
  const ax = qx(ca(k1)), ay = qy(ca(k1)), bx = qx(ca(k2)), by = qy(ca(k2));
  const cx = rx(cb(k1)), cy = ry(cb(k1)), dx = rx(cb(k2)), dy = ry(cb(k2));
  const ux = bx - ax, uy = by - ay, vx = dx - cx, vy = dy - cy;
  const uu = ux * ux + uy * uy;
  if (uu < 64.0) return false; // points closer than 8 pixels fix no rotation
  // [vx; vy] = [p -q; q p][ux; uy]
  const p = (ux * vx + uy * vy) / uu;
  const q = (ux * vy - uy * vx) / uu;
  const s = Math.sqrt(p * p + q * q);
  if (s > MAX_SCALE || s < 1.0 / MAX_SCALE) return false;
  ma = p; mb = -q; mc = q; md = p;
  mtx = cx - (p * ax - q * ay);
  mty = cy - (q * ax + p * ay);
  // both keypoints' angle differences agree with the rotation
  const rot = modelAngle();
  const d1 = angleDelta(angleDelta(fangle(rset, cb(k1)), load<i32>(QANGLE.ptr + (<usize>ca(k1) << 2))), rot);
  const d2 = angleDelta(angleDelta(fangle(rset, cb(k2)), load<i32>(QANGLE.ptr + (<usize>ca(k2) << 2))), rot);
  return d1 <= ANGLE_TOLERANCE && d1 >= -ANGLE_TOLERANCE && d2 <= ANGLE_TOLERANCE && d2 >= -ANGLE_TOLERANCE;
}

/** Least-squares similarity over the marked correspondences; false when fewer than 2. */
function fitSimilarity(marks: usize): bool {
  let n = 0.0, sx = 0.0, sy = 0.0, tx = 0.0, ty = 0.0;
  for (let k = 0; k < ncorr; k++) {
    if (load<u8>(marks + <usize>k) == 0) continue;
    n += 1; sx += qx(ca(k)); sy += qy(ca(k)); tx += rx(cb(k)); ty += ry(cb(k));
  }
  if (n < 2) return false;
  sx /= n; sy /= n; tx /= n; ty /= n;
  let num1 = 0.0, num2 = 0.0, den = 0.0;
  for (let k = 0; k < ncorr; k++) {
    if (load<u8>(marks + <usize>k) == 0) continue;
    const x = qx(ca(k)) - sx, y = qy(ca(k)) - sy, u = rx(cb(k)) - tx, v = ry(cb(k)) - ty;
    num1 += x * u + y * v;
    num2 += x * v - y * u;
    den += x * x + y * y;
  }
  if (den <= 0) return false;
  const p = num1 / den, q = num2 / den;
  const s = Math.sqrt(p * p + q * q);
  if (s > MAX_SCALE || s < 1.0 / MAX_SCALE) return false;
  ma = p; mb = -q; mc = q; md = p;
  mtx = tx - (p * sx - q * sy);
  mty = ty - (q * sx + p * sy);
  return true;
}

/** Least-squares affine map over the marked correspondences; false when fewer than 3, degenerate or not sane. */
function fitAffine(marks: usize): bool {
  let n = 0.0, sx = 0.0, sy = 0.0, tx = 0.0, ty = 0.0;
  for (let k = 0; k < ncorr; k++) {
    if (load<u8>(marks + <usize>k) == 0) continue;
    n += 1; sx += qx(ca(k)); sy += qy(ca(k)); tx += rx(cb(k)); ty += ry(cb(k));
  }
  if (n < 3) return false;
  sx /= n; sy /= n; tx /= n; ty /= n;
  let xx = 0.0, xy = 0.0, yy = 0.0, xu = 0.0, yu = 0.0, xv = 0.0, yv = 0.0;
  for (let k = 0; k < ncorr; k++) {
    if (load<u8>(marks + <usize>k) == 0) continue;
    const x = qx(ca(k)) - sx, y = qy(ca(k)) - sy, u = rx(cb(k)) - tx, v = ry(cb(k)) - ty;
    xx += x * x; xy += x * y; yy += y * y; xu += x * u; yu += y * u; xv += x * v; yv += y * v;
  }
  const det = xx * yy - xy * xy;
  if (det <= 1e-9 * (xx + yy) * (xx + yy)) return false;
  const a = (xu * yy - yu * xy) / det, b = (yu * xx - xu * xy) / det;
  const c = (xv * yy - yv * xy) / det, d = (yv * xx - xv * xy) / det;
  const dt = a * d - b * c;
  if (dt <= 0) return false; // a reflection: the mirrored check covers mirrored copies
  // singular values of [a b; c d]
  const e = (a + d) / 2, f = (a - d) / 2, g = (c + b) / 2, h = (c - b) / 2;
  const qq = Math.sqrt(e * e + h * h), rr = Math.sqrt(f * f + g * g);
  const s1 = qq + rr, s2 = qq - rr;
  if (s2 <= 0 || s1 / s2 > MAX_ANISOTROPY || s1 > MAX_SCALE || s2 < 1.0 / MAX_SCALE) return false;
  ma = a; mb = b; mc = c; md = d;
  mtx = tx - (a * sx + b * sy);
  mty = ty - (c * sx + d * sy);
  return true;
}

@inline
function saveModel(to: usize): void {
  store<f64>(to, ma); store<f64>(to, mb, 8); store<f64>(to, mtx, 16);
  store<f64>(to, mc, 24); store<f64>(to, md, 32); store<f64>(to, mty, 40);
}

@inline
function loadModel(from: usize): void {
  ma = load<f64>(from); mb = load<f64>(from, 8); mtx = load<f64>(from, 16);
  mc = load<f64>(from, 24); md = load<f64>(from, 32); mty = load<f64>(from, 40);
}

const TRIAL: usize = memory.data(6 * 8);
const BEST: usize = memory.data(6 * 8);

/** Twice the signed area of the triangle o, a, b. */
@inline
function cross(ox: f64, oy: f64, ax: f64, ay: f64, bx: f64, by: f64): f64 {
  return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox);
}

/** The area of the convex hull of the marked correspondences' query points (Andrew's monotone chain). */
function hullArea(marks: usize): f64 {
  let n = 0;
  const pts = HULL.reserve(<usize>(ncorr + 1) << 5);
  for (let k = 0; k < ncorr; k++) {
    if (load<u8>(marks + <usize>k) == 0) continue;
    store<f64>(pts + (<usize>n << 4), qx(ca(k)));
    store<f64>(pts + (<usize>n << 4) + 8, qy(ca(k)));
    n++;
  }
  if (n < 3) return 0;
  // insertion sort by x, then y
  for (let i = 1; i < n; i++) {
    const x = load<f64>(pts + (<usize>i << 4)), y = load<f64>(pts + (<usize>i << 4) + 8);
    let j = i - 1;
    while (j >= 0) {
      const px = load<f64>(pts + (<usize>j << 4)), py = load<f64>(pts + (<usize>j << 4) + 8);
      if (px < x || (px == x && py <= y)) break;
      store<f64>(pts + (<usize>(j + 1) << 4), px);
      store<f64>(pts + (<usize>(j + 1) << 4) + 8, py);
      j--;
    }
    store<f64>(pts + (<usize>(j + 1) << 4), x);
    store<f64>(pts + (<usize>(j + 1) << 4) + 8, y);
  }
  const hull = pts + (<usize>n << 4);
  let m = 0;
  // lower hull, then upper
  for (let pass = 0; pass < 2; pass++) {
    const start = m;
    for (let t = 0; t < n; t++) {
      const i = pass == 0 ? t : n - 1 - t;
      const x = load<f64>(pts + (<usize>i << 4)), y = load<f64>(pts + (<usize>i << 4) + 8);
      while (m >= start + 2) {
        const ax = load<f64>(hull + (<usize>(m - 2) << 4)), ay = load<f64>(hull + (<usize>(m - 2) << 4) + 8);
        const bx = load<f64>(hull + (<usize>(m - 1) << 4)), by = load<f64>(hull + (<usize>(m - 1) << 4) + 8);
        if (cross(ax, ay, bx, by, x, y) > 0) break;
        m--;
      }
      store<f64>(hull + (<usize>m << 4), x);
      store<f64>(hull + (<usize>m << 4) + 8, y);
      m++;
    }
    m--; // the last point is the next pass's first
  }
  let area = 0.0;
  for (let i = 0; i < m; i++) {
    const j = i + 1 < m ? i + 1 : 0;
    area += load<f64>(hull + (<usize>i << 4)) * load<f64>(hull + (<usize>j << 4) + 8) - load<f64>(hull + (<usize>j << 4)) * load<f64>(hull + (<usize>i << 4) + 8);
  }
  return Math.abs(area) / 2;
}

/** One direction (the query mirrored or not): the best model's inliers; the model in BEST, marks in BEST_INLIER. */
function matchOnce(tolerance: f64): i32 {
  ncorr = correspond();
  if (ncorr < 3) return 0;
  gatherCorrespondences();
  const marks = INLIER.reserve(<usize>ncorr);
  const bestMarks = BEST_INLIER.reserve(<usize>ncorr);
  const tol2 = tolerance * tolerance;
  const pool = ncorr < HYPOTHESIS_POOL ? ncorr : HYPOTHESIS_POOL;
  let best = 0;
  let tried = 0;
  // pairs of the pool's correspondences, the best ones first (stride over the pool once it is large)
  for (let s = 0; s < pool && tried < MAX_PAIRS; s++) {
    for (let t = s + 1; t < pool && tried < MAX_PAIRS; t++) {
      tried++;
      const k1 = <i32>load<u32>(CORR_ORDER.ptr + (<usize>s << 2));
      const k2 = <i32>load<u32>(CORR_ORDER.ptr + (<usize>t << 2));
      if (!twoPointSimilarity(k1, k2)) continue;
      const n = countInliers(tol2, 0, best);
      if (n > best) {
        best = n;
        saveModel(BEST);
      }
    }
  }
  if (best < 2) return 0;
  loadModel(BEST);
  best = countInliers(tol2, bestMarks);
  for (let r = 0; r < REFINE_ROUNDS; r++) {
    if (!fitSimilarity(bestMarks)) break;
    const n = countInliers(tol2, marks);
    if (n < best) break;
    best = n;
    saveModel(BEST);
    memory.copy(bestMarks, marks, <usize>ncorr);
  }
  loadModel(BEST);
  passAffine = 0;
  if (fitAffine(bestMarks)) {
    const n = countInliers(tol2, marks);
    if (n > best) {
      best = n;
      saveModel(BEST);
      memory.copy(bestMarks, marks, <usize>ncorr);
      passAffine = 1;
    }
  }
  loadModel(BEST);
  return best;
}

/**
 * Matches the query's `na` packed features at `a` (analysis image aw x ah) with the
 * record's `nb` at `b` (bw x bh): returns the inliers of the better direction (the
 * query as it is, or mirrored when `mirror`); 1 << 16 is added when it is the mirrored
 * one. matchModel(), matchCoverage() and matchAffine() describe it.
 */
export function matchSets(a: usize, na: i32, aw: f64, ah: f64, b: usize, nb: i32, bw: f64, bh: f64, mirror: bool): i32 {
  if (na > MAX_FEATURES) na = MAX_FEATURES;
  if (nb > MAX_FEATURES) nb = MAX_FEATURES;
  nq = na;
  nr = nb;
  rset = b;
  rw = bw;
  rh = bh;
  resultInliers = 0;
  resultCoverage = 0;
  resultAffine = 0;
  resultCorrespondences = 0;
  memory.fill(MODEL, 0, 48);
  if (na < 3 || nb < 3) return 0;
  // the record's descriptors packed, once for both passes
  const rdesc = RDESC.reserve(<usize>nb << 5);
  for (let j = 0; j < nb; j++) memory.copy(rdesc + (<usize>j << 5), b + <usize>(j * FEATURE_BYTES + DESCRIPTOR_OFFSET), 32);
  // the tolerance: 1.5 % of the record's analysis image's width plus height (about 17 pixels at 640 x 480)
  const tolerance = 0.015 * (bw + bh);
  let answer = 0;
  const passes = mirror ? 2 : 1;
  for (let pass = 0; pass < passes; pass++) {
    prepareQuery(a, na, aw, ah, pass == 1);
    const n = matchOnce(tolerance);
    if (n > resultInliers) {
      resultInliers = n;
      resultCorrespondences = ncorr;
      resultAffine = passAffine;
      answer = pass == 1 ? n | (1 << 16) : n;
      saveModel(MODEL);
      resultCoverage = hullArea(BEST_INLIER.ptr) / (aw * ah);
    }
  }
  return answer;
}

