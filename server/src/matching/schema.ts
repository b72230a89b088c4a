// Request checks of the matching endpoints (spec 4.3; issue 28). verify-fuzzy's body is
// described once in provenant/api (fuzzyQuery: its shape and GET /openapi.json); the
// checks here give its errors in the order and words spec 4.3 answers them: pdq first,
// then pixels, then bands (missing_bands when neither) and hash_value. verify-file takes
// a raw upload: its only request error, no_file, is the route's.
import type { HashType } from 'provenant';
import type { FuzzyQuery } from 'provenant/api';
import { ApiError } from '../errors.js';

/** Most values accepted in a verify-fuzzy hash_value (120 s of audio is about 1,300 words). */
export const MAX_HASH_VALUES = 65_536;

/** A checked verify-fuzzy body: the one query it asks. */
export type FuzzyRequest =
  | { kind: 'pdq'; hash: string }
  | { kind: 'pixels'; pixels: number[] }
  | { kind: 'bands'; bands: number[][]; hash_value: number[] | null; types: HashType[] };

function isByteArray(v: unknown, maxLength: number): v is number[] {
  return Array.isArray(v) && v.length <= maxLength && v.every((x) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 255);
}

/** Which stored types a band layout can match (spec 4.3): 8 x 1 byte images, 8 x 4 bytes audio and video. */
export function hashTypesForBands(bands: number[][]): HashType[] {
  if (bands.length !== 8) return [];
  if (bands.every((b) => b.length === 1)) return ['ImagePHash'];
  if (bands.every((b) => b.length === 4)) return ['AudioChromaprint', 'VideoPHash'];
  return [];
}

/**
 * Spec 4.3: `pdq` (issue 28: Meta's 64 hex digits, lower-cased), else `pixels` (72
 * grey values; the server computes hash and bands, ignoring the others), else `bands`
 * with an optional `hash_value`. Malformed values are 400 invalid_request; none of them
 * is 400 missing_bands; a band layout of no hash type (`types` empty) matches nothing.
 */
export function parseFuzzyQuery(input: unknown): FuzzyRequest {
  const b = (input !== null && typeof input === 'object' && !Array.isArray(input) ? input : {}) as Record<keyof FuzzyQuery, unknown>;
  if (b.pdq !== undefined && b.pdq !== null) {
    if (typeof b.pdq !== 'string' || !/^[0-9a-fA-F]{64}$/.test(b.pdq)) throw new ApiError('invalid_request', 'pdq must be a PDQ hash: 64 hex digits.');
    return { kind: 'pdq', hash: b.pdq.toLowerCase() };
  }
  if (b.pixels !== undefined && b.pixels !== null) {
    if (!isByteArray(b.pixels, 72) || b.pixels.length !== 72) {
      throw new ApiError('invalid_request', 'pixels must be 72 grey values (integers 0-255, 9 x 8, row-major).');
    }
    return { kind: 'pixels', pixels: b.pixels };
  }
  if (b.bands === undefined || b.bands === null) throw new ApiError('missing_bands');
  if (!Array.isArray(b.bands) || b.bands.length > 64 || !b.bands.every((band) => isByteArray(band, 64))) {
    throw new ApiError('invalid_request', 'bands must be an array of byte arrays (integers 0-255).');
  }
  let hashValue: number[] | null = null;
  if (b.hash_value !== undefined && b.hash_value !== null) {
    if (!isByteArray(b.hash_value, MAX_HASH_VALUES)) {
      throw new ApiError('invalid_request', `hash_value must be an array of at most ${MAX_HASH_VALUES} bytes (integers 0-255).`);
    }
    hashValue = b.hash_value;
  }
  const bands = b.bands as number[][];
  return { kind: 'bands', bands, hash_value: hashValue, types: hashTypesForBands(bands) };
}
