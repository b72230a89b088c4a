// The hashes a run measures: the library's own for each media type (computed in the
// worker pool), and peers found at run time (sharp-phash, imghash, fpcalc), named in the
// report, never required: a peer that is not installed is reported as missing.
//
// Every hash gives a score per pair, higher = closer, and the rules the service matches
// by. ImagePHash, AudioChromaprint, VideoPHash: the index's candidate rule (a band
// shared at the same position, decisions.md 3), verify-file (a candidate with similarity
// >= 60) and verify-fuzzy (>= 70). PDQ (issue 28): distance <= 31 between hashes of
// quality >= 50 (Meta's thresholds), as stored, and with the query's eight dihedral
// variants as verify-file tries them; and verify-file's own answer, ImagePHash or PDQ.
// ISCC-Image, -Audio, -Video (issue 33): the Content-Code within 8 bits (the soft
// binding's rule) and 4 (verify-file's ISCC source).
// vPDQ: Meta's rule, at least 80 % of the query's frames (quality >= 50) within 31 of a
// frame of the other; and VideoPHash or vPDQ. Peers have no bands: their rules are the
// same similarity thresholds on their own bits.
import { opencvOrb } from './orb.js';
import { execFile } from 'node:child_process';
import { constants, existsSync, readFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import type { MediaKind } from '../../lib/detect.js';
import { alignedSimilarity, SEQUENCE_ALIGNMENT, similarityFromDistance } from '../../lib/hamming.js';
import { pdqDistance, pdqFromHex, type PdqFingerprint, type VpdqFingerprint } from '../../lib/pdq.js';
import type { Fingerprint, HashType } from '../../lib/types.js';
import type { FingerprintPool } from '../../pool/index.js';
import type { FingerprintErrorCode } from '../../media/errors.js';
import { compareFeatures, matchFeatures, FRAMED_MIN_INLIERS, MAX_SHOWN, MIN_COVERAGE, MIN_INLIERS, MIN_SHOWN, NEAR_COPY_PDQ_DISTANCE, SPREAD_COVERAGE, SPREAD_MIN_INLIERS, type FeatureSet } from '../../lib/features.js';
import { ISCC_BINDING_MAX_DISTANCE, ISCC_SOURCE_MAX_DISTANCE, isccIndexKey } from '../../lib/iscc-index.js';

/** One file's hash under one family. */
export interface HashValue {
  bytes: Uint8Array;
  /** The 8 LSH bands (ours); null for hashes without bands. */
  bands: number[][] | null;
  /** PDQ: the quality score 0-100. */
  quality?: number;
  /** PDQ: the eight dihedral hashes (Meta's order, [0] = bytes), when known. */
  dihedral?: Uint8Array[];
  /** vPDQ: the frames' hashes and qualities. */
  frames?: { hash: Uint8Array; quality: number }[];
  /** PDQ and vPDQ: the same file's ImagePHash or VideoPHash, for verify-file's "either" rule. */
  partner?: HashValue | null;
  /** Features (issue 32): the file's local features as a query uses them, and as a record keeps them (the first RECORD_FEATURES_MAX). */
  features?: FeatureSet | null;
  stored?: FeatureSet | null;
  /** Features: the same file's PDQ value (its partner the ImagePHash), for verify-file's whole rule. */
  pdq?: HashValue | null;
  /** opencv-orb: its keypoints' (x, y), beside the descriptors in `bytes`. */
  points?: Float32Array;
}

export interface MatchRule {
  name: string;
  description: string;
  /** Whether `query` (a variant, or the second of a pair) matches `stored` (an original); `score` is compare(stored, query). */
  match(stored: HashValue, query: HashValue, score: number | null): boolean;
}

export interface HashFamily {
  name: string;
  kind: MediaKind;
  origin: 'provenant' | 'peer';
  /** What a score is, for the report. */
  score: string;
  rules: MatchRule[];
  compare(stored: HashValue, query: HashValue): number | null;
  /** Pairs of distinct originals scored at most, when fewer than the run's (a slow peer). */
  maxPairs?: number;
}

/** Whether two hashes share a band at the same position (decisions.md 3, "Candidates"). */
export function shareBand(a: HashValue, b: HashValue): boolean {
  if (a.bands === null || b.bands === null) return false;
  for (let i = 0; i < a.bands.length && i < b.bands.length; i++) {
    const x = a.bands[i];
    const y = b.bands[i];
    if (x.length === y.length && x.every((v, k) => v === y[k])) return true;
  }
  return false;
}

/** The service's thresholds (decisions.md 3 and spec 4.2/4.3). */
export const VERIFY_FILE_MIN = 60;
export const VERIFY_FUZZY_MIN = 70;

const candidate = (a: HashValue, b: HashValue) => shareBand(a, b);
const atLeast = (min: number) => (score: number | null) => score !== null && score >= min;

const SERVICE_RULES: MatchRule[] = [
  { name: 'band', description: 'shares a band at the same position (the index\'s candidate rule)', match: (a, b) => candidate(a, b) },
  { name: 'verify-file', description: `a candidate with similarity >= ${VERIFY_FILE_MIN}`, match: (a, b, s) => atLeast(VERIFY_FILE_MIN)(s) && candidate(a, b) },
  { name: 'verify-fuzzy', description: `a candidate with similarity >= ${VERIFY_FUZZY_MIN}`, match: (a, b, s) => atLeast(VERIFY_FUZZY_MIN)(s) && candidate(a, b) },
];

const PEER_RULES: MatchRule[] = [
  { name: `sim>=${VERIFY_FILE_MIN}`, description: `similarity >= ${VERIFY_FILE_MIN} (the service's verify-file threshold on this hash's bits)`, match: (_a, _b, s) => atLeast(VERIFY_FILE_MIN)(s) },
  { name: `sim>=${VERIFY_FUZZY_MIN}`, description: `similarity >= ${VERIFY_FUZZY_MIN} (verify-fuzzy's)`, match: (_a, _b, s) => atLeast(VERIFY_FUZZY_MIN)(s) },
];

function ours(name: HashType, kind: MediaKind): HashFamily {
  return {
    name,
    kind,
    origin: 'provenant',
    score: 'similarity 0-100 (decisions.md 3)',
    rules: SERVICE_RULES,
    compare: name === 'ImagePHash' ? bitsSimilarity : sequenceSimilarity(SEQUENCE_ALIGNMENT[name as 'AudioChromaprint' | 'VideoPHash']),
  };
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** decisions.md 3's similarity of two equal-length bit strings, floor(100 (bits - d) / bits), here in plain JS (millions of pairs per run). */
function bitsSimilarity(a: HashValue, b: HashValue): number | null {
  const n = a.bytes.length;
  if (n === 0 || n !== b.bytes.length) return null;
  let d = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const x = (a.bytes[i] << 24) | (a.bytes[i + 1] << 16) | (a.bytes[i + 2] << 8) | a.bytes[i + 3];
    const y = (b.bytes[i] << 24) | (b.bytes[i + 1] << 16) | (b.bytes[i + 2] << 8) | b.bytes[i + 3];
    d += popcount32((x ^ y) >>> 0);
  }
  for (; i < n; i++) d += popcount32(a.bytes[i] ^ b.bytes[i]);
  return similarityFromDistance(d, 8 * n);
}

/** The best-alignment similarity of two word or frame sequences (decisions.md 3), by the library's kernel. */
function sequenceSimilarity(rule: { unitBytes: 4 | 8; maxShift: number; minOverlap: number }): HashFamily['compare'] {
  return (a, b) => {
    if (a.bytes.length < rule.unitBytes || b.bytes.length < rule.unitBytes) return null;
    if (a.bytes.length % rule.unitBytes !== 0 || b.bytes.length % rule.unitBytes !== 0) return null;
    return alignedSimilarity(a.bytes, b.bytes, rule.unitBytes, rule.maxShift, rule.minOverlap);
  };
}

// ---- PDQ and vPDQ (issue 28) ----------------------------------------------------------

/** Meta's PDQ match: distance <= 31 between hashes of quality >= 50. */
export const PDQ_MAX_DISTANCE = 31;
export const PDQ_MIN_QUALITY = 50;
/** vPDQ: a match when at least this share of the query's frames find a partner. */
export const VPDQ_MIN_SHARE = 80;

const pdqGood = (v: HashValue) => (v.quality ?? 0) >= PDQ_MIN_QUALITY;

/** The smallest distance from any of the query's dihedral hashes (its own alone when they are unknown) to the stored hash. */
function dihedralDistance(stored: HashValue, query: HashValue): number {
  let best = 256;
  for (const h of query.dihedral ?? [query.bytes]) best = Math.min(best, pdqDistance(stored.bytes, h));
  return best;
}

const IMAGE_VERIFY_FILE = SERVICE_RULES[1];

export const PDQ_HASH: HashFamily = {
  name: 'PDQ',
  kind: 'image',
  origin: 'provenant',
  score: 'bits equal of 256 (256 - distance)',
  compare: (a, b) => (a.bytes.length === 32 && b.bytes.length === 32 ? 256 - pdqDistance(a.bytes, b.bytes) : null),
  rules: [
    { name: 'pdq<=31', description: `distance <= ${PDQ_MAX_DISTANCE}, both of quality >= ${PDQ_MIN_QUALITY} (Meta's thresholds), the hashes as stored`, match: (a, b, s) => s !== null && 256 - s <= PDQ_MAX_DISTANCE && pdqGood(a) && pdqGood(b) },
    { name: 'pdq+dihedral', description: 'the same with the query\'s eight dihedral hashes (rotations, mirrors), as verify-file tries them', match: (a, b) => pdqGood(a) && pdqGood(b) && dihedralDistance(a, b) <= PDQ_MAX_DISTANCE },
    {
      name: 'verify-file',
      description: 'verify-file\'s answer: ImagePHash (a candidate with similarity >= 60) or PDQ with dihedral variants',
      match: (a, b) => (a.partner != null && b.partner != null && IMAGE_VERIFY_FILE.match(a.partner, b.partner, bitsSimilarity(a.partner, b.partner)))
        || (pdqGood(a) && pdqGood(b) && dihedralDistance(a, b) <= PDQ_MAX_DISTANCE),
    },
  ],
};

/** vPDQ's score: the share (0-100) of the query's good frames within 31 of a good frame of the stored video. */
function vpdqShare(stored: HashValue, query: HashValue): number | null {
  const targets = (stored.frames ?? []).filter((f) => f.quality >= PDQ_MIN_QUALITY);
  const asked = (query.frames ?? []).filter((f) => f.quality >= PDQ_MIN_QUALITY);
  if (targets.length === 0 || asked.length === 0) return null;
  let found = 0;
  for (const q of asked) if (targets.some((t) => pdqDistance(t.hash, q.hash) <= PDQ_MAX_DISTANCE)) found++;
  return Math.floor((100 * found) / asked.length);
}

const VIDEO_RULES = SERVICE_RULES;

export const VPDQ_HASH: HashFamily = {
  name: 'vPDQ',
  kind: 'video',
  origin: 'provenant',
  score: 'share of the query\'s frames (quality >= 50) within distance 31 of a frame of the other, 0-100',
  compare: vpdqShare,
  rules: [
    { name: 'vpdq>=80%', description: `at least ${VPDQ_MIN_SHARE} % of the query's frames find a partner (Meta's vPDQ)`, match: (_a, _b, s) => atLeast(VPDQ_MIN_SHARE)(s) },
    {
      name: 'verify-file',
      description: 'verify-file\'s answer: VideoPHash (a candidate with similarity >= 60) or vPDQ',
      match: (a, b, s) => atLeast(VPDQ_MIN_SHARE)(s)
        || (a.partner != null && b.partner != null && VIDEO_RULES[1].match(a.partner, b.partner, sequenceSimilarity(SEQUENCE_ALIGNMENT.VideoPHash)(a.partner, b.partner))),
    },
  ],
};

// ---- local features (issue 32) --------------------------------------------------------

const PDQ_VERIFY_FILE = PDQ_HASH.rules[2];

const nearCopy = (a: HashValue, b: HashValue) => a.pdq != null && b.pdq != null && pdqGood(a.pdq) && pdqGood(b.pdq) && dihedralDistance(a.pdq, b.pdq) <= NEAR_COPY_PDQ_DISTANCE;

/** The geometric check of the query's features against the record's stored ones. */
const confirmed = (stored: HashValue, query: HashValue) => stored.stored != null && query.features != null && matchFeatures(query.features, stored.stored) !== null;

export const FEATURES_HASH: HashFamily = {
  name: 'Features',
  kind: 'image',
  origin: 'provenant',
  score: 'geometric inliers of the query\'s features against the record\'s (src/lib/features.ts)',
  compare: (a, b) => (a.stored != null && b.features != null ? compareFeatures(b.features, a.stored).inliers : null),
  rules: [
    { name: 'features', description: `the geometric check confirms it: >= ${MIN_INLIERS} inliers covering >= ${100 * MIN_COVERAGE} % of the query (>= ${SPREAD_MIN_INLIERS} covering >= ${100 * SPREAD_COVERAGE} %), or, for a picture shown on ${100 * MIN_SHOWN}-${Math.round(100 * MAX_SHOWN)} % of the query, >= ${FRAMED_MIN_INLIERS} covering ${100 * MIN_COVERAGE} % of that part`, match: (a, b) => confirmed(a, b) },
    {
      name: 'verify-file',
      description: `verify-file's answer with features: a record with features only when the check confirms it (whichever hash found it, features retrieval included) or PDQ finds it within ${NEAR_COPY_PDQ_DISTANCE} bits; a record without features, or a query without any, by ImagePHash or PDQ as before`,
      match: (a, b) => {
        // a query without features cannot be checked: today's rule; a near-exact PDQ copy stands without the check
        if (a.stored != null && b.features != null) return confirmed(a, b) || nearCopy(a, b);
        if (a.pdq != null && b.pdq != null) return PDQ_VERIFY_FILE.match(a.pdq, b.pdq, null);
        return a.partner != null && b.partner != null && IMAGE_VERIFY_FILE.match(a.partner, b.partner, bitsSimilarity(a.partner, b.partner));
      },
    },
  ],
};

// ---- the ISCC Content-Code (issue 33) ------------------------------------------------

/** A file's ISCC Content-Code as the index compares it (its first 64 body bits), or null (none, or left out of the index). */
export function fromIscc(content: string | null | undefined): HashValue | null {
  if (content === null || content === undefined) return null;
  try {
    const key = isccIndexKey(content);
    return key === null ? null : { bytes: key.body, bands: null };
  } catch {
    return null;
  }
}

/** Bits equal of the 64 compared, for two codes of one content type (each family is one type). */
const isccBitsEqual = (a: HashValue, b: HashValue): number | null => {
  if (a.bytes.length !== 8 || b.bytes.length !== 8) return null;
  let d = 0;
  for (let i = 0; i < 8; i++) for (let x = a.bytes[i] ^ b.bytes[i]; x; x &= x - 1) d++;
  return 64 - d;
};

/** The ISCC Content-Code of a media type: how it finds copies as a soft binding (byBinding) and as verify-file's ISCC source. */
function isccFamily(kind: MediaKind): HashFamily {
  return {
    name: `ISCC-${kind[0].toUpperCase()}${kind.slice(1)}`,
    kind,
    origin: 'provenant',
    score: 'bits equal of the 64 compared (64 - Hamming distance of the Content-Codes)',
    compare: isccBitsEqual,
    rules: [
      { name: `binding<=${ISCC_BINDING_MAX_DISTANCE}`, description: `within ${ISCC_BINDING_MAX_DISTANCE} bits: the Soft Binding Resolution API's byBinding, and a recovered manifest's soft binding matching the copy`, match: (_a, _b, s) => s !== null && 64 - s <= ISCC_BINDING_MAX_DISTANCE },
      { name: `source<=${ISCC_SOURCE_MAX_DISTANCE}`, description: `within ${ISCC_SOURCE_MAX_DISTANCE} bits: verify-file's ISCC candidate source (nothing confirms it)`, match: (_a, _b, s) => s !== null && 64 - s <= ISCC_SOURCE_MAX_DISTANCE },
    ],
  };
}

/** The library's hashes per media type: the spec's fingerprint, then PDQ or vPDQ beside it, local features, the ISCC Content-Code. */
export const OUR_HASHES: readonly HashFamily[] = [
  ours('ImagePHash', 'image'),
  PDQ_HASH,
  FEATURES_HASH,
  isccFamily('image'),
  ours('AudioChromaprint', 'audio'),
  isccFamily('audio'),
  ours('VideoPHash', 'video'),
  VPDQ_HASH,
  isccFamily('video'),
];

/** The spec's fingerprint of a media type (the one the pool's fingerprint answers). */
export const ourHashFor = (kind: MediaKind): HashFamily => OUR_HASHES.find((f) => f.kind === kind)!;

/** A record's pdq_hash as HashValues: a PDQ, or a vPDQ's frames; `partner` the same file's spec fingerprint. */
export function fromPdq(pdq: PdqFingerprint | VpdqFingerprint, partner: HashValue | null): HashValue {
  if (pdq.hash_type === 'PDQ') return { bytes: pdqFromHex(pdq.hash_value), bands: null, quality: pdq.quality, partner };
  const frames = pdq.frames.map((f) => ({ hash: pdqFromHex(f.hash_value), quality: f.quality }));
  return { bytes: new Uint8Array(0), bands: null, frames, partner };
}

/** A fingerprint as a HashValue. */
export const fromFingerprint = (fp: Fingerprint): HashValue => ({ bytes: Uint8Array.from(fp.hash_value), bands: fp.bands });

// ---- peers --------------------------------------------------------------------------

export interface PeerStatus {
  name: string;
  kind: MediaKind;
  found: boolean;
  /** Its version when found; why not when missing. */
  detail: string;
}

export interface Peer {
  family: HashFamily;
  status: PeerStatus;
  /** The peer's hash of a file (in this thread, or its own process for fpcalc). */
  hash?: (path: string) => Promise<HashValue>;
}

function peerFamily(name: string, kind: MediaKind, compare: HashFamily['compare']): HashFamily {
  return { name, kind, origin: 'peer', score: 'similarity 0-100 of its bits', rules: PEER_RULES, compare };
}

const require = createRequire(import.meta.url);

/** A package's version, from the package.json above its entry point (its exports may hide package.json). */
function packageVersion(name: string): string {
  try {
    let dir = dirname(require.resolve(name));
    for (let i = 0; i < 6; i++) {
      const file = join(dir, 'package.json');
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === name && pkg.version) return pkg.version;
      }
      dir = dirname(dir);
    }
  } catch {
    // not resolvable from here: the version stays unknown
  }
  return 'version unknown';
}

