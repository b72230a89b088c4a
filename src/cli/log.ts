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
import { createHash, randomInt } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeLogEntry, verifyLogEntrySignature } from '../lib/log-entry.js';
import { decodeBase64, encodeBase64, hashEqual, leafHashInto } from '../lib/tlog/hash.js';
import { decodeEntryBundle, entriesPath, tilePath, TileBuilder, tileWidthAt, TILE_WIDTH, type TileData } from '../lib/tlog/tiles.js';
import { visible } from '../lib/terminal-text.js';
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
  const leaves = new Uint8Array(TILE_WIDTH * 32);
  for (let tile = Math.floor(progress.size / TILE_WIDTH); tile * TILE_WIDTH < size; tile++) {
    const width = tileWidthAt(size, 0, tile);
    const [bundle, hashes] = await Promise.all([fetchBytes(`${server}/log/${entriesPath(tile, width)}`), fetchBytes(`${server}/log/${tilePath({ level: 0, index: tile, width })}`)]);
    if (bundle === null || hashes === null) throw new AuditFailure(`the server does not serve tile ${tile} at width ${width}`);
    const entries = decodeEntryBundle(bundle, width);
    const skip = builder.size - tile * TILE_WIDTH; // entries of a resumed partial tile already counted
    entries.forEach((e, i) => leafHashInto(e, leaves, i * 32));
    if (!hashEqual(leaves.subarray(0, width * 32), hashes)) throw new AuditFailure(`the level-0 tile ${tile} is not the hashes of its entries`);
    for (let i = skip; i < width; i++) {
      let entry;
      try {
        entry = decodeLogEntry(entries[i]!);
      } catch (err) {
        throw new AuditFailure(`entry ${tile * TILE_WIDTH + i}: ${(err as Error).message}`);
      }
      if (entry.kind === 'thumbnail') progress.unsigned += 1;
      else if (entry.kind === 'record' && !('record' in entry)) progress.notSelfContained += 1;
      else if (!verifyLogEntrySignature(entry)) throw new AuditFailure(`entry ${tile * TILE_WIDTH + i}: its ${entry.kind}'s signature does not verify`);
      else progress.signatures += 1;
      if (entry.kind === 'record' && 'record' in entry) {
        // reservoir sample of the logged files
        const seen = progress.entries + 1;
        if (progress.sample.length < sampleSize) progress.sample.push(entry.record.file_hash);
        else if (randomInt(seen) < sampleSize) progress.sample[randomInt(sampleSize)] = entry.record.file_hash;
      }
      progress.entries += 1;
      builder.appendLeafHash(leaves.slice(i * 32, i * 32 + 32));
    }
    // higher full tiles made on the way: the served ones must be the same
    for (const [key, data] of served) {
      const [level, index] = key.split('/').map(Number) as [number, number];
      const got = await fetchBytes(`${server}/log/${tilePath({ level, index, width: TILE_WIDTH })}`);
      if (got === null || !hashEqual(got, data)) throw new AuditFailure(`the served tile ${tilePath({ level, index, width: TILE_WIDTH })} is not the one its entries make`);
    }
    served.clear();
    if (width === TILE_WIDTH && (tile % 64 === 63 || (tile + 1) * TILE_WIDTH >= size)) {
      const partial = builder.takeTiles().filter((t) => t.width < TILE_WIDTH);
      progress.size = builder.size;
      progress.edge = partial.map((t) => ({ level: t.level, index: t.index, width: t.width, data: encodeBase64(t.data) }));
      for (const t of partial) edge.set(`${t.level}/${t.index}`, t.data);
      save(file, progress);
    }
    if (tty) process.stderr.write(`\r${visible(origin)}: ${builder.size} of ${size} entries (${Math.floor((100 * builder.size) / Math.max(size, 1))} %)   `);
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
