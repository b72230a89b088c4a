// The figures of `provenant bench` against values computed by hand on tiny sets: the ROC
// curve, its area (checked as the Mann-Whitney count too), the threshold at a false-match
// rate, recall per transform and rule with the index's band rule, false matches among
// distinct originals, the pair plan and sample; and the escaping of corpus text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { imageBands } from '../../src/lib/bands.js';
import { OUR_HASHES, type HashValue } from '../../src/cli/bench/hashes.js';
import { escapeHtml } from '../../src/cli/bench/html.js';
import { addScore, emptyHistogram, pairPlan, pairs, quantile, rocCurve, thresholdAtFalseMatchRate } from '../../src/cli/bench/metrics.js';
import { progressLine } from '../../src/cli/bench/progress.js';
import { streamFor } from '../../src/cli/bench/random.js';
import { measureQuality } from '../../src/cli/bench/run.js';
import { visible } from '../../src/cli/bench/text.js';

const hist = (scores: (number | null)[]) => {
  const h = emptyHistogram();
  for (const s of scores) addScore(h, s);
  return h;
};

test('ROC, AUC and the threshold at a false-match rate, by hand', () => {
  // same-file scores 100, 90, 80, 60 and one pair not comparable; different-file 70, 50, 50, 40
  const roc = rocCurve(hist([100, 90, 80, 60, null]), hist([70, 50, 50, 40]))!;
  assert.equal(roc.points.map((p) => [p.threshold, p.tpr, p.fpr]), [
    [Infinity, 0, 0],
    [100, 0.2, 0], [90, 0.4, 0], [80, 0.6, 0], [70, 0.6, 0.25], [60, 0.8, 0.25], [50, 0.8, 0.75], [40, 0.8, 1],
    [-Infinity, 1, 1],
  ]);
  // trapezoids: 0.25 x 0.6 + 0.5 x 0.8 + 0.25 x 0.8 = 0.75; Mann-Whitney: 4 + 4 + 4 + 3 + 0 of 20 pairs = 0.75
  assert.ok(Math.abs(roc.auc - 0.75) < 1e-12, String(roc.auc));
  assert.equal(thresholdAtFalseMatchRate(roc, 0.001), { threshold: 80, tpr: 0.6, fpr: 0 });
  assert.equal(thresholdAtFalseMatchRate(roc, 0.25), { threshold: 60, tpr: 0.8, fpr: 0.25 });
  // ties count half: one same and one different pair at the same score
  assert.is(rocCurve(hist([50]), hist([50]))!.auc, 0.5);
  assert.is(rocCurve(hist([]), hist([1])), null);
  // a negative that scores above every positive: no threshold keeps false matches at 0
  assert.is(thresholdAtFalseMatchRate(rocCurve(hist([10]), hist([20]))!, 0.001), null);
});

/** `hash` with the k highest bits of byte i flipped, k = flips[i]. */
function flip(hash: number[], flips: number[]): number[] {
  return hash.map((b, i) => b ^ ((0xff << (8 - (flips[i] ?? 0))) & 0xff));
}
const value = (hash: number[]): HashValue => ({ bytes: Uint8Array.from(hash), bands: imageBands(hash) });

test('recall per transform and rule, false matches and ROC of ImagePHash on three originals, by hand', () => {
  const A = [0, 0, 0, 0, 0, 0, 0, 0];
  const B = [255, 255, 255, 255, 255, 255, 255, 255];
  const C = [0, 15, 15, 15, 15, 15, 15, 15];
  const variants = [
    // A t1: 1 bit, bands 1-7 shared: similarity floor(100 x 63 / 64) = 98, every rule
    { original: 0, transform: 't1', value: value(flip(A, [1])) },
    // A t2: 20 bits over all 8 bytes, no band shared: 68, no rule (the candidate rule comes first)
    { original: 0, transform: 't2', value: value(flip(A, [3, 3, 3, 3, 2, 2, 2, 2])) },
    // B t1: 1 bit in every byte: 87 but no band: no rule
    { original: 1, transform: 't1', value: value(flip(B, [1, 1, 1, 1, 1, 1, 1, 1])) },
    // B t2: 16 bits in bytes 0-3: 75, bands 4-7 shared: every rule
    { original: 1, transform: 't2', value: value(flip(B, [4, 4, 4, 4])) },
    // C t1: the hash could not be made
    { original: 2, transform: 't1', value: null },
    // C t2: 24 bits in bytes 0-5: 62, bands 6-7 shared: band and verify-file, not verify-fuzzy
    { original: 2, transform: 't2', value: value(flip(C, [4, 4, 4, 4, 4, 4])) },
  ];
  const image = OUR_HASHES.find((f) => f.name === 'ImagePHash')!;
  const q = measureQuality(image, [value(A), value(B), value(C)], variants, ['t1', 't2'], { t1: 2 }, 1000, 1);
  assert.equal(q.transforms.map((t) => [t.transform, t.variants, t.notMade, t.matched, t.meanScore]), [
    ['t1', 3, 2, { band: 1 / 3, 'verify-file': 1 / 3, 'verify-fuzzy': 1 / 3 }, (98 + 87) / 2],
    ['t2', 3, 0, { band: 2 / 3, 'verify-file': 2 / 3, 'verify-fuzzy': 1 / 3 }, (68 + 75 + 62) / 3],
  ]);
  assert.equal(q.overall, { band: 3 / 6, 'verify-file': 3 / 6, 'verify-fuzzy': 2 / 6 });
  // A-B: 64 bits apart (0); A-C: byte 0 shared, 28 bits (56); B-C: 36 bits (43)
  assert.equal(q.histogram.different, { counts: { 0: 1, 56: 1, 43: 1 }, none: 0 });
  assert.equal(q.histogram.same, { counts: { 98: 1, 68: 1, 87: 1, 75: 1, 62: 1 }, none: 1 });
  assert.equal(q.falseMatches, { pairs: 3, possible: 3, sampled: false, count: { band: 1, 'verify-file': 0, 'verify-fuzzy': 0 }, rate: { band: 1 / 3, 'verify-file': 0, 'verify-fuzzy': 0 } });
  // five comparable same-file pairs beat all 3 different ones, the sixth loses to all: 15 / 18
  assert.ok(Math.abs(q.roc!.auc - 15 / 18) < 1e-12);
  assert.equal(q.atTargetRate, { threshold: 62, tpr: 5 / 6, fpr: 0 });
  // over the pair limit the pairs are a seeded sample, and say so
  const sampled = measureQuality(image, [value(A), value(B), value(C)], variants, ['t1', 't2'], {}, 2, 1);
  assert.equal([sampled.falseMatches.pairs, sampled.falseMatches.possible, sampled.falseMatches.sampled], [2, 3, true]);
});