/** An npm module by name, or why it cannot be loaded; its version from its package.json. */
async function npmModule(name: string): Promise<{ module: unknown; version: string } | { missing: string }> {
  let module: unknown;
  try {
    const specifier = name; // a variable: the package is not a dependency, only looked for
    module = await import(specifier);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { missing: code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' ? 'not installed' : `cannot load: ${(e as Error).message.split('\n')[0]}` };
  }
  return { module, version: packageVersion(name) };
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bitStringBytes(bits: string): Uint8Array {
  const out = new Uint8Array(bits.length >> 3);
  for (let i = 0; i < out.length * 8; i++) if (bits[i] === '1') out[i >> 3] |= 0x80 >> (i & 7);
  return out;
}

/** The first executable named `name` on PATH, or null. */
async function onPath(name: string, path = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, name);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** A program's stdout; a failure unless it exits 0 or `answered` accepts what it printed. */
function run(file: string, args: string[], timeoutMs: number, answered?: (stdout: string) => boolean): Promise<string> {
  return new Promise((done, fail) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err && !(err.killed !== true && answered?.(stdout))) fail(new Error(`${file} failed: ${(stderr || err.message).trim().split('\n').pop()}`));
      else done(stdout);
    });
  });
}

/** fpcalc's JSON answer (`-json`): a fingerprint of words. */
function fpcalcAnswer(stdout: string): { fingerprint: number[] } | null {
  try {
    const out = JSON.parse(stdout) as { fingerprint?: unknown };
    return Array.isArray(out.fingerprint) && out.fingerprint.length > 0 && out.fingerprint.every((w) => Number.isInteger(w)) ? (out as { fingerprint: number[] }) : null;
  } catch {
    return null;
  }
}

