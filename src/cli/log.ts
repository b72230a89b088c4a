// `provenant log audit --server URL`: audits a server's transparency log from scratch
// (issue 27, docs/transparency-log.md). Every entry bundle is fetched and every entry's
// signature re-verified (a record entry too large to carry its record, record_sha256,
// is counted apart); the leaf hashes are compared with the served level-0 tiles and the
// tree rebuilt here, higher tiles compared with the served full ones, and the root with
// the checkpoint (which must extend the largest one seen before: log-client.ts). Then a
// sample of the logged files' hashes is asked of GET /verify: every record it answers
// must have an entry. Resumable: progress is kept per origin beside the remembered
// checkpoints (the builder's right edge, which is all it needs), so a second run starts
// where the first stopped. A progress line on a terminal.
//
// Speed: an entry's Ed25519 check costs ~25x the hashing of its bytes, so the checks run
// in worker threads (workers/log-entries.ts, PROVENANT_WORKERS of them, by default one
// per core) while this thread fetches the next tiles (FETCH_AHEAD), hashes the entries and
// builds the tree; progress is saved only once every check before it has come back.
import { createHash, randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBase64, encodeBase64, hashEqual, leafHashInto } from '../lib/tlog/hash.js';
import { decodeEntryBundle, entriesPath, tilePath, TileBuilder, tileWidthAt, TILE_WIDTH, type TileData } from '../lib/tlog/tiles.js';
import { visible } from '../lib/terminal-text.js';
import { createFingerprintPool } from '../pool/index.js';
import type { LogEntriesOutcome, LogEntriesTask } from '../../workers/log-entries.js';
import type { Command } from './command.js';
import { fetchBytes, LogForkError, logStateDir, viewLog } from './log-client.js';
import { FORK_EXIT } from './verify.js';
import { commandLine, USAGE_ERROR } from './usage.js';

const USAGE = `usage: provenant log audit --server URL [--sample N] [--restart]
  fetches every tile and entry bundle of the server's transparency log, rebuilds the tree
  and checks it against the signed checkpoint, re-verifies every entry's signature, and
  checks that the records GET /verify answers for N sampled file hashes (default 20) are
  in the log. Resumes where an earlier run stopped (--restart: from the beginning).
  exit 0: the log checks; 1: it does not (or the server could not be read); 3: a fork.
`;

interface Progress {
  size: number;
  /** The builder's partial tiles at `size` (level, width, base64). */
  edge: { level: number; index: number; width: number; data: string }[];
  entries: number;
  signatures: number;
  unsigned: number;
  notSelfContained: number;
  /** Record entries seen (the reservoir's count; absent in files of older versions). */
  records?: number;
  /** File hashes of record entries seen: a reservoir sample (every record's is too many to keep). */
  sample: string[];
}

function progressFile(origin: string): string {
  return join(logStateDir(), `audit-${createHash('sha256').update(origin).digest('hex')}.json`);
}

function save(file: string, p: Progress): void {
  mkdirSync(logStateDir(), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(p), { mode: 0o600 });
  renameSync(tmp, file);
}

function load(file: string): Progress | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Progress;
  } catch {
    return null;
  }
}

class AuditFailure extends Error {}

/** Tiles fetched ahead of the one being hashed. */
const FETCH_AHEAD = 4;
/** Bundles whose checks may be outstanding in the workers while later tiles are hashed. */
const CHECKS_AHEAD = 16;

