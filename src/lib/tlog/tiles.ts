// The tiled layout of c2sp.org/tlog-tiles: tiles of height 8 (256 hashes, 8192 bytes);
// the tile at level L holds the hashes of subtrees of 256^L leaves; its paths
// `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]` with N in 3-digit groups
// (`x001/x234/067`); partial tiles at the right edge.
//
// TileBuilder appends leaves and yields the tiles to store; its whole state is the set
// of partial tiles at the current size (one per level, at most 255 hashes each), which
// is also all that is needed to compute the root, so it resumes from those tiles.
// tileHashReader answers a proof's subtree hashes from stored tiles (merkle.ts).
import { TlogError } from './errors.js';
import { EMPTY_ROOT, HASH_SIZE, leafHashInto, nodeHash, perfectRoot } from './hash.js';
import type { HashReader, SubtreeCoord } from './merkle.js';

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
export const TILE_BYTES = TILE_WIDTH * HASH_SIZE;
/** The largest entry an entry bundle can hold (uint16 length prefix). */
export const MAX_ENTRY_BYTES = 0xffff;

/** A tile: level L (0..63), index N, width W (1..255 for a partial tile, 256 for a full one). */
export interface TileCoord {
  readonly level: number;
  readonly index: number;
  readonly width: number;
}

/** A tile and its bytes (width * 32 bytes). */
export interface TileData extends TileCoord {
  readonly data: Uint8Array;
}

/**
 * Reads tiles by coordinate, in the order asked. A reader may answer a tile wider than
 * asked (the full tile for a partial one, or a later partial): tiles only grow at the
 * right, so the first width * 32 bytes are the same.
 */
export interface TileReader {
  readTiles(tiles: readonly TileCoord[]): Promise<Uint8Array[]> | Uint8Array[];
}

const pow256 = (l: number): number => 256 ** l;

/**
 * The width of tile (level, index) in the tree of size `treeSize`: 256 when full, 1..255
 * when it is the partial tile at that size, 0 when it does not exist.
 */
export function tileWidthAt(treeSize: number, level: number, index: number): number {
  const hashes = Math.floor(treeSize / pow256(level)); // hashes at this tile level
  const start = index * TILE_WIDTH;
  if (hashes <= start) return 0;
  return Math.min(TILE_WIDTH, hashes - start);
}

/** The partial tiles of a tree of size `treeSize`, level 0 first (the right edge; none when every tile is full). */
export function partialTiles(treeSize: number): TileCoord[] {
  const out: TileCoord[] = [];
  for (let level = 0; pow256(level) <= treeSize; level++) {
    const hashes = Math.floor(treeSize / pow256(level));
    const width = hashes % TILE_WIDTH;
    if (width > 0) out.push({ level, index: Math.floor(hashes / TILE_WIDTH), width });
  }
  return out;
}

/**
 * Every tile that exists at `newSize` and did not at `oldSize` (or had another width):
 * what a log publishes when it grows from oldSize to newSize, level 0 first (as Go's
 * tlog.NewTiles).
 */
export function newTiles(oldSize: number, newSize: number): TileCoord[] {
  const out: TileCoord[] = [];
  for (let level = 0; pow256(level) <= newSize; level++) {
    const oldHashes = Math.floor(oldSize / pow256(level));
    const newHashes = Math.floor(newSize / pow256(level));
    for (let n = Math.floor(oldHashes / TILE_WIDTH); n * TILE_WIDTH < newHashes; n++) {
      const width = Math.min(TILE_WIDTH, newHashes - n * TILE_WIDTH);
      const had = Math.min(TILE_WIDTH, Math.max(0, oldHashes - n * TILE_WIDTH));
      if (width !== had) out.push({ level, index: n, width });
    }
  }
  return out;
}

/** N as 3-digit path elements, all but the last prefixed with `x`: 1234067 -> `x001/x234/067`. */
export function encodeTileIndex(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new TlogError('malformed_tile_path', `a tile index must be a non-negative integer, got ${String(index)}`);
  let n = index;
  let s = String(n % 1000).padStart(3, '0');
  n = Math.floor(n / 1000);
  while (n > 0) {
    s = `x${String(n % 1000).padStart(3, '0')}/${s}`;
    n = Math.floor(n / 1000);
  }
  return s;
}

function widthSuffix(width: number): string {
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) throw new TlogError('malformed_tile_path', `a tile width must be 1..256, got ${String(width)}`);
  return width === TILE_WIDTH ? '' : `.p/${width}`;
}