async function sharpPhash(): Promise<Peer> {
  const m = await npmModule('sharp-phash');
  const family = peerFamily('sharp-phash', 'image', bitsSimilarity);
  if ('missing' in m) return { family, status: { name: family.name, kind: 'image', found: false, detail: m.missing } };
  const mod = m.module as { default: (b: Buffer) => Promise<string> };
  return {
    family,
    status: { name: family.name, kind: 'image', found: true, detail: m.version },
    hash: async (path) => ({ bytes: bitStringBytes(await mod.default(await readFile(path))), bands: null }),
  };
}

async function imghash(): Promise<Peer> {
  const m = await npmModule('imghash');
  const family = peerFamily('imghash', 'image', bitsSimilarity);
  if ('missing' in m) return { family, status: { name: family.name, kind: 'image', found: false, detail: m.missing } };
  const mod = m.module as { default: { hash(b: Buffer, bits: number): Promise<string> } };
  return {
    family,
    status: { name: family.name, kind: 'image', found: true, detail: m.version },
    hash: async (path) => ({ bytes: hexBytes(await mod.default.hash(await readFile(path), 8)), bands: null }),
  };
}

/** fpcalc (Chromaprint's own tool): $FPCALC, else the first on PATH; its raw words compared by the audio alignment rule. */
async function fpcalc(): Promise<Peer> {
  const family = peerFamily('fpcalc', 'audio', sequenceSimilarity(SEQUENCE_ALIGNMENT.AudioChromaprint));
  const file = process.env.FPCALC || (await onPath('fpcalc'));
  const missing = (detail: string): Peer => ({ family, status: { name: 'fpcalc', kind: 'audio', found: false, detail } });
  if (file === null) return missing('not found on PATH (set FPCALC to its path)');
  let version: string;
  try {
    version = (await run(file, ['-version'], 10_000)).trim().replace(/^fpcalc version /, '');
  } catch (e) {
    return missing(`cannot run ${file}: ${(e as Error).message}`);
  }
  return {
    family,
    status: { name: 'fpcalc', kind: 'audio', found: true, detail: version },
    async hash(path) {
      // Chromaprint 1.5's fpcalc exits 3 after "Error decoding audio frame (End of file)" on
      // many files once it has printed their whole fingerprint (FFmpeg 5's end of stream):
      // the answer it printed counts
      const out = fpcalcAnswer(await run(file, ['-raw', '-json', '-length', '120', path], 120_000, (stdout) => fpcalcAnswer(stdout) !== null));
      if (out === null) throw new Error(`${file} printed no fingerprint for ${path}`);
      const bytes = new Uint8Array(out.fingerprint.length * 4);
      const view = new DataView(bytes.buffer);
      out.fingerprint.forEach((w, i) => view.setUint32(4 * i, w >>> 0, true));
      return { bytes, bands: null };
    },
  };
}

