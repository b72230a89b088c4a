// The scale-out engines under load (issue 16), every node a compiled `provenant serve`
// child process, autocannon in this process (all on the same 2 cores, loopback):
// 1. the same 1M stored image signatures on SQLite and on PostgreSQL (copied row for row
//    from the matching-server bench's SQLite database with COPY): each node's start with
//    the index load, then GET /verify of a repeated hash (the verify cache) and of a
//    random stored hash (a database read each), POST /verify-fuzzy with a random query
//    (index and record fetch) and POST /sign, the two engines in alternating rounds
//    (this shared machine's speed drifts; the median of the per-round ratios is shown);
// 2. a new node's catch-up (start to index ready) with another node running;
// 3. two nodes on one PostgreSQL against one node: the same load, its connections
//    split over both, in alternating rounds;
// 4. the delay from a sign on node A to its match by verify-fuzzy on node B (p50, p99).
// Rate limits are off; every answer is checked. The PostgreSQL is the tests' throwaway
// one (test/helpers/postgres.ts: fsync and synchronous_commit off).
//
//   npm run build:ts && node --import tsx bench/cluster.bench.ts
//   CLUSTER_STORED=100000 ROUNDS=3 DURATION=3 node --import tsx bench/cluster.bench.ts
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPostgres } from '../test/helpers/postgres.js';
import { freePort, startRedis } from '../test/helpers/redis.js';
import { xorshift } from './support.js';

interface LoadResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>, cb: (err: Error | null, r: LoadResult) => void) => unknown;

const STORED = Number(process.env.CLUSTER_STORED ?? 1_000_000);
const DURATION = Number(process.env.DURATION ?? 3);
const CONNECTIONS = 16;
const DELAY_SAMPLES = Number(process.env.DELAY_SAMPLES ?? 300);
/** Alternating rounds per comparison (the median ratio is reported). */
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
/** The matching-server bench's database: `STORED` vault signatures with planted near-copies of one query. */
const SQLITE_DIR = `/tmp/provenant-bench-match-v3-${STORED}`;
const S = '/api/v1/sign-it';

const hex = () => randomBytes(32).toString('hex');
/** The file hash of stored row i (as the matching-server bench writes them). */
const storedHash = (i: number) => `f${i.toString(16).padStart(63, '0')}`;

function load(opts: Record<string, unknown>): Promise<LoadResult> {
  return new Promise((resolve, reject) => autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, r) => (err ? reject(err) : resolve(r))));
}

/** autocannon options: a body or path made per request, and a check of every answer. */
function varied(make: () => { path?: string; body?: string }, check: (body: Buffer) => boolean, bad: { n: number }) {
  return {
    requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, ...make() }) }],
    setupClient: (client: { on(e: 'body', fn: (b: Buffer) => void): void }) => client.on('body', (b) => {
      if (!check(b)) bad.n += 1;
    }),
  };
}

// ---- nodes ----

interface Node {
  url: string;
  /** A bearer token of a signer on this node's database. */
  token?: string;
  proc: ChildProcess;
  /** From spawn to the match index loaded (/healthz: match_index ready). */
  startMs: number;
}

