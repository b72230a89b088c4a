// The server's transparency log at scale (issue 27, "Bench"): a log of N synthetic record
// entries (default 10,000,000) in a real store, built through the same append path as a
// sign: the change feed's write (feed lock taken) and appendLogEntries in it, 10,000
// entries per transaction (a /sign-batch appends 100), each entry made by recordLogEntry
// inside the transaction as insertSignatures does; then one round of the real
// Checkpointer (server/src/tlog/checkpointer.ts: reads every entry, builds every tile,
// stores them with the signed checkpoint in one transaction). Measured:
//   - build time: the appends (wall and this process's CPU; SQLite's work runs on
//     libuv's threads and counts in that CPU, PostgreSQL's does not) and the checkpoint;
//   - bytes on disk per entry: the database's growth over the empty migrated one / N
//     (SQLite: the file with its WAL, read after closing, which checkpoints the WAL into
//     it; PostgreSQL: pg_database_size, the one query this file writes itself, a
//     measuring instrument and not a store access), after the appends and again after
//     the tiles; and "beyond the record": minus the record's canonical bytes, which the
//     signatures table holds anyway (the entry's envelope, the row, its index, the tiles);
//   - producing a proof as GET /api/v1/sign-it/proof does (routes.ts): recordIndex of an
//     action hash, latestCheckpoint, buildProofBundle over cachedTileReader (the stored
//     tiles, full ones kept in memory once read, as the route keeps them), for random indexes: wall clock (what a client waits for; on the shared
//     machine that includes waiting for a core), the same minus the time the main thread
//     waited for a core (Linux schedstat; SQLite's thread may still have waited), and the
//     process's CPU time (every thread: SQLite's, the GC's, the compiler's); goal p99 < 2 ms;
//   - verifying it as a client does: verifyProofBundle with the entry (leaf hash, the
//     checkpoint's Ed25519 signature, the inclusion proof). Every proof must verify and
//     prove the index of the record asked for, or the bench throws.
// The store is opened and composed with its own functions (the engine's Db.open with its
// migrations, tableStores over a Feed); nothing here writes SQL to the store. The records
// are synthetic, 470-1,060 bytes canonical (~730 on average), three in four shaped like a
// vault's (integrity report, perceptual hash, a PDQ for some), the rest like the SDK's;
// content rights, a comment on half; distinct action hashes; their signatures are 64
// random bytes in base64, not real Ed25519 signatures: the store neither checks nor
// cares, and the bench measures the store.
// Only log entries are written (no signatures rows): the growth is the log's own.
//   npm run build:ts && node --import tsx bench/tlog-store.bench.ts [--entries N] [--proofs N] [--batch N]
//   ENGINES=sqlite (default) | postgres | sqlite,postgres
import './hash-bench.js'; // --no-liftoff before any WebAssembly compiles
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { compiled, xorshift } from './support.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../test/helpers/postgres.js';
import type * as Lib from '../src/index.js';
import type { Db as StoreDb, Queryable } from '../server/src/store/sql.js';
import type { TransparencyLogStore } from '../server/src/store/log.js';

const lib = await compiled<typeof Lib>('src/index.js');
const { buildProofBundle, decodeLogEntry, noteSigner, parseCheckpoint, parseNote, SIG_ED25519, tileHashReader, treeHash, verifierOf, verifyProofBundle } = lib;
const { Db: SqliteDb } = await compiled<typeof import('../server/src/store/sqlite/db.js')>('server/src/store/sqlite/db.js');
const { PgDb } = await compiled<typeof import('../server/src/store/postgres/db.js')>('server/src/store/postgres/db.js');
const { Feed } = await compiled<typeof import('../server/src/store/feed.js')>('server/src/store/feed.js');
const { tableStores } = await compiled<typeof import('../server/src/store/store.js')>('server/src/store/store.js');
const { appendLogEntries, recordLogEntry } = await compiled<typeof import('../server/src/store/log.js')>('server/src/store/log.js');
const { Checkpointer, storedHashReader } = await compiled<typeof import('../server/src/tlog/checkpointer.js')>('server/src/tlog/checkpointer.js');
const { cachedTileReader, ImmutableCache } = await compiled<typeof import('../server/src/tlog/routes.js')>('server/src/tlog/routes.js');
const { createLogger } = await compiled<typeof import('../server/src/log.js')>('server/src/log.js');

