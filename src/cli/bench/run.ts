// One bench run, start to end: originals, variants, hashes (ours in the worker pool,
// peers beside), quality, speed, the match index and optionally a deployment under load.
// Everything it makes goes into a private temporary directory, removed at the end. The
// answer (BenchResult) holds every figure; output.ts and html.ts present it.
import { decodeFeatureSet, type FeatureSet } from '../../lib/features.js';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { MediaKind } from '../../lib/detect.js';
import type { Fingerprint, HashType } from '../../lib/types.js';
import { packageRoot, wasmFlavor } from '../../lib/wasm.js';
import { ffmpegPath } from '../../media/ffmpeg.js';
import { pdqFromHex } from '../../lib/pdq.js';
import { createFingerprintPool, type FingerprintPool } from '../../pool/index.js';
import { findOriginals, type Skipped } from './corpus.js';
import { claimedKind, decoderRefused, type Junk } from './junk.js';
import { findPeers, fromFingerprint, fromIscc, fromPdq, hashFiles, hashWithPeer, OUR_HASHES, ourHashFor, type HashFamily, type HashOutcome, type HashValue, type PeerStatus } from './hashes.js';
import type { PdqFingerprint, VpdqFingerprint } from '../../lib/pdq.js';
import { measureIndex, type IndexFigures } from './index-speed.js';
import { loadEndpoint, serverBase, type EndpointLoad, type LoadRequest } from './load.js';
import { addScore, emptyHistogram, pairPlan, pairs, rocCurve, thresholdAtFalseMatchRate, type Histogram, type RocPoint } from './metrics.js';
import type { Progress } from './progress.js';
import { streamFor } from './random.js';
import { makeSample } from './sample.js';
import { SUITE_NAME, SUITE_TRANSFORMS, type Original, type SuiteVersion } from './suite.js';

export const KINDS: readonly MediaKind[] = ['image', 'audio', 'video'];
/** The false-match rate the ROC threshold is read at. */
export const TARGET_FALSE_MATCH_RATE = 0.001;
/** Speed passes repeat over a small set until they have run this long. */
export const MIN_TIMED_SECONDS = 2;
/** The largest body verify-file takes (spec 4.2). */
const MAX_UPLOAD = 52_428_800;

export interface BenchOptions {
  /** Directories (or files) of originals; empty: the built-in sample. */
  dirs: string[];
  limit: number | null;
  seed: number;
  /** The variant suite's version (suite.ts SUITE_VERSIONS). */
  suite: SuiteVersion;
  indexSize: number;
  maxPairs: number;
  workers: number;
  server: string | null;
  concurrency: number;
  durationMs: number;
  /** Per endpoint, at most this many requests. */
  maxRequests: number | null;
  /** Each speed measurement repeats a small set until it has run this long, in seconds (default MIN_TIMED_SECONDS). */
  minTimeS?: number;
  progress: Progress;
}

export interface TransformQuality {
  transform: string;
  /** Variants that were made and hashed. */
  variants: number;
  /** Variants the suite could not make (the edit failed on this original). */
  notMade: number;
  /** Share of variants matched, per rule. */
  matched: Record<string, number>;
  meanScore: number | null;
}

export interface HashQuality {
  hash: string;
  kind: MediaKind;
  origin: 'provenant' | 'peer';
  score: string;
  rules: { name: string; description: string }[];
  originals: number;
  transforms: TransformQuality[];
  /** All transforms together, per rule. */
  overall: Record<string, number>;
  falseMatches: {
    /** Pairs of distinct originals compared. */
    pairs: number;
    /** Pairs there are. */
    possible: number;
    /** True when `pairs` were drawn at random (seeded, with replacement) from `possible`. */
    sampled: boolean;
    /** Share of pairs matched, per rule. */
    rate: Record<string, number>;
    /** Pairs matched, per rule. */
    count: Record<string, number>;
  };
  roc: { points: RocPoint[]; auc: number } | null;
  /** The loosest threshold with at most TARGET_FALSE_MATCH_RATE false matches, and its recall. */
  atTargetRate: RocPoint | null;
  histogram: { same: Histogram; different: Histogram };
}

