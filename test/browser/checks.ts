// The computations the browser test runs twice, over the same inputs: in Chromium with
// the browser entry (bundled into page.ts) and in Node with the Node entry. Written
// once so that the two runs cannot drift apart; the test compares their results.
import type * as BrowserEntry from '../../src/browser.js';
import type { Fingerprint } from '../../src/lib/types.js';

/** The part of the library the checks use; both entries have it. */
export type Library = Pick<
  typeof BrowserEntry,
  | 'createSha256' | 'sha256Hex' | 'createHmacSha256' | 'hmacSha256Hex' | 'imageHashFromPixels' | 'imageBands'
  | 'hammingDistance' | 'fingerprintSimilarity' | 'MatchIndex' | 'resampleTo11025' | 'audioFingerprintFromSamples'
  | 'walkPng' | 'crc32' | 'verifyRecord' | 'actionHash' | 'pdqHash' | 'pdqDihedral' | 'pdqHex' | 'verifyProofBundle'
  | 'createBlake3' | 'createDataHasher' | 'createInstanceHasher' | 'isccImageCodeFromPixels' | 'textCode' | 'isccCode'
  | 'extractFeatures' | 'encodeFeatureSet' | 'compareFeatures'
>;

/** A decoded image: RGBA pixels and the file they came from. */
export interface DecodedImage {
  name: string;
  bytes: Uint8Array;
  width: number;
  height: number;
  pixels: Uint8Array;
}

export interface CheckInput {
  /** The large file, in whatever chunks its reader gives. */
  file: AsyncIterable<Uint8Array>;
  images: DecodedImage[];
  /** Mono samples at `rate` Hz, resampled to 11025 Hz before Chromaprint. */
  audio: { samples: Float32Array; rate: number };
  record: BrowserEntry.SignedRecord;
  tampered: BrowserEntry.SignedRecord;
  hmacKey: string;
  /** A tlog-proof bundle (cosigned checkpoint) made in Node, its entry, one with its index changed, and the policy. */
  tlog: { bundle: string; tampered: string; entry: string; policy: { logKeys: string[]; witnesses: string[]; quorum: number } };
}

export interface CheckResult {
  fileBytes: number;
  fileSha256: string;
  fileHmac: string;
  textSha256: string;
  textHmac: string;
  images: { name: string; hash: number[]; bands: number[][]; pdq: string; pdqQuality: number; pdqDihedral: string[]; crc32: number; walkEnd: number | null; walkRecords: number | null; features: string | null; selfInliers: number | null }[];
  hamming: number;
  similarity: number | null;
  matches: { id: number; similarity: number | null }[];
  audio: Fingerprint;
  verified: boolean;
  tamperedVerified: boolean;
  actionHash: string;
  tlog: { index: number; cosigners: string[]; tamperedRefused: string };
  /** ISCC (issue 33): the large file's BLAKE3, Data- and Instance-Code; each image's Image-Code; a Text-Code. */
  iscc: { fileBlake3: number[]; data: string; instance: string; iscc: string; images: string[]; text: string };
}

/** Text with multi-byte UTF-8, hashed as a string (the kernel encodes it itself). */
const TEXT = 'provenance: café, 水, 🍓 '.repeat(40);

export async function runChecks(lib: Library, input: CheckInput): Promise<CheckResult> {
  const sha = lib.createSha256();
  const mac = lib.createHmacSha256(input.hmacKey);
  const blake = lib.createBlake3();
  const data = lib.createDataHasher();
  const instance = lib.createInstanceHasher();
  let fileBytes = 0;
  for await (const chunk of input.file) {
    sha.update(chunk);
    mac.update(chunk);
    blake.update(chunk);
    data.update(chunk);
    instance.update(chunk);
    fileBytes += chunk.length;
  }

  const images = input.images.map((img) => {
    const hash = lib.imageHashFromPixels(img.pixels, img.width, img.height, 4);
    const walk = img.name.endsWith('.png') ? lib.walkPng(img.bytes) : null;
    const pdq = lib.pdqHash(img.pixels, img.width, img.height, 4);
    // issue 32: the local features (their encoded bytes' SHA-256) and the check of the set against itself
    const set = lib.extractFeatures({ data: img.pixels, width: img.width, height: img.height, channels: 4 });
    return {
      name: img.name,
      hash: Array.from(hash),
      bands: lib.imageBands(hash),
      pdq: pdq.hex,
      pdqQuality: pdq.quality,
      pdqDihedral: lib.pdqDihedral(img.pixels, img.width, img.height, 4).hashes.map(lib.pdqHex),
      crc32: lib.crc32(img.bytes),
      walkEnd: walk?.end ?? null,
      walkRecords: walk?.records.length ?? null,
      features: set === null ? null : lib.sha256Hex(lib.encodeFeatureSet(set)),
      selfInliers: set === null ? null : lib.compareFeatures(set, set).inliers,
    };
  });
  const fingerprints: Fingerprint[] = images.map((i) => ({ hash_type: 'ImagePHash', hash_value: i.hash, bands: i.bands }));
  const [a, b] = fingerprints;

  // An index of both images and a one-bit variant of the first, queried with the first.
  const near = a.hash_value.slice();
  near[7] ^= 1;
  const index = new lib.MatchIndex();
  index.add(1, a, 1000);
  index.add(2, b, 2000);
  index.add(3, { hash_type: 'ImagePHash', hash_value: near, bands: lib.imageBands(near) }, 3000);
  const matches = index.query(a);
  index.free();

  const entry = { entry: new TextEncoder().encode(input.tlog.entry) };
  const proven = lib.verifyProofBundle(input.tlog.bundle, entry, input.tlog.policy);
  let tamperedRefused = 'accepted';
  try {
    lib.verifyProofBundle(input.tlog.tampered, entry, input.tlog.policy);
  } catch (e) {
    tamperedRefused = (e as { code?: string }).code ?? String(e);
  }

  return {
    fileBytes,
    fileSha256: sha.digestHex(),
    fileHmac: mac.digestHex(),
    textSha256: lib.sha256Hex(TEXT),
    textHmac: lib.hmacSha256Hex(input.hmacKey, TEXT),
    images,
    hamming: lib.hammingDistance(Uint8Array.from(a.hash_value), Uint8Array.from(b.hash_value)),
    similarity: lib.fingerprintSimilarity(a, b),
    matches,
    audio: lib.audioFingerprintFromSamples(lib.resampleTo11025(input.audio.samples, input.audio.rate)),
    verified: lib.verifyRecord(input.record),
    tamperedVerified: lib.verifyRecord(input.tampered),
    actionHash: lib.actionHash(input.record, input.record.signature),
    tlog: { index: proven.index, cosigners: proven.checkpoint.cosignatures.map((c) => c.name), tamperedRefused },
    iscc: (() => {
      const d = data.code().iscc;
      const i = instance.code().iscc;
      return {
        fileBlake3: Array.from(blake.digest()), data: d, instance: i, iscc: lib.isccCode([d, i]).iscc,
        images: input.images.map((img) => lib.isccImageCodeFromPixels(img.pixels, img.width, img.height, 4, 256).iscc),
        text: lib.textCode(TEXT, 128).iscc,
      };
    })(),
  };
}
