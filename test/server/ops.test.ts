// Health, metrics, the app-level middleware (request id, access log, error renderer,
// body limits) and graceful shutdown.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { accessLog, renderErrors, requestId } from '../../server/src/middleware.js';
import { createLogger } from '../../server/src/log.js';
import { Metrics } from '../../server/src/metrics.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const test = suite('ops');
let server: TestServer;

const METRICS_TOKEN = 'metrics-test-token-0123456789';
const metricsAuth = { authorization: `Bearer ${METRICS_TOKEN}` };

test.before(async () => {
  server = await startTestServer({ PROVENANT_METRICS_TOKEN: METRICS_TOKEN });
});
test.after(async () => {
  await server.close();
});

/** Prometheus text format lines `name{labels} value`, parsed. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `malformed sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of m![2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[k] = v;
    out.push({ name: m![1], labels, value: m![3] === '+Inf' ? Infinity : Number(m![3]) });
  }
  return out;
}

/** The parts the composition root builds (server/src/root.ts), in build order. */
const PARTS = ['store', 'pool', 'match_index', 'verify_cache', 'content_rights_cache', 'feed_window', 'rate_limits', 'uploads', 'token_verifiers', 'mail', 'contact_relay', 'verification_mail', 'webhooks', 'transparency_log'];

test('GET /healthz reports every part from the start, in build order, with no upload or query first', async () => {
  const fresh = await startTestServer();
  try {
    const res = await fetch(`${fresh.url}/healthz`);
    assert.is(res.status, 200);
    assert.is(res.headers.get('cache-control'), 'no-store');
    const body = await res.json();
    assert.is(body.status, 'ok');
    assert.equal(Object.keys(body.parts), PARTS);
    for (const name of PARTS) assert.is(body.parts[name].status, 'ok', name);
    const { pool, match_index, verify_cache, uploads, token_verifiers } = body.parts;
    assert.ok(pool.threads >= 1, 'the pool is running, not made on the first upload');
    assert.is(pool.queue, 0);
    assert.ok(['loading', 'ready'].includes(match_index.state));
    assert.equal([match_index.fingerprints, match_index.seq, verify_cache.seq], [0, 0, 0]);
    assert.equal([uploads.in_flight, uploads.max], [0, 2]); // PROVENANT_WORKERS=1
    assert.is(token_verifiers.count, 2); // session tokens, OAuth access tokens
  } finally {
    await fresh.close();
  }
});

test('GET /healthz is 503 when any part reports an error (or its check throws), naming it', async () => {
  const s = await startTestServer();
  try {
    s.deps.parts.add({ name: 'failing', health: () => ({ status: 'error', reason: 'test' }) });
    let res = await fetch(`${s.url}/healthz`);
    assert.is(res.status, 503);
    let body = await res.json();
    assert.is(body.status, 'error');
    assert.equal(body.parts.failing, { status: 'error', reason: 'test' });
    assert.is(body.parts.store.status, 'ok');
    s.deps.parts.add({ name: 'throwing', health: () => { throw new Error('check broke'); } });
    res = await fetch(`${s.url}/healthz`);
    body = await res.json();
    assert.is(res.status, 503);
    assert.equal(body.parts.throwing, { status: 'error', error: 'check broke' });
  } finally {
    await s.close();
  }
});