async function startNode(env: Record<string, string>, dataDir: string): Promise<Node> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: { ...process.env, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'error', PROVENANT_WORKERS: '2', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node on ${port} exited ${proc.exitCode}`);
    // /healthz answers 200 while the index loads (state 'loading'): ready is the loaded index
    const health = await fetch(`${url}/healthz`).then((r) => r.json(), () => null) as { parts?: { match_index?: { state?: string } } } | null;
    if (health?.parts?.match_index?.state === 'ready') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, proc, startMs: performance.now() - started };
}

function stopNode(node: Node): Promise<void> {
  return new Promise((resolve) => {
    if (node.proc.exitCode !== null) return resolve();
    node.proc.once('exit', () => resolve());
    node.proc.kill('SIGTERM');
  });
}

/** `provenant admin ...` (compiled) with `env`; its JSON answer. */
function admin(env: Record<string, string>, args: string[], input = ''): any {
  const out = execFileSync(process.execPath, [CLI, 'admin', ...args], { env: { ...process.env, ...env }, input, encoding: 'utf8' });
  return JSON.parse(out);
}

/** A signer with a server cell, signing through an app of an enterprise org (no limit): its bearer token. */
function signer(env: Record<string, string>, dataDirArgs: string[]): string {
  const email = `bench-${hex().slice(0, 8)}@example.com`;
  admin(env, ['create-user', '--email', email, '--password-stdin', '--server-cell', ...dataDirArgs], 'bench password 1234\n');
  const { org_id } = admin(env, ['create-org', '--name', 'Bench', '--owner', email, '--tier', 'enterprise', ...dataDirArgs]);
  const { client_id } = admin(env, ['create-app', '--owner', email, '--org', org_id, '--name', 'Bench', '--redirect-uri', 'https://example.com/cb', '--scopes', 'sign verify', ...dataDirArgs]);
  return admin(env, ['session-token', '--email', email, '--app', client_id, ...dataDirArgs]).token;
}

// ---- PostgreSQL seeded from the SQLite database ----

/** The columns of `table` in SQLite. */
function sqliteColumns(file: string, table: string): string[] {
  return execFileSync('sqlite3', [file, `SELECT name FROM pragma_table_info('${table}')`], { encoding: 'utf8' }).trim().split('\n');
}

/** Streams `select` out of SQLite as CSV into `\copy target FROM pstdin` (psql): resolves when psql is done. */
function pipeCsv(file: string, select: string, url: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = spawn('sqlite3', ['-csv', file, select], { stdio: ['ignore', 'pipe', 'inherit'] });
    const into = spawn('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qc', `\\copy ${target} FROM pstdin WITH (FORMAT csv)`], { stdio: ['pipe', 'inherit', 'inherit'] });
    out.stdout.pipe(into.stdin);
    out.on('error', reject);
    into.on('error', reject);
    into.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql \\copy ${target} exited ${code}`))));
  });
}

/**
 * Copies users, signatures and signature_reduced from SQLite into PostgreSQL with
 * COPY (sqlite3 -csv into psql \copy; the columns both have; SQLite's 0/1 are
 * PostgreSQL booleans' '0'/'1'), then moves every identity sequence past the copied ids.
 */
