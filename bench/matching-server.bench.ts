// The matching endpoints under load, each server in a child process, autocannon in
// this one (loopback only, bounded in time):
// 1. the match index's load time at start with 1M stored fingerprints in SQLite;
// 2. POST /verify-fuzzy with 1M stored (rate limits off) beside a Koa hello-world
//    from the same run (target: >= 40 % of its req/s), and beside the same Koa sending
//    the answer's bytes from memory (what an answer of 100 records costs to send): the
//    same query repeated (served from the answer cache) and a query with no candidates
//    (the endpoint's own cost), in rounds alternating with the peers; then a random
//    query per request (index query plus records mostly fetched from SQLite);
// 3. POST /verify-file with concurrent uploads (files per second with both cores busy)
//    and a flood of large uploads (503 busy beyond the in-flight bound), with the
//    server's peak RSS.
// The server runs from dist/ (`npm run build` first), as `npm start` runs it.
// The 1M database is built once into /tmp/provenant-bench-match-v2-1000000 (reused after).
//
//   node --import tsx bench/matching-server.bench.ts
//   MATCH_SERVER_STORED=100000 node --import tsx bench/matching-server.bench.ts
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { benchChild, compiled, freshBenchDatabase, sqliteRun, stopChild, xorshift } from './support.js';

/** The parts of autocannon's result used here (the package ships no types). */
interface LoadResult {
  requests: { average: number };
  latency: { p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
type LoadOptions = Record<string, unknown>;
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: LoadOptions, cb: (err: Error | null, result: LoadResult) => void) => unknown;

const STORED = Number(process.env.MATCH_SERVER_STORED ?? 1_000_000);
const DURATION_S = Number(process.env.MATCH_SERVER_SECONDS ?? 8);
/** Rounds of (hello-world, Koa sending the answer, the repeated query, no candidates), each run ROUND_S seconds. */
const ROUNDS = 5;
const ROUND_S = Math.max(2, Math.round(DURATION_S / 2.5));
const SELF = fileURLToPath(import.meta.url);
const ROOT = join(SELF, '..', '..');

// ---- child modes ----

async function serveProvenant(dataDir: string): Promise<void> {
  // the compiled server, as `npm start` runs it (support.ts compiled())
  const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
  const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
  const started = performance.now();
  const running = await startServer(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WORKERS: '2' }),
  );
  const stats = await running.deps.matching.ready;
  console.log(JSON.stringify({ url: running.url, load: stats, startMs: Math.round(performance.now() - started), indexBytes: running.deps.matching.indexBytes() }));
  // SIGUSR2: print the event loop's delay since the last one (ms), then start over
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  process.on('SIGUSR2', () => {
    console.log(JSON.stringify({ loopDelayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 } }));
    delay.reset();
  });
}

/** A Koa hello-world; with `answerFile`, POST /answer sends that file's bytes as JSON (the transfer cost of an answer alone). */
async function serveHello(answerFile?: string): Promise<void> {
  const { default: Koa } = await import('koa');
  const { createServer } = await import('node:http');
  const answer = answerFile ? readFileSync(answerFile) : null;
  const app = new Koa();
  app.use(async (ctx) => {
    if (answer !== null && ctx.path === '/answer') {
      ctx.body = answer;
      ctx.type = 'json';
    } else ctx.body = { hello: 'world' };
  });
  const server = createServer(app.callback());
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
  });
}

// ---- the stored fingerprints ----

