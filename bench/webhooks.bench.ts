// Webhooks (issue 18), the server as `npm start` runs it (compiled), rate limits off,
// PROVENANT_WEBHOOK_ALLOW_PRIVATE=1 so it may reach an HTTPS receiver on loopback (its
// own CA, passed in process). The receiver checks every signature (verifyWebhookSignature).
//   1. Deliveries per second: EVENTS sign.created events (made by POST /sign-batch
//      through an app token) drained to 1 webhook (one request at a time, by design)
//      and to 16 webhooks; the peer is a plain https.request loop from this process to
//      the same receiver, a new TLS connection per request as the dispatcher makes
//      (sequential, and 16 at a time), unsigned and without a database.
//   2. The latency a subscription adds to POST /sign: sequential signs through an app
//      with no webhook against an app whose webhook receives every sign, in
//      alternating blocks; medians and p95, ratio with/without.
// Run after `npm run build`: node --import tsx bench/webhooks.bench.ts   (EVENTS=n, SIGNS=n per kind)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { compiled } from './support.js';
import { makeTestCa, Receiver } from '../test/webhooks/fixtures.js';

const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createServerCell } = await compiled<typeof import('../server/src/domain/cells.js')>('server/src/domain/cells.js');
const { issueSessionToken } = await compiled<typeof import('../server/src/domain/tokens.js')>('server/src/domain/tokens.js');
const { createUserAccount } = await compiled<typeof import('../server/src/domain/accounts.js')>('server/src/domain/accounts.js');

const EVENTS = Number(process.env.EVENTS ?? 1000);
const SIGNS = Number(process.env.SIGNS ?? 300);
const WIDE = 16;
const hex = () => randomBytes(32).toString('hex');
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ca = makeTestCa();
const receiver = await Receiver.start(ca);
const dataDir = mkdtempSync(join(tmpdir(), 'provenant-bench-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1' });
const server = await startServer(config, { webhookCa: ca.caPem });
const deps = server.deps;

async function call(method: string, path: string, token: string, body?: unknown): Promise<any> {
  const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await r.json();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** An app of an enterprise developer with a server-hosted cell; its token signs through the app. */
async function app(name: string) {
  const user = await createUserAccount(deps, { email: `${name}@bench.example`, password: 'bench password 1234' });
  await deps.store.accounts.setUserTier(user.id, 'premium_plus');
  const orgId = (await deps.store.accounts.personalOrg(user.id))!.id;
  await deps.store.accounts.setOrgTier(orgId, 'enterprise', 1_000_000);
  await createServerCell(deps, user.id);
  const session = await issueSessionToken(deps, user.id, null);
  const appId = (await call('POST', '/api/v1/developer/apps', session, { name, org_id: orgId })).client_id as string;
  return { session, appId, token: await issueSessionToken(deps, user.id, appId) };
}

async function subscribe(a: { session: string; appId: string }, path: string): Promise<void> {
  const created = await call('POST', `/api/v1/webhooks?app_id=${a.appId}`, a.session, { url: receiver.url(path), events: ['sign.created'] });
  receiver.secrets.set(path, created.webhook.secret);
}

/** Makes `n` sign.created events (batches of 100), then the deliveries/s from the first delivery to the last. */
async function drain(a: { token: string }, paths: string[], n: number): Promise<number> {
  const before = receiver.received.length;
  for (let i = 0; i < n; i += 100) {
    await call('POST', '/api/v1/sign-it/sign-batch', a.token, { files: Array.from({ length: Math.min(100, n - i) }, () => ({ file_hash: hex() })) });
  }
  const expected = n * paths.length;
  while (receiver.received.length - before < expected) await wait(20);
  await deps.webhooks.idle();
  const got = receiver.received.slice(before);
  if (got.length !== expected) throw new Error(`${got.length} deliveries for ${expected}`);
  if (!got.every((d) => d.signatureValid === true)) throw new Error('a delivery did not verify');
  return expected / ((got[got.length - 1].at - got[0].at) / 1000);
}

/** The peer: `n` POSTs of a sign.created-sized body, a new TLS connection each, `parallel` at a time. */
async function plainPosts(n: number, parallel: number): Promise<number> {
  const secureContext = createSecureContext({ ca: [...rootCertificates, ca.caPem] }); // made once, as the dispatcher does
  const body = Buffer.from(JSON.stringify({ event: 'sign.created', timestamp: Date.now(), file_hash: hex(), action_hash: hex(), signer: `uhCAk${hex()}`, signed_at: Date.now() }));
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: receiver.port, path: '/peer', method: 'POST', agent: false, ...{ secureContext }, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`peer: ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next++ < n) await one();
  }));
  return n / ((performance.now() - t0) / 1000);
}

try {
  // 1. deliveries per second
  const narrow = await app('narrow');
  await subscribe(narrow, '/narrow');
  await drain(narrow, ['/narrow'], 100); // warm-up
  const oneHook = await drain(narrow, ['/narrow'], EVENTS);
  const peerSerial = await plainPosts(EVENTS, 1);

  const wide = await app('wide');
  const widePaths = Array.from({ length: WIDE }, (_, i) => `/wide-${i}`);
  for (const p of widePaths) await subscribe(wide, p);
  const wideEvents = Math.max(50, Math.round(EVENTS / WIDE) * 2);
  const manyHooks = await drain(wide, widePaths, wideEvents);
  const peerParallel = await plainPosts(wideEvents * WIDE, WIDE);

  // 2. POST /sign with and without a subscription, alternating blocks
  const quiet = await app('quiet');
  const hooked = await app('hooked');
  await subscribe(hooked, '/hooked');
  const times: Record<'without' | 'with', number[]> = { without: [], with: [] };
  const signOnce = async (token: string) => {
    const t0 = performance.now();
    await call('POST', '/api/v1/sign-it/sign', token, { file_hash: hex() });
    return performance.now() - t0;
  };
  for (let i = 0; i < 50; i++) await signOnce(i % 2 ? quiet.token : hooked.token); // warm-up
  const BLOCK = 25;
  for (let done = 0; done < SIGNS; done += BLOCK) {
    for (const kind of done % (2 * BLOCK) ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
      for (let i = 0; i < BLOCK; i++) times[kind].push(await signOnce(kind === 'with' ? hooked.token : quiet.token));
    }
  }
  await deps.webhooks.idle();
  if (receiver.at('/hooked').length < SIGNS) throw new Error('not every hooked sign was delivered');

  const f = (x: number) => x.toFixed(2);
  console.log(`deliveries/s, 1 webhook (serial by design): ${oneHook.toFixed(0)}   peer (plain https.request, new TLS each, serial): ${peerSerial.toFixed(0)}   ratio ${f(oneHook / peerSerial)}`);
  console.log(`deliveries/s, ${WIDE} webhooks:              ${manyHooks.toFixed(0)}   peer (${WIDE} at a time):                         ${peerParallel.toFixed(0)}   ratio ${f(manyHooks / peerParallel)}`);
  const w = times.with;
  const wo = times.without;
  console.log(`POST /sign latency, ms: without a webhook p50 ${f(quantile(wo, 0.5))} p95 ${f(quantile(wo, 0.95))}; with one p50 ${f(quantile(w, 0.5))} p95 ${f(quantile(w, 0.95))}; ratio with/without p50 ${f(quantile(w, 0.5) / quantile(wo, 0.5))} p95 ${f(quantile(w, 0.95) / quantile(wo, 0.95))}  (${SIGNS} each)`);
} finally {
  await server.close(2_000);
  await receiver.close();
  ca.remove();
  rmSync(dataDir, { recursive: true, force: true });
}
