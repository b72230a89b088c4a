// The CLI's side of a server's transparency log (issue 27, docs/transparency-log.md): the
// log's key and checkpoint fetched and verified, the largest checkpoint seen per log
// remembered in the config folder ($XDG_CONFIG_HOME/provenant/logs/, one file per
// origin, 0600) and every later checkpoint checked to extend it (a consistency proof
// made here from the server's tiles), and records' proof bundles checked against their
// entries. A server that shows two trees that no consistency proof joins is a fork: the
// caller reports it loudly (exit 3). The key seen first for a log is pinned the same way.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { decodeLogEntry, type LogEntry } from '../lib/log-entry.js';
import { hashEqual } from '../lib/tlog/hash.js';
import { proveConsistency, verifyConsistency } from '../lib/tlog/merkle.js';
import { verifyCheckpoint, type VerifiedCheckpoint } from '../lib/tlog/checkpoint.js';
import { verifyProofBundle } from '../lib/tlog/proof-bundle.js';
import { decodeEntryBundle, entriesPath, tileHashReader, tilePath, tileWidthAt, TILE_WIDTH, type TileCoord, type TileReader } from '../lib/tlog/tiles.js';

/** A log that showed two trees no consistency proof joins, or changed its key. */
export class LogForkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogForkError';
  }
}

/** The folder of remembered checkpoints: $PROVENANT_LOG_STATE_DIR, else $XDG_CONFIG_HOME/provenant/logs. */
export function logStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PROVENANT_LOG_STATE_DIR) return env.PROVENANT_LOG_STATE_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'provenant', 'logs');
}

interface Remembered {
  vkey: string;
  size: number;
  /** The checkpoint note (log signature at least). */
  note: string;
}

const MAX_FETCH_BYTES = 16 << 20;

/** GET `url`: the body's bytes (status 200 only; a 404 is null). */
export async function fetchBytes(url: string, signal?: AbortSignal): Promise<Uint8Array | null> {
  const res = await fetch(url, { signal: signal ?? AbortSignal.timeout(30_000), redirect: 'error' });
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_FETCH_BYTES) throw new Error(`GET ${url}: ${length} bytes is more than a tile or a checkpoint`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length > MAX_FETCH_BYTES) throw new Error(`GET ${url}: more than ${MAX_FETCH_BYTES} bytes`);
  return bytes;
}

async function fetchText(url: string): Promise<string> {
  const bytes = await fetchBytes(url);
  if (bytes === null) throw new Error(`GET ${url} answered 404`);
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** The server's tiles over HTTP: a partial tile the server no longer has is read from the full one. */
export function httpTileReader(server: string): TileReader {
  return {
    async readTiles(coords: readonly TileCoord[]) {
      return Promise.all(
        coords.map(async (c) => {
          const got = (await fetchBytes(`${server}/log/${tilePath(c)}`)) ?? (c.width < TILE_WIDTH ? await fetchBytes(`${server}/log/${tilePath({ ...c, width: TILE_WIDTH })}`) : null);
          if (got === null || got.length < c.width * 32) throw new Error(`the server has no tile ${tilePath(c)}`);
          return got.subarray(0, c.width * 32);
        }),
      );
    },
  };
}

export interface LogView {
  server: string;
  vkey: string;
  note: string;
  checkpoint: VerifiedCheckpoint;
  /** Signature lines on the checkpoint other than the log's (witness cosignatures, checked only with --witness keys). */
  otherSignatures: number;
  /** What was remembered before this call (null: first time), and whether it was extended. */
  previousSize: number | null;
  /** A checkpoint older than the remembered one (a cache, a lagging node): not remembered, not a fork. */
  stale: boolean;
}

function stateFile(dir: string, origin: string): string {
  return join(dir, createHash('sha256').update(origin).digest('hex'));
}

function readRemembered(file: string): Remembered | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Remembered;
    return typeof r.vkey === 'string' && Number.isSafeInteger(r.size) && typeof r.note === 'string' ? r : null;
  } catch {
    return null;
  }
}

