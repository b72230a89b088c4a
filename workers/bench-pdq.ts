// Piscina task for `provenant bench`: the eight dihedral PDQ hashes of an image file
// (PDQ_DIHEDRAL order, from one DCT) and its quality, as verify-file tries a query's
// rotations and mirrors (issue 28), and its local features (issue 32; encoded, null when
// too few) from the same pixels: as verify-file asks with them (QUERY_FEATURES_MAX, the
// inner picture's too) and as a record keeps them (RECORD_FEATURES_MAX). Decoded as the
// fingerprint task decodes (sharp, decodeImagePixels), here in the worker thread: the
// bench's own files only.
import { detectType } from '../src/lib/detect.js';
import { pdqDihedral, pdqHex } from '../src/lib/pdq.js';
import { decodeImagePixels } from '../src/media/image.js';
import { encodeFeatureSet, extractFeatures, RECORD_FEATURES_MAX, type FeatureSet } from '../src/lib/features.js';

export interface BenchPdqTask {
  buffer: ArrayBuffer;
}

export default async function benchPdq({ buffer }: BenchPdqTask): Promise<{ hashes: string[]; quality: number; features: Uint8Array | null; record: Uint8Array | null }> {
  const bytes = new Uint8Array(buffer);
  const type = detectType(bytes);
  if (type === null || type.kind !== 'image') throw new Error('not an image');
  const px = await decodeImagePixels(bytes, type.format);
  const d = pdqDihedral(px.data, px.width, px.height, px.channels);
  const pixels = { data: px.data, width: px.width, height: px.height, channels: px.channels };
  const encoded = (set: FeatureSet | null) => (set === null ? null : encodeFeatureSet(set));
  return {
    hashes: d.hashes.map(pdqHex),
    quality: d.quality,
    features: encoded(extractFeatures(pixels, { inner: true })),
    record: encoded(extractFeatures(pixels, { keep: RECORD_FEATURES_MAX })),
  };
}
