// What the transparency log needs of the store (docs/transparency-log.md). The entries
// themselves are appended by the store in the transaction of their event, under the
// change feed's lock, so indexes are handed out and committed in commit order on every
// engine; this is the rest: reading them, and the tiles and checkpoints the signer keeps.
import type { TileCoord, TileData } from 'provenant';

export interface StoredCheckpoint {
  size: number;
  /** The signed note as served: the log's signature and every cosignature it got. */
  note: string;
}

export interface TransparencyLogStore {
  /** Committed entries: indexes 0 .. size - 1 (a contiguous prefix: indexes are handed out under the feed lock). */
  size(): Promise<number>;
  /** The entries [from, to), in index order. */
  entries(from: number, to: number): Promise<Uint8Array[]>;
  /** The index of the entry of the record `actionHash` (kind 'record'), or null. */
  recordIndex(actionHash: string): Promise<number | null>;
  /** For each coordinate the stored tile of that level and index, when at least that wide (else null). */
  readTiles(coords: readonly TileCoord[]): Promise<(Uint8Array | null)[]>;
  latestCheckpoint(): Promise<StoredCheckpoint | null>;
  /**
   * In one transaction: stores `tiles` (a tile is kept at its widest: a full tile never
   * changes) and the checkpoint of `size`, if `size` is above the stored one's. False
   * when another node stored one at least as large first (nothing written then).
   */
  saveCheckpoint(size: number, tiles: readonly TileData[], note: string): Promise<boolean>;
  /** Replaces the note of the checkpoint of `size` (cosignatures added); false when a newer checkpoint is stored. */
  cosignCheckpoint(size: number, note: string): Promise<boolean>;
}