function remember(dir: string, file: string, r: Remembered): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(r), { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Fetches and verifies the server's log key and checkpoint, checks that it extends the
 * largest checkpoint remembered for that log (throws LogForkError when it does not, or
 * when the key changed) and remembers it when larger.
 */
export async function viewLog(server: string, opts: { stateDir?: string } = {}): Promise<LogView> {
  const dir = opts.stateDir ?? logStateDir();
  const vkey = (await fetchText(`${server}/log/key`)).trim();
  const note = await fetchText(`${server}/log/checkpoint`);
  const checkpoint = verifyCheckpoint(note, { logKeys: [vkey] });
  const origin = checkpoint.checkpoint.origin;
  const file = stateFile(dir, origin);
  const before = readRemembered(file);
  const otherSignatures = note.split('\n\n').pop()!.split('\n').filter((l) => l.startsWith('— ') && !l.startsWith(`— ${origin} `)).length;
  const view: LogView = { server, vkey, note, checkpoint, otherSignatures, previousSize: before?.size ?? null, stale: false };
  if (before === null) {
    remember(dir, file, { vkey, size: checkpoint.checkpoint.size, note });
    return view;
  }
  if (before.vkey !== vkey) throw new LogForkError(`the log ${origin} now signs with another key (${vkey}) than the one seen before (${before.vkey})`);
  const old = verifyCheckpoint(before.note, { logKeys: [vkey] }).checkpoint;
  const now = checkpoint.checkpoint;
  if (now.size < old.size) return { ...view, stale: true };
  if (now.size === old.size) {
    if (!hashEqual(now.rootHash, old.rootHash)) throw new LogForkError(`the log ${origin} shows two different trees of size ${now.size}`);
    return view;
  }
  try {
    const proof = old.size === 0 ? [] : await proveConsistency(old.size, now.size, tileHashReader(now.size, httpTileReader(server)));
    if (old.size > 0) verifyConsistency(old.size, now.size, proof, old.rootHash, now.rootHash);
  } catch (err) {
    throw new LogForkError(`the log ${origin} at size ${now.size} does not extend the tree of size ${old.size} seen before: ${(err as Error).message}`);
  }
  remember(dir, file, { vkey, size: now.size, note });
  return view;
}

export interface Inclusion {
  index: number;
  entry: LogEntry;
  /** The size of the checkpoint the proof is against. */
  size: number;
}

/**
 * The record `actionHash`'s proof bundle, its entry (from the entry bundle of its tile)
 * and the bundle checked against it with the log key; the bundle's checkpoint must be the
 * viewed one or extend to it (proofs are made against the latest checkpoint). Null when
 * the server says the record is not (yet) in the log.
 */
export async function proveRecord(view: LogView, actionHash: string): Promise<Inclusion | null> {
  const bundle = await fetchBytes(`${view.server}/api/v1/sign-it/proof?action_hash=${actionHash}`);
  if (bundle === null) return null;
  const text = new TextDecoder().decode(bundle);
  const index = Number(/^c2sp\.org\/tlog-proof@v1\nindex (\d+)\n/.exec(text)?.[1] ?? NaN);
  if (!Number.isSafeInteger(index)) throw new Error('the proof bundle has no index line');
  const tile = Math.floor(index / TILE_WIDTH);
  const size = view.checkpoint.checkpoint.size;
  const width = Math.max(tileWidthAt(size, 0, tile), (index % TILE_WIDTH) + 1);
  const entries = (await fetchBytes(`${view.server}/log/${entriesPath(tile, Math.min(width, TILE_WIDTH))}`)) ?? (await fetchBytes(`${view.server}/log/${entriesPath(tile, TILE_WIDTH)}`));
  if (entries === null) throw new Error(`the server has no entries for index ${index}`);
  const entryBytes = decodeEntryBundle(entries)[index % TILE_WIDTH];
  if (entryBytes === undefined) throw new Error(`the entry bundle lacks index ${index}`);
  const verified = verifyProofBundle(text, { entry: entryBytes }, { logKeys: [view.vkey] });
  const entry = decodeLogEntry(entryBytes);
  if (entry.kind !== 'record' || entry.action_hash !== actionHash) throw new Error(`the entry at index ${index} is not the record ${actionHash}`);
  const bundleTree = verified.checkpoint.checkpoint;
  if (bundleTree.size > size) throw new Error('the proof is against a checkpoint newer than the one checked');
  if (bundleTree.size === size && !hashEqual(bundleTree.rootHash, view.checkpoint.checkpoint.rootHash)) throw new LogForkError(`the proof's checkpoint and the served one are two trees of size ${size}`);
  if (bundleTree.size < size) {
    const proof = await proveConsistency(bundleTree.size, size, tileHashReader(size, httpTileReader(view.server)));
    try {
      verifyConsistency(bundleTree.size, size, proof, bundleTree.rootHash, view.checkpoint.checkpoint.rootHash);
    } catch (err) {
      throw new LogForkError(`the proof's checkpoint (size ${bundleTree.size}) is not in the served tree: ${(err as Error).message}`);
    }
  }
  return { index: verified.index, entry, size: bundleTree.size };
}
