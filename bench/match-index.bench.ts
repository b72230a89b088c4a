// MatchIndex query latency for ImagePHash at 100K, 1M and 10M stored fingerprints
// (random hashes plus planted near-duplicates), beside two peers from the same run:
// - SQLite (in memory, node sqlite3): 8 band columns each indexed, the candidate query
//   as an OR of equalities, then Hamming, threshold, sort and top 100 in JS;
// - usearch exactSearch (brute force): the package's JS binding offers exact search
//   only over f32/f64/i8 vectors (its i8 "hamming" returns NaN), so each hash is 64
//   i8 values of 0/1 and the metric is l2sq, which on 0/1 vectors is the Hamming distance.
// Also: recall of planted copies by Hamming distance, bytes per stored fingerprint,
// and load times. Every timed query checks its answer (the distance-0 copy first).
//
//   node --import tsx bench/match-index.bench.ts            # 100K, 1M, 10M
//   MATCH_BENCH_SIZES=100000,1000000 node --import tsx bench/match-index.bench.ts
import { createRequire } from 'node:module';
import { join } from 'node:path';
import sqlite3 from 'sqlite3';
import { MatchIndex } from '../src/lib/match-index.js';
import { loadKernel, packageRoot, wasmFlavor } from '../src/lib/wasm.js';
import { xorshift } from './support.js';

const SIZES = (process.env.MATCH_BENCH_SIZES ?? '100000,1000000,10000000').split(',').map(Number);
const ORIGINALS = 100; // each planted with one copy at every distance 0..19
const MAX_PLANTED_DISTANCE = 19;
const THRESHOLD = 70;
const LIMIT = 100;

interface Data {
  n: number;
  ids: Uint32Array;
  hashes: Uint8Array;
  signedAt: Float64Array;
  originals: Uint8Array[];
  /** planted[o][d] = id of the copy of original o at distance d. */
  planted: number[][];
}

function makeData(n: number): Data {
  const next = xorshift(0x9e3779b9 ^ n);
  const ids = new Uint32Array(n);
  const hashes = new Uint8Array(n * 8);
  const signedAt = new Float64Array(n);
  const words = new Uint32Array(hashes.buffer);
  for (let i = 0; i < words.length; i++) words[i] = next();
  for (let i = 0; i < n; i++) {
    ids[i] = i + 1;
    signedAt[i] = 1_600_000_000_000 + i;
  }
  const originals: Uint8Array[] = [];
  const planted: number[][] = [];
  const used = new Set<number>();
  for (let o = 0; o < ORIGINALS; o++) {
    const orig = new Uint8Array(8);
    for (let j = 0; j < 8; j++) orig[j] = next() & 255;
    originals.push(orig);
    const row: number[] = [];
    for (let d = 0; d <= MAX_PLANTED_DISTANCE; d++) {
      let at: number;
      do at = next() % n; while (used.has(at));
      used.add(at);
      const copy = orig.slice();
      const bits = new Set<number>();
      while (bits.size < d) bits.add(next() & 63);
      for (const b of bits) copy[b >> 3] ^= 0x80 >> (b & 7);
      hashes.set(copy, at * 8);
      row.push(ids[at]);
    }
    planted.push(row);
  }
  return { n, ids, hashes, signedAt, originals, planted };
}

const fpOf = (h: Uint8Array) => {
  const hash_value = Array.from(h);
  return { hash_type: 'ImagePHash' as const, hash_value, bands: hash_value.map((b) => [b]) };
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function stats(ms: number[]) {
  const s = ms.slice().sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}

const POP = new Uint8Array(256).map((_, i) => {
  let c = 0;
  for (let x = i; x; x >>= 1) c += x & 1;
  return c;
});

function popcount32(x: number): number {
  return POP[x & 255] + POP[(x >>> 8) & 255] + POP[(x >>> 16) & 255] + POP[x >>> 24];
}

// ---- SQLite peer ----

function sql<T = unknown>(db: sqlite3.Database, method: 'run' | 'all' | 'exec', text: string, params: unknown[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    if (method === 'exec') db.exec(text, (err) => (err ? reject(err) : resolve(undefined as T)));
    else (db[method] as Function).call(db, text, params, (err: Error | null, rows: T) => (err ? reject(err) : resolve(rows)));
  });
}

