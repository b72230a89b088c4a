// Public surfaces (issue 19), compiled server as `npm start` runs it, rate limits off:
//   1. POST /contact for an existing opted-in signer against an unknown signer: the
//      response-time distributions (median, p95, p99) must be indistinguishable, since
//      the relay answers alike and decides nothing on the request path. Sequential
//      requests on one keep-alive connection, the two kinds interleaved (so drift hits
//      both alike), the opted-in ones really delivered into the outbox meanwhile;
//   2. GET /content-rights of a file with 3 signers, warm cache, with autocannon against
//      a Koa hello-world from the same run (the better of a run before and one after).
// Run after `npm run build`: node --import tsx bench/public.bench.ts   (DURATION=s, CONTACTS=n per kind)
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { compiled, helloWorld } from './support.js';

const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createServerCell } = await compiled<typeof import('../server/src/domain/cells.js')>('server/src/domain/cells.js');
const { issueSessionToken } = await compiled<typeof import('../server/src/domain/tokens.js')>('server/src/domain/tokens.js');
const { createUserAccount } = await compiled<typeof import('../server/src/domain/accounts.js')>('server/src/domain/accounts.js');
const { agentKeyFromPublicKey } = await import('provenant');

interface AutocannonResult {
  errors: number;
  non2xx: number;
  requests: { average: number };
  latency: { p99: number };
}
type Autocannon = (opts: Record<string, unknown>) => PromiseLike<AutocannonResult> & {
  on(event: 'response', fn: (client: unknown, status: number) => void): void;
};
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const DURATION = Number(process.env.DURATION ?? 5);
const CONTACTS = Number(process.env.CONTACTS ?? 2000);
const CONNECTIONS = 16;
const hex = () => randomBytes(32).toString('hex');

