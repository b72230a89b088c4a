// The hashes a run measures: the library's own for each media type (computed in the
// worker pool), and peers found at run time (sharp-phash, imghash, fpcalc), named in the
// report, never required: a peer that is not installed is reported as missing.
//
// Every hash gives a score per pair, higher = closer (a 0-100 similarity), and the rules
// the service matches by. Ours: the index's candidate rule (a band shared at the same
// position, decisions.md 3), verify-file (a candidate with similarity >= 60) and
// verify-fuzzy (>= 70). Peers have no bands: their rules are the same similarity
// thresholds on their own bits.
//
// PDQ and vPDQ (issue 28) join OUR_HASHES when the library computes them: a PDQ family
// scores 256 - Hamming distance and matches at distance <= 31 (score >= 225) between
// hashes of quality >= 50, read from the same pool task as ImagePHash.
import { execFile } from 'node:child_process';
import { constants, existsSync, readFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import type { MediaKind } from '../../lib/detect.js';
import { alignedSimilarity, SEQUENCE_ALIGNMENT, similarityFromDistance } from '../../lib/hamming.js';
import type { Fingerprint, HashType } from '../../lib/types.js';
import type { FingerprintPool } from '../../pool/index.js';

/** One file's hash under one family. */
export interface HashValue {
  bytes: Uint8Array;
  /** The 8 LSH bands (ours); null for hashes without bands. */
  bands: number[][] | null;
}

export interface MatchRule {
  name: string;
  description: string;
  /** Matches when score >= minScore ... */
  minScore: number;
  /** ... and, when set, the two share a band at the same position. */
  band: boolean;
}

export interface HashFamily {
  name: string;
  kind: MediaKind;
  origin: 'provenant' | 'peer';
  /** What a score is, for the report. */
  score: string;
  rules: MatchRule[];
  compare(a: HashValue, b: HashValue): number | null;
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

const SERVICE_RULES: MatchRule[] = [
  { name: 'band', description: 'shares a band at the same position (the index\'s candidate rule)', minScore: -Infinity, band: true },
  { name: 'verify-file', description: `a candidate with similarity >= ${VERIFY_FILE_MIN}`, minScore: VERIFY_FILE_MIN, band: true },
  { name: 'verify-fuzzy', description: `a candidate with similarity >= ${VERIFY_FUZZY_MIN}`, minScore: VERIFY_FUZZY_MIN, band: true },
];

const PEER_RULES: MatchRule[] = [
  { name: `sim>=${VERIFY_FILE_MIN}`, description: `similarity >= ${VERIFY_FILE_MIN} (the service's verify-file threshold on this hash's bits)`, minScore: VERIFY_FILE_MIN, band: false },
  { name: `sim>=${VERIFY_FUZZY_MIN}`, description: `similarity >= ${VERIFY_FUZZY_MIN} (verify-fuzzy's)`, minScore: VERIFY_FUZZY_MIN, band: false },
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

/** The library's hashes, one per media type (PDQ and vPDQ go here, see above). */
export const OUR_HASHES: readonly HashFamily[] = [
  ours('ImagePHash', 'image'),
  ours('AudioChromaprint', 'audio'),
  ours('VideoPHash', 'video'),
];

export const ourHashFor = (kind: MediaKind): HashFamily => OUR_HASHES.find((f) => f.kind === kind)!;

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

function run(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((done, fail) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) fail(new Error(`${file} failed: ${(stderr || err.message).trim().split('\n').pop()}`));
      else done(stdout);
    });
  });
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
      const out = JSON.parse(await run(file, ['-raw', '-json', '-length', '120', path], 120_000)) as { fingerprint: number[] };
      const bytes = new Uint8Array(out.fingerprint.length * 4);
      const view = new DataView(bytes.buffer);
      out.fingerprint.forEach((w, i) => view.setUint32(4 * i, w >>> 0, true));
      return { bytes, bands: null };
    },
  };
}

/** Every peer, looked for now; found or not. */
export async function findPeers(): Promise<Peer[]> {
  return Promise.all([sharpPhash(), imghash(), fpcalc()]);
}

// ---- hashing in the pool ------------------------------------------------------------

export type HashOutcome = { fingerprint: Fingerprint } | { failure: string };

/**
 * Our fingerprint of every file, in the worker pool with `lanes` files in flight; each
 * lane reads its next file while the pool works on its current one, so the workers never
 * wait for a read. `onEach` after each file. A file that cannot be read or decoded, or
 * gives no fingerprint, is a failure with its reason.
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
      const fingerprint = file instanceof Error ? Promise.reject(file) : pool.fingerprint(file);
      current = claim(); // read ahead while the pool works
      try {
        const fp = await fingerprint;
        out[i] = fp === null ? { failure: 'no fingerprint (not a supported file, or audio under about 3 s)' } : { fingerprint: fp };
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