/** `tile/<L>/<N>[.p/<W>]` (relative to the log's prefix). */
export function tilePath(tile: TileCoord): string {
  if (!Number.isInteger(tile.level) || tile.level < 0 || tile.level > 63) throw new TlogError('malformed_tile_path', `a tile level must be 0..63, got ${String(tile.level)}`);
  return `tile/${tile.level}/${encodeTileIndex(tile.index)}${widthSuffix(tile.width)}`;
}

/** `tile/entries/<N>[.p/<W>]`: the entry bundle of level-0 tile N. */
export function entriesPath(index: number, width: number): string {
  return `tile/entries/${encodeTileIndex(index)}${widthSuffix(width)}`;
}

/** A parsed tile path: a hash tile, or an entry bundle (`level` 'entries'). */
export type ParsedTilePath = { kind: 'tile'; level: number; index: number; width: number } | { kind: 'entries'; index: number; width: number };

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Parses `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]` (no leading slash, relative
 * to the prefix). Only the one canonical spelling of each tile is accepted (no leading
 * zero group, no `.p/256`); anything else is a malformed_tile_path TlogError.
 */
export function parseTilePath(path: string): ParsedTilePath {
  const bad = (why: string): never => {
    throw new TlogError('malformed_tile_path', `not a tile path (${why})`);
  };
  if (typeof path !== 'string' || path.length > 200) bad('too long');
  const parts = path.split('/');
  if (parts[0] !== 'tile' || parts.length < 3) bad('no tile/ prefix');
  let level: number | 'entries';
  if (parts[1] === 'entries') level = 'entries';
  else {
    if (!DECIMAL.test(parts[1])) bad('level');
    level = Number(parts[1]);
    if (level > 63) bad('level above 63');
  }
  let rest = parts.slice(2);
  let width = TILE_WIDTH;
  const last = rest.length - 1;
  if (rest.length >= 2 && rest[last - 1].endsWith('.p')) {
    if (!DECIMAL.test(rest[last])) bad('width');
    width = Number(rest[last]);
    if (width < 1 || width > 255) bad('width out of 1..255');
    rest = [...rest.slice(0, last - 1), rest[last - 1].slice(0, -2)];
  }
  let index = 0;
  for (let i = 0; i < rest.length; i++) {
    const group = i < rest.length - 1 ? (rest[i].startsWith('x') ? rest[i].slice(1) : bad('group without x')) : rest[i];
    if (!/^[0-9]{3}$/.test(group)) bad('index group');
    index = index * 1000 + Number(group);
  }
  if (!Number.isSafeInteger(index)) bad('index too large');
  if (encodeTileIndex(index) !== rest.join('/')) bad('not the canonical index');
  return level === 'entries' ? { kind: 'entries', index, width } : { kind: 'tile', level, index, width };
}

/** An entry bundle: each entry as a big-endian uint16 length and its bytes. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const e of entries) {
    if (e.length > MAX_ENTRY_BYTES) throw new TlogError('malformed_tile', `an entry of ${e.length} bytes does not fit an entry bundle (at most ${MAX_ENTRY_BYTES})`);
    total += 2 + e.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const e of entries) {
    out[at] = e.length >>> 8;
    out[at + 1] = e.length & 0xff;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of a bundle (views into `bundle`); a malformed_tile TlogError when truncated or not `width` entries. */
