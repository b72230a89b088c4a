// Local features and their geometric check (issue 32; src/lib/features.ts, the features
// kernel): on a real photo and the bench's own v2 edits of it (crops, frames, a phone
// screenshot, rotation, perspective, filters, mirror), the check confirms each copy with
// a transform that maps the copy's corners where the edit put them; distinct pictures
// (Meta's PDQ test photos and the integrity fixtures) are not confirmed; a set survives encoding, and bytes that are
// not a set are refused. Both builds give the same features and the same matches (npm
// test runs lib/ again as scalar; this file also compares the two builds directly).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import '../../src/lib/wasm.js';
import {
  compareFeatures, confirms, decodeFeatureSet, descriptorsOf, encodeFeatureSet, extractFeatures, FeatureSetError, matchFeatures, prefixOf, recordFeatures, shownShare,
  FEATURE_BYTES, FRAMED_MIN_INLIERS, MAX_SHOWN, MIN_COVERAGE, MIN_FEATURES, MIN_INLIERS, MIN_SHOWN, QUERY_FEATURES_MAX, RECORD_FEATURES_MAX, SPREAD_COVERAGE, SPREAD_MIN_INLIERS, type FeatureSet,
} from '../../src/lib/features.js';
import { simdSupported, wasmFlavor } from '../../src/lib/wasm-core.js';
import { SUITE_TRANSFORMS } from '../../src/cli/bench/suite.js';
import { streamFor } from '../../src/cli/bench/random.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const PHOTO = join(FIX, 'media', 'fruits.jpg');
const DISTINCT = join(FIX, 'pdq', 'images', 'reg-test-input', 'labelme-subset');

async function pixels(bytes: Uint8Array | string) {
  const { data, info } = await sharp(bytes, { autoOrient: true, pages: 1 }).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height, channels: info.channels };
}

const features = async (file: Uint8Array | string, max?: number) => extractFeatures(await pixels(file), { max });

test('a photo gives a spread set, strongest first; the record keeps the first 256', async () => {
  const set = (await features(PHOTO))!;
  assert.ok(set.count > 300 && set.count <= QUERY_FEATURES_MAX, `${set.count} features`);
  assert.is(set.bytes.length, set.count * FEATURE_BYTES);
  assert.is((await features(PHOTO, 100))!.count, 100);
  assert.is(recordFeatures(set).count, RECORD_FEATURES_MAX);
  assert.is(descriptorsOf(set).length, 64 * 32);
  // spread: the strongest 64 fall in most cells of a 4 x 4 grid over the picture
  const cells = new Set<number>();
  for (let i = 0; i < 64; i++) {
    const v = new DataView(set.bytes.buffer, set.bytes.byteOffset + i * FEATURE_BYTES);
    cells.add(Math.floor((v.getUint16(0, true) / 65536) * 4) * 4 + Math.floor((v.getUint16(2, true) / 65536) * 4));
  }
  assert.ok(cells.size >= 12, `${cells.size} of 16 cells`);
});

test('keep: a record\'s 256 made directly are the first 256 of the whole extraction, byte for byte, in both builds', async () => {
  const px = await pixels(PHOTO);
  for (const flavor of ['simd', 'scalar'] as const) {
    const whole = extractFeatures(px, { flavor })!;
    const kept = extractFeatures(px, { keep: RECORD_FEATURES_MAX, flavor })!;
    assert.equal(kept, recordFeatures(whole), flavor);
    assert.equal(extractFeatures(px, { max: 300, keep: 100, flavor }), prefixOf(extractFeatures(px, { max: 300, flavor })!, 100), `${flavor}: another max`);
  }
  for (const keep of [47, 513, 1.5, 0]) assert.throws(() => extractFeatures(px, { keep }), /keep is an integer/, `keep ${keep}`);
  assert.throws(() => extractFeatures(px, { max: 100, keep: 200 }), /keep is an integer/);
});