/** Every peer, looked for now; found or not. */
export async function findPeers(): Promise<Peer[]> {
  return Promise.all([sharpPhash(), imghash(), fpcalc(), opencvOrb()]);
}

// ---- hashing in the pool ------------------------------------------------------------

/** A failure's `code` when the examination said why (decode_failed: the decoders refused the file). */
export type HashOutcome = { fingerprint: Fingerprint; pdq: PdqFingerprint | VpdqFingerprint | null; iscc: string | null } | { failure: string; code?: FingerprintErrorCode };

/** The pool's fingerprint task asked for the PDQ too (images: one decode gives both; video: vPDQ of the same frames). */
export async function fingerprintWithPdq(pool: FingerprintPool, bytes: Uint8Array): Promise<HashOutcome> {
  const found = await pool.examine(bytes, { credentials: false });
  if (found.failure !== undefined) return { failure: found.failure.message, code: found.failure.code };
  if (found.fingerprint === null) return { failure: 'no fingerprint (not a supported file, or audio under about 3 s)' };
  return { fingerprint: found.fingerprint, pdq: found.pdq_hash, iscc: found.iscc?.content ?? null };
}

/**
 * Our fingerprints (and PDQ) of every file, in the worker pool with `lanes` files in
 * flight; each lane reads its next file while the pool works on its current one, so the
 * workers never wait for a read. `onEach` after each file. A file that cannot be read
 * or decoded, or gives no fingerprint, is a failure with its reason.
 */
