// Upload slots (the gate of verify-file and fingerprint) against hostile clients, over
// real HTTP on loopback: path spellings the router accepts, clients that abort or
// disconnect mid-upload, slow clients (issue 14 items 1 and 4); and 405 answers carry
// Allow (RFC 9110 15.5.6).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Koa from 'koa';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readRawBody } from '../../server/src/body.js';

const S = '/api/v1/sign-it';
const fruits = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg'));

/** Resolves after `ms`; used only to bound waits, never to assert durations. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function upload(srv: TestServer, path: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body: fruits });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** /metrics answers to this token (where a token is asked for). */
const METRICS_TOKEN = 'uploads-test-metrics';

/** Uploads in flight, as /metrics reports them. */
async function inFlight(srv: TestServer): Promise<number> {
  const res = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith('provenant_uploads_in_flight '));
  assert.ok(line, 'provenant_uploads_in_flight is not in /metrics');
  return Number(line!.split(' ')[1]);
}

/** Polls until `check` holds (at most ~10 s); returns whether it did. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

/** A raw connection that sends `head` and then keeps the socket; what the server answers is collected. */
function rawClient(srv: TestServer, head: string): { socket: Socket; answer: () => string; closed: Promise<void> } {
  const url = new URL(srv.url);
  const socket = connect(Number(url.port), url.hostname);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.write(head);
  return { socket, answer: () => text, closed };
}

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const done = p.then(() => true, () => true);
  try {
    return await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// --- item 1: paths the router accepts, aborting and disconnecting clients ---------

const slots = suite('upload slots');
let srv: TestServer;
let token: string;

slots.before(async () => {
  srv = await startTestServer({ PROVENANT_WORKERS: '1', PROVENANT_METRICS_TOKEN: METRICS_TOKEN }); // 2 upload slots
  token = (await srv.register()).token;
});

slots.after(async () => {
  await srv.close();
});

slots('tiny uploads to a trailing-slash or upper-case path, from clients that give up after 2 s, leave every slot free', async () => {
  // the issue's `curl -m2 -X POST -d x` sequence, on each spelling @koa/router accepts
  for (const path of [`${S}/verify-file/`, `${S}/VERIFY-FILE`, `${S}/Verify-File/`, `${S}/FINGERPRINT/`]) {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}` };
    try {
      const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body: 'x', signal: AbortSignal.timeout(2_000) });
      assert.is(res.status, 200, `${path}: ${await res.text()}`);
      await res.arrayBuffer().catch(() => {});
    } catch (err) {
      if ((err as Error).name !== 'TimeoutError') throw err;
      // an abort is what the client did; the slot must be freed all the same
    }
  }
  assert.ok(await eventually(async () => (await inFlight(srv)) === 0), 'upload slots still taken');
  const verify = await upload(srv, `${S}/verify-file`);
  assert.is(verify.status, 200, JSON.stringify(verify.body));
  assert.ok(Array.isArray(verify.body.signatures));
  const fp = await upload(srv, `${S}/fingerprint`, token);
  assert.is(fp.status, 200, JSON.stringify(fp.body));
  assert.ok(fp.body.fingerprint, 'no fingerprint for a real image');
});

slots('JSON routes still parse their bodies under any spelling: 400 invalid JSON, 413 over 1 MB', async () => {
  const bad = await fetch(`${srv.url}${S}/VERIFY-FUZZY/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"bands":' });
  assert.is(bad.status, 400);
  assert.is(((await bad.json()) as { error: string }).error, 'invalid_request');
  const big = await fetch(`${srv.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email_or_username: 'a@example.com', password: 'x'.repeat(1 << 20) }),
  });
  assert.is(big.status, 413);
  assert.is(((await big.json()) as { error: string }).error, 'payload_too_large');
  const form = await fetch(`${srv.url}/api/v1/auth/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'email_or_username=nobody%40example.com&password=wrong-password',
  });
  assert.is(form.status, 401); // read as a form, checked, refused: the body reached the route
});

