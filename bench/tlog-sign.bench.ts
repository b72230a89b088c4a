// The transparency log's cost on writes (issue 27): POST /sign and POST /sign-batch (100
// files) with the log on against the same server with it off (ComposeOptions
// transparencyLog: false, benches only: no entry appended in the event's transaction;
// the checkpointer still runs, over an empty log), on SQLite and, when its binaries are
// here, PostgreSQL (test/helpers/postgres.ts: fsync and synchronous_commit off). The
// compiled server as `npm start` runs it, rate limits off, autocannon 16 connections;
// after one unrecorded run (JIT warm-up), each case runs on, off, on, off, on, off
// (ROUNDS=3; fresh data each time) and keeps the best run of each side, so a burst of
// load from elsewhere on the machine hurts both alike. Every
// answer must be 200. Goal: on >= 0.9x off.
// Run after `npm run build:ts`: node --import tsx bench/tlog-sign.bench.ts   (DURATION=s, ROUNDS=n, ENGINES=sqlite,postgres)
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { compiled } from './support.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../test/helpers/postgres.js';

const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createServerCell } = await compiled<typeof import('../server/src/domain/cells.js')>('server/src/domain/cells.js');
const { issueSessionToken } = await compiled<typeof import('../server/src/domain/tokens.js')>('server/src/domain/tokens.js');
const { createUserAccount } = await compiled<typeof import('../server/src/domain/accounts.js')>('server/src/domain/accounts.js');

interface AutocannonResult { errors: number; non2xx: number; requests: { average: number }; latency: { p99: number } }
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => PromiseLike<AutocannonResult>;
const DURATION = Number(process.env.DURATION ?? 5);
const ENGINES = (process.env.ENGINES ?? 'sqlite,postgres').split(',');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const hex = () => randomBytes(32).toString('hex');

type Result = { rps: number; p99: number };

async function load(name: string, url: string, headers: Record<string, string>, body: () => string): Promise<Result> {
  const r = await autocannon({
    url, connections: 16, duration: DURATION, method: 'POST', headers,
    requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }) }],
  });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} not 200`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

/** One server (fresh data), log on or off: sign then sign-batch. */
async function once(engine: string, log: boolean, pg: TestPostgres | null): Promise<{ sign: Result; batch: Result; entries: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-bench-'));
  const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent' };
  if (engine === 'postgres') env.PROVENANT_DATABASE_URL = await pg!.createDatabase();
  const server = await startServer(loadConfig(env), { transparencyLog: log });
  try {
    const deps = server.deps;
    const user = await createUserAccount(deps, { email: 'bench@example.com', password: 'bench password 1234' });
    await createServerCell(deps, user.id);
    const org = await deps.store.accounts.createOrg({ id: randomUUID(), name: 'Bench', ownerId: user.id, tier: 'enterprise', customLimit: null });
    const app = await deps.store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: user.id, name: 'Bench', redirectUris: [], scopes: [] });
    const auth = { authorization: `Bearer ${await issueSessionToken(deps, user.id, app.id)}`, 'content-type': 'application/json' };
    const S = `${server.url}/api/v1/sign-it`;
    const sign = await load('POST /sign', `${S}/sign`, auth, () => JSON.stringify({ file_hash: hex(), intent: 'authorship' }));
    const batch = await load('POST /sign-batch', `${S}/sign-batch`, auth, () => JSON.stringify({ files: Array.from({ length: 100 }, () => ({ file_hash: hex() })), shared_metadata: { ai_generation: 'none' } }));
    const entries = await deps.transparencyLog.store.size();
    // the switch does what it says: entries with the log on (one per record: the tests
    // check that; PostgreSQL's seqs may skip, so the last seq bounds it here), none off
    const lastSeq = await deps.store.signatures.lastSeq();
    if (log ? entries === 0 || entries > lastSeq : entries !== 0) throw new Error(`log ${log ? 'on' : 'off'}: ${entries} entries, last seq ${lastSeq}`);
    return { sign, batch, entries };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const best = (a: Result, b: Result) => (a.rps >= b.rps ? a : b);
const fmt = (r: Result, per = 1) => `${Math.round(r.rps * per)} signs/s, p99 ${r.p99} ms`;

console.log(`transparency log on vs off, ${DURATION} s per run, 16 connections, best of ${ROUNDS} alternating runs each after one unrecorded (load average ${loadavg()[0].toFixed(1)})`);
console.log('| engine | case | log on | log off | on / off |\n|---|---|---|---|---|');
for (const engine of ENGINES) {
  let pg: TestPostgres | null = null;
  if (engine === 'postgres') {
    const why = postgresUnavailable();
    if (why !== null) {
      console.log(`| postgres | skipped: ${why} | | | |`);
      continue;
    }
    pg = await startPostgres();
  }
  try {
    const runs = { on: [] as Awaited<ReturnType<typeof once>>[], off: [] as Awaited<ReturnType<typeof once>>[] };
    // a first run unrecorded: this process's JIT warms up on it, not on the first side measured
    await once(engine, true, pg);
    for (let i = 0; i < ROUNDS; i++) {
      runs.on.push(await once(engine, true, pg));
      runs.off.push(await once(engine, false, pg));
    }
    for (const [name, key, per] of [['POST /sign', 'sign', 1], ['POST /sign-batch (100)', 'batch', 100]] as const) {
      const on = runs.on.map((r) => r[key]).reduce(best);
      const off = runs.off.map((r) => r[key]).reduce(best);
      console.log(`| ${engine} | ${name} | ${fmt(on, per)} | ${fmt(off, per)} | ${(on.rps / off.rps).toFixed(2)}x |`);
    }
  } finally {
    await pg?.stop();
  }
}