async function sqliteBuild(d: Data): Promise<{ db: sqlite3.Database; ms: number }> {
  const db = new sqlite3.Database(':memory:');
  const t = performance.now();
  await sql(db, 'exec', `CREATE TABLE fp (id INTEGER PRIMARY KEY, b0 INTEGER, b1 INTEGER, b2 INTEGER, b3 INTEGER,
    b4 INTEGER, b5 INTEGER, b6 INTEGER, b7 INTEGER, hi INTEGER, lo INTEGER, signed_at INTEGER)`);
  const BATCH = 50_000;
  const dv = new DataView(d.hashes.buffer);
  for (let start = 0; start < d.n; start += BATCH) {
    const rows: number[][] = [];
    for (let i = start; i < Math.min(d.n, start + BATCH); i++) {
      const h = d.hashes.subarray(i * 8, i * 8 + 8);
      rows.push([d.ids[i], ...h, dv.getUint32(i * 8), dv.getUint32(i * 8 + 4), d.signedAt[i]]);
    }
    await sql(db, 'run', `INSERT INTO fp SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6,
      value->>7, value->>8, value->>9, value->>10, value->>11 FROM json_each(?)`, [JSON.stringify(rows)]);
  }
  for (let b = 0; b < 8; b++) await sql(db, 'exec', `CREATE INDEX fp_b${b} ON fp(b${b})`);
  return { db, ms: performance.now() - t };
}

const SQLITE_QUERY = `SELECT id, hi, lo, signed_at FROM fp WHERE b0 = ? OR b1 = ? OR b2 = ? OR b3 = ? OR b4 = ? OR b5 = ? OR b6 = ? OR b7 = ?`;

async function sqliteQuery(db: sqlite3.Database, q: Uint8Array) {
  const rows = await sql<{ id: number; hi: number; lo: number; signed_at: number }[]>(db, 'all', SQLITE_QUERY, Array.from(q));
  const qv = new DataView(q.buffer, q.byteOffset, 8);
  const qhi = qv.getUint32(0);
  const qlo = qv.getUint32(4);
  const out: { id: number; similarity: number; signed_at: number }[] = [];
  for (const r of rows) {
    const dist = popcount32((r.hi ^ qhi) >>> 0) + popcount32((r.lo ^ qlo) >>> 0);
    const similarity = Math.floor((100 * (64 - dist)) / 64);
    if (similarity >= THRESHOLD) out.push({ id: r.id, similarity, signed_at: r.signed_at });
  }
  out.sort((a, b) => b.similarity - a.similarity || b.signed_at - a.signed_at || a.id - b.id);
  return out.slice(0, LIMIT);
}

// ---- usearch peer ----

type ExactSearch = (dataset: Int8Array, queries: Int8Array, dims: number, k: number, metric: string, threads: number) =>
  [BigUint64Array, Float32Array] | { keys: BigUint64Array; distances: Float32Array };

function loadUsearch(): { exactSearch: ExactSearch } | string {
  const require = createRequire(import.meta.url);
  try {
    const mod = require('usearch') as { exactSearch: ExactSearch; default?: { exactSearch: ExactSearch } };
    return { exactSearch: mod.exactSearch ?? mod.default!.exactSearch };
  } catch (err) {
    // usearch 2.x declares node >= 22 and its loader finds no build for Node 20's ABI;
    // the prebuilt N-API binary itself is ABI-independent, so load it directly.
    try {
      return require(join(packageRoot, 'node_modules', 'usearch', 'prebuilds', `${process.platform}-${process.arch}`, 'usearch.node')) as { exactSearch: ExactSearch };
    } catch (err2) {
      return `usearch cannot load here: ${(err as Error).message.split('\n')[0]}; ${(err2 as Error).message.split('\n')[0]}`;
    }
  }
}

function bitsAsI8(hashes: Uint8Array, n: number): Int8Array {
  const out = new Int8Array(n * 64);
  for (let i = 0; i < n * 8; i++) {
    const b = hashes[i];
    const o = i * 8;
    for (let k = 0; k < 8; k++) out[o + k] = (b >> (7 - k)) & 1;
  }
  return out;
}

// ---- run ----

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(3));
const usearch = loadUsearch();
if (typeof usearch === 'string') console.log(usearch);
console.log(`MatchIndex (${wasmFlavor} build) vs SQLite indexed band columns vs usearch exactSearch; ImagePHash, threshold ${THRESHOLD}, limit ${LIMIT}`);
const rows: string[][] = [['stored', 'ours p50 ms', 'ours p99 ms', 'sqlite p50', 'sqlite p99', 'usearch p50', 'usearch p99', 'p99 sqlite/ours', 'p50 usearch/ours', 'bytes/fp', 'load s (ours / sqlite)']];
const recallRows: string[] = [];

