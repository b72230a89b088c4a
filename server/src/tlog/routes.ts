// The transparency log over HTTP, exactly as tlog-tiles serves it (docs/transparency-log.md):
// GET /log/checkpoint (short cache), /log/tile/<L>/<N>[.p/<W>] and
// /log/tile/entries/<N>[.p/<W>] (a full tile is immutable and cached for a year), the
// log's verifier key at /log/key, and GET /api/v1/sign-it/proof, a record's
// c2sp.org/tlog-proof@v1 bundle. Any node serves them from the shared store; full tiles
// and entry bundles are kept in memory once read (they never change). A path that is not
// a tile's canonical spelling, or a tile beyond the latest checkpoint, is 404.
import Router from '@koa/router';
import type { Context } from 'koa';
import { buildProofBundle, encodeEntryBundle, parseTilePath, TILE_BYTES, TILE_WIDTH, tileHashReader, tilePath, tileWidthAt, TlogError, type ParsedTilePath, type TileCoord, type TileReader } from 'provenant';
import { ApiError } from '../errors.js';
import { parseHashQuery } from '../signit/schema.js';
import type { LogIdentity } from './log-key.js';
import type { TransparencyLogStore } from './types.js';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The checkpoint changes every second while entries arrive. */
export const CHECKPOINT_CACHE = 'public, max-age=1';
const TILE_TYPE = 'application/octet-stream';
/** Bytes of full tiles and entry bundles kept in memory per node. */
export const TILE_CACHE_BYTES = 64 * 1024 * 1024;

/** A bounded least-recently-used map of immutable bodies. */
export class ImmutableCache {
  private readonly map = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly limit = TILE_CACHE_BYTES) {}

  get(key: string): Buffer | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: Buffer): void {
    if (value.length > this.limit || this.map.has(key)) return;
    this.map.set(key, value);
    this.bytes += value.length;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.limit) break;
      this.map.delete(k);
      this.bytes -= v.length;
    }
  }
}

/**
 * The stored tiles as a TileReader that keeps full tiles in `cache` (the served tiles'
 * cache, keyed by path): a proof's upper tiles are shared by every proof, so most proofs
 * read only their level-0 tile from the store. A missing tile is an error, as in
 * storedTileReader.
 */
export function cachedTileReader(store: TransparencyLogStore, cache: ImmutableCache): TileReader {
  return {
    async readTiles(coords: readonly TileCoord[]) {
      const out: (Uint8Array | undefined)[] = coords.map((c) => (c.width === TILE_WIDTH ? cache.get(tilePath(c)) : undefined));
      const missing = coords.flatMap((c, i) => (out[i] === undefined ? [i] : []));
      if (missing.length > 0) {
        const read = await store.readTiles(missing.map((i) => coords[i]!));
        missing.forEach((i, k) => {
          const c = coords[i]!;
          const data = read[k];
          if (!data) throw new Error(`tile ${c.level}/${c.index} of width ${c.width} is not stored`);
          out[i] = data;
          if (c.width === TILE_WIDTH && data.length === TILE_BYTES) cache.set(tilePath(c), Buffer.from(data));
        });
      }
      return out as Uint8Array[];
    },
  };
}

/** The served size: the latest checkpoint's (0 when none yet). */
async function checkpointSize(store: TransparencyLogStore): Promise<number> {
  return (await store.latestCheckpoint())?.size ?? 0;
}

/** The bytes of a tile or entry bundle at the latest checkpoint, or null when it is not there. */
async function tileBody(store: TransparencyLogStore, tile: ParsedTilePath): Promise<Buffer | null> {
  const size = await checkpointSize(store);
  if (tile.kind === 'tile') {
    const width = tileWidthAt(size, tile.level, tile.index);
    // a partial tile of a smaller width is the prefix of today's (tiles grow at the right)
    if (width === 0 || tile.width > width) return null;
    const [data] = await store.readTiles([{ level: tile.level, index: tile.index, width: tile.width }]);
    if (!data) return null;
    return Buffer.from(data.buffer, data.byteOffset, tile.width * 32);
  }
  const width = tileWidthAt(size, 0, tile.index);
  if (width === 0 || tile.width > width) return null;
  const from = tile.index * TILE_WIDTH;
  const entries = await store.entries(from, from + tile.width);
  if (entries.length !== tile.width) return null;
  return Buffer.from(encodeEntryBundle(entries));
}

/** The routes over the log's store and identity (app.ts mounts them with the server's deps). */
export function transparencyLogRouter({ store, identity }: { store: TransparencyLogStore; identity: LogIdentity }): Router {
  const router = new Router();
  const cache = new ImmutableCache();
  const tiles = cachedTileReader(store, cache);

  router.get('/log/checkpoint', async (ctx) => {
    const checkpoint = await store.latestCheckpoint();
    if (checkpoint === null) throw new ApiError('not_found', 'The log has no checkpoint yet.');
    ctx.set('Cache-Control', CHECKPOINT_CACHE);
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = checkpoint.note;
  });

  router.get('/log/key', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `${identity.verifierKey}\n`;
  });

  router.get('/log/tile/*tile', async (ctx: Context) => {
    const rest = ctx.path.slice('/log/'.length);
    let tile: ParsedTilePath;
    try {
      tile = parseTilePath(rest);
    } catch (err) {
      if (err instanceof TlogError) throw new ApiError('not_found', 'Not a tile path (c2sp.org/tlog-tiles).');
      throw err;
    }
    const full = tile.width === TILE_WIDTH;
    let body = full ? cache.get(rest) : undefined;
    if (body === undefined) {
      const read = await tileBody(store, tile);
      if (read === null) throw new ApiError('not_found', 'No such tile at the latest checkpoint.');
      body = read;
      if (full) cache.set(rest, tile.kind === 'tile' && body.length !== TILE_BYTES ? Buffer.from(body) : body);
    }
    ctx.set('Cache-Control', full ? IMMUTABLE : 'no-cache');
    ctx.type = TILE_TYPE;
    ctx.body = body;
  });

  router.get('/api/v1/sign-it/proof', async (ctx) => {
    const actionHash = parseHashQuery(ctx.query.action_hash);
    // at once: a checkpoint covering the index can only be stored after it, so any pair
    // read is a proof or an honest log_pending
    const [index, checkpoint] = await Promise.all([store.recordIndex(actionHash), store.latestCheckpoint()]);
    if (index === null) throw new ApiError('not_found', 'No record has this action hash.');
    if (checkpoint === null || index >= checkpoint.size) {
      throw new ApiError('log_pending', undefined, { log_index: index }, { 'Retry-After': '1' });
    }
    const bundle = await buildProofBundle({ index, checkpoint: checkpoint.note, reader: tileHashReader(checkpoint.size, tiles) });
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = bundle;
  });

  return router;
}