/** A data directory holding `n` vault-published image signatures (random hashes, one planted original). */
async function buildDataDir(n: number): Promise<{ dir: string; query: number[] }> {
  const dir = `/tmp/provenant-bench-match-v3-${n}`;
  const next = xorshift(12345);
  const query = Array.from({ length: 8 }, () => next() & 255);
  if (existsSync(join(dir, 'ready'))) return { dir, query };
  const { reducedJson } = await import('../server/src/store/reduced.js');
  const t = performance.now();
  const db = await freshBenchDatabase(dir);
  const BATCH = 20_000;
  for (let start = 0; start < n; start += BATCH) {
    const rows: string[] = [];
    for (let i = start; i < Math.min(n, start + BATCH); i++) {
      // a few planted near-duplicates of `query`, the rest random
      const h = i % 50_000 === 7 ? query.map((b, j) => (j === i % 8 ? b ^ 1 : b)) : Array.from({ length: 8 }, () => next() & 255);
      // sequential keys keep SQLite's unique indexes append-only (a much faster build)
      const key = i.toString(16).padStart(63, '0');
      const record = {
        ai_generation: 'None', comment: null, content_rights: { license: 'CCBY' }, expires_at: null,
        file_hash: `f${key}`, integrity_report: null, intent: 'Authorship',
        perceptual_hash: { bands: h.map((b) => [b]), hash_type: 'ImagePHash', hash_value: h },
        signed_at: 1_700_000_000_000 + i, signer: 'uhCAkbench', supersedes: null, tags: null,
      };
      rows.push(JSON.stringify([`a${key}`, record.file_hash, record.signed_at, JSON.stringify(record), reducedJson(record as never)]));
    }
    await sqliteRun(db, `INSERT INTO signatures (action_hash, file_hash, signer, signed_at, intent, supersedes, has_fingerprint, record,
        signature, user_id, app_id, source, published_at, pool, org_id, overage)
      SELECT value->>0, value->>1, 'uhCAkbench', value->>2, 'Authorship', NULL, 1, value->>3, 'sig', 'bench-user', NULL, 'vault',
        value->>2, 'personal', NULL, 0 FROM json_each(?)`, [`[${rows.join(',')}]`]);
    // the reduced answer text the store's insert writes beside each fingerprinted record
    await sqliteRun(db, `INSERT INTO signature_reduced (seq, signed_at, reduced)
      SELECT s.seq, s.signed_at, value->>4 FROM json_each(?) JOIN signatures s ON s.action_hash = value->>0`, [`[${rows.join(',')}]`]);
  }
  await new Promise<void>((resolve) => db.close(() => resolve()));
  mkdirSync(join(dir, 'ready'));
  console.log(`built ${n} stored signatures in ${((performance.now() - t) / 1000).toFixed(1)} s (${dir})`);
  return { dir, query };
}

// ---- the parent ----

const child = (args: string[]) => benchChild(SELF, args);

const delayText = (d: { p50: number; p99: number; max: number }) => `p50 / p99 / max ${d.p50.toFixed(2)} / ${d.p99.toFixed(2)} / ${d.max.toFixed(1)} ms`;

/** The provenant child's event-loop delay since the last call (its SIGUSR2 handler). */
function loopDelay(proc: ChildProcess): Promise<{ p50: number; p99: number; max: number }> {
  return new Promise((resolve) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      proc.stdout!.off('data', onData);
      resolve(JSON.parse(out.slice(0, nl)).loopDelayMs);
    };
    proc.stdout!.on('data', onData);
    proc.kill('SIGUSR2');
  });
}

const stop = stopChild;

/** Peak resident set (VmHWM) of a process, in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Peak resident sets (VmHWM, MB) of a process's decoder sandboxes (src/media/sandbox.ts), each still running. */
function sandboxPeakRssMb(pid: number): number[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)]).toString().split('\n')
    .filter((line) => line.includes('sandbox-child.js'))
    .map((line) => peakRssMb(Number(line.trim().split(/\s+/)[0])));
}

