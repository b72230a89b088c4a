// The local-features retrieval index (issue 32): which stored images share enough local
// features with a query to be worth the geometric check, in the matchindex kernel's
// memory (assembly/matchindex/feature_index.ts says how: an inverted multi-index over
// the descriptors' two halves, filtered by 64 of their bits, mirrored queries from the
// same pass). It only retrieves: matchFeatures (features.ts) decides.
import { loadKernel, wasmFlavor, type BaseExports, type Kernel, type WasmFlavor } from './wasm-core.js';
import { FEATURE_BYTES, FEATURE_DESCRIPTOR_OFFSET, type FeatureSet } from './features.js';

interface FeatureIndexExports extends BaseExports {
  fiCreate(codebook: number): number;
  fiDestroy(ix: number): void;
  fiAdd(ix: number, id: number, descriptors: number, n: number, stride: number): number;
  fiHas(ix: number, id: number): number;
  fiSize(ix: number): number;
  fiPostings(ix: number): number;
  fiBytes(ix: number): number;
  fiCell(ix: number, descriptor: number): number;
  fiQuery(ix: number, descriptors: number, n: number, mirror: number, maxHe: number, minVotes: number, limit: number, maxList: number, probes: number): number;
  fiResults(): number;
  fiWeight(images: number, postings: number): number;
  fiScanned(): number;
  fiPassed(): number;
}

/** Bytes of one descriptor, and of the codebook (256 codewords of one 128-bit half each, then each codeword's 32 embedding places: distinct bits 0-127 of a half). */
export const DESCRIPTOR_BYTES = 32;
export const FEATURE_EMBEDDING_BITS = 32;
export const FEATURE_CODEBOOK_BYTES = 256 * 16 + 256 * FEATURE_EMBEDDING_BITS;
/** Ids are integers from 0 to 2^31 - 1 (the kernel marks a result's channel in the top bit). */
export const FEATURE_INDEX_MAX_ID = 0x7fff_ffff;
/** Features of an image the index holds: its first 64 (the kernel's found-sets are 64-bit). */
export const FEATURE_INDEX_FEATURES = 64;
/** Images one index holds at most (a posting keeps the slot in 26 bits). */
export const FEATURE_INDEX_MAX_IMAGES = 2 ** 26;

export interface FeatureQueryOptions {
  /** Also vote by the query's mirrored descriptors (default true). */
  mirror?: boolean;
  /** Bits of the 64 compared a posting may differ in (default 14). */
  maxEmbeddingDistance?: number;
  /** Votes an image needs to be a candidate (default 4). */
  minVotes?: number;
  /** Candidates answered at most (default 20). */
  limit?: number;
  /** Cells holding more postings than this are skipped as stop words (default: 64 x the mean). */
  maxList?: number;
  /** Cells a descriptor probes: 1 (its halves' nearest codewords) or 3 (and each half's second nearest with the other's nearest; default). */
  probes?: 1 | 3;
}

export interface FeatureCandidate {
  id: number;
  /** Features of this image (of its first FEATURE_INDEX_FEATURES) the query found, in its better-scored channel. */
  votes: number;
  /** Whether the mirrored descriptors scored better. */
  mirrored: boolean;
  /** Those features weighed by their cells' rarity (cellWeight), what candidates are ranked by. */
  score: number;
}

/** Each codeword's places: FEATURE_EMBEDDING_BITS distinct bits of a 128-bit half. */
function placesValid(codebook: Uint8Array): boolean {
  for (let w = 0; w < 256; w++) {
    const seen = new Set<number>();
    for (const place of codebook.subarray(256 * 16 + w * FEATURE_EMBEDDING_BITS, 256 * 16 + (w + 1) * FEATURE_EMBEDDING_BITS)) {
      if (place > 127 || seen.has(place)) return false;
      seen.add(place);
    }
  }
  return true;
}

function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 0 || id > FEATURE_INDEX_MAX_ID) throw new RangeError(`a feature index id is an integer from 0 to ${FEATURE_INDEX_MAX_ID}`);
}

function descriptorCount(descriptors: Uint8Array): number {
  if (!(descriptors instanceof Uint8Array) || descriptors.length % DESCRIPTOR_BYTES !== 0) throw new RangeError(`descriptors are a Uint8Array of n x ${DESCRIPTOR_BYTES} bytes`);
  return descriptors.length / DESCRIPTOR_BYTES;
}

/** Candidates a query answers at most. */
export const FEATURE_QUERY_MAX_LIMIT = 1_000_000;

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

/** The options as the kernel takes them, defaults filled in; RangeError for one out of range (the kernel would take any u32). */
function queryOptions(options: FeatureQueryOptions, postings: number): Required<FeatureQueryOptions> {
  if (options.mirror !== undefined && typeof options.mirror !== 'boolean') throw new RangeError('mirror must be a boolean');
  if (options.probes !== undefined && options.probes !== 1 && options.probes !== 3) throw new RangeError('probes must be 1 or 3');
  return {
    mirror: options.mirror ?? true,
    maxEmbeddingDistance: integerIn('maxEmbeddingDistance', options.maxEmbeddingDistance ?? 14, 0, 64),
    minVotes: integerIn('minVotes', options.minVotes ?? 4, 1, FEATURE_INDEX_FEATURES),
    limit: integerIn('limit', options.limit ?? 20, 0, FEATURE_QUERY_MAX_LIMIT),
    maxList: integerIn('maxList', options.maxList ?? Math.max(4096, Math.ceil((64 * postings) / 65536)), 0, 0xffff_ffff),
    probes: options.probes ?? 3,
  };
}