export async function hashFiles(pool: FingerprintPool, paths: readonly string[], lanes: number, onEach?: () => void): Promise<HashOutcome[]> {
  const out: HashOutcome[] = new Array(paths.length);
  let next = 0;
  const read = (i: number) => readFile(paths[i]).then((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength), (e: unknown) => e as Error);
  const claim = (): [number, Promise<Uint8Array | Error>] | null => (next < paths.length ? [next, read(next++)] : null);
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, paths.length)) }, async () => {
    let current = claim();
    while (current !== null) {
      const [i, bytes] = current;
      const file = await bytes;
      const hashed = file instanceof Error ? Promise.reject(file) : fingerprintWithPdq(pool, file);
      current = claim(); // read ahead while the pool works
      try {
        out[i] = await hashed;
      } catch (e) {
        out[i] = { failure: (e as Error).message };
      }
      onEach?.();
    }
  }));
  return out;
}

/** A peer's hash of every file, `lanes` at a time; a failure is null (the peer could not read it). */
export async function hashWithPeer(peer: Peer, paths: readonly string[], lanes: number, onEach?: () => void): Promise<(HashValue | null)[]> {
  const out: (HashValue | null)[] = new Array(paths.length).fill(null);
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, paths.length)) }, async () => {
    while (next < paths.length) {
      const i = next++;
      try {
        out[i] = await peer.hash!(paths[i]);
      } catch {
        out[i] = null;
      }
      onEach?.();
    }
  }));
  return out;
}