export interface SpeedFigures {
  kind: MediaKind;
  /** Distinct files; each was hashed (files/s x seconds) / files times (a small set is repeated, MIN_TIMED_SECONDS). */
  files: number;
  seconds: number;
  filesPerSecond: number;
  /** Of `files`, those our hashing refused (undecodable, or audio too short): they count, quickly, on both sides. */
  failed: number;
  /** The same files decoded only, in the same pool with as many in flight (`failed`: files the decode refused). */
  floor: { seconds: number; filesPerSecond: number; failed: number } | null;
  /** Ours as a share of the floor's rate. */
  ofFloor: number | null;
}

export interface PeerSpeed {
  name: string;
  kind: MediaKind;
  files: number;
  filesPerSecond: number;
}

export interface BenchResult {
  tool: 'provenant bench';
  format: 1;
  conditions: {
    date: string;
    machine: { cpu: string; cores: number; memoryGb: number; platform: string; kernel: string };
    versions: { provenant: string; node: string; sharp: string; libvips: string; ffmpeg: string; wasm: string };
    workers: number;
    corpus: {
      source: string[] | 'built-in sample';
      originals: Record<MediaKind, number>;
      mediaFound: number;
      /** Files not media and not named as media. */
      otherFiles: number;
      /** Files named as media that are none (`junk`). */
      junk: number;
      duplicates: number;
      skipped: number;
      limit: number | null;
    };
    suite: { name: string; version: number; transforms: Record<MediaKind, { id: string; description: string }[]> };
    seed: number;
    indexSize: number;
    maxPairs: number;
    targetFalseMatchRate: number;
  };
  peers: PeerStatus[];
  skipped: Skipped[];
  /** Every file whose extension claims a media type and whose content is none, or one the decoders refuse, by name, with why; in path order. */
  junk: Junk[];
  quality: HashQuality[];
  speed: SpeedFigures[];
  peerSpeed: PeerSpeed[];
  index: IndexFigures[];
  server: { url: string; concurrency: number; durationS: number; endpoints: EndpointLoad[] } | null;
}

interface Variant {
  original: number;
  transform: string;
  path: string;
}

async function ffmpegVersion(): Promise<string> {
  return new Promise((done) => {
    execFile(ffmpegPath(), ['-version'], { timeout: 10_000 }, (err, stdout) => done(err ? 'unknown' : String(stdout).split('\n')[0].replace(/^ffmpeg version /, '').split(' ')[0]));
  });
}

async function conditions(o: BenchOptions, originals: Record<MediaKind, number>, corpus: { found: number; other: number; junk: number; duplicates: number; skipped: number }): Promise<BenchResult['conditions']> {
  const pkg = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const transforms = Object.fromEntries(KINDS.map((k) => [k, SUITE_TRANSFORMS[o.suite][k].map((t) => ({ id: t.id, description: t.description }))])) as BenchResult['conditions']['suite']['transforms'];
  return {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: availableParallelism(), memoryGb: Math.round(totalmem() / 2 ** 30), platform: `${process.platform}-${process.arch}`, kernel: release() },
    versions: { provenant: pkg.version, node: process.version, sharp: sharp.versions.sharp ?? 'unknown', libvips: sharp.versions.vips, ffmpeg: await ffmpegVersion(), wasm: wasmFlavor },
    workers: o.workers,
    corpus: { source: o.dirs.length === 0 ? 'built-in sample' : o.dirs, originals, mediaFound: corpus.found, otherFiles: corpus.other, junk: corpus.junk, duplicates: corpus.duplicates, skipped: corpus.skipped, limit: o.limit },
    suite: { name: SUITE_NAME, version: o.suite, transforms },
    seed: o.seed,
    indexSize: o.indexSize,
    maxPairs: o.maxPairs,
    targetFalseMatchRate: TARGET_FALSE_MATCH_RATE,
  };
}

/** `fn` over `items` with `lanes` at a time, in order of start. */
async function inLanes<T>(items: readonly T[], lanes: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  }));
}

const seconds = (t0: number) => (performance.now() - t0) / 1000;

