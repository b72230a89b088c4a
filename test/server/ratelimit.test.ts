// Per-IP rate limits: 429 shape and headers, X-Forwarded-For trust, the off switch,
// and the bounded memory store.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BoundedLimitMap, clientIp, rateLimit } from '../../server/src/ratelimit.js';
import { renderErrors } from '../../server/src/middleware.js';
import { createLogger } from '../../server/src/log.js';
import type { ServerDeps } from '../../server/src/deps.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const test = suite('ratelimit');

/** A tiny app: one rate-limited route (max 3 per minute) answering the client IP it saw. */
async function limitedApp(deps: ServerDeps, max = 3): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  app.use(renderErrors(createLogger('silent')));
  app.use(rateLimit(deps, { name: `t${Math.random()}`, max, durationMs: 60_000 }));
  app.use((ctx) => {
    ctx.body = { ip: clientIp(ctx, deps.config.trustProxy) };
  });
  const server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const stop = (s: Server) => new Promise<void>((r) => s.close(() => r()));

async function withServer(env: Record<string, string>, body: (s: TestServer) => Promise<void>) {
  const s = await startTestServer(env);
  try {
    await body(s);
  } finally {
    await s.close();
  }
}

test('the limit+1-th request is 429 rate_limited with Retry-After and X-RateLimit-* (Reset in epoch seconds)', async () => {
  await withServer({}, async (s) => {
    const { url, server } = await limitedApp(s.deps);
    try {
      const before = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(url);
        assert.is(res.status, 200);
        assert.is(res.headers.get('x-ratelimit-limit'), '3');
        assert.is(res.headers.get('x-ratelimit-remaining'), String(2 - i));
        const reset = res.headers.get('x-ratelimit-reset')!;
        assert.match(reset, /^\d+$/, 'whole epoch seconds');
        assert.ok(Number(reset) >= before + 59 && Number(reset) <= before + 62, reset);
      }
      const limited = await fetch(url);
      assert.is(limited.status, 429);
      const body = await limited.json();
      assert.is(body.error, 'rate_limited');
      assert.type(body.message, 'string');
      assert.type(body.retry_after, 'number');
      assert.ok(body.retry_after >= 1 && body.retry_after <= 61);
      assert.is(limited.headers.get('retry-after'), String(body.retry_after));
      assert.is(limited.headers.get('x-ratelimit-limit'), '3');
      assert.is(limited.headers.get('x-ratelimit-remaining'), '0');
      assert.match(limited.headers.get('x-ratelimit-reset')!, /^\d+$/);
    } finally {
      await stop(server);
    }
  });
});

test('PROVENANT_TRUST_PROXY=0: a spoofed X-Forwarded-For does not escape the limit', async () => {
  await withServer({ PROVENANT_TRUST_PROXY: '0' }, async (s) => {
    const { url, server } = await limitedApp(s.deps);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(url, { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
        assert.is((await res.json()).ip, '127.0.0.1');
      }
      const res = await fetch(url, { headers: { 'x-forwarded-for': '198.51.100.77' } });
      assert.is(res.status, 429);
    } finally {
      await stop(server);
    }
  });
});

test('PROVENANT_TRUST_PROXY=1: the rightmost X-Forwarded-For entry is the client', async () => {
  await withServer({ PROVENANT_TRUST_PROXY: '1' }, async (s) => {
    const { url, server } = await limitedApp(s.deps);
    try {
      const ip = async (xff: string) => {
        const res = await fetch(url, { headers: { 'x-forwarded-for': xff } });
        return res.status === 200 ? (await res.json()).ip : res.status;
      };
      assert.is(await ip('203.0.113.9'), '203.0.113.9');
      // A client-supplied left part is ignored: only our proxy's (rightmost) entry counts.
      assert.is(await ip('10.9.9.9, 203.0.113.9'), '203.0.113.9');
      assert.is(await ip('1.1.1.1, 203.0.113.9'), '203.0.113.9');
      assert.is(await ip('203.0.113.9'), 429, 'the fourth request of 203.0.113.9');
      assert.is(await ip('203.0.113.10'), '203.0.113.10', 'another client has its own window');
    } finally {
      await stop(server);
    }
  });
});

test('PROVENANT_TRUST_PROXY=2 takes the second entry from the right', async () => {
  await withServer({ PROVENANT_TRUST_PROXY: '2' }, async (s) => {
    const { url, server } = await limitedApp(s.deps);
    try {
      const res = await fetch(url, { headers: { 'x-forwarded-for': '1.2.3.4, 198.51.100.1, 10.0.0.2' } });
      assert.is((await res.json()).ip, '198.51.100.1');
    } finally {
      await stop(server);
    }
  });
});

test('PROVENANT_RATE_LIMIT=off disables limits', async () => {
  await withServer({ PROVENANT_RATE_LIMIT: 'off' }, async (s) => {
    const { url, server } = await limitedApp(s.deps);
    try {
      for (let i = 0; i < 6; i++) assert.is((await fetch(url)).status, 200);
    } finally {
      await stop(server);
    }
  });
});

test('end to end: vault/challenge is limited to 60 per minute per IP', async () => {
  await withServer({}, async (s) => {
    const body = JSON.stringify({ agent_pub_key: Buffer.alloc(32, 7).toString('base64') });
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      const res = await fetch(`${s.url}/api/v1/auth/vault/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    assert.equal(statuses.slice(0, 60), Array(60).fill(200));
    assert.is(statuses[60], 429);
    assert.is(s.deps.rateLimits.get('auth:vault')?.size, 1);
  });
});

test('BoundedLimitMap: never more than maxEntries keys, however many clients', () => {
  const map = new BoundedLimitMap(100);
  const farFuture = Date.now() / 1000 + 3600;
  for (let i = 0; i < 50_000; i++) {
    map.set(`limit:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, { reset: farFuture, remaining: 5, total: 5 });
    assert.ok(map.size <= 100);
  }
  assert.is(map.size, 100);
  // The newest 100 remain, in insertion order; the oldest were evicted.
  const keys = [...map.keys()];
  assert.is(keys[99], 'limit:10.0.195.79'); // i = 49999
  assert.is(keys[0], 'limit:10.0.194.236'); // i = 49900
  assert.ok(map instanceof Map, "koa-ratelimit's memory driver requires a Map");
});

test('BoundedLimitMap: expired windows are dropped from the front; a re-set key moves to the back', () => {
  let now = 1_000_000;
  const map = new BoundedLimitMap(10, () => now);
  map.set('a', { reset: now / 1000 + 60, remaining: 1, total: 1 });
  map.set('b', { reset: now / 1000 + 120, remaining: 1, total: 1 });
  map.set('c', { reset: now / 1000 + 180, remaining: 1, total: 1 });
  now += 90_000; // a expired
  map.set('d', { reset: now / 1000 + 60, remaining: 1, total: 1 });
  assert.equal([...map.keys()], ['b', 'c', 'd']);
  map.set('b', { reset: now / 1000 + 60, remaining: 1, total: 1 });
  assert.equal([...map.keys()], ['c', 'd', 'b']);
});

test('clientIp normalizes IPv4-mapped IPv6 socket addresses', () => {
  const ctx = { get: () => '', socket: { remoteAddress: '::ffff:192.0.2.5' } } as never;
  assert.is(clientIp(ctx, 0), '192.0.2.5');
  const bad = { get: () => 'not-an-ip', socket: { remoteAddress: '192.0.2.6' } } as never;
  assert.is(clientIp(bad, 1), '192.0.2.6', 'an unparsable forwarded entry falls back to the socket');
});

test.run();
