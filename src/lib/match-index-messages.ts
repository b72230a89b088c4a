// The messages between the server's match index thread (src/pool/match-index-thread.ts)
// and its task file (workers/match-index.ts), in a leaf both import: numbered requests in,
// replies with the same number out.
import type { Match, MatchQuery } from './match-index.js';
import type { HashType } from './types.js';
import type { FeatureMatch } from './features.js';

export type IndexRequest =
  /** fps: fingerprint objects, or their JSON text (parsed on the thread) */
  | { op: 'add'; n: number; ids: number[]; fps: unknown[]; signedAt: number[] }
  | { op: 'query'; n: number; query: Omit<MatchQuery, 'hash_type'>; types: readonly HashType[]; threshold: number; limit: number }
  /** issue 28: records' pdq_hash values (objects, or null to take an id out); images of quality >= 50 are indexed */
  | { op: 'pdq-add'; n: number; ids: number[]; pdq: unknown[] }
  /** issue 28: the stored images within `maxDistance` of any of the 1-8 hashes (64 hex each) */
  | { op: 'pdq-query'; n: number; hashes: string[]; maxDistance: number }
  /** issue 28: the stored videos at least `minPercent` of whose query frames (64 hex each) have a frame within `maxDistance` */
  | { op: 'vpdq-query'; n: number; hashes: string[]; maxDistance: number; minPercent: number }
  /** issue 33: records' ISCC Content-Code units (canonical strings; null takes an id out) */
  | { op: 'iscc-add'; n: number; ids: number[]; codes: (string | null)[] }
  /** issue 33: the stored Content-Codes of the code's type within `maxDistance` bits, nearest first, at most `limit` */
  | { op: 'iscc-query'; n: number; code: string; maxDistance: number; limit: number }
  /** issue 32: records' feature sets (encodeFeatureSet bytes, from the store) to retrieve by */
  | { op: 'features-add'; n: number; ids: number[]; sets: Uint8Array[] }
  /** issue 32: the stored images a query's feature set (encoded) votes for, most votes first */
  | { op: 'features-query'; n: number; set: Uint8Array; limit: number }
  /** issue 32: the geometric check of a query's set against records' stored sets */
  | { op: 'features-verify'; n: number; set: Uint8Array; records: { seq: number; data: Uint8Array }[] };

export interface IndexReply {
  n: number;
  error?: string;
  /** add: how many of the batch were indexed, and the index's size per type (HASH_TYPES order) and bytes after it. */
  indexed?: number;
  sizes?: number[];
  bytes?: number;
  /** query: the matches of each type in turn. */
  matches?: Match[];
  /** pdq-add: PDQ images held after it; pdq-query: ids and distances, nearest first. */
  pdqSize?: number;
  pdqMatches?: { id: number; distance: number }[];
  /** vpdq-query: ids and the share of query frames matched (0-100), best first. */
  vpdqMatches?: { id: number; percent: number }[];
  /** iscc-add: Content-Codes held after it; iscc-query: ids and distances, nearest first. */
  isccSize?: number;
  isccMatches?: { id: number; distance: number }[];
  /** features-add: images held after it, and the index's bytes. */
  featureImages?: number;
  featureBytes?: number;
  /** features-query: ids and votes (features found), best score first (feature-index.ts). */
  featureCandidates?: { id: number; votes: number }[];
  /** features-verify: per record asked, its match or null (not confirmed, or a stored set that does not decode). */
  featureMatches?: { seq: number; match: FeatureMatch | null }[];
}