test('GET /metrics: Prometheus text with request counts and a cumulative latency histogram per route and status', async () => {
  server.deps.metrics.gauge('provenant_test_queue_depth', 'A gauge another feature registers.', ['pool'], () => [
    { labels: { pool: 'fingerprint' }, value: 7 },
  ]);
  for (let i = 0; i < 3; i++) await (await fetch(`${server.url}/healthz`)).arrayBuffer();
  await (await fetch(`${server.url}/no/such/route`)).arrayBuffer();
  const res = await fetch(`${server.url}/metrics`, { headers: metricsAuth });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.match(text, /# TYPE provenant_http_requests_total counter/);
  assert.match(text, /# TYPE provenant_http_request_duration_seconds histogram/);
  const all = samples(text);
  const healthCount = all.find(
    (s) => s.name === 'provenant_http_requests_total' && s.labels.route === '/healthz' && s.labels.status === '200',
  );
  assert.ok(healthCount && healthCount.value >= 3);
  const notFound = all.find((s) => s.name === 'provenant_http_requests_total' && s.labels.status === '404');
  assert.is(notFound?.labels.route, 'unmatched', 'unknown paths share one label (bounded cardinality)');
  const buckets = all.filter(
    (s) => s.name === 'provenant_http_request_duration_seconds_bucket' && s.labels.route === '/healthz' && s.labels.status === '200',
  );
  assert.ok(buckets.length > 2);
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value, 'cumulative');
  const count = all.find((s) => s.name === 'provenant_http_request_duration_seconds_count' && s.labels.route === '/healthz' && s.labels.status === '200');
  assert.is(buckets[buckets.length - 1].labels.le, '+Inf');
  assert.is(buckets[buckets.length - 1].value, count?.value);
  const gauge = all.find((s) => s.name === 'provenant_test_queue_depth');
  assert.equal(gauge, { name: 'provenant_test_queue_depth', labels: { pool: 'fingerprint' }, value: 7 });
});

test('GET /metrics without the PROVENANT_METRICS_TOKEN bearer token: 401 invalid_token with WWW-Authenticate: Bearer', async () => {
  for (const authorization of [undefined, 'Bearer wrong', `Bearer ${METRICS_TOKEN}x`, `Bearer ${METRICS_TOKEN.slice(0, -1)}`, `Basic ${METRICS_TOKEN}`, METRICS_TOKEN]) {
    const res = await fetch(`${server.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
    assert.is(res.status, 401, `${authorization}`);
    assert.is(res.headers.get('www-authenticate'), 'Bearer');
    const body = await res.json();
    assert.is(body.error, 'invalid_token');
    assert.not.match(JSON.stringify(body), 'provenant_http_requests_total');
  }
});

test('GET /metrics is not served when PROVENANT_METRICS_TOKEN is unset: 404 not_found, whatever the token', async () => {
  const open = await startTestServer();
  try {
    for (const headers of [{}, metricsAuth]) {
      const res = await fetch(`${open.url}/metrics`, { headers });
      assert.is(res.status, 404);
      assert.is((await res.json()).error, 'not_found');
    }
  } finally {
    await open.close();
  }
});

test('Metrics escapes label values and refuses a name reused with another type', () => {
  const m = new Metrics();
  m.counter('x_total', 'x', ['path']).inc({ path: 'a"b\\c\nd' }, 2);
  assert.match(m.render(), /x_total\{path="a\\"b\\\\c\\nd"\} 2/);
  assert.throws(() => m.gauge('x_total', 'x'));
  assert.is(m.counter('x_total', 'x', ['path']), m.counter('x_total', 'x', ['path']));
});

test('Metrics: repeated and numeric label values land in one series, past the memo too', () => {
  const m = new Metrics();
  const c = m.counter('req_total', 'r', ['method', 'status']);
  const h = m.histogram('lat_seconds', 'l', ['method', 'status'], [0.1]);
  for (let i = 0; i < 3; i++) {
    c.inc({ method: 'GET', status: 200 });
    h.observe({ method: 'GET', status: 200 }, 0.05);
  }
  c.inc({ method: 'GET', status: '200' });
  // more distinct label sets than are memoised: each still counted under its own text
  for (let i = 0; i < 1500; i++) c.inc({ method: 'POST', status: i });
  c.inc({ method: 'POST', status: 1499 }, 4);
  const text = m.render();
  assert.match(text, /^req_total\{method="GET",status="200"\} 4$/m);
  assert.match(text, /^req_total\{method="POST",status="0"\} 1$/m);
  assert.match(text, /^req_total\{method="POST",status="1499"\} 5$/m);
  assert.is(text.match(/^req_total\{/gm)!.length, 1501);
  assert.match(text, /^lat_seconds_bucket\{method="GET",status="200",le="0.1"\} 3$/m);
  assert.match(text, /^lat_seconds_count\{method="GET",status="200"\} 3$/m);
});

test('X-Request-Id: echoed when sane, generated otherwise', async () => {
  const echoed = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'abc-123' } });
  assert.is(echoed.headers.get('x-request-id'), 'abc-123');
  const made = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
  assert.match(made.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
});

test('errors: 404 not_found, 405, invalid JSON 400, body over 1 MB 413 payload_too_large', async () => {
  const nf = await fetch(`${server.url}/api/v1/nope`);
  assert.is(nf.status, 404);
  assert.is((await nf.json()).error, 'not_found');
  const na = await fetch(`${server.url}/api/v1/auth/register`);
  assert.is(na.status, 405);
  assert.is((await na.json()).error, 'method_not_allowed');
  // routers run only under their prefix: at its boundary, not past it
  const fuzzyGet = await fetch(`${server.url}/api/v1/sign-it/verify-fuzzy`);
  assert.is(fuzzyGet.status, 405);
  assert.is((await fuzzyGet.json()).error, 'method_not_allowed');
  const beside = await fetch(`${server.url}/api/v1/sign-itx/verify-fuzzy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.is(beside.status, 404);
  assert.is((await beside.json()).error, 'not_found');
  const bad = await fetch(`${server.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
  assert.is(bad.status, 400);
  assert.is((await bad.json()).error, 'invalid_request');
  const big = JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(1024 * 1024) });
  const tooBig = await fetch(`${server.url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
  assert.is(tooBig.status, 413);
  assert.is((await tooBig.json()).error, 'payload_too_large');
  // Chunked (no Content-Length): the limit is enforced while streaming.
  const chunks = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(100 * 1024).fill(0x20));
      c.close();
    },
  });
  const streamed = await fetch(`${server.url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: chunks,
    duplex: 'half',
  } as RequestInit);
  assert.is(streamed.status, 413);
});

test('the access log writes one JSON line per request; unknown errors are 500 internal_error, logged with the stack', async () => {
  const lines: string[] = [];
  const sink = { write: (s: string) => lines.push(s) };
  const log = createLogger('info', sink, sink);
  const app = new Koa();
  app.use(requestId());
  app.use(accessLog(log, new Metrics()));
  app.use(renderErrors(log));
  app.use((ctx) => {
    if (ctx.path === '/boom') throw new Error('secret internals');
    ctx.body = { ok: true };
  });
  const http = createServer(app.callback());
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  try {
    await (await fetch(`${url}/fine`, { headers: { 'x-request-id': 'rid-1' } })).arrayBuffer();
    const boom = await fetch(`${url}/boom`);
    assert.is(boom.status, 500);
    const body = await boom.json();
    assert.is(body.error, 'internal_error');
    assert.not.ok(JSON.stringify(body).includes('secret internals'), 'no internals leak to the client');
  } finally {
    await new Promise<void>((r) => http.close(() => r()));
  }
  const entries = lines.map((l) => JSON.parse(l));
  const fine = entries.find((e) => e.msg === 'request' && e.path === '/fine');
  assert.is(fine.method, 'GET');
  assert.is(fine.status, 200);
  assert.is(fine.request_id, 'rid-1');
  assert.type(fine.ms, 'number');
  const error = entries.find((e) => e.msg === 'unhandled error');
  assert.match(error.stack, /secret internals/);
  assert.is(entries.find((e) => e.msg === 'request' && e.path === '/boom').status, 500);
  assert.ok(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n')), 'one line each');
});

test('graceful shutdown: close() finishes an in-flight request, then refuses new ones', async () => {
  const s = await startTestServer();
  const url = s.url;
  // Registration hashes a password (scrypt): still running when close() starts.
  const arrived = new Promise<void>((r) => s.http.once('request', () => r()));
  const inFlight = fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'late@example.com', password: 'in flight password' }),
  });
  await arrived;
  const closed = s.close();
  const res = await inFlight;
  assert.is(res.status, 201);
  assert.is((await res.json()).user.email, 'late@example.com');
  await closed;
  let refused = false;
  try {
    await fetch(`${url}/healthz`);
  } catch {
    refused = true;
  }
  assert.ok(refused, 'no new connections after close');
});

test.run();