/** The photo inside a phone-like screen: a status bar and an app bar with text above, a caption below, on white. */
async function onScreen(photo: string, box: { left: number; top: number; width: number; height: number }) {
  const [w, h] = [720, 1560];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="${w}" height="${h}" fill="#fff"/>` +
    `<rect width="${w}" height="48" fill="#202124"/><text x="24" y="34" font-family="sans-serif" font-size="26" fill="#fff">10:42</text>` +
    `<rect y="48" width="${w}" height="96" fill="#f1f3f4"/><text x="32" y="110" font-family="sans-serif" font-size="36" font-weight="bold" fill="#202124">provenant.test</text>` +
    `<text x="${box.left}" y="${box.top + box.height + 44}" font-family="sans-serif" font-size="28" fill="#202124">Seen today: what a view.</text></svg>`;
  const picture = await sharp(photo).resize(box.width, box.height, { fit: 'fill' }).png().toBuffer();
  return pixels(await sharp(Buffer.from(svg)).composite([{ input: picture, left: box.left, top: box.top }]).png().toBuffer());
}

/** Feature i's point in pixels of a width x height image. */
function pointOf(set: FeatureSet, i: number, width: number, height: number): [number, number] {
  const v = new DataView(set.bytes.buffer, set.bytes.byteOffset + i * FEATURE_BYTES);
  return [(v.getUint16(0, true) / 65536) * width, (v.getUint16(2, true) / 65536) * height];
}

test('inner: a picture on a screen or in a plain frame is extracted on its own as well, placed where it is; a plain photo is unchanged', async () => {
  const record = extractFeatures(await pixels(PHOTO), { keep: RECORD_FEATURES_MAX })!;
  const plain = await pixels(PHOTO);
  assert.equal(extractFeatures(plain, { inner: true }), extractFeatures(plain), 'no frame: the same set');
  const box = { left: 10, top: 168, width: 700, height: 656 };
  const framed = await sharp(PHOTO).extend({ left: 300, right: 300, top: 60, bottom: 60, background: '#c8102e' }).png().toBuffer();
  const layouts = [
    { name: 'screen', px: await onScreen(PHOTO, box), box },
    { name: 'frame', px: await pixels(framed), box: { left: 300, top: 60, width: 512, height: 480 } },
  ];
  for (const { name, px, box: at } of layouts) {
    for (const flavor of ['simd', 'scalar'] as const) {
      const whole = extractFeatures(px, { flavor });
      const query = extractFeatures(px, { inner: true, flavor })!;
      assert.ok(query.count > (whole?.count ?? 0), `${name} ${flavor}: ${query.count} features with the inner picture's, ${whole?.count} without`);
      // alternating: the inner picture's first, then the whole image's, in their own orders
      const picture: number[] = [];
      for (let i = 0, w = 0; i < query.count; i++) {
        const isWhole = whole !== null && i % 2 === 1 && w < whole.count;
        if (isWhole) {
          assert.equal(query.bytes.subarray(i * FEATURE_BYTES, (i + 1) * FEATURE_BYTES), whole.bytes.subarray(w * FEATURE_BYTES, (w + 1) * FEATURE_BYTES), `${name}: feature ${i} is the whole image's ${w}`);
          w++;
        } else picture.push(i);
      }
      // the inner picture's features lie on the picture, in the image's frame
      for (const i of picture) {
        const [x, y] = pointOf(query, i, px.width, px.height);
        assert.ok(x >= at.left - 2 && x <= at.left + at.width + 2 && y >= at.top - 2 && y <= at.top + at.height + 2, `${name}: inner feature ${i} at ${x.toFixed(1)}, ${y.toFixed(1)} is on the picture`);
      }
      const m = matchFeatures(query, record, { flavor });
      assert.ok(m !== null, `${name} ${flavor}: confirmed`);
      const without = whole === null ? 0 : compareFeatures(whole, record, { flavor }).inliers;
      assert.ok(m.inliers > without, `${name}: ${m.inliers} inliers with the inner picture, ${without} without`);
      // the transform maps the picture's corners in the image to the photo's corners
      const [a, b, tx, c, d, ty] = m.matrix;
      const sx = query.width / px.width, sy = query.height / px.height;
      for (const [qx, qy, rx, ry] of [[at.left, at.top, 0, 0], [at.left + at.width, at.top + at.height, record.width, record.height]]) {
        const mx = a * qx * sx + b * qy * sy + tx, my = c * qx * sx + d * qy * sy + ty;
        assert.ok(Math.hypot(mx - rx, my - ry) < 0.05 * record.width, `${name}: corner (${qx}, ${qy}) maps to ${mx.toFixed(1)}, ${my.toFixed(1)}, not ${rx}, ${ry}`);
      }
    }
  }
  assert.throws(() => extractFeatures(plain, { inner: true, keep: RECORD_FEATURES_MAX }), /inner is a query's option/);
});