for (const n of SIZES) {
  const d = makeData(n);
  const memBefore = loadKernel('matchindex').exports.memory.buffer.byteLength;
  const index = new MatchIndex();
  let t = performance.now();
  index.addImageHashes(d.ids, d.hashes, d.signedAt);
  const loadS = (performance.now() - t) / 1000;
  const bytesPer = index.bytesPerEntry();
  const memAfter = loadKernel('matchindex').exports.memory.buffer.byteLength;

  const ours: number[] = [];
  const rounds = n >= 10_000_000 ? 2 : 5;
  for (let r = 0; r < rounds; r++) {
    for (let o = 0; o < ORIGINALS; o++) {
      const fp = fpOf(d.originals[o]);
      t = performance.now();
      const res = index.query(fp, { threshold: THRESHOLD, limit: LIMIT });
      if (res[0]?.id !== d.planted[o][0] || res[0].similarity !== 100) throw new Error('ours: wrong answer');
      ours.push(performance.now() - t);
    }
  }

  // recall of planted copies by distance (as candidates, any limit)
  const found = new Array<number>(MAX_PLANTED_DISTANCE + 1).fill(0);
  for (let o = 0; o < ORIGINALS; o++) {
    const got = new Set(index.query(fpOf(d.originals[o]), { threshold: THRESHOLD, limit: 1_000_000 }).map((m) => m.id));
    for (let dist = 0; dist <= MAX_PLANTED_DISTANCE; dist++) if (got.has(d.planted[o][dist])) found[dist]++;
  }
  recallRows.push(`${n}: ` + found.map((f, dist) => `d${dist} ${Math.round((100 * f) / ORIGINALS)}%`).join(' '));

  let sqliteStats: ReturnType<typeof stats> | null = null;
  let sqliteLoad = NaN;
  if (n <= 1_000_000) {
    const { db, ms } = await sqliteBuild(d);
    sqliteLoad = ms / 1000;
    const times: number[] = [];
    const qn = n >= 1_000_000 ? 50 : ORIGINALS;
    for (let o = 0; o < qn; o++) {
      t = performance.now();
      const res = await sqliteQuery(db, d.originals[o]);
      if (res[0]?.id !== d.planted[o][0]) throw new Error('sqlite: wrong answer');
      times.push(performance.now() - t);
    }
    sqliteStats = stats(times);
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }

  let usearchStats: ReturnType<typeof stats> | null = null;
  if (typeof usearch !== 'string') {
    const dataset = bitsAsI8(d.hashes, n);
    const times: number[] = [];
    const qn = n >= 10_000_000 ? 6 : n >= 1_000_000 ? 20 : 50;
    for (let o = 0; o < qn; o++) {
      const q = bitsAsI8(d.originals[o], 1);
      t = performance.now();
      const r = usearch.exactSearch(dataset, q, 64, LIMIT, 'l2sq', 1);
      const [keys, dist] = Array.isArray(r) ? r : [r.keys, r.distances];
      if (d.ids[Number(keys[0])] !== d.planted[o][0] || dist[0] !== 0) throw new Error('usearch: wrong answer');
      times.push(performance.now() - t);
    }
    usearchStats = stats(times);
  }

  const o = stats(ours);
  rows.push([
    String(n),
    fmt(o.p50),
    fmt(o.p99),
    sqliteStats ? fmt(sqliteStats.p50) : 'skipped',
    sqliteStats ? fmt(sqliteStats.p99) : 'skipped',
    usearchStats ? fmt(usearchStats.p50) : 'n/a',
    usearchStats ? fmt(usearchStats.p99) : 'n/a',
    sqliteStats ? `${(sqliteStats.p99 / o.p99).toFixed(1)}x` : '-',
    usearchStats ? `${(usearchStats.p50 / o.p50).toFixed(1)}x` : '-',
    `${bytesPer.toFixed(1)} (wasm +${((memAfter - memBefore) / n).toFixed(1)})`,
    `${loadS.toFixed(2)} / ${Number.isNaN(sqliteLoad) ? '-' : sqliteLoad.toFixed(2)}`,
  ]);
  index.free();
}

const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
for (const r of rows) console.log(r.map((cell, c) => cell.padStart(widths[c])).join('  '));
console.log(`recall of planted copies (share a band and >= ${THRESHOLD}; d <= 19 is >= 70):`);
for (const line of recallRows) console.log('  ' + line);