async function audit(server: string, sampleSize: number, restart: boolean): Promise<string[]> {
  const view = await viewLog(server);
  const { origin, size, rootHash } = view.checkpoint.checkpoint;
  const file = progressFile(origin);
  if (restart) rmSync(file, { force: true });
  let progress = load(file);
  if (progress !== null && progress.size > size) progress = null; // an older checkpoint was served: start again
  progress ??= { size: 0, edge: [], entries: 0, signatures: 0, unsigned: 0, notSelfContained: 0, sample: [] };
  const edge = new Map(progress.edge.map((t) => [`${t.level}/${t.index}`, decodeBase64(t.data)!]));
  const served = new Map<string, Uint8Array>();
  const builder = await TileBuilder.resume(progress.size, {
    readTiles: (coords) => coords.map((c) => edge.get(`${c.level}/${c.index}`)!.subarray(0, c.width * 32)),
  }, {
    onFullTile: (t: TileData) => {
      if (t.level === 0) return; // compared with the served tile as it is read
      served.set(`${t.level}/${t.index}`, t.data);
    },
  });
  builder.takeTiles();
  const tty = process.stderr.isTTY === true;
  const started = progress.size;
  const tiles = Math.ceil(size / TILE_WIDTH);
  const firstTile = Math.floor(progress.size / TILE_WIDTH);
  const leaves = new Uint8Array(TILE_WIDTH * 32);
  let recordsSeen = progress.records ?? 0;
  const p = progress;

  // the next tiles' bundles and hashes are fetched while this one is hashed
  const fetchTile = (tile: number) => {
    const width = tileWidthAt(size, 0, tile);
    return Promise.all([fetchBytes(`${server}/log/${entriesPath(tile, width)}`), fetchBytes(`${server}/log/${tilePath({ level: 0, index: tile, width })}`)]);
  };
  const fetching = new Map<number, Promise<[Uint8Array | null, Uint8Array | null]>>();
  const fetchAhead = (from: number) => {
    for (let t = from; t < Math.min(tiles, from + FETCH_AHEAD); t++) {
      if (fetching.has(t)) continue;
      const f = fetchTile(t);
      f.catch(() => undefined); // awaited in turn; one failing while another is awaited is not unhandled
      fetching.set(t, f);
    }
  };

  // the entries' checks (canonical form, signatures) run in worker threads, in tile order
  const pool = createFingerprintPool({ taskTimeoutMs: 10 * 60_000, maxQueue: 1024 });
  const checking: Promise<LogEntriesOutcome>[] = [];
  const settle = async (keep: number) => {
    while (checking.length > keep) {
      const o = await checking.shift()!;
      if (o.failure !== null) throw new AuditFailure(o.failure);
      p.signatures += o.signatures;
      p.unsigned += o.unsigned;
      p.notSelfContained += o.notSelfContained;
      p.entries += o.signatures + o.unsigned + o.notSelfContained;
      for (const fileHash of o.fileHashes) {
        // reservoir sample of the logged files
        recordsSeen += 1;
        if (p.sample.length < sampleSize) p.sample.push(fileHash);
        else if (randomInt(recordsSeen) < sampleSize) p.sample[randomInt(sampleSize)] = fileHash;
      }
      p.records = recordsSeen;
    }
  };
  try {
    for (let tile = firstTile; tile < tiles; tile++) {
      fetchAhead(tile);
      const width = tileWidthAt(size, 0, tile);
      const [bundle, hashes] = await fetching.get(tile)!;
      fetching.delete(tile);
      if (bundle === null || hashes === null) throw new AuditFailure(`the server does not serve tile ${tile} at width ${width}`);
      const entries = decodeEntryBundle(bundle, width);
      const skip = builder.size - tile * TILE_WIDTH; // entries of a resumed partial tile already counted
      entries.forEach((e, i) => leafHashInto(e, leaves, i * 32));
      if (!hashEqual(leaves.subarray(0, width * 32), hashes)) throw new AuditFailure(`the level-0 tile ${tile} is not the hashes of its entries`);
      for (let i = skip; i < width; i++) builder.appendLeafHash(leaves.slice(i * 32, i * 32 + 32));
      // the bundle's own buffer (fetchBytes makes one per answer) goes to a worker
      const task: LogEntriesTask = { bundle: bundle.buffer as ArrayBuffer, width, skip, first: tile * TILE_WIDTH };
      const check = pool.run<LogEntriesOutcome>('log-entries', task, [task.bundle]);
      check.catch(() => undefined); // settled in order below
      checking.push(check);
      await settle(CHECKS_AHEAD);
      // higher full tiles made on the way: the served ones must be the same
      for (const [key, data] of served) {
        const [level, index] = key.split('/').map(Number) as [number, number];
        const got = await fetchBytes(`${server}/log/${tilePath({ level, index, width: TILE_WIDTH })}`);
        if (got === null || !hashEqual(got, data)) throw new AuditFailure(`the served tile ${tilePath({ level, index, width: TILE_WIDTH })} is not the one its entries make`);
      }
      served.clear();
      if (width === TILE_WIDTH && (tile % 64 === 63 || (tile + 1) * TILE_WIDTH >= size)) {
        // progress is saved only for entries whose checks have all come back
        await settle(0);
        const partial = builder.takeTiles().filter((t) => t.width < TILE_WIDTH);
        progress.size = builder.size;
        progress.edge = partial.map((t) => ({ level: t.level, index: t.index, width: t.width, data: encodeBase64(t.data) }));
        for (const t of partial) edge.set(`${t.level}/${t.index}`, t.data);
        save(file, progress);
      }
      if (tty) process.stderr.write(`\r${visible(origin)}: ${builder.size} of ${size} entries (${Math.floor((100 * builder.size) / Math.max(size, 1))} %)   `);
    }
    await settle(0);
  } finally {
    await pool.close();
  }
  if (tty) process.stderr.write('\n');
  if (!hashEqual(builder.root(), rootHash)) throw new AuditFailure(`the tree of the ${size} entries is not the checkpoint's root`);

  // the records GET /verify answers for sampled files must be in the log
  const { ProvenantClient } = await import('../sdk/client.js');
  const client = new ProvenantClient({ baseUrl: server });
  let answered = 0;
  for (const fileHash of [...new Set(progress.sample)]) {
    const answer = await client.verify(fileHash);
    const hashes = answer.signatures.map((s) => s.action_hash);
    answered += hashes.length;
    for (const h of hashes) {
      const res = await fetch(`${server}/api/v1/sign-it/proof?action_hash=${h}`);
      await res.body?.cancel();
      if (res.status !== 200) throw new AuditFailure(`GET /verify answers the record ${h}, which has no entry under the checkpoint (${res.status})`);
    }
  }
  return [
    `${origin}: ${size} entries, root matches the checkpoint signed by ${view.vkey}`,
    `  ${size - started} entries read now${started > 0 ? ` (resumed at ${started})` : ''}; ${progress.signatures} signatures re-verified, ${progress.unsigned} thumbnail entries (unsigned), ${progress.notSelfContained} records too large to carry (record_sha256)`,
    `  ${progress.sample.length} sampled files: the ${answered} records /verify answers are all in the log`,
    ...(view.previousSize !== null ? [`  extends the checkpoint of size ${view.previousSize} seen before`] : []),
  ];
}

