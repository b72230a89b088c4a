// The 256-bit PDQ index (src/lib/pdq-index.ts) at 1M and 10M stored hashes beside
// faiss's IndexBinaryMultiHash (16 tables of 16 bits, nflip 1: what Meta's HMA uses),
// run as a subprocess (/usr/bin/python3 with Debian's python3-faiss, one OpenMP
// thread) on the same hashes and the same queries, one query at a time:
// - stored: random hashes, among which copies of 500 originals are planted at every
//   distance 0..40 (half with random bits flipped, half with the flips spread evenly
//   over the 16 chunks, the pigeonhole's worst case);
// - queries: the 500 originals and 500 fresh random hashes (which match nothing);
// - recall of the planted copies at distance <= 31 (must be 100 %), results beyond 31
//   (must be none), agreement with faiss's answers, CPU time per query (p50, p99),
//   bytes per stored hash (ours: what the index holds, and the resident memory the
//   bulk add added; faiss: resident memory added by index.add), load time. (The
//   WebAssembly memory's size is no measure: its allocator reserves by doubling, and
//   pages never touched are not resident.)
// Ours also with the 8 dihedral hashes per query (7 more random hashes here).
//
//   node --import tsx bench/pdq-index.bench.ts                  # 1M and 10M
//   PDQ_INDEX_BENCH_SIZES=1000000 node --import tsx bench/pdq-index.bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PdqIndex } from '../src/lib/pdq-index.js';
import { wasmFlavor } from '../src/lib/wasm.js';
import { xorshift } from './support.js';

const SIZES = (process.env.PDQ_INDEX_BENCH_SIZES ?? '1000000,10000000').split(',').map(Number);
const ORIGINALS = 500;
const MAX_PLANTED = 40;
const THRESHOLD = 31;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function popcount8(x: number): number {
  let n = 0;
  for (let v = x; v; v &= v - 1) n++;
  return n;
}

function distance(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  let d = 0;
  for (let i = 0; i < 32; i++) d += popcount8(a[ao + i] ^ b[bo + i]);
  return d;
}

interface Data {
  hashes: Uint8Array;
  queries: Uint8Array;
  /** planted[o] = [id, distance] of the copies of original o. */
  planted: [number, number][][];
}

function makeData(n: number): Data {
  const next = xorshift(0x28_0028 ^ n);
  const hashes = new Uint8Array(n * 32);
  const words = new Uint32Array(hashes.buffer);
  for (let i = 0; i < words.length; i++) words[i] = next();
  const queries = new Uint8Array(2 * ORIGINALS * 32);
  const qwords = new Uint32Array(queries.buffer);
  for (let i = 0; i < qwords.length; i++) qwords[i] = next();
  const planted: [number, number][][] = [];
  const used = new Set<number>();
  for (let o = 0; o < ORIGINALS; o++) {
    const row: [number, number][] = [];
    for (let d = 0; d <= MAX_PLANTED; d++) {
      for (const spread of [false, true]) {
        let at: number;
        do at = next() % n; while (used.has(at));
        used.add(at);
        const copy = queries.slice(o * 32, o * 32 + 32);
        if (spread) {
          const per = Array.from({ length: 16 }, (_, c) => Math.floor(d / 16) + (c < d % 16 ? 1 : 0));
          for (let i = 15; i > 0; i--) {
            const j = next() % (i + 1);
            [per[i], per[j]] = [per[j], per[i]];
          }
          per.forEach((k, c) => {
            const bits = new Set<number>();
            while (bits.size < k) bits.add(next() % 16);
            for (const b of bits) copy[2 * c + (b >> 3)] ^= 1 << (b & 7);
          });
        } else {
          const bits = new Set<number>();
          while (bits.size < d) bits.add(next() % 256);
          for (const b of bits) copy[b >> 3] ^= 1 << (b & 7);
        }
        hashes.set(copy, at * 32);
        row.push([at, d]);
      }
    }
    planted.push(row);
  }
  return { hashes, queries, planted };
}