async function load(name: string, url: string): Promise<{ rps: number; p99: number }> {
  let bad = 0;
  const instance = autocannon({ url, connections: CONNECTIONS, duration: DURATION });
  instance.on('response', (_c, status) => {
    if (status !== 200) bad += 1;
  });
  const r = await instance;
  if (r.errors > 0 || r.non2xx > 0 || bad > 0) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx + bad} not 200`);
  return { rps: r.requests.average, p99: r.latency.p99 };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Mann-Whitney U's z for "the two samples come from one distribution" (|z| < 2: no difference at about 95 %). */
function mannWhitneyZ(a: number[], b: number[]): number {
  const all = [...a.map((v) => [v, 0] as const), ...b.map((v) => [v, 1] as const)].sort((x, y) => x[0] - y[0]);
  let rankA = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j < all.length && all[j][0] === all[i][0]) j++;
    const rank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (all[k][1] === 0) rankA += rank;
    i = j;
  }
  const u = rankA - (a.length * (a.length + 1)) / 2;
  const mean = (a.length * b.length) / 2;
  const sd = Math.sqrt((a.length * b.length * (a.length + b.length + 1)) / 12);
  return (u - mean) / sd;
}

const dataDir = mkdtempSync(join(tmpdir(), 'provenant-bench-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent' });
const server = await startServer(config);
const deps = server.deps;
const S = `${server.url}/api/v1/sign-it`;
try {
  // three signers of one file, one of them opted in to contact
  const signers: { agentKey: string; token: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const user = await createUserAccount(deps, { email: `bench${i}@signer.example`, password: 'bench password 1234' });
    await deps.store.accounts.setUserTier(user.id, 'premium_plus');
    const cell = await createServerCell(deps, user.id);
    signers.push({ agentKey: cell.agentKey, token: await issueSessionToken(deps, user.id, null) });
  }
  const file = hex();
  const rights = [
    { license: 'cc-by', ai_training: 'allowed', contact_preference: 'allow_contact_requests' },
    { license: 'cc-by-nc', commercial_licensing: 'contact_for_terms' },
    { license: 'cc0', ai_training: 'not_allowed' },
  ];
  for (const [i, s] of signers.entries()) {
    const r = await fetch(`${S}/sign`, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ file_hash: file, content_rights: rights[i] }) });
    if (r.status !== 200) throw new Error(`setup sign: ${r.status}`);
  }

  // 1. /contact, opted-in signer vs unknown signer, interleaved
  const unknown = agentKeyFromPublicKey(randomBytes(32));
  const body = (signer: string, i: number) =>
    JSON.stringify({ signer_agent_key: signer, file_hash: file, sender_name: 'Bench Sender', sender_email: 'sender@bench.example', message: `bench message ${i}`, purpose: 'licensing' });
  const times: { known: number[]; unknown: number[] } = { known: [], unknown: [] };
  const one = async (kind: 'known' | 'unknown', i: number) => {
    const t0 = performance.now();
    const r = await fetch(`${S}/contact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(kind === 'known' ? signers[0].agentKey : unknown, i) });
    await r.arrayBuffer();
    const ms = performance.now() - t0;
    if (r.status !== 200) throw new Error(`contact: ${r.status}`);
    return ms;
  };
  for (let i = 0; i < 200; i++) await one(i % 2 ? 'known' : 'unknown', i); // warm-up, not counted
  for (let i = 0; i < CONTACTS; i++) {
    // alternate which kind goes first, so neither always follows the other's background work
    const order: ('known' | 'unknown')[] = i % 2 ? ['known', 'unknown'] : ['unknown', 'known'];
    for (const kind of order) times[kind].push(await one(kind, i));
  }
  await deps.contactRelay.idle();
  const delivered = readdirSync(join(dataDir, 'outbox')).filter((n) => n.endsWith('.eml')).length;
  if (delivered < CONTACTS) throw new Error(`only ${delivered} of the ${CONTACTS + 100} opted-in messages reached the outbox`);
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p50: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99) };
  };
  const k = stats(times.known);
  const u = stats(times.unknown);
  const z = mannWhitneyZ(times.known, times.unknown);

  // 2. /content-rights, warm cache, against Koa hello-world
  const rightsUrl = `${S}/content-rights?hash=${file}`;
  const answer = (await (await fetch(rightsUrl)).json()) as { signer_count: number; rights: { license: string } };
  if (answer.signer_count !== 3 || answer.rights.license !== 'CCBYNC') throw new Error(`setup content-rights: ${JSON.stringify(answer)}`);
  const hello = await helloWorld();
  const peerBefore = await load('koa hello-world', hello.url);
  const ours = await load('GET /content-rights', rightsUrl);
  const peerAfter = await load('koa hello-world', hello.url);
  await hello.close();
  const peer = peerBefore.rps >= peerAfter.rps ? peerBefore : peerAfter;

  const ms = (v: number) => `${v.toFixed(3)} ms`;
  console.log(`public surfaces bench: /contact ${CONTACTS} requests per kind, sequential, interleaved; content-rights ${DURATION} s, ${CONNECTIONS} connections (approximate on a shared machine)`);
  console.log(`POST /contact, opted-in signer:  p50 ${ms(k.p50)}  p95 ${ms(k.p95)}  p99 ${ms(k.p99)}  (${delivered} messages delivered to the outbox)`);
  console.log(`POST /contact, unknown signer:   p50 ${ms(u.p50)}  p95 ${ms(u.p95)}  p99 ${ms(u.p99)}`);
  console.log(`  ratio opted-in / unknown: p50 ${(k.p50 / u.p50).toFixed(3)}, p95 ${(k.p95 / u.p95).toFixed(3)}; Mann-Whitney z ${z.toFixed(2)} (|z| < 2: indistinguishable at ~95 %)`);
  console.log(`GET /content-rights (warm):      ${ours.rps.toFixed(0)} req/s, p99 ${ours.p99} ms; koa hello-world ${peer.rps.toFixed(0)} req/s; ${((100 * ours.rps) / peer.rps).toFixed(0)} %`);
} finally {
  await server.close(2_000);
  rmSync(dataDir, { recursive: true, force: true });
}