slots('clients that disconnect mid-upload free their slots', async () => {
  const clients = [0, 1].map(() => {
    const url = new URL(`${srv.url}${S}/verify-file`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-length': 100_000 } });
    req.on('error', () => {});
    req.write(Buffer.alloc(1000, 1));
    return req;
  });
  assert.ok(await eventually(async () => (await inFlight(srv)) === 2), 'the two uploads never took their slots');
  for (const req of clients) req.destroy();
  assert.ok(await eventually(async () => (await inFlight(srv)) === 0), 'disconnected uploads kept their slots');
  const res = await upload(srv, `${S}/verify-file`);
  assert.is(res.status, 200, JSON.stringify(res.body));
});

slots('readRawBody fails at once on a body already read, instead of waiting for an end that has passed', async () => {
  const app = new Koa();
  let second: Promise<unknown> = Promise.resolve();
  app.use(async (ctx) => {
    await readRawBody(ctx, 1024);
    second = readRawBody(ctx, 1024);
    second.catch(() => {});
    ctx.body = 'ok';
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as { port: number };
    await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'hello' })).text();
    assert.ok(await settlesWithin(second, 3_000), 'the second read is still waiting');
    try {
      await second;
      assert.unreachable('the second read of a body succeeded');
    } catch (err) {
      assert.match((err as Error).message, /already/);
    }
  } finally {
    server.close();
  }
});

slots('405 answers carry Allow with the methods of the path', async () => {
  const del = await fetch(`${srv.url}${S}/verify`, { method: 'DELETE' });
  assert.is(del.status, 405);
  assert.match(del.headers.get('allow') ?? '', /\bGET\b/);
  assert.is(((await del.json()) as { error: string }).error, 'method_not_allowed');
  const get = await fetch(`${srv.url}${S}/verify-file`);
  assert.is(get.status, 405);
  assert.is(get.headers.get('allow'), 'POST');
  await get.arrayBuffer();
  const me = await fetch(`${srv.url}/api/v1/auth/me`, { method: 'PUT' });
  assert.is(me.status, 405);
  assert.match(me.headers.get('allow') ?? '', /\bGET\b.*\bPATCH\b|\bPATCH\b.*\bGET\b/);
  await me.arrayBuffer();
});

slots.run();

// --- item 4: slow clients lose their slots -----------------------------------------

const slow = suite('slow clients');
let slowSrv: TestServer;

slow.before(async () => {
  slowSrv = await startTestServer({
    PROVENANT_WORKERS: '1', // 2 upload slots
    PROVENANT_METRICS_TOKEN: METRICS_TOKEN,
    PROVENANT_HEADERS_TIMEOUT_MS: '500',
    PROVENANT_REQUEST_TIMEOUT_MS: '3000',
    PROVENANT_UPLOAD_GRACE_MS: '300',
    PROVENANT_UPLOAD_MIN_RATE: '2000',
  });
});

slow.after(async () => {
  await slowSrv.close();
});

slow('uploads trickling under the minimum rate lose their slots with 408; a normal upload then succeeds', async () => {
  const head = `POST ${S}/verify-file HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n`;
  const clients = [rawClient(slowSrv, head), rawClient(slowSrv, head)];
  // one byte every 100 ms: 10 bytes/s, under the 2000 bytes/s asked for
  const drip = setInterval(() => {
    for (const c of clients) if (!c.socket.destroyed) c.socket.write('x');
  }, 100);
  try {
    for (const c of clients) assert.ok(await settlesWithin(c.closed, 10_000), 'a slow upload kept its connection');
  } finally {
    clearInterval(drip);
  }
  for (const c of clients) {
    assert.match(c.answer(), /^HTTP\/1\.1 408 /);
    assert.match(c.answer(), /"error":"request_timeout"/);
  }
  assert.is(await inFlight(slowSrv), 0);
  const res = await upload(slowSrv, `${S}/verify-file`);
  assert.is(res.status, 200, JSON.stringify(res.body));
});

slow('a client that never finishes its headers is cut off; one that never finishes a JSON body too', async () => {
  const headers = rawClient(slowSrv, `GET /healthz HTTP/1.1\r\nHost: x\r\n`);
  assert.ok(await settlesWithin(headers.closed, 10_000), 'incomplete headers kept the connection');
  assert.match(headers.answer(), /^HTTP\/1\.1 408 /);
  const body = rawClient(slowSrv, `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
  assert.ok(await settlesWithin(body.closed, 10_000), 'an unfinished JSON body kept the connection');
  assert.match(body.answer(), /^HTTP\/1\.1 408 /);
});

slow.run();