async function copyIntoPostgres(url: string, file: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = performance.now();
  try {
    for (const table of ['users', 'signatures', 'signature_reduced']) {
      const { rows } = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position`,
        [table],
      );
      const inSqlite = new Set(sqliteColumns(file, table));
      const columns: string[] = [];
      const selects: string[] = [];
      for (const { column_name: name } of rows as { column_name: string }[]) {
        if (inSqlite.has(name)) {
          columns.push(name);
          selects.push(name);
        } else if (table === 'signatures' && name === 'perceptual_hash') {
          // PostgreSQL keeps the fingerprint in a column of its own (the index loads it
          // from there): SQLite's compact JSON of the record's keys, already in canonical order
          columns.push(name);
          selects.push(`json_extract(record, '$.perceptual_hash')`);
        }
      }
      await pipeCsv(file, `SELECT ${selects.join(', ')} FROM ${table} ORDER BY rowid`, url, `${table} (${columns.join(', ')})`);
    }
    const { rows: serials } = await client.query(
      `SELECT table_name, column_name, pg_get_serial_sequence(table_name, column_name) AS seq FROM information_schema.columns
       WHERE table_schema = current_schema() AND pg_get_serial_sequence(table_name, column_name) IS NOT NULL`,
    );
    for (const s of serials) {
      await client.query(`SELECT setval($1, GREATEST(1, (SELECT COALESCE(max(${s.column_name}), 0) FROM ${s.table_name})))`, [s.seq]);
    }
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
  return performance.now() - started;
}

// ---- the measurements ----

/** A load case against one node: autocannon options with every answer checked. */
type Case = (node: Node, connections: number, seed: number, bad: { n: number }) => Record<string, unknown>;

const JSON_HEADERS = { 'content-type': 'application/json' };

const CASES: Record<string, Case> = {
  'GET /verify, repeated hash (cache)': (node, connections, _seed, bad) => ({
    url: `${node.url}${S}/verify?hash=${storedHash(7)}`, connections, ...varied(() => ({}), (b) => b.includes('"count":1'), bad),
  }),
  'GET /verify, random stored hash': (node, connections, seed, bad) => {
    const next = xorshift(seed);
    return { url: `${node.url}${S}/verify`, connections, ...varied(() => ({ path: `${S}/verify?hash=${storedHash((next() >>> 0) % STORED)}` }), (b) => b.includes('"count":1'), bad) };
  },
  'POST /verify-fuzzy, random query': (node, connections, seed, bad) => {
    const q = xorshift(seed);
    return {
      url: `${node.url}${S}/verify-fuzzy`, method: 'POST', headers: JSON_HEADERS, connections,
      ...varied(() => {
        const h = Array.from({ length: 8 }, () => q() & 255);
        return { body: JSON.stringify({ bands: h.map((x) => [x]), hash_value: h }) };
      }, (b) => b.includes('"signatures"'), bad),
    };
  },
  'POST /sign': (node, connections, _seed, bad) => ({
    url: `${node.url}${S}/sign`, method: 'POST', headers: { ...JSON_HEADERS, authorization: `Bearer ${node.token}` }, connections,
    ...varied(() => ({ body: JSON.stringify({ file_hash: hex(), ai_generation: 'none' }) }), (b) => b.includes('"action_hash"'), bad),
  }),
};

/** Throughput of a case on each set of nodes (each set's runs in parallel, connections split), in alternating rounds. */
async function rounds(name: string, sets: Node[][]): Promise<number[][]> {
  const out: number[][] = sets.map(() => []);
  const bad = { n: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which set goes first: the machine's speed drifts between runs
    const order = r % 2 === 0 ? sets.map((_, i) => i) : sets.map((_, i) => sets.length - 1 - i);
    for (const i of order) {
      const results = await Promise.all(sets[i].map((node, k) => load(CASES[name](node, CONNECTIONS / sets[i].length, 1000 * r + 10 * i + k, bad))));
      for (const res of results) if (res.non2xx > 0 || res.errors > 0) throw new Error(`${name}: ${res.non2xx} non-2xx, ${res.errors} errors`);
      out[i].push(results.reduce((sum, res) => sum + rps(res), 0));
    }
  }
  if (bad.n > 0) throw new Error(`${name}: ${bad.n} answers without the expected content`);
  return out;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
/** The median over rounds of set 1's throughput over set 0's. */
const medianRatio = (r: number[][]) => median(r[1].map((x, i) => x / r[0][i]));

/** Sign a new fingerprint on A, poll B's verify-fuzzy until it answers it: the delays in ms. */
async function signToMatch(a: Node, b: Node, token: string): Promise<number[]> {
  const delays: number[] = [];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  for (let i = 0; i < DELAY_SAMPLES; i++) {
    const h = [...randomBytes(8)];
    const fingerprint = { hash_type: 'ImagePHash', hash_value: h, bands: h.map((x) => [x]) };
    const fileHash = hex();
    const r = await fetch(`${a.url}${S}/sign`, { method: 'POST', headers, body: JSON.stringify({ file_hash: fileHash, perceptual_hash: fingerprint }) });
    if (r.status !== 200) throw new Error(`sign on A: ${r.status} ${await r.text()}`);
    const committed = performance.now(); // the sign's answer: its transaction has committed
    for (;;) {
      // the reduced shape has no action_hash: the file hash says which
      const m = await fetch(`${b.url}${S}/verify-fuzzy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bands: fingerprint.bands, hash_value: h }) });
      if ((await m.text()).includes(fileHash)) break;
      if (performance.now() - committed > 10_000) throw new Error('no match on B within 10 s');
    }
    delays.push(performance.now() - committed);
  }
  return delays.sort((x, y) => x - y);
}

const pctl = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const rps = (r: LoadResult) => r.requests.average;

