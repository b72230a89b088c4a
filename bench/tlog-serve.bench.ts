// Serving the transparency log (issue 27), compiled server as `npm start` runs it, rate
// limits off: GET /log/tile/0/000 (a full tile, 8 KiB, immutable, kept in memory after
// its first read) and GET /log/tile/entries/000 (its entry bundle) with autocannon,
// against a Koa hello-world in the same run (bench/support.ts), the better of a run
// before and one after each. autocannon runs in a child process (loadFromChild): in this
// process it charged its own parsing of each 8 KiB answer to the tile (a fifth of the
// process's time, by profile), not to the tiny hello world. Goal: a full tile at >= 50 %
// of the hello world's rate.
// Run after `npm run build:ts`: node --import tsx bench/tlog-serve.bench.ts   (DURATION=s)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { compiled, helloWorld, loadFromChild } from './support.js';

const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createServerCell } = await compiled<typeof import('../server/src/domain/cells.js')>('server/src/domain/cells.js');

const DURATION = Number(process.env.DURATION ?? 5);

async function load(name: string, url: string): Promise<{ rps: number; p99: number }> {
  const r = await loadFromChild(url, 16, DURATION);
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} not 200`);
  return r;
}

const dataDir = mkdtempSync(join(tmpdir(), 'provenant-bench-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent' });
const server = await startServer(config);
const hello = await helloWorld();
try {
  // 300 records: tile 0 full
  for (let u = 0; u < 3; u++) {
    const reg = await fetch(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `b${u}@bench.example`, password: 'bench password 1234' }) });
    const { token, user } = (await reg.json()) as { token: string; user: { id: string } };
    await createServerCell(server.deps, user.id);
    await server.deps.store.accounts.setUserTier(user.id, 'premium');
    const r = await fetch(`${server.url}/api/v1/sign-it/sign-batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ files: Array.from({ length: 100 }, () => ({ file_hash: randomBytes(32).toString('hex') })) }) });
    if (r.status !== 200) throw new Error(`sign-batch: ${r.status}`);
  }
  await server.deps.transparencyLog.checkpointer.tick();
  const before = await load('hello', hello.url);
  const tile = await load('tile', `${server.url}/log/tile/0/000`);
  const entries = await load('entries', `${server.url}/log/tile/entries/000`);
  const after = await load('hello', hello.url);
  const peer = before.rps > after.rps ? before : after;
  const row = (name: string, r: { rps: number; p99: number }) => `| ${name} | ${Math.round(r.rps)} req/s | p99 ${r.p99} ms | ${((100 * r.rps) / peer.rps).toFixed(0)} % of hello world |`;
  console.log(`| what | rate | latency | vs Koa hello world (${Math.round(peer.rps)} req/s, best of before/after) |\n|---|---|---|---|`);
  console.log(row('GET /log/tile/0/000 (8 KiB full tile)', tile));
  console.log(row('GET /log/tile/entries/000 (256 entries)', entries));
} finally {
  await hello.close();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
