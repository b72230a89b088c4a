// Match-index queries at N stored: the originals' fingerprints plus synthetic ones (seeded
// random) up to N, queried with every variant's fingerprint as verify-file would (threshold
// 60, limit 100): p50 / p99 per query, bytes held per fingerprint, and whether the
// original came back.
import { MatchIndex } from '../../lib/match-index.js';
import type { Fingerprint, HashType } from '../../lib/types.js';
import { VERIFY_FILE_MIN } from './hashes.js';
import { quantile } from './metrics.js';
import { below, type Random } from './random.js';

export interface IndexFigures {
  hashType: HashType;
  /** Fingerprints held: originals + synthetic. */
  stored: number;
  synthetic: number;
  queries: number;
  p50Ms: number | null;
  p99Ms: number | null;
  bytesPerFingerprint: number;
  /** Share of queries whose own original was among the answers. */
  foundOriginal: number | null;
}

/** Audio and video entries carry their whole hash: synthetic ones stop at this many. */
export const MAX_SEQUENCE_ENTRIES = 10_000;
/** Queries per measurement at least (the variants' repeated when fewer). */
const MIN_QUERIES = 1000;

function randomBytes(random: Random, n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = below(random, 256);
  return out;
}

/**
 * The index measured for one hash type. `originals[i]` is stored under id i; `queries`
 * are [original index, fingerprint] pairs. Synthetic entries: random 8-byte hashes
 * (images; bands = hash), or random words or frames of an original's length with
 * random bands (audio, video), so they hold the memory a real entry would.
 */
export function measureIndex(hashType: HashType, originals: Fingerprint[], queries: [number, Fingerprint][], size: number, random: Random): IndexFigures {
  const index = new MatchIndex();
  try {
    originals.forEach((fp, i) => index.add(i, fp, i));
    const target = hashType === 'ImagePHash' ? size : Math.min(size, MAX_SEQUENCE_ENTRIES);
    const synthetic = Math.max(0, target - originals.length);
    if (hashType === 'ImagePHash') {
      index.reserve('ImagePHash', synthetic);
      const chunk = 65536;
      for (let start = 0; start < synthetic; start += chunk) {
        const n = Math.min(chunk, synthetic - start);
        const hashes = new Uint8Array(n * 8);
        for (let i = 0; i < hashes.length; i++) hashes[i] = below(random, 256);
        const ids = Array.from({ length: n }, (_, i) => originals.length + start + i);
        index.addImageHashes(ids, hashes, ids);
      }
    } else {
      const unit = hashType === 'AudioChromaprint' ? 4 : 8;
      for (let i = 0; i < synthetic; i++) {
        const like = originals.length > 0 ? originals[below(random, originals.length)].hash_value.length : 100 * unit;
        index.add(originals.length + i, { hash_type: hashType, hash_value: randomBytes(random, like), bands: Array.from({ length: 8 }, () => randomBytes(random, 4)) }, i);
      }
    }
    const times: number[] = [];
    let found = 0;
    let asked = 0;
    if (queries.length > 0) {
      const rounds = Math.max(1, Math.ceil(MIN_QUERIES / queries.length));
      for (let r = 0; r < rounds; r++) {
        for (const [original, fp] of queries) {
          const t0 = process.hrtime.bigint();
          const answer = index.query(fp, { threshold: VERIFY_FILE_MIN, limit: 100 });
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (r === 0) {
            asked++;
            if (answer.some((m) => m.id === original)) found++;
          }
        }
      }
    }
    times.sort((a, b) => a - b);
    return {
      hashType,
      stored: index.indexedSize(hashType),
      synthetic,
      queries: times.length,
      p50Ms: quantile(times, 0.5),
      p99Ms: quantile(times, 0.99),
      bytesPerFingerprint: index.bytesPerEntry(hashType),
      foundOriginal: asked === 0 ? null : found / asked,
    };
  } finally {
    index.free();
  }
}