const { values } = parseArgs({ options: { entries: { type: 'string' }, proofs: { type: 'string' }, batch: { type: 'string' } } });
const N = Number(values.entries ?? 10_000_000);
const PROOFS = Number(values.proofs ?? 2000);
const BATCH = Number(values.batch ?? 10_000);
const ENGINES = (process.env.ENGINES ?? 'sqlite').split(',');
const GOAL_MS = 2;

const cpu = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
// the time (ms) the main thread has spent runnable but waiting for a core, from Linux's
// schedstat (added when the thread gets a core back, so exact between two reads made while
// it runs; its run time there is only brought up to date at ticks, too coarse to use)
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const hasSchedstat = existsSync(SCHEDSTAT);
const waited = (): number => (hasSchedstat ? Number(readFileSync(SCHEDSTAT, 'latin1').split(' ')[1]) / 1e6 : NaN);
const pct = (xs: number[], p: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!; };
const ms = (x: number): string => (x < 1 ? x.toFixed(3) : x.toFixed(2));
const int = (x: number): string => Math.round(x).toLocaleString('en');
const sec = (msv: number): string => `${(msv / 1000).toFixed(1)} s`;
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
const note = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`); };

// ---------------------------------------------------------------- synthetic records

/** The record at index i's action hash: distinct, and recomputed from i when a proof asks for it. */
const actionHash = (i: number): string => createHash('sha256').update(`tlog-store-bench ${i}`).digest('hex');

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const WORDS = ['the', 'photo', 'of', 'harbour', 'at', 'dawn', 'taken', 'from', 'north', 'pier', 'draft', 'final', 'edit', 'for', 'review', 'by', 'our', 'desk', 'série', 'café'];
const CHECKS = ['PostEofData', 'LsbAnalysis', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection'];
const LICENSES = ['CC0', 'CCBY', 'CCBYSA', 'CCBYNC', 'AllRightsReserved'] as const;
const next = xorshift(2027);
const hexBytes = Buffer.alloc(32);
/** 64 hex digits. */
const hex64 = (): string => { for (let k = 0; k < 32; k += 4) hexBytes.writeUInt32LE(next(), k); return hexBytes.toString('hex'); };
const pick = <T>(xs: readonly T[]): T => xs[next() % xs.length]!;
const signatureBytes = Buffer.alloc(64);

function syntheticRecord(i: number): Lib.SignatureRecord {
  // three in four made in the vault (integrity report, perceptual hash; a PDQ for one in
  // three), the rest by the SDK (both null); a comment of 0-100 characters on half
  const vault = next() % 4 !== 0;
  let comment: string | null = null;
  if (next() % 2 === 0) {
    comment = pick(WORDS);
    const words = next() % 16;
    for (let w = 0; w < words && comment.length < 95; w++) comment += ` ${pick(WORDS)}`;
  }
  const record: Lib.SignatureRecord = {
    file_hash: hex64(),
    signer: `uhCAk${Array.from({ length: 48 }, () => B64URL[next() & 63]).join('')}`,
    signed_at: 1_790_000_000_000 + i,
    intent: pick(['Authorship', 'Approval', 'Witness'] as const),
    ai_generation: pick(['None', 'Assisted', 'Generated'] as const),
    content_rights: { license: pick(LICENSES), commercial_licensing: 'ContactForTerms', ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
    integrity_report: vault ? { checks_performed: CHECKS.slice(0, 3 + (next() % 3)), issues_found: [], checked_at: 1_790_000_000_000 + i - 900 } : null,
    perceptual_hash: vault ? { hash_type: 'ImagePHash', hash_value: Array.from({ length: 8 }, () => next() & 255), bands: Array.from({ length: 8 }, () => [next() & 255]) } : null,
    comment,
    supersedes: next() % 10 === 0 ? hex64() : null,
    expires_at: null,
    tags: next() % 2 === 0 ? null : ['photo', pick(WORDS)],
  };
  if (vault && next() % 3 === 0) record.pdq_hash = { hash_type: 'PDQ', hash_value: hex64(), quality: 50 + (next() % 51) };
  return record;
}

function syntheticSignature(): string {
  for (let k = 0; k < 64; k += 4) signatureBytes.writeUInt32LE(next(), k);
  return signatureBytes.toString('base64');
}

// ---------------------------------------------------------------- one engine

interface Opened {
  db: StoreDb & { close(): Promise<void> };
  feed: InstanceType<typeof Feed>;
  log: TransparencyLogStore;
}

interface Engine {
  name: string;
  open(): Promise<Opened>;
  /** Bytes the database holds on disk now (SQLite: with the store closed). */
  size(opened: Opened | null): Promise<number>;
  /** Whether size() needs the store closed (then it is reopened). */
  closedForSize: boolean;
  dispose(): Promise<void>;
}

function compose(db: StoreDb & { close(): Promise<void> }): Opened {
  const feed = new Feed(db);
  return { db, feed, log: tableStores(db, feed).log };
}

function sqliteEngine(): Engine {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-tlog-store-bench-'));
  const file = join(dir, 'provenant.db');
  return {
    name: 'SQLite',
    closedForSize: true,
    async open() {
      return compose(await SqliteDb.open(file));
    },
    async size() {
      let bytes = 0;
      for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) bytes += statSync(f).size;
      return bytes;
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresEngine(server: TestPostgres): Promise<Engine> {
  const url = await server.createDatabase();
  const sizeClient = new pg.Client({ connectionString: url });
  await sizeClient.connect();
  return {
    name: 'PostgreSQL',
    closedForSize: false,
    async open() {
      return compose(await PgDb.open(url));
    },
    async size() {
      const { rows } = await sizeClient.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
      return Number(rows[0]!.bytes);
    },
    async dispose() {
      await sizeClient.end();
    },
  };
}

async function measure(engine: Engine): Promise<void> {
  console.log(`\n## ${engine.name}: ${int(N)} record entries, ${int(BATCH)} per transaction, ${PROOFS} proofs; load average ${load()}\n`);
  let opened = await engine.open();
  const reopenForSize = async (): Promise<number> => {
    if (!engine.closedForSize) return engine.size(opened);
    await opened.db.close();
    const bytes = await engine.size(null);
    opened = await engine.open();
    return bytes;
  };
  const empty = await reopenForSize();

  // ---------------------------------------------------------------- appends
  let appendWall = 0;
  let appendCpu = 0;
  let entryBytes = 0;
  let recordBytes = 0;
  let recordMin = Infinity;
  let recordMax = 0;
  let envelope = -1;
  const started = performance.now();
  let lastNote = started;
  for (let from = 0; from < N; from += BATCH) {
    const n = Math.min(BATCH, N - from);
    const batch = Array.from({ length: n }, (_, k) => ({ hash: actionHash(from + k), record: syntheticRecord(from + k), signature: syntheticSignature() }));
    const publishedAt = Date.now();
    const c0 = cpu();
    const t0 = performance.now();
    // as insertSignatures: the feed's write, its lock, the entries made and appended in it
    const entries = await opened.feed.write(async (tx: Queryable, w) => {
      await w.serialise();
      const made = batch.map((b) => recordLogEntry(b.hash, b.record, b.signature, publishedAt));
      await appendLogEntries(opened.db, tx, made);
      return made;
    });
    appendWall += performance.now() - t0;
    appendCpu += cpu() - c0;
    if (envelope < 0) {
      // the envelope around the record ({"action_hash":..,"kind":"record","published_at":..,"record":R,"signature":..})
      // has one length for every entry here (64 hex, 13 digits, 88 base64 characters)
      const canonical = (await import('canonicalize')).default as (v: unknown) => string;
      envelope = entries[0]!.entry.length - Buffer.byteLength(canonical(batch[0]!.record));
      for (let k = 0; k < Math.min(n, 1000); k++) {
        if (entries[k]!.entry.length - Buffer.byteLength(canonical(batch[k]!.record)) !== envelope) throw new Error('the envelope length varies');
      }
    }
    for (const e of entries) {
      entryBytes += e.entry.length;
      recordBytes += e.entry.length - envelope;
      recordMin = Math.min(recordMin, e.entry.length - envelope);
      recordMax = Math.max(recordMax, e.entry.length - envelope);
    }
    const now = performance.now();
    if (now - lastNote > 60_000 || from + n === N) {
      lastNote = now;
      note(`${engine.name}: ${int(from + n)} entries appended, ${int((from + n) / (appendWall / 1000))} appends/s in the writes, ${sec(now - started)} so far; load ${load()}`);
    }
  }
  const buildWall = performance.now() - started;

  // the store's own size query (SELECT max(idx)) at this size
  const s0 = performance.now();
  const size = await opened.log.size();
  const sizeQueryMs = performance.now() - s0;
  if (size !== N) throw new Error(`the log holds ${size} entries, not ${N}`);
  const afterAppend = await reopenForSize();

  // ---------------------------------------------------------------- tiles and checkpoint
  const seed = new Uint8Array(randomBytes(32));
  const origin = 'bench.example/log';
  const identity = { origin, signer: noteSigner(origin, SIG_ED25519, seed), verifierKey: verifierOf(origin, SIG_ED25519, seed).vkey };
  const errors: string[] = [];
  const silent = createLogger('silent');
  const logger = { ...silent, error: (msg: string, fields?: Record<string, unknown>) => errors.push(`${msg} ${JSON.stringify(fields)}`) };
  const checkpointer = new Checkpointer({ store: opened.log, identity, witnesses: [], log: logger });
  const c0 = cpu();
  const t0 = performance.now();
  await checkpointer.tick();
  const checkpointWall = performance.now() - t0;
  const checkpointCpu = cpu() - c0;
  await checkpointer.close();
  if (errors.length > 0) throw new Error(`the checkpoint round failed: ${errors.join('; ')}`);
  const stored = await opened.log.latestCheckpoint();
  if (stored?.size !== N) throw new Error(`the stored checkpoint is of size ${stored?.size}, not ${N}`);
  const { rootHash } = parseCheckpoint(parseNote(stored.note).text);
  if (Buffer.compare(await treeHash(N, storedHashReader(opened.log, N)), rootHash) !== 0) throw new Error('the stored tiles give another root than the checkpoint');
  const afterTiles = await reopenForSize();

  // ---------------------------------------------------------------- proofs
  const policy = { logKeys: [identity.verifierKey] };
  const r = xorshift(7);
  const lookupMs: number[] = [];
  const produceMs: number[] = [];
  const produceCpu: number[] = [];
  const produceNet: number[] = [];
  const produceWait: number[] = [];
  const verifyMs: number[] = [];
  const verifyNet: number[] = [];
  // warm-up, not measured: in a trial of 8,000 proofs the slow ones (> 2 ms, CPU-bound,
  // not GC) were 39 in the first thousand, 22 in the second, 2-8 in each later one (V8
  // still compiling the path); a server that has been up a while runs the compiled code
  const WARM = 2000;
  // the route's reader: full tiles kept in the node's tile cache (64 MiB) once read
  const tiles = cachedTileReader(opened.log, new ImmutableCache());
  for (let k = 0; k < WARM + PROOFS; k++) {
    const i = r() % N;
    const hash = actionHash(i);
    const w0 = waited();
    const c = cpu();
    const t0 = performance.now();
    // GET /api/v1/sign-it/proof (routes.ts), minus HTTP
    const [index, checkpoint] = await Promise.all([opened.log.recordIndex(hash), opened.log.latestCheckpoint()]);
    if (index === null) throw new Error(`no entry for the record ${i}`);
    if (checkpoint === null || index >= checkpoint.size) throw new Error('no checkpoint covers the entry');
    const t1 = performance.now();
    const bundle = await buildProofBundle({ index, checkpoint: checkpoint.note, reader: tileHashReader(checkpoint.size, tiles) });
    const t2 = performance.now();
    const cpuUsed = cpu() - c;
    const w1 = waited();
    if (index !== i) throw new Error(`record ${i}'s index is ${index}`);
    // the client holds the entry (the record as /verify answers it, made into its entry)
    const [entry] = await opened.log.entries(i, i + 1);
    const decoded = decodeLogEntry(entry!);
    if (decoded.action_hash !== hash) throw new Error(`entry ${i} is not the record asked for`);
    const w2 = waited();
    const t3 = performance.now();
    const proven = verifyProofBundle(bundle, { entry: entry! }, policy);
    const t4 = performance.now();
    const w3 = waited();
    if (proven.index !== i || proven.checkpoint.checkpoint.size !== N) throw new Error(`proof ${k} proves index ${proven.index} in ${proven.checkpoint.checkpoint.size}`);
    if (k < WARM) continue;
    lookupMs.push(t1 - t0);
    produceMs.push(t2 - t0);
    produceCpu.push(cpuUsed);
    produceWait.push(w1 - w0);
    produceNet.push(t2 - t0 - (w1 - w0));
    verifyMs.push(t4 - t3);
    verifyNet.push(t4 - t3 - (w3 - w2));
  }
  await opened.db.close();

  const perEntry = (bytes: number): string => (bytes / N).toFixed(1);
  const tileBytes = afterTiles - afterAppend;
  console.log('| build | time | rate |');
  console.log('|---|---|---|');
  console.log(`| append (feed write + appendLogEntries), wall | ${sec(appendWall)} | ${int(N / (appendWall / 1000))} entries/s |`);
  console.log(`| append, CPU of this process (${engine.closedForSize ? "SQLite's threads included" : "the database server's not included"}) | ${sec(appendCpu)} | ${int(N / (appendCpu / 1000))} entries/s |`);
  console.log(`| append loop with the records' synthesis, wall | ${sec(buildWall)} | |`);
  console.log(`| tiles + signed checkpoint (one Checkpointer round), wall | ${sec(checkpointWall)} | ${int(N / (checkpointWall / 1000))} entries/s |`);
  console.log(`| tiles + signed checkpoint, CPU | ${sec(checkpointCpu)} | |`);
  console.log(`\nlog size query (SELECT max(idx)) at ${int(N)} entries: ${ms(sizeQueryMs)} ms\n`);
  console.log('| on disk, per entry | bytes |');
  console.log('|---|---|');
  console.log(`| entry (its canonical JSON) | ${perEntry(entryBytes)} |`);
  console.log(`| of which the record's canonical bytes | ${perEntry(recordBytes)} (${recordMin}-${recordMax}) |`);
  console.log(`| database growth, entries (rows + index) | ${perEntry(afterAppend - empty)} |`);
  console.log(`| database growth, tiles | ${perEntry(tileBytes)} |`);
  console.log(`| database growth, total | ${perEntry(afterTiles - empty)} (${((afterTiles - empty) / 2 ** 30).toFixed(2)} GiB) |`);
  console.log(`| **beyond the record** (total - record) | **${perEntry(afterTiles - empty - recordBytes)}** |`);
  console.log(`| beyond the entry (rows, index, tiles: total - entry) | ${perEntry(afterTiles - empty - entryBytes)} |`);
  console.log(`\n| proofs, tree of ${int(N)}, ${PROOFS} random indexes | p50 ms | p99 ms | max ms | goal |`);
  console.log('|---|---|---|---|---|');
  const goal = (xs: number[]) => `p99 < ${GOAL_MS} ms: ${pct(xs, 99) < GOAL_MS ? 'met' : 'NOT met'}`;
  const row = (name: string, xs: number[], withGoal = false) => {
    if (xs.some(Number.isNaN)) return;
    console.log(`| ${name} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} | ${ms(Math.max(...xs))} | ${withGoal ? goal(xs) : ''} |`);
  };
  row('produce (recordIndex, latestCheckpoint, buildProofBundle), wall', produceMs, true);
  row('produce, wall minus the main thread\'s wait for a core', produceNet, true);
  row('produce, CPU of the process (all threads)', produceCpu, true);
  row('produce, the main thread\'s wait for a core', produceWait);
  row('of which the lookups (recordIndex, latestCheckpoint), wall', lookupMs);
  row('verify (verifyProofBundle with the entry), wall', verifyMs);
  row('verify, wall minus the main thread\'s wait for a core', verifyNet);
  console.log(`\nload average at the end: ${load()}`);
}

console.log(`Transparency log in the store, node ${process.version}; ${int(N)} entries`);
for (const name of ENGINES) {
  let server: TestPostgres | null = null;
  let engine: Engine;
  if (name === 'postgres') {
    const why = postgresUnavailable();
    if (why !== null) {
      console.log(`\n## PostgreSQL: skipped (${why})`);
      continue;
    }
    server = await startPostgres();
    engine = await postgresEngine(server);
  } else if (name === 'sqlite') {
    engine = sqliteEngine();
  } else {
    throw new Error(`unknown engine ${name} (ENGINES=sqlite,postgres)`);
  }
  try {
    await measure(engine);
  } finally {
    await engine.dispose();
    await server?.stop();
  }
}