export const run: Command = async (args) => {
  const parsed = commandLine('log', USAGE, args, { server: { type: 'string' }, sample: { type: 'string' }, restart: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals[0] !== 'audit' || positionals.length !== 1 || values.server === undefined) {
    process.stderr.write(`provenant log: expected: audit --server URL\n${USAGE}`);
    return USAGE_ERROR;
  }
  const sample = values.sample === undefined ? 20 : Number(values.sample);
  if (!Number.isSafeInteger(sample) || sample < 0 || sample > 10_000) {
    process.stderr.write(`provenant log: --sample must be 0..10000\n${USAGE}`);
    return USAGE_ERROR;
  }
  const server = values.server.replace(/\/+$/, '');
  try {
    process.stdout.write(`${(await audit(server, sample, values.restart === true)).map((l) => visible(l)).join('\n')}\n`);
    return 0;
  } catch (err) {
    if (err instanceof LogForkError) {
      process.stderr.write(`${visible(`provenant log audit: FORK: ${err.message}`)}\n`);
      return FORK_EXIT;
    }
    const what = err instanceof AuditFailure ? 'the log does not check' : 'cannot audit';
    process.stderr.write(`${visible(`provenant log audit: ${what}: ${(err as Error).message}`)}\n`);
    return 1;
  }
};