/**
 * Images' descriptors under the caller's ids; an id added again is kept as it was
 * (records are immutable). Memory is held in WebAssembly until `free()`.
 *
 * ```ts
 * const index = new FeatureIndex(codebook);
 * index.add(7, descriptorsOf(recordSet));
 * index.query(descriptorsOf(querySet)); // [{ id: 7, votes: 23, mirrored: false, score: 610 }]
 * ```
 */
export class FeatureIndex {
  private readonly kernel: Kernel<FeatureIndexExports>;
  private handle: number;

  constructor(codebook: Uint8Array, options: { flavor?: WasmFlavor } = {}) {
    if (!(codebook instanceof Uint8Array) || codebook.length !== FEATURE_CODEBOOK_BYTES) throw new RangeError(`a feature codebook is ${FEATURE_CODEBOOK_BYTES} bytes`);
    if (!placesValid(codebook)) throw new RangeError(`a feature codebook's embedding places are ${FEATURE_EMBEDDING_BITS} distinct bits 0-127 of a half for each codeword`);
    this.kernel = loadKernel<FeatureIndexExports>('matchindex', options.flavor ?? wasmFlavor);
    this.handle = this.kernel.exports.fiCreate(this.kernel.writeScratch(codebook));
  }

  private live(): number {
    if (this.handle === 0) throw new Error('FeatureIndex was freed');
    return this.handle;
  }

  /**
   * Adds image `id`'s descriptors (n x 32 bytes; the first FEATURE_INDEX_FEATURES are
   * held); false when the id was held already (left as it was). Throws a RangeError when
   * the index holds FEATURE_INDEX_MAX_IMAGES.
   */
  add(id: number, descriptors: Uint8Array): boolean {
    const ix = this.live();
    checkId(id);
    const n = Math.min(descriptorCount(descriptors), FEATURE_INDEX_FEATURES);
    return this.added(this.kernel.exports.fiAdd(ix, id, this.kernel.writeScratch(descriptors.subarray(0, n * DESCRIPTOR_BYTES)), n, DESCRIPTOR_BYTES));
  }

  /**
   * Adds image `id`'s feature set as add(id, descriptorsOf(set)) does, read in place
   * (a restart adds a million: no descriptors copied out in JS).
   */
  addSet(id: number, set: FeatureSet): boolean {
    const ix = this.live();
    checkId(id);
    const n = Math.min(set.count, FEATURE_INDEX_FEATURES);
    if (!(set.bytes instanceof Uint8Array) || !Number.isInteger(n) || n < 0 || set.bytes.length < n * FEATURE_BYTES) throw new RangeError('a feature set of count x 40 bytes');
    const at = this.kernel.writeScratch(set.bytes.subarray(0, n * FEATURE_BYTES));
    return this.added(this.kernel.exports.fiAdd(ix, id, at + FEATURE_DESCRIPTOR_OFFSET, n, FEATURE_BYTES));
  }

  private added(answer: number): boolean {
    if (answer === 2) throw new RangeError(`a feature index holds at most ${FEATURE_INDEX_MAX_IMAGES} images`);
    return answer === 1;
  }

  has(id: number): boolean {
    const ix = this.live();
    return Number.isInteger(id) && id >= 0 && id <= FEATURE_INDEX_MAX_ID && this.kernel.exports.fiHas(ix, id) === 1;
  }

  /** The cell (0-65535) the index files a descriptor under: its halves' nearest codewords. */
  cell(descriptor: Uint8Array): number {
    const ix = this.live();
    if (descriptorCount(descriptor) !== 1) throw new RangeError('one descriptor: 32 bytes');
    return this.kernel.exports.fiCell(ix, this.kernel.writeScratch(descriptor));
  }

  /** The images whose features the query's descriptors find, best score first (ties: the earlier added). */
  query(descriptors: Uint8Array, options: FeatureQueryOptions = {}): FeatureCandidate[] {
    const ix = this.live();
    const n = descriptorCount(descriptors);
    const e = this.kernel.exports;
    const postings = e.fiPostings(ix);
    const o = queryOptions(options, postings);
    const count = e.fiQuery(ix, this.kernel.writeScratch(descriptors), n, o.mirror ? 1 : 0, o.maxEmbeddingDistance, o.minVotes, o.limit, o.maxList, o.probes);
    const r = this.kernel.view(Uint32Array, e.fiResults(), count * 4);
    const out: FeatureCandidate[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = { id: r[4 * i], votes: r[4 * i + 1], mirrored: r[4 * i + 2] === 1, score: r[4 * i + 3] };
    return out;
  }

  /** The last query's work: postings scanned, and those within the embedding distance (for tuning and the bench). */
  lastQueryWork(): { scanned: number; passed: number } {
    this.live();
    return { scanned: this.kernel.exports.fiScanned(), passed: this.kernel.exports.fiPassed() };
  }

  /** A found feature's weight in a cell of `postings` (the kernel's: 4 log2(images / postings) in quarter steps, at least 1). */
  cellWeight(postings: number): number {
    const ix = this.live();
    return this.kernel.exports.fiWeight(this.kernel.exports.fiSize(ix), postings);
  }

  /** Images held. */
  size(): number {
    return this.kernel.exports.fiSize(this.live());
  }

  /** Descriptors held (postings). */
  postings(): number {
    return this.kernel.exports.fiPostings(this.live());
  }

  /** WebAssembly bytes this index holds. */
  bytes(): number {
    return this.kernel.exports.fiBytes(this.live());
  }

  /** Gives the memory back; the index cannot be used after. */
  free(): void {
    if (this.handle === 0) return;
    this.kernel.exports.fiDestroy(this.handle);
    this.handle = 0;
  }
}