function load(opts: LoadOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function main(): Promise<void> {
  const { dir, query } = await buildDataDir(STORED);

  const prov = await child(['--provenant', dir]);
  console.log(`match index loaded from SQLite: ${prov.info.load.indexed} fingerprints in ${prov.info.load.ms} ms (server ready in ${prov.info.startMs} ms; index ${(prov.info.indexBytes / 2 ** 20).toFixed(0)} MiB)`);
  const fuzzyBody = JSON.stringify({ bands: query.map((b) => [b]), hash_value: query });
  // the answer is checked on every response: the planted copies come first
  const probeText = await (await fetch(`${prov.info.url}/api/v1/sign-it/verify-fuzzy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: fuzzyBody })).text();
  const probe = JSON.parse(probeText) as { count: number; signatures: { similarity: number }[] };
  if (probe.signatures[0]?.similarity !== 98) throw new Error(`unexpected verify-fuzzy answer: ${probeText.slice(0, 200)}`);

  // The peer, a Koa hello-world, and the same Koa sending this answer's bytes from
  // memory, alternate with the repeated query in ROUNDS short rounds (each server idles
  // while another is loaded): this machine's speed drifts by up to half between runs a
  // minute apart, so each round's ratio is taken and the median reported.
  const answerFile = join(dir, 'answer.json');
  writeFileSync(answerFile, probeText);
  const hello = await child(['--hello', answerFile]);
  const post = { method: 'POST', connections: 16, duration: ROUND_S, body: '{}', headers: { 'content-type': 'application/json' } };
  // warm-up (JIT, connections), not counted
  for (const url of [hello.info.url, `${hello.info.url}/answer`]) await load({ ...post, url, duration: 2 });
  const fuzzyUrl = `${prov.info.url}/api/v1/sign-it/verify-fuzzy`;
  await load({ ...post, url: fuzzyUrl, body: fuzzyBody, duration: 2 });
  // Every response of every contender is checked, so the client (on the same two
  // cores) does the same work per response for each: counted when it lacks its text.
  const wrong = new Map<string, number>();
  const expecting = (name: string, text: string) => ({
    setupClient: (client: { on(event: 'body', fn: (b: Buffer) => void): void }) =>
      client.on('body', (b) => {
        if (!b.includes(text)) wrong.set(name, (wrong.get(name) ?? 0) + 1);
      }),
  });
  const rounds: { hello: LoadResult; answer: LoadResult; fuzzy: LoadResult; none: LoadResult }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    rounds.push({
      hello: await load({ ...post, url: hello.info.url, ...expecting('hello-world', '"hello":"world"') }),
      answer: await load({ ...post, url: `${hello.info.url}/answer`, ...expecting('Koa sending the answer', '"similarity":98') }),
      fuzzy: await load({ ...post, url: fuzzyUrl, body: fuzzyBody, ...expecting('the repeated query', '"similarity":98') }),
      // no candidates (a band layout of no hash type): the endpoint's own cost, no index work
      none: await load({
        ...post, url: fuzzyUrl, body: JSON.stringify({ bands: Array.from({ length: 8 }, () => [1, 2]) }), ...expecting('no candidates', '"count":0'),
      }),
    });
  }
  await stop(hello.proc);
  if (wrong.size > 0) throw new Error(`wrong answers: ${[...wrong].map(([name, n]) => `${name} ${n}`).join(', ')}`);

  // Varied queries (a new random hash per request): each answer's ~100 records are
  // mostly not in the server's row cache, so this adds their fetch from SQLite. After
  // a warm-up of 2 s with other random queries (JIT, the reduced table's pages), not counted.
  const randomQueries = (seed: number) => {
    const next = xorshift(seed);
    return [{
      setupRequest: (req: Record<string, unknown>) => {
        const h = Array.from({ length: 8 }, () => next() & 255);
        return { ...req, body: JSON.stringify({ bands: h.map((b) => [b]), hash_value: h }) };
      },
    }];
  };
  await load({ url: fuzzyUrl, method: 'POST', connections: 16, duration: 2, headers: { 'content-type': 'application/json' }, requests: randomQueries(778) });
  let empty = 0;
  await loopDelay(prov.proc); // start the event-loop delay histogram afresh
  const varied = await load({
    url: fuzzyUrl, method: 'POST', connections: 16, duration: DURATION_S,
    headers: { 'content-type': 'application/json' },
    requests: randomQueries(777),
    setupClient: (client: { on(event: 'body', fn: (b: Buffer) => void): void }) =>
      client.on('body', (b) => {
        if (!b.includes('"count":100')) empty++;
      }),
  });
  const variedDelay = await loopDelay(prov.proc);

  const image = readFileSync(join(ROOT, 'test', 'fixtures', 'media', 'fruits.jpg'));
  await loopDelay(prov.proc);
  const files = await load({
    url: `${prov.info.url}/api/v1/sign-it/verify-file`, method: 'POST', connections: 4, duration: DURATION_S, body: image,
    headers: { 'content-type': 'application/octet-stream' },
  });
  const rssAfterFiles = peakRssMb(prov.proc.pid!);
  const sandboxRss = sandboxPeakRssMb(prov.proc.pid!);
  const filesDelay = await loopDelay(prov.proc);
  const big = randomBytes(20 << 20);
  const flood = await load({
    url: `${prov.info.url}/api/v1/sign-it/verify-file`, method: 'POST', connections: 32, duration: Math.min(DURATION_S, 6), body: big,
    headers: { 'content-type': 'application/octet-stream' },
  });
  const rssPeak = peakRssMb(prov.proc.pid!);
  const floodDelay = await loopDelay(prov.proc);
  await stop(prov.proc);

  const rps = (r: LoadResult) => r.requests.average;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const helloRps = median(rounds.map((r) => rps(r.hello)));
  const ratio = (pick: (r: (typeof rounds)[number]) => LoadResult) => median(rounds.map((r) => rps(pick(r)) / rps(r.hello)));
  const perRound = (pick: (r: (typeof rounds)[number]) => LoadResult) => rounds.map((r) => `${((100 * rps(pick(r))) / rps(r.hello)).toFixed(0)}`).join(' / ');
  console.log(`\nstored fingerprints: ${STORED}, ${ROUNDS} rounds of ${ROUND_S} s for the repeated query and its peers, ${DURATION_S} s per other run, 2 workers`);
  // the rows after the rounds are compared with the rounds' median hello-world
  const pct = (r: LoadResult) => `${((100 * rps(r)) / helloRps).toFixed(0)} % of hello-world`;
  console.log(`Koa hello-world (the peer): ${rounds.map((r) => rps(r.hello).toFixed(0)).join(' / ')} req/s in the ${ROUNDS} rounds (median ${helloRps.toFixed(0)})`);
  console.log(`the same Koa sending the ${probeText.length}-byte answer from memory: ${(100 * ratio((r) => r.answer)).toFixed(0)} % of hello-world (median; rounds ${perRound((r) => r.answer)} %)`);
  console.log(`POST /verify-fuzzy, the same query repeated (${probe.count} matches per answer; from the answer cache): ${(100 * ratio((r) => r.fuzzy)).toFixed(0)} % of hello-world (median; rounds ${perRound((r) => r.fuzzy)} %), ${median(rounds.map((r) => rps(r.fuzzy))).toFixed(0)} req/s, p99 ${median(rounds.map((r) => r.fuzzy.latency.p99))} ms; ${(100 * median(rounds.map((r) => rps(r.fuzzy) / rps(r.answer)))).toFixed(0)} % of the Koa sending the answer`);
  console.log(`POST /verify-fuzzy, a random query per request (${varied['2xx']} answers, ${empty} with fewer than 100 matches) ${rps(varied).toFixed(0)} req/s (p99 ${varied.latency.p99} ms) = ${pct(varied)}; the server's event-loop delay meanwhile ${delayText(variedDelay)}`);
  console.log(`POST /verify-fuzzy, no candidates (the endpoint without index work): ${(100 * ratio((r) => r.none)).toFixed(0)} % of hello-world (median; rounds ${perRound((r) => r.none)} %), ${median(rounds.map((r) => rps(r.none))).toFixed(0)} req/s, p99 ${median(rounds.map((r) => r.none.latency.p99))} ms`);
  console.log(`POST /verify-file fruits.jpg (82 KB), 4 concurrent: ${rps(files).toFixed(1)} files/s, ${files['2xx']} ok, ${files.non2xx} non-2xx; peak RSS ${rssAfterFiles.toFixed(0)} MB, and ${sandboxRss.map((mb) => mb.toFixed(0)).join(' + ')} MB in ${sandboxRss.length} decoder sandboxes; event-loop delay ${delayText(filesDelay)}`);
  console.log(`POST /verify-file flood: 32 connections x 20 MB: ${flood['2xx']} answered 200, ${flood.non2xx} non-2xx (503 busy beyond ${2 * 2} in flight), ${flood.errors} socket errors; peak RSS ${rssPeak.toFixed(0)} MB; event-loop delay ${delayText(floodDelay)}`);
}

const mode = process.argv[2];
if (mode === '--provenant') await serveProvenant(process.argv[3]);
else if (mode === '--hello') await serveHello(process.argv[3]);
else await main();