async function main(): Promise<void> {
  if (!existsSync(CLI) || !existsSync(join(ROOT, 'server/dist'))) throw new Error('run npm run build:ts first');
  if (!existsSync(join(SQLITE_DIR, 'ready'))) {
    throw new Error(`${SQLITE_DIR} is missing: run MATCH_SERVER_STORED=${STORED} node --import tsx bench/matching-server.bench.ts once (it builds it)`);
  }
  const work = mkdtempSync(join(tmpdir(), 'provenant-cluster-bench-'));
  const postgres = await startPostgres();
  const redis = await startRedis();
  const nodes: Node[] = [];
  const line = (name: string, a: string, b: string, ratio: string) => console.log(`${name.padEnd(40)} ${a.padEnd(24)} ${b.padEnd(12)} ${ratio}`);
  console.log(`cluster bench: ${STORED} stored image signatures, ${ROUNDS} alternating rounds of ${DURATION} s, ${CONNECTIONS} connections, 2 workers per node; nodes, databases and autocannon share 2 cores (load average now ${loadavg()[0].toFixed(1)})`);
  try {
    // SQLite: a copy of the database (this run's signs must not grow the shared one)
    const sqliteDir = join(work, 'sqlite');
    cpSync(SQLITE_DIR, sqliteDir, { recursive: true });
    const sqliteToken = signer({}, ['--data-dir', sqliteDir]);
    // PostgreSQL: migrated by a first node's start, then the same rows copied in
    const secrets = join(work, 'secrets');
    const env = { PROVENANT_DATABASE_URL: postgres.url, PROVENANT_REDIS_URL: redis.url, PROVENANT_SECRETS_DIR: secrets };
    await stopNode(await startNode(env, join(work, 'migrate')));
    const copyMs = await copyIntoPostgres(postgres.url, join(SQLITE_DIR, 'provenant.db'));
    console.log(`copied into PostgreSQL (COPY) in ${(copyMs / 1000).toFixed(1)} s`);
    const pgToken = signer(env, ['--data-dir', join(work, 'admin')]);

    const onSqlite = await startNode({}, sqliteDir);
    onSqlite.token = sqliteToken;
    nodes.push(onSqlite);
    const a = await startNode(env, join(work, 'node-a'));
    a.token = pgToken;
    nodes.push(a);
    console.log(`node start with the index load: SQLite ${(onSqlite.startMs / 1000).toFixed(1)} s, PostgreSQL ${(a.startMs / 1000).toFixed(1)} s`);
    line('', 'SQLite (median req/s)', 'PostgreSQL', 'PostgreSQL / SQLite (median of rounds)');
    for (const name of Object.keys(CASES)) {
      const r = await rounds(name, [[onSqlite], [a]]);
      line(name, median(r[0]).toFixed(0), median(r[1]).toFixed(0), `${medianRatio(r).toFixed(2)} (rounds ${r[1].map((x, i) => (x / r[0][i]).toFixed(2)).join(' ')})`);
    }
    await stopNode(onSqlite);

    const b = await startNode(env, join(work, 'node-b')); // a new node while A runs: its catch-up
    b.token = pgToken;
    nodes.push(b);
    console.log(`a new node's catch-up (start to index ready, ${STORED} fingerprints on PostgreSQL, another node running): ${(b.startMs / 1000).toFixed(1)} s`);
    line('', 'one node (median req/s)', 'two nodes', 'two / one (median of rounds)');
    for (const name of ['GET /verify, random stored hash', 'POST /verify-fuzzy, random query', 'POST /sign']) {
      const r = await rounds(name, [[a], [a, b]]);
      line(name, median(r[0]).toFixed(0), median(r[1]).toFixed(0), `${medianRatio(r).toFixed(2)} (rounds ${r[1].map((x, i) => (x / r[0][i]).toFixed(2)).join(' ')})`);
    }
    const delays = await signToMatch(a, b, pgToken);
    console.log(`sign on A to match on B (verify-fuzzy polled), ${delays.length} samples: p50 ${pctl(delays, 50).toFixed(1)} ms, p99 ${pctl(delays, 99).toFixed(1)} ms, max ${delays[delays.length - 1].toFixed(1)} ms`);

    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    const { rows } = await client.query(`SELECT count(*)::int AS n, pg_total_relation_size('signatures') + pg_total_relation_size('signature_reduced') AS bytes FROM signatures`);
    await client.end();
    console.log(`PostgreSQL: ${rows[0].n} signatures in ${(Number(rows[0].bytes) / 2 ** 20).toFixed(0)} MiB with their reduced rows and indexes (${(Number(rows[0].bytes) / rows[0].n).toFixed(0)} B each)`);
    console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(1)).join(' ')} (2 cores)`);
  } finally {
    await Promise.all(nodes.map(stopNode));
    await redis.stop();
    await postgres.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