test('flat and tiny pictures get no features', async () => {
  const flat = { data: new Uint8Array(400 * 300 * 3).fill(128), width: 400, height: 300, channels: 3 };
  assert.is(extractFeatures(flat), null);
  const gradient = { data: Uint8Array.from({ length: 400 * 300 }, (_, i) => (i % 400) * 0.6), width: 400, height: 300, channels: 1 };
  assert.is(extractFeatures(gradient), null);
  assert.is(extractFeatures({ data: new Uint8Array(16 * 16 * 3).fill(7), width: 16, height: 16, channels: 3 }), null);
  assert.ok(MIN_FEATURES > 0);
  // and as a query: no inner picture in a flat or tiny image, a 1-pixel line or a gradient
  for (const px of [flat, gradient, { data: new Uint8Array(16 * 16 * 3).fill(7), width: 16, height: 16, channels: 3 }, { data: new Uint8Array(1 * 900), width: 1, height: 900, channels: 1 }]) {
    assert.is(extractFeatures(px, { inner: true }), null, `${px.width} x ${px.height}`);
  }
});

test('encode and decode: the same set; bytes that are not a set are refused', async () => {
  const set = recordFeatures((await features(PHOTO))!);
  const bytes = encodeFeatureSet(set);
  assert.is(bytes.length, 10 + set.count * FEATURE_BYTES);
  const back = decodeFeatureSet(bytes);
  assert.equal({ ...back, bytes: Array.from(back.bytes) }, { ...set, bytes: Array.from(set.bytes) });
  const broken = (f: (b: Uint8Array) => void) => { const b = bytes.slice(); f(b); return b; };
  for (const [why, b] of [
    ['empty', new Uint8Array(0)],
    ['magic', broken((b) => { b[0] = 0x51; })],
    ['version', broken((b) => { b[2] = 2; })],
    ['reserved', broken((b) => { b[3] = 1; })],
    ['count over the bytes', broken((b) => { b[8] = 0xff; })],
    ['truncated', bytes.subarray(0, bytes.length - 1)],
    ['a level over 5', broken((b) => { b[10 + 5] = 6; })],
    ['a feature\'s reserved bytes', broken((b) => { b[10 + 40 + 6] = 1; })],
    ['zero width', broken((b) => { b[4] = 0; b[5] = 0; })],
  ] as [string, Uint8Array][]) {
    assert.throws(() => decodeFeatureSet(b), (e: unknown) => e instanceof FeatureSetError, why);
  }
});