/** Quality of one hash: per transform and rule, false matches among distinct originals, ROC. */
export function measureQuality(
  family: HashFamily,
  originals: (HashValue | null)[],
  variants: { original: number; transform: string; value: HashValue | null }[],
  transforms: string[],
  notMade: Record<string, number>,
  maxPairs: number,
  seed: number,
): HashQuality {
  const matches = (rule: HashFamily['rules'][number], score: number | null, a: HashValue, b: HashValue) => rule.match(a, b, score);
  const same = emptyHistogram();
  const perTransform = new Map(transforms.map((t) => [t, { n: 0, sum: 0, scored: 0, hits: Object.fromEntries(family.rules.map((r) => [r.name, 0])) as Record<string, number> }]));
  const overall = Object.fromEntries(family.rules.map((r) => [r.name, 0])) as Record<string, number>;
  let variantCount = 0;
  for (const v of variants) {
    const t = perTransform.get(v.transform)!;
    const a = originals[v.original];
    t.n++;
    variantCount++;
    const score = a !== null && v.value !== null ? family.compare(a, v.value) : null;
    addScore(same, score);
    if (score !== null) {
      t.sum += score;
      t.scored++;
    }
    for (const rule of family.rules) {
      if (a !== null && v.value !== null && matches(rule, score, a, v.value)) {
        t.hits[rule.name]++;
        overall[rule.name]++;
      }
    }
  }
  const different = emptyHistogram();
  const count = Object.fromEntries(family.rules.map((r) => [r.name, 0])) as Record<string, number>;
  const pairLimit = Math.min(maxPairs, family.maxPairs ?? maxPairs);
  const plan = pairPlan(originals.length, pairLimit);
  for (const [i, j] of pairs(originals.length, pairLimit, streamFor(seed, `pairs:${family.name}`))) {
    const a = originals[i];
    const b = originals[j];
    const score = a !== null && b !== null ? family.compare(a, b) : null;
    addScore(different, score);
    if (a === null || b === null) continue;
    for (const rule of family.rules) if (matches(rule, score, a, b)) count[rule.name]++;
  }
  const roc = rocCurve(same, different);
  return {
    hash: family.name,
    kind: family.kind,
    origin: family.origin,
    score: family.score,
    rules: family.rules.map((r) => ({ name: r.name, description: r.description })),
    originals: originals.length,
    transforms: transforms.map((transform) => {
      const t = perTransform.get(transform)!;
      return {
        transform,
        variants: t.n,
        notMade: notMade[transform] ?? 0,
        matched: Object.fromEntries(Object.entries(t.hits).map(([k, v]) => [k, t.n === 0 ? 0 : v / t.n])),
        meanScore: t.scored === 0 ? null : t.sum / t.scored,
      };
    }),
    overall: Object.fromEntries(Object.entries(overall).map(([k, v]) => [k, variantCount === 0 ? 0 : v / variantCount])),
    falseMatches: {
      pairs: plan.count,
      possible: plan.total,
      sampled: plan.sampled,
      count,
      rate: Object.fromEntries(Object.entries(count).map(([k, v]) => [k, plan.count === 0 ? 0 : v / plan.count])),
    },
    roc,
    atTargetRate: roc === null ? null : thresholdAtFalseMatchRate(roc, TARGET_FALSE_MATCH_RATE),
    histogram: { same, different },
  };
}