export function decodeEntryBundle(bundle: Uint8Array, width?: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new TlogError('malformed_tile', 'the entry bundle ends inside a length');
    const len = (bundle[at] << 8) | bundle[at + 1];
    if (at + 2 + len > bundle.length) throw new TlogError('malformed_tile', 'the entry bundle ends inside an entry');
    out.push(bundle.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  if (width !== undefined && out.length !== width) throw new TlogError('malformed_tile', `the entry bundle holds ${out.length} entries, not ${width}`);
  return out;
}

/** The first `width` hashes of tile bytes answered by a reader, checked. */
function tileHashes(data: Uint8Array | undefined, tile: TileCoord): Uint8Array {
  if (!(data instanceof Uint8Array) || data.length < tile.width * HASH_SIZE || data.length > TILE_BYTES || data.length % HASH_SIZE !== 0) {
    throw new TlogError('malformed_tile', `tile ${tilePath(tile)} is missing or has the wrong length`);
  }
  return data.length === tile.width * HASH_SIZE ? data : data.subarray(0, tile.width * HASH_SIZE);
}

/**
 * A HashReader over the tiles of the tree of size `treeSize`: the hash of the subtree
 * (level k, index i) is read from tile level floor(k/8); below a tile's own level it is
 * recomputed from the 2^(k mod 8) hashes under it in that tile (as Go's TileHashReader
 * does). All tiles a batch needs are read in one readTiles call. Tiles are not checked
 * against a root here: a proof built from a bad tile fails its verification.
 */
export function tileHashReader(treeSize: number, reader: TileReader): HashReader {
  return {
    async readHashes(coords: readonly SubtreeCoord[]): Promise<Uint8Array[]> {
      const tiles: TileCoord[] = [];
      const tileAt = new Map<string, number>();
      const plan = coords.map(({ level, index }) => {
        const tileLevel = Math.floor(level / TILE_HEIGHT);
        const span = 2 ** (level - tileLevel * TILE_HEIGHT); // hashes of that tile level under the subtree
        const start = index * span;
        const n = Math.floor(start / TILE_WIDTH);
        const width = tileWidthAt(treeSize, tileLevel, n);
        const offset = start - n * TILE_WIDTH;
        if (width === 0 || offset + span > width) throw new TlogError('missing_hash', `subtree ${level}/${index} is not complete in the tree of size ${treeSize}`);
        const key = `${tileLevel}/${n}`;
        let slot = tileAt.get(key);
        if (slot === undefined) {
          slot = tiles.length;
          tileAt.set(key, slot);
          tiles.push({ level: tileLevel, index: n, width });
        }
        return { slot, offset, span };
      });
      const data = await reader.readTiles(tiles);
      const hashes = tiles.map((t, i) => tileHashes(data[i], t));
      return plan.map(({ slot, offset, span }) => perfectRoot(hashes[slot], offset, span));
    },
  };
}

export interface TileBuilderOptions {
  /** Called with each full tile as it completes; such tiles are then not kept for takeTiles(). */
  onFullTile?: (tile: TileData) => void;
}

/**
 * Appends leaves to a tiled tree. Its state is the partial tile of each level (the hashes
 * not yet grouped into a full tile of the level above); a full tile is handed out and
 * its root hash appended to the level above. The root is the fold of the compact range
 * those partial tiles hold.
 */
export class TileBuilder {
  /** levels[L]: TILE_BYTES of hashes of which counts[L] are set. */
  private readonly levels: Uint8Array[] = [];
  private readonly counts: number[] = [];
  private completed: TileData[] = [];
  private leaves = 0;
  /** The size at the last takeTiles() (or resume). */
  private takenAt = 0;
  private readonly onFullTile: ((tile: TileData) => void) | undefined;

  constructor(options: TileBuilderOptions = {}) {
    this.onFullTile = options.onFullTile;
  }

  /** A builder for the tree of size `size`, from its partial tiles (partialTiles(size)) read through `reader`. */
  static async resume(size: number, reader: TileReader, options: TileBuilderOptions = {}): Promise<TileBuilder> {
    if (!Number.isSafeInteger(size) || size < 0) throw new TlogError('bad_index', `a tree size must be a non-negative integer, got ${String(size)}`);
    const b = new TileBuilder(options);
    const partial = partialTiles(size);
    const data = partial.length === 0 ? [] : await reader.readTiles(partial);
    for (let level = 0; pow256(level) <= size; level++) b.level(level);
    partial.forEach((t, i) => {
      b.levels[t.level].set(tileHashes(data[i], t));
      b.counts[t.level] = t.width;
    });
    b.leaves = size;
    b.takenAt = size;
    return b;
  }

  /** The number of leaves. */
  get size(): number {
    return this.leaves;
  }

  private level(l: number): Uint8Array {
    while (this.levels.length <= l) {
      this.levels.push(new Uint8Array(TILE_BYTES));
      this.counts.push(0);
    }
    return this.levels[l];
  }

  /** Adds one hash at tile level `l`, completing tiles upwards. */
  private push(l: number, hash: Uint8Array, at = 0): void {
    const buf = this.level(l);
    buf.set(hash.subarray(at, at + HASH_SIZE), this.counts[l] * HASH_SIZE);
    this.advance(l);
  }

  /** Counts the hash just written at the end of level `l`; a level that fills becomes a full tile. */
  private advance(l: number): void {
    const c = this.counts[l] + 1;
    if (c < TILE_WIDTH) {
      this.counts[l] = c;
      return;
    }
    this.counts[l] = 0;
    this.fullTile(l, this.levels[l].slice());
  }

  private fullTile(l: number, data: Uint8Array): void {
    // leaves already counts the leaf that completed it
    const tile: TileData = { level: l, index: Math.floor(this.leaves / pow256(l + 1)) - 1, width: TILE_WIDTH, data };
    if (this.onFullTile) this.onFullTile(tile);
    else this.completed.push(tile);
    this.push(l + 1, perfectRoot(data, 0, TILE_WIDTH));
  }

  /** Appends the leaf hash of an entry (RFC 9162: SHA-256(0x00 || entry)); returns its index. */
  appendEntry(entry: Uint8Array): number {
    const buf = this.level(0);
    // hashed straight into the level-0 tile: the hot path of a build or an audit allocates nothing
    leafHashInto(entry, buf, this.counts[0] * HASH_SIZE);
    const index = this.leaves++;
    this.advance(0);
    return index;
  }

  /** Appends a leaf hash; returns its index. */
  appendLeafHash(hash: Uint8Array): number {
    if (!(hash instanceof Uint8Array) || hash.length !== HASH_SIZE) throw new TlogError('malformed_hash', 'a leaf hash is not 32 bytes');
    const index = this.leaves++;
    this.push(0, hash);
    return index;
  }

  /** Appends n leaf hashes given as n * 32 bytes (a level-0 tile, say); whole aligned tiles skip the copy. */
  appendLeafHashes(hashes: Uint8Array): void {
    if (hashes.length % HASH_SIZE !== 0) throw new TlogError('malformed_hash', 'leaf hashes must be a multiple of 32 bytes');
    const n = hashes.length / HASH_SIZE;
    let i = 0;
    while (i < n) {
      if ((this.counts[0] ?? 0) === 0 && n - i >= TILE_WIDTH) {
        this.level(0);
        this.leaves += TILE_WIDTH;
        this.fullTile(0, hashes.slice(i * HASH_SIZE, (i + TILE_WIDTH) * HASH_SIZE));
        i += TILE_WIDTH;
        continue;
      }
      this.leaves++;
      this.push(0, hashes, i * HASH_SIZE);
      i++;
    }
  }

  /** The root hash of the tree (EMPTY_ROOT when empty). */
  root(): Uint8Array {
    // the compact range: per level from the top, the partial tile's hashes in perfect
    // subtrees following the binary digits of its width; folded from the right
    const pieces: Uint8Array[] = [];
    for (let l = this.levels.length - 1; l >= 0; l--) {
      const w = this.counts[l];
      let off = 0;
      for (let size = 128; size >= 1; size /= 2) {
        if (w - off >= size) {
          pieces.push(perfectRoot(this.levels[l], off, size));
          off += size;
        }
      }
    }
    if (pieces.length === 0) return EMPTY_ROOT.slice();
    let h = pieces[pieces.length - 1];
    for (let i = pieces.length - 2; i >= 0; i--) h = nodeHash(pieces[i], h);
    return h;
  }

  /**
   * The tiles to store since the last call (or since resume): every full tile completed
   * (unless handed to onFullTile), then each partial tile of the current size that did not
   * exist at the previous call's size: newTiles(previous size, size), with their bytes.
   */
  takeTiles(): TileData[] {
    const out = this.completed;
    this.completed = [];
    const before = this.takenAt;
    this.takenAt = this.leaves;
    for (const t of partialTiles(this.leaves)) {
      if (tileWidthAt(before, t.level, t.index) !== t.width) out.push({ ...t, data: this.levels[t.level].slice(0, t.width * HASH_SIZE) });
    }
    return out;
  }
}

/**
 * The root of the tree of size `treeSize` recomputed from its level-0 tiles alone (an
 * auditor's check of a checkpoint), reading `batch` tiles at a time. `onFullTile`
 * receives every higher-level tile rebuilt on the way, to compare with the served ones.
 */
export async function rootFromLevel0Tiles(treeSize: number, reader: TileReader, options: TileBuilderOptions & { batch?: number } = {}): Promise<Uint8Array> {
  if (!Number.isSafeInteger(treeSize) || treeSize < 0) throw new TlogError('bad_index', `a tree size must be a non-negative integer, got ${String(treeSize)}`);
  const batch = options.batch ?? 64;
  const onFull = options.onFullTile;
  const builder = new TileBuilder({ onFullTile: (t) => { if (onFull && t.level > 0) onFull(t); } });
  const tiles = Math.ceil(treeSize / TILE_WIDTH);
  for (let first = 0; first < tiles; first += batch) {
    const coords: TileCoord[] = [];
    for (let n = first; n < Math.min(tiles, first + batch); n++) coords.push({ level: 0, index: n, width: tileWidthAt(treeSize, 0, n) });
    const data = await reader.readTiles(coords);
    coords.forEach((t, i) => builder.appendLeafHashes(tileHashes(data[i], t)));
  }
  return builder.root();
}