test("every v2 edit of the photo is confirmed, with a transform that puts the copy where the edit did; distinct photos are not", async () => {
  const original = recordFeatures((await features(PHOTO))!);
  const bytes = new Uint8Array(readFileSync(PHOTO));
  const out = mkdtempSync(join(tmpdir(), 'provenant-features-'));
  try {
    const found: string[] = [];
    for (const t of SUITE_TRANSFORMS[2].image) {
      const path = await t.make({ path: PHOTO, kind: 'image', format: 'jpeg' }, bytes, join(out, t.id), streamFor(1, t.id));
      // asked as verify-file asks: with the inner picture's features
      const copy = extractFeatures(await pixels(new Uint8Array(readFileSync(path))), { inner: true });
      const m = copy === null ? null : matchFeatures(copy, original);
      if (m === null) continue;
      found.push(t.id);
      assert.is(m.mirrored, t.id.startsWith('mirror'), `${t.id}: mirrored`);
    }
    // a quarter-size copy of this 512 x 480 photo is too small for its features to agree
    const missed = SUITE_TRANSFORMS[2].image.map((t) => t.id).filter((id) => !found.includes(id));
    assert.ok(missed.every((id) => id === 'resize-25'), `missed: ${missed.join(', ')}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const distinct = [...readdirSync(DISTINCT).sort().map((f) => join(DISTINCT, f)), ...['happyfish.jpg', 'butterfly.png', 'baboon-crop.png', 'plant-crop.png'].map((f) => join(FIX, 'integrity', f))];
  const others = await Promise.all(distinct.map((f) => features(f)));
  const sets = [original, ...others.filter((s): s is FeatureSet => s !== null)];
  assert.ok(sets.length >= 8, `${sets.length} sets`);
  for (let i = 0; i < sets.length; i++) for (let j = 0; j < sets.length; j++) {
    if (i !== j) assert.is(matchFeatures(sets[i], sets[j]), null, `distinct pictures ${i} and ${j}: ${JSON.stringify(compareFeatures(sets[i], sets[j]))}`);
  }
});

test('the transform: a crop maps to the crop, a mirror to the mirror, a rotation to its angle', async () => {
  const src = await pixels(PHOTO);
  const original = (await features(PHOTO))!;
  const map = (m: number[], x: number, y: number) => [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];
  // the right 70 % and lower 70 %: the copy's (0, 0) is the original's (0.3 w, 0.3 h), at the same scale
  const left = Math.round(src.width * 0.3), top = Math.round(src.height * 0.3);
  const crop = await sharp(PHOTO).extract({ left, top, width: src.width - left, height: src.height - top }).png().toBuffer();
  const cm = matchFeatures((await features(new Uint8Array(crop)))!, original)!;
  assert.ok(cm !== null && !cm.mirrored);
  const [x0, y0] = map(cm.matrix, 0, 0);
  assert.ok(Math.abs(x0 - left) < 4 && Math.abs(y0 - top) < 4, `(0, 0) maps to (${x0.toFixed(1)}, ${y0.toFixed(1)}), not (${left}, ${top})`);
  assert.ok(cm.coverage > 0.5, `coverage ${cm.coverage}`);
  // mirrored: the copy as its mirror maps onto the original without a reflection
  const flop = await sharp(PHOTO).flop().png().toBuffer();
  const mm = matchFeatures((await features(new Uint8Array(flop)))!, original)!;
  assert.ok(mm.mirrored && Math.abs(mm.matrix[0] - 1) < 0.03 && Math.abs(mm.matrix[1]) < 0.03, JSON.stringify(mm));
  // rotated 20 degrees (the canvas grows): the linear part is a rotation by -20 degrees at scale 1
  const rot = await sharp(PHOTO).rotate(20, { background: '#fff' }).png().toBuffer();
  const rm = matchFeatures((await features(new Uint8Array(rot)))!, original)!;
  const angle = (Math.atan2(rm.matrix[3], rm.matrix[0]) * 180) / Math.PI;
  assert.ok(Math.abs(angle + 20) < 1.5, `angle ${angle.toFixed(2)}`);
});

/** The share of the query's w x h frame whose points map (record = A q + t) inside the record's frame, counted at the centres of a fine grid. */
function shownByGrid(m: number[], w: number, h: number, rw: number, rh: number): number {
  const steps = 400;
  let inside = 0;
  for (let i = 0; i < steps; i++) for (let j = 0; j < steps; j++) {
    const x = ((i + 0.5) * w) / steps, y = ((j + 0.5) * h) / steps;
    const rx = m[0] * x + m[1] * y + m[2], ry = m[3] * x + m[4] * y + m[5];
    if (rx >= 0 && rx <= rw && ry >= 0 && ry <= rh) inside++;
  }
  return inside / (steps * steps);
}

test('shown: the share of the query the record\'s frame covers, as a grid count gives it; the rule that judges coverage against it', async () => {
  const q = { width: 640, height: 480 };
  const r = { width: 600, height: 500 };
  // the same frame; the record shown in the query's top-left quarter (record = 2 q); shifted off the query; singular
  assert.ok(Math.abs(shownShare([1, 0, 0, 0, 1, 0], q, { width: 640, height: 480 }) - 1) < 1e-9);
  assert.ok(Math.abs(shownShare([2, 0, 0, 0, 2, 0], q, { width: 640, height: 480 }) - 0.25) < 1e-9);
  assert.is(shownShare([1, 0, 5000, 0, 1, 0], q, r), 0);
  assert.is(shownShare([1, 2, 0, 2, 4, 0], q, r), 0);
  // seeded similarity and affine maps, rotated, scaled and shifted, against the grid
  const random = streamFor(7, 'shown');
  for (let n = 0; n < 200; n++) {
    const angle = random() * 2 * Math.PI, scale = 0.3 + random() * 4, shear = n % 2 === 0 ? 0 : random() - 0.5;
    const c = Math.cos(angle) * scale, s = Math.sin(angle) * scale;
    const m = [c, -s + shear, (random() - 0.5) * 1200, s, c, (random() - 0.5) * 1200];
    const got = shownShare(m, q, r);
    const want = shownByGrid(m, q.width, q.height, r.width, r.height);
    assert.ok(Math.abs(got - want) < 0.01, `${JSON.stringify(m)}: ${got} against the grid's ${want}`);
  }
  // the rule: the query's share; or, for a picture shown small inside the query, the shown part's with twice the inliers;
  // or two fewer inliers spread over much of the query
  const match = (coverage: number, shown: number, inliers = MIN_INLIERS) => ({ inliers, correspondences: inliers, coverage, shown, mirrored: false, model: 'similarity' as const, matrix: [1, 0, 0, 0, 1, 0] });
  assert.ok(confirms(match(MIN_COVERAGE, 1)));
  assert.not.ok(confirms(match(MIN_COVERAGE, 1, MIN_INLIERS - 1)));
  assert.not.ok(confirms(match(MIN_COVERAGE * 0.9, 1)));
  // inliers spread over much of the query need two fewer, and no fewer than that
  assert.ok(SPREAD_MIN_INLIERS < MIN_INLIERS && SPREAD_COVERAGE > MIN_COVERAGE);
  assert.ok(confirms(match(SPREAD_COVERAGE, 1, SPREAD_MIN_INLIERS)), 'spread inliers, two fewer');
  assert.not.ok(confirms(match(SPREAD_COVERAGE * 0.99, 1, SPREAD_MIN_INLIERS)), 'two fewer, not spread enough');
  assert.not.ok(confirms(match(1, 1, SPREAD_MIN_INLIERS - 1)), 'spread, but too few');
  assert.ok(confirms(match(0.04, 0.25, FRAMED_MIN_INLIERS)), 'a picture on a quarter of a screenshot, its hull on a sixth of it');
  assert.not.ok(confirms(match(0.04, 0.25, FRAMED_MIN_INLIERS - 1)), 'a framed match needs twice the inliers');
  assert.not.ok(confirms(match(0.01, 0.25, 200)));
  assert.not.ok(confirms(match(0.005, MIN_SHOWN * 0.9, 200)), 'a picture shown too small is judged against the whole query');
  assert.not.ok(confirms(match(0.05, MAX_SHOWN * 1.1, 200)), 'nor one that fills much of it');
  // a real one: the photo in a plain frame twice its size each way shows in a quarter of the query
  const src = await pixels(PHOTO);
  const framed = await sharp(PHOTO).extend({ left: src.width / 2, right: src.width / 2, top: src.height / 2, bottom: src.height / 2, background: '#808080' }).png().toBuffer();
  const original = recordFeatures((await features(PHOTO))!);
  const fm = matchFeatures(extractFeatures(await pixels(new Uint8Array(framed)), { inner: true })!, original)!;
  assert.ok(fm !== null && Math.abs(fm.shown - 0.25) < 0.02 && fm.coverage <= fm.shown + 1e-9, JSON.stringify({ shown: fm.shown, coverage: fm.coverage }));
});

/**
 * The check's first step in plain JS: each query feature's nearest record feature (the
 * first on a tie) when within 64 bits and below 80 % of the second nearest, one query
 * feature per record feature (the nearer, the first on a tie); how many pairs that is.
 */
function correspondences(query: FeatureSet, record: FeatureSet): number {
  const d = (a: Uint8Array, i: number, b: Uint8Array, j: number) => {
    let s = 0;
    for (let k = 8; k < FEATURE_BYTES; k++) for (let x = a[i * FEATURE_BYTES + k] ^ b[j * FEATURE_BYTES + k]; x; x &= x - 1) s++;
    return s;
  };
  const kept = new Map<number, number>(); // record feature -> the distance of its query feature
  for (let i = 0; i < query.count; i++) {
    let d1 = 257, d2 = 257, j1 = -1;
    for (let j = 0; j < record.count; j++) {
      const x = d(query.bytes, i, record.bytes, j);
      if (x < d1) { d2 = d1; d1 = x; j1 = j; } else if (x < d2) d2 = x;
    }
    if (j1 < 0 || d1 > 64 || d1 * 100 >= 80 * d2) continue;
    if (!kept.has(j1) || d1 < kept.get(j1)!) kept.set(j1, d1);
  }
  return kept.size;
}

test('the correspondences are the ratio test\'s, as a plain search gives them: a copy, a stranger, ties, odd counts', async () => {
  const photo = (await features(PHOTO))!;
  const crop = (await features(new Uint8Array(await sharp(PHOTO).extract({ left: 80, top: 40, width: 320, height: 300 }).jpeg({ quality: 70 }).toBuffer())))!;
  let stranger: FeatureSet | null = null;
  for (const f of readdirSync(DISTINCT).sort()) if (stranger === null) stranger = await features(join(DISTINCT, f));
  assert.ok(stranger !== null);
  // records of odd sizes, some of whose features repeat (ties: a query feature nearest two of them fails the ratio test)
  const withRepeats = (n: number): FeatureSet => {
    const bytes = photo.bytes.slice(0, n * FEATURE_BYTES);
    for (let i = 0; i < 10; i++) bytes.copyWithin((n - 1 - i) * FEATURE_BYTES, (10 + i) * FEATURE_BYTES, (11 + i) * FEATURE_BYTES);
    return { ...photo, count: n, bytes };
  };
  // (the check reports the correspondences of a pass that found a transform: the stranger's may find none)
  for (const [query, record, copy] of [[crop, recordFeatures(photo), true], [stranger!, recordFeatures(photo), false], [crop, withRepeats(255), true], [crop, withRepeats(201), true], [photo, withRepeats(13), true], [crop, withRepeats(98), true]] as const) {
    const want = correspondences(query, record);
    for (const flavor of simdSupported ? ['simd', 'scalar'] as const : ['scalar'] as const) {
      const m = compareFeatures(query, record, { mirror: false, flavor });
      if (copy) assert.ok(m.inliers > 0, `${query.count} x ${record.count}: a transform`);
      if (m.inliers > 0) assert.is(m.correspondences, want, `${flavor}, ${query.count} x ${record.count}`);
    }
  }
  assert.ok(correspondences(crop, recordFeatures(photo)) >= 26, 'the copy has enough to confirm');
});

test('both builds: the same features, the same match', async () => {
  if (!simdSupported) return;
  const px = await pixels(PHOTO);
  const a = extractFeatures(px, { flavor: 'simd' })!;
  const b = extractFeatures(px, { flavor: 'scalar' })!;
  assert.equal(Array.from(a.bytes), Array.from(b.bytes));
  // larger pictures: resampled to the analysis size (no reduction, and a 2 x 2 one first)
  for (const [w, h] of [[1300, 1000], [1700, 1400]]) {
    const big = await pixels(new Uint8Array(await sharp(PHOTO).resize(w, h, { fit: 'fill' }).png().toBuffer()));
    assert.equal(extractFeatures(big, { flavor: 'simd', inner: true }), extractFeatures(big, { flavor: 'scalar', inner: true }), `${w} x ${h}`);
  }
  const crop = await features(new Uint8Array(await sharp(PHOTO).extract({ left: 100, top: 60, width: 300, height: 300 }).rotate(7).png().toBuffer()));
  assert.equal(compareFeatures(crop!, a, { flavor: 'simd' }), compareFeatures(crop!, b, { flavor: 'scalar' }));
  assert.ok(['simd', 'scalar'].includes(wasmFlavor));
});

test.run();