test('PDQ rules by hand: distance <= 31 between qualities >= 50, the query\'s dihedral hashes, ImagePHash or PDQ', () => {
  const pdq = OUR_HASHES.find((f) => f.name === 'PDQ')!;
  const rule = (name: string) => pdq.rules.find((r) => r.name === name)!;
  const bytes = (flips: number[]) => Uint8Array.from(flip(new Array(32).fill(0), flips));
  const stored: HashValue = { bytes: bytes([]), bands: null, quality: 90, partner: value([0, 0, 0, 0, 0, 0, 0, 0]) };
  // 31 bits apart (3 x 8 + 7): a match; 32 apart: not
  const near: HashValue = { bytes: bytes([8, 8, 8, 7]), bands: null, quality: 80, partner: value(flip([0, 0, 0, 0, 0, 0, 0, 0], [8, 8, 8, 8, 8, 8, 8, 8])) };
  const far: HashValue = { bytes: bytes([8, 8, 8, 8]), bands: null, quality: 80, partner: near.partner };
  assert.is(pdq.compare(stored, near), 256 - 31);
  assert.ok(rule('pdq<=31').match(stored, near, pdq.compare(stored, near)));
  assert.not.ok(rule('pdq<=31').match(stored, far, pdq.compare(stored, far)));
  // quality 49 on either side: no match, whatever the distance
  assert.not.ok(rule('pdq<=31').match({ ...stored, quality: 49 }, near, 256 - 31));
  assert.not.ok(rule('pdq<=31').match(stored, { ...near, quality: 49 }, 256 - 31));
  // a rotated copy: its own hash far, one of its dihedral hashes near
  const rotated: HashValue = { ...far, dihedral: [far.bytes, bytes([8, 8, 8, 8, 8]), bytes([1]), bytes([8])] };
  assert.not.ok(rule('pdq<=31').match(stored, rotated, pdq.compare(stored, rotated)));
  assert.ok(rule('pdq+dihedral').match(stored, rotated, pdq.compare(stored, rotated)));
  // verify-file: PDQ alone finds the rotated copy; ImagePHash alone finds a low-quality copy
  assert.ok(rule('verify-file').match(stored, rotated, null));
  const lowQuality: HashValue = { ...far, quality: 10, partner: value(flip([0, 0, 0, 0, 0, 0, 0, 0], [1])) };
  assert.ok(rule('verify-file').match(stored, lowQuality, null));
  assert.not.ok(rule('verify-file').match(stored, far, null), 'neither: far in PDQ, no band shared in ImagePHash');
});

test('pairs: all of them up to the limit, else a seeded sample of distinct indexes', () => {
  assert.equal(pairPlan(5, 10), { total: 10, sampled: false, count: 10 });
  assert.equal(pairPlan(5, 9), { total: 10, sampled: true, count: 9 });
  assert.equal([...pairs(4, 100, streamFor(1, 'x'))], [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]);
  const a = [...pairs(1000, 5000, streamFor(7, 'pairs'))];
  const b = [...pairs(1000, 5000, streamFor(7, 'pairs'))];
  assert.equal(a, b, 'the same seed, the same sample');
  assert.is(a.length, 5000);
  assert.ok(a.every(([i, j]) => i < j && j < 1000 && i >= 0));
  assert.ok(new Set(a.flat()).size > 990, 'spread over the originals');
  assert.not.equal([...pairs(1000, 50, streamFor(8, 'pairs'))], a.slice(0, 50));
});

test('quantiles by nearest rank', () => {
  const v = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.is(quantile(v, 0.5), 50);
  assert.is(quantile(v, 0.99), 99);
  assert.is(quantile([7], 0.99), 7);
  assert.is(quantile([], 0.5), null);
});

test('corpus text: control characters made visible for the terminal, HTML escaped for the report', () => {
  assert.is(visible('a\x1b[31mred\x07\r\nb'), 'a\\x1b[31mred\\x07\\x0d\\x0ab');
  assert.is(visible('x\u202eevil\u2066\u0085'), 'x\\u202eevil\\u2066\\x85');
  assert.is(visible('photo é 写真.jpg'), 'photo é 写真.jpg');
  assert.is(escapeHtml(`<img src=x onerror="a('b')">&`), '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;');
});

test('the progress line: share done and the time left from the rate so far', () => {
  assert.is(progressLine('hashing', 5, 10, 1000, 10), 'hashing [#####-----] 5/10 50 % ETA 0:01');
  assert.is(progressLine('hashing', 0, 10, 0, 4), 'hashing [----] 0/10 0 % ETA --:--');
  assert.is(progressLine('x', 1, 100, 60_000, 4), 'x [----] 1/100 1 % ETA 1h39m');
});

test.run();