function cpuUs(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

const rows: string[][] = [[
  'stored', 'ours p50 ms', 'ours p99 ms', 'faiss p50 ms', 'faiss p99 ms', 'p99 faiss/ours', 'ours 8 hashes p99 ms',
  'recall <= 31', 'beyond 31', 'same as faiss', 'ours B/fp (held / RSS growth)', 'faiss B/fp', 'load s (ours / faiss)',
]];
const dir = mkdtempSync(join(tmpdir(), 'pdq-index-bench-'));
try {
  for (const n of SIZES) {
    const data = makeData(n);
    const nq = data.queries.length / 32;
    const rssBefore = process.memoryUsage().rss;
    const index = new PdqIndex();
    const ids = Uint32Array.from({ length: n }, (_, i) => i);
    let c0 = cpuUs();
    index.addMany(ids, data.hashes);
    const loadOurs = (cpuUs() - c0) / 1e6;
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    const held = index.bytesPerEntry();
    // warm-up, then one query at a time
    for (let q = 0; q < 50; q++) index.query(data.queries.subarray(q * 32, q * 32 + 32));
    const ours: number[] = [];
    const answers: number[][] = [];
    for (let q = 0; q < nq; q++) {
      const query = data.queries.subarray(q * 32, q * 32 + 32);
      c0 = cpuUs();
      const found = index.query(query, THRESHOLD);
      ours.push((cpuUs() - c0) / 1000);
      answers.push(found.map((m) => m.id).sort((a, b) => a - b));
    }
    // eight hashes per query: the original and 7 random ones (as dihedral variants would be)
    const next = xorshift(n);
    const eight: number[] = [];
    for (let q = 0; q < nq; q++) {
      const variants = [data.queries.slice(q * 32, q * 32 + 32), ...Array.from({ length: 7 }, () => Uint8Array.from({ length: 32 }, () => next() & 255))];
      c0 = cpuUs();
      index.query(variants, THRESHOLD);
      eight.push((cpuUs() - c0) / 1000);
    }
    // recall and exactness against the planted copies and the stored hashes
    let planted = 0;
    let recalled = 0;
    let beyond = 0;
    for (let q = 0; q < nq; q++) {
      const got = new Set(answers[q]);
      for (const id of answers[q]) if (distance(data.queries, q * 32, data.hashes, id * 32) > THRESHOLD) beyond++;
      if (q < ORIGINALS) {
        for (const [id, d] of data.planted[q]) {
          if (d > THRESHOLD) continue;
          planted++;
          if (got.has(id)) recalled++;
        }
      }
    }
    index.free();
    // faiss on the same hashes and queries
    const stored = join(dir, 'stored.bin');
    const queries = join(dir, 'queries.bin');
    writeFileSync(stored, data.hashes);
    writeFileSync(queries, data.queries);
    const out = execFileSync('/usr/bin/python3', [new URL('./pdq-index-faiss.py', import.meta.url).pathname, stored, queries], {
      maxBuffer: 1 << 28, env: { ...process.env, OMP_NUM_THREADS: '1' },
    }).toString();
    const peer = JSON.parse(out) as { load_s: number; bytes_per_fp: number; ms: number[]; ids: number[][] };
    let same = 0;
    for (let q = 0; q < nq; q++) if (JSON.stringify(peer.ids[q]) === JSON.stringify(answers[q])) same++;
    const o = [...ours].sort((a, b) => a - b);
    const f = [...peer.ms].sort((a, b) => a - b);
    const e = [...eight].sort((a, b) => a - b);
    rows.push([
      n.toLocaleString('en'), percentile(o, 50).toFixed(3), percentile(o, 99).toFixed(3), percentile(f, 50).toFixed(3), percentile(f, 99).toFixed(3),
      `${(percentile(f, 99) / percentile(o, 99)).toFixed(2)}x`, percentile(e, 99).toFixed(3),
      `${recalled}/${planted} (${((100 * recalled) / planted).toFixed(1)} %)`, String(beyond), `${same}/${nq}`,
      `${held.toFixed(1)} / ${(rssGrowth / n).toFixed(1)}`, peer.bytes_per_fp.toFixed(1), `${loadOurs.toFixed(2)} / ${peer.load_s.toFixed(2)}`,
    ]);
    console.log(rows[rows.length - 1].join(' | '));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\nPDQ index (${wasmFlavor} build) vs faiss ${'IndexBinaryMultiHash'} (16 x 16 bits, nflip 1), ${2 * ORIGINALS} single-hash queries, distance <= ${THRESHOLD}, CPU time per query`);
console.log(rows.map((r) => `| ${r.join(' | ')} |`).join('\n'));