/** The requests of a load run, from the corpus: its files, their fingerprints, their SHA-256. */
async function loadRequests(originals: { path: string; sha256: string; bytes: number }[], fingerprints: Fingerprint[]): Promise<Record<string, LoadRequest[]>> {
  const files: LoadRequest[] = [];
  for (const o of originals) {
    if (o.bytes > MAX_UPLOAD || files.length >= 200) continue;
    files.push({ method: 'POST', path: 'api/v1/sign-it/verify-file', body: new Uint8Array(await readFile(o.path)), contentType: 'application/octet-stream' });
  }
  return {
    'POST /verify-file': files,
    'POST /verify-fuzzy': fingerprints.map((fp) => ({
      method: 'POST', path: 'api/v1/sign-it/verify-fuzzy', contentType: 'application/json',
      body: JSON.stringify({ bands: fp.bands, hash_value: fp.hash_value }),
    })),
    'GET /verify': originals.map((o) => ({ method: 'GET', path: `api/v1/sign-it/verify?hash=${o.sha256}` })),
  };
}

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const work = await mkdtemp(join(tmpdir(), 'provenant-bench-'));
  let pool: FingerprintPool | undefined;
  try {
    // 0. the server URL is checked before any work
    const base = o.server === null ? null : serverBase(o.server);

    // 1. originals
    let dirs = o.dirs;
    if (dirs.length === 0) {
      const sample = join(work, 'sample');
      await mkdir(sample, { mode: 0o700 });
      o.progress.stage('making the built-in sample', 1);
      await makeSample(sample, o.seed);
      o.progress.tick();
      dirs = [sample];
    }
    const corpus = await findOriginals(dirs, o.limit, streamFor(o.seed, 'limit'));
    const skipped = corpus.skipped;
    const junk = corpus.junk;
    pool = createFingerprintPool({ workers: o.workers, taskTimeoutMs: 10 * 60_000, maxQueue: 1024 });
    const lanes = 2 * o.workers;
    const peers = await findPeers();

    // 2. our hashes of the originals, per kind, timed (files per second)
    const originals = corpus.originals;
    const ourOf: (Fingerprint | null)[] = new Array(originals.length).fill(null);
    const pdqOf: (PdqFingerprint | VpdqFingerprint | null)[] = new Array(originals.length).fill(null);
    /** Each file's ISCC Content-Code (issue 33), original or variant, by path. */
    const isccOf = new Map<string, string | null>();
    const speed: SpeedFigures[] = [];
    o.progress.stage('hashing originals', originals.length);
    const timed: Record<string, { seconds: number; files: number }> = {};
    for (const kind of KINDS) {
      const idx = originals.flatMap((x, i) => (x.kind === kind ? [i] : []));
      if (idx.length === 0) continue;
      // warm: every worker has started, loaded its kernels and (images) its decoder sandbox before the clock starts
      await hashFiles(pool, Array.from({ length: o.workers }, () => originals[idx[0]].path), lanes);
      const paths = idx.map((i) => originals[i].path);
      const t0 = performance.now();
      const out = await hashFiles(pool, paths, lanes, () => o.progress.tick());
      // a small set is hashed again until the clock has run long enough to mean something
      let passes = 1;
      while (seconds(t0) < (o.minTimeS ?? MIN_TIMED_SECONDS)) {
        await hashFiles(pool, paths, lanes);
        passes++;
      }
      timed[kind] = { seconds: seconds(t0), files: passes * paths.length };
      out.forEach((r, k) => {
        if ('fingerprint' in r) {
          ourOf[idx[k]] = r.fingerprint;
          pdqOf[idx[k]] = r.pdq;
          isccOf.set(originals[idx[k]].path, r.iscc);
        } else {
          // a file named as media whose content the decoders refuse is junk, listed as such
          const { path } = originals[idx[k]];
          const claimed = r.code === 'decode_failed' ? claimedKind(path) : null;
          if (claimed !== null) junk.push({ path, claimed, reason: decoderRefused(r.failure) });
          else skipped.push({ path, reason: r.failure });
        }
      });
    }
    // originals we cannot hash are left out from here on
    const kept = originals.map((x, i) => ({ ...x, fp: ourOf[i], pdq: pdqOf[i] })).filter((x): x is typeof x & { fp: Fingerprint } => x.fp !== null);
    const count = Object.fromEntries(KINDS.map((k) => [k, kept.filter((x) => x.kind === k).length])) as Record<MediaKind, number>;

    // 3. the floor: the same files (those that failed too) decoded only
    for (const kind of KINDS) {
      const files = originals.filter((x) => x.kind === kind);
      if (files.length === 0) continue;
      o.progress.stage(`decoding ${kind} (floor)`, files.length);
      let failed = 0;
      const pass = (tick: boolean) => inLanes(files, lanes, async (f) => {
        const bytes = new Uint8Array(await readFile(f.path));
        try {
          await pool!.run('bench-decode', { buffer: bytes.buffer }, [bytes.buffer]);
        } catch {
          failed++;
        }
        if (tick) o.progress.tick();
      });
      const t0 = performance.now();
      await pass(true);
      let passes = 1;
      while (seconds(t0) < (o.minTimeS ?? MIN_TIMED_SECONDS)) {
        await pass(false);
        passes++;
      }
      const floorSeconds = seconds(t0);
      const t = timed[kind];
      const ours = { files: originals.filter((x) => x.kind === kind).length, seconds: t.seconds, filesPerSecond: t.files / t.seconds };
      const floor = { seconds: floorSeconds, filesPerSecond: (passes * files.length) / floorSeconds, failed: failed / passes };
      speed.push({ kind, ...ours, failed: ours.files - kept.filter((x) => x.kind === kind).length, floor, ofFloor: ours.filesPerSecond / floor.filesPerSecond });
    }

    // 4. variants
    const variants: Variant[] = [];
    const notMade: Record<string, Record<string, number>> = { image: {}, audio: {}, video: {} };
    o.progress.stage('making variants', kept.length);
    await inLanes(kept, o.workers, async (orig, i) => {
      const bytes = orig.kind === 'image' ? new Uint8Array(await readFile(orig.path)) : new Uint8Array(0);
      for (const t of SUITE_TRANSFORMS[o.suite][orig.kind]) {
        try {
          const path = await t.make(orig as Original, bytes, join(work, `v${i}-${t.id}`), streamFor(o.seed, `${t.id}:${orig.sha256}`));
          variants.push({ original: i, transform: t.id, path });
        } catch {
          notMade[orig.kind][t.id] = (notMade[orig.kind][t.id] ?? 0) + 1;
        }
      }
      o.progress.tick();
    });
    variants.sort((a, b) => a.original - b.original || a.transform.localeCompare(b.transform));

    // 5. our hashes of the variants
    o.progress.stage('hashing variants', variants.length);
    const variantHashes = await hashFiles(pool, variants.map((v) => v.path), lanes, () => o.progress.tick());
    const variantFp = variantHashes.map((r) => ('fingerprint' in r ? r.fingerprint : null));
    variantHashes.forEach((r, k) => isccOf.set(variants[k].path, 'fingerprint' in r ? r.iscc : null));

    // 5b. PDQ's eight dihedral hashes of every image, original or variant: verify-file tries
    // a query's rotations and mirrors, and any image may be a query (pairs of originals too)
    const dihedral = new Map<string, Uint8Array[]>();
    const featuresOf = new Map<string, FeatureSet>();
    const recordOf = new Map<string, FeatureSet>();
    const images = [...kept.filter((x) => x.kind === 'image').map((x) => x.path), ...variants.filter((v) => kept[v.original].kind === 'image').map((v) => v.path)];
    o.progress.stage('PDQ dihedral hashes', images.length);
    await inLanes(images, lanes, async (path) => {
      const bytes = new Uint8Array(await readFile(path));
      try {
        const d = await pool!.run<{ hashes: string[]; features: Uint8Array | null; record: Uint8Array | null }>('bench-pdq', { buffer: bytes.buffer }, [bytes.buffer]);
        dihedral.set(path, d.hashes.map(pdqFromHex));
        if (d.features !== null) featuresOf.set(path, decodeFeatureSet(d.features));
        if (d.record !== null) recordOf.set(path, decodeFeatureSet(d.record));
      } catch {
        // without them the query's own hash stands alone (dihedralDistance)
      }
      o.progress.tick();
    });
    /** Our value of a file under `family`, from its pool outcome. */
    const valueOf = (family: HashFamily, path: string, fp: Fingerprint | null, pdq: PdqFingerprint | VpdqFingerprint | null): HashValue | null => {
      if (fp === null) return null;
      if (family.name === fp.hash_type) return fromFingerprint(fp);
      if (family.name.startsWith('ISCC-')) return fromIscc(isccOf.get(path));
      if (family.name === 'Features') {
        const pdqValue = pdq === null || pdq.hash_type !== 'PDQ' ? null : { ...fromPdq(pdq, fromFingerprint(fp)), dihedral: dihedral.get(path) };
        return { bytes: new Uint8Array(0), bands: null, features: featuresOf.get(path) ?? null, stored: recordOf.get(path) ?? null, pdq: pdqValue, partner: fromFingerprint(fp) };
      }
      if (pdq === null) return null;
      const v = fromPdq(pdq, fromFingerprint(fp));
      if (pdq.hash_type === 'PDQ') v.dihedral = dihedral.get(path);
      return v;
    };
    const variantPdq = variantHashes.map((r: HashOutcome) => ('fingerprint' in r ? r.pdq : null));

    // 6. peers, on the same originals and variants
    const peerValues = new Map<string, { originals: (HashValue | null)[]; variants: (HashValue | null)[] }>();
    const peerSpeed: PeerSpeed[] = [];
    for (const peer of peers) {
      if (!peer.status.found) continue;
      const own = kept.filter((x) => x.kind === peer.family.kind);
      if (own.length === 0) continue;
      const mine = variants.filter((v) => kept[v.original].kind === peer.family.kind);
      o.progress.stage(`hashing with ${peer.family.name}`, own.length + mine.length);
      const t0 = performance.now();
      const ov = await hashWithPeer(peer, own.map((x) => x.path), lanes, () => o.progress.tick());
      peerSpeed.push({ name: peer.family.name, kind: peer.family.kind, files: own.length, filesPerSecond: own.length / seconds(t0) });
      const vv = await hashWithPeer(peer, mine.map((v) => v.path), lanes, () => o.progress.tick());
      peerValues.set(peer.family.name, { originals: ov, variants: vv });
    }

    // 7. quality
    const quality: HashQuality[] = [];
    for (const kind of KINDS) {
      const own = kept.map((x, i) => [x, i] as const).filter(([x]) => x.kind === kind);
      if (own.length === 0) continue;
      const position = new Map(own.map(([, i], k) => [i, k]));
      const mine = variants.map((v, k) => [v, k] as const).filter(([v]) => kept[v.original].kind === kind);
      const transforms = SUITE_TRANSFORMS[o.suite][kind].map((t) => t.id);
      for (const family of OUR_HASHES.filter((f) => f.kind === kind)) {
        o.progress.stage(`scoring ${family.name}`, 1);
        const stored = own.map(([x]) => valueOf(family, x.path, x.fp, x.pdq));
        if (stored.every((v) => v === null)) continue; // a hash the library did not give (no PDQ for this type)
        quality.push(measureQuality(
          family,
          stored,
          mine.map(([v, k]) => ({ original: position.get(v.original)!, transform: v.transform, value: valueOf(family, v.path, variantFp[k], variantPdq[k]) })),
          transforms, notMade[kind], o.maxPairs, o.seed,
        ));
        o.progress.tick();
      }
      for (const peer of peers) {
        const values = peerValues.get(peer.family.name);
        if (peer.family.kind !== kind || values === undefined) continue;
        quality.push(measureQuality(
          peer.family,
          values.originals,
          mine.map(([v], k) => ({ original: position.get(v.original)!, transform: v.transform, value: values.variants[k] })),
          transforms, notMade[kind], o.maxPairs, o.seed,
        ));
      }
    }

    // 8. the match index
    const index: IndexFigures[] = [];
    for (const kind of KINDS) {
      const own = kept.filter((x) => x.kind === kind);
      if (own.length === 0) continue;
      const hashType = ourHashFor(kind).name as HashType;
      const position = new Map(kept.map((x, i) => [x, i] as const).filter(([x]) => x.kind === kind).map(([, i], k) => [i, k]));
      const queries = variants.flatMap((v, k): [number, Fingerprint][] => (kept[v.original].kind === kind && variantFp[k] !== null ? [[position.get(v.original)!, variantFp[k]!]] : []));
      o.progress.stage(`match index, ${hashType}`, 1);
      index.push(measureIndex(hashType, own.map((x) => x.fp), queries, o.indexSize, streamFor(o.seed, `index:${hashType}`)));
      o.progress.tick();
    }

    // 9. a deployment
    let server: BenchResult['server'] = null;
    if (base !== null) {
      const requests = await loadRequests(kept, kept.map((x) => x.fp));
      const endpoints: EndpointLoad[] = [];
      for (const [name, list] of Object.entries(requests)) {
        o.progress.stage(`load: ${name}`, 1);
        endpoints.push(await loadEndpoint(base, name, list, { concurrency: o.concurrency, durationMs: o.durationMs, maxRequests: o.maxRequests ?? undefined }));
        o.progress.tick();
      }
      server = { url: base.href, concurrency: o.concurrency, durationS: o.durationMs / 1000, endpoints };
    }
    o.progress.done();
    junk.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

    return {
      tool: 'provenant bench',
      format: 1,
      conditions: await conditions(o, count, { found: corpus.found, other: corpus.other, junk: junk.length, duplicates: corpus.duplicates, skipped: skipped.length }),
      peers: peers.map((p) => p.status),
      skipped,
      junk,
      quality,
      speed,
      peerSpeed,
      index,
      server,
    };
  } finally {
    o.progress.done();
    await pool?.close();
    await rm(work, { recursive: true, force: true });
  }
}
