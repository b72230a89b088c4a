// Sign-it load test with autocannon (rate limits off), 5 s per case, same process:
//   1. GET /verify of a signed hash (3 signatures, served from the verify cache)
//      against a Koa hello-world from the same run (target: >= 50 % of its req/s);
//   2. POST /sign: signatures per second and p99 latency;
//   3. POST /sign-batch with 100 files: signatures per second and p99 latency.
// Every response is checked (status 200, no errors) and counted inside the run.
// Run after `npm run build`: node --import tsx bench/server.bench.ts   (DURATION=seconds to change 5)
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { compiled, helloWorld } from './support.js';

// The compiled server, as `npm start` runs it (support.ts compiled()).
const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createServerCell } = await compiled<typeof import('../server/src/domain/cells.js')>('server/src/domain/cells.js');
const { issueSessionToken } = await compiled<typeof import('../server/src/domain/tokens.js')>('server/src/domain/tokens.js');
const { createUserAccount } = await compiled<typeof import('../server/src/domain/accounts.js')>('server/src/domain/accounts.js');

// autocannon ships no types; the few fields used here.
interface AutocannonResult {
  errors: number;
  non2xx: number;
  requests: { average: number };
  latency: { p99: number };
}
type Autocannon = (opts: Record<string, unknown>) => PromiseLike<AutocannonResult> & {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const DURATION = Number(process.env.DURATION ?? 5);
const CONNECTIONS = 16;
const hex = () => randomBytes(32).toString('hex');

interface Case {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: () => string;
  check?: (status: number, body: string) => boolean;
}

async function run(c: Case): Promise<{ rps: number; p99: number; ok: number; bad: number }> {
  let ok = 0;
  let bad = 0;
  const instance = autocannon({
    url: c.url,
    connections: CONNECTIONS,
    duration: DURATION,
    method: c.method ?? 'GET',
    headers: c.headers,
    requests: c.body ? [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: c.body!() }) }] : undefined,
  });
  instance.on('response', (_client, status) => {
    if (status === 200) ok += 1;
    else bad += 1;
  });
  const result = await instance;
  if (result.errors > 0 || result.non2xx > 0 || bad > 0) {
    throw new Error(`${c.name}: ${result.errors} errors, ${result.non2xx} non-2xx responses`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, ok, bad };
}

const dataDir = mkdtempSync(join(tmpdir(), 'provenant-bench-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent' });
const server = await startServer(config);
const deps = server.deps;
const S = `${server.url}/api/v1/sign-it`;
try {
  // A signer with a server-hosted cell, signing through an app of an enterprise org with
  // no limit (so the quota never blocks the run).
  const user = await createUserAccount(deps, { email: 'bench@example.com', password: 'bench password 1234' });
  await createServerCell(deps, user.id);
  const org = await deps.store.accounts.createOrg({ id: randomUUID(), name: 'Bench', ownerId: user.id, tier: 'enterprise', customLimit: null });
  const app = await deps.store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: user.id, name: 'Bench', redirectUris: [], scopes: [] });
  const token = await issueSessionToken(deps, user.id, app.id);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

  const file = hex();
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${S}/sign`, { method: 'POST', headers: auth, body: JSON.stringify({ file_hash: file, comment: `v${i}` }) });
    if (r.status !== 200) throw new Error(`setup sign: ${r.status}`);
  }
  const verifyBody = await (await fetch(`${S}/verify?hash=${file}`)).json();
  if ((verifyBody as { count: number }).count !== 3) throw new Error('setup verify: expected 3 signatures');

  // The peer runs before and after ours; the better of its two runs is the reference.
  const hello = await helloWorld();
  const peerBefore = await run({ name: 'koa hello-world', url: hello.url });
  const verify = await run({ name: 'GET /verify', url: `${S}/verify?hash=${file}` });
  const peerAfter = await run({ name: 'koa hello-world', url: hello.url });
  await hello.close();
  const peer = peerBefore.rps >= peerAfter.rps ? peerBefore : peerAfter;
  const sign = await run({ name: 'POST /sign', url: `${S}/sign`, method: 'POST', headers: auth, body: () => JSON.stringify({ file_hash: hex(), intent: 'authorship' }) });
  const batch = await run({
    name: 'POST /sign-batch',
    url: `${S}/sign-batch`,
    method: 'POST',
    headers: auth,
    body: () => JSON.stringify({ files: Array.from({ length: 100 }, () => ({ file_hash: hex() })), shared_metadata: { ai_generation: 'none' } }),
  });

  // Everything answered 200 is stored (requests still in flight when a case stops may
  // be stored without their answer being counted: at most one per connection).
  // seqs are given in commit order and never reused, and nothing is deleted: the last is the count
  const stored = await deps.store.signatures.lastSeq();
  const expected = 3 + sign.ok + batch.ok * 100;
  if (stored < expected || stored > expected + CONNECTIONS * 101) throw new Error(`stored ${stored} signatures, expected ${expected}`);

  const row = (name: string, ours: string, peerText: string, ratio: string) => console.log(`${name.padEnd(28)} ${ours.padEnd(30)} ${peerText.padEnd(26)} ${ratio}`);
  console.log(`sign-it server bench: ${DURATION} s per case, ${CONNECTIONS} connections, loopback, same process (approximate on a shared machine)`);
  row('case', 'ours', 'peer', 'ratio');
  row('GET /verify (3 signatures)', `${verify.rps.toFixed(0)} req/s, p99 ${verify.p99} ms`, `koa hello ${peer.rps.toFixed(0)} req/s`, `${((100 * verify.rps) / peer.rps).toFixed(0)} % (target >= 50 %)`);
  row('POST /sign', `${sign.rps.toFixed(0)} signs/s, p99 ${sign.p99} ms`, '-', '-');
  row('POST /sign-batch (100)', `${(batch.rps * 100).toFixed(0)} signs/s, p99 ${batch.p99} ms`, '-', `${batch.rps.toFixed(1)} batches/s`);
} finally {
  await server.close(2_000);
  rmSync(dataDir, { recursive: true, force: true });
}
