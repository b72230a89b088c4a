// The shared Redis (PROVENANT_REDIS_URL): two servers share one per-IP window, checked
// through the API and against the sorted set in Redis itself (read with a client of the
// test's own); while Redis is away each node answers with its own windows and /healthz
// says degraded; when it is back the shared windows return without a restart; a start
// on an unreachable Redis fails naming the variable.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Redis } from 'ioredis';
import Koa from 'koa';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../server/src/log.js';
import { renderErrors } from '../../server/src/middleware.js';
import { rateLimit, RateLimitStores } from '../../server/src/ratelimit.js';
import { SharedRedis } from '../../server/src/redis.js';
import { ConfigError, loadConfig } from '../../server/src/config.js';
import { composeServer } from '../../server/src/root.js';
import { freePort, runWithRedis, startRedis, type TestRedis } from '../helpers/redis.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { agentKeyFromPublicKey } from 'provenant';
import { randomBytes } from 'node:crypto';

const test = suite('redis');
const VERIFY = `/api/v1/sign-it/verify?hash=${'ab'.repeat(32)}`;

let redis: TestRedis;
let nodes: TestServer[] = [];
let probe: Redis;
let ipCounter = 0;

/** A client address of its own per test (PROVENANT_TRUST_PROXY=1 takes it from X-Forwarded-For). */
const nextIp = () => `198.51.100.${++ipCounter}`;

const verify = (node: TestServer, ip: string) => fetch(`${node.url}${VERIFY}`, { headers: { 'x-forwarded-for': ip } });

async function healthz(node: TestServer): Promise<{ status: number; body: any }> {
  const res = await fetch(`${node.url}/healthz`);
  return { status: res.status, body: await res.json() };
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** 30 requests alternating over the nodes are answered, the 31st on each node is 429; the windows as the nodes reported them. */
async function sharedWindowHolds(ip: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const res = await verify(nodes[i % 2], ip);
    assert.is(res.status, 200, `request ${i + 1} on node ${i % 2}`);
    assert.is(res.headers.get('x-ratelimit-limit'), '30');
    assert.is(res.headers.get('x-ratelimit-remaining'), String(29 - i), 'one window across both nodes');
    assert.match(res.headers.get('x-ratelimit-reset')!, /^\d+$/);
  }
  for (const node of nodes) {
    const res = await verify(node, ip);
    assert.is(res.status, 429);
    const body = await res.json();
    assert.is(body.error, 'rate_limited');
    assert.ok(body.retry_after >= 1 && body.retry_after <= 61, String(body.retry_after));
    assert.is(res.headers.get('retry-after'), String(body.retry_after));
    assert.is(res.headers.get('x-ratelimit-remaining'), '0');
  }
  // the window itself, read from Redis: 30 requests counted under this IP's key
  assert.is(await probe.zcard(`provenant:ratelimit:sign-it:verify:${ip}`), 30);
}

test.before(async () => {
  redis = await startRedis();
  probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: (n) => Math.min(n * 100, 1000) });
  probe.on('error', () => {}); // the test stops Redis on purpose
  await probe.connect();
  const env = { PROVENANT_REDIS_URL: redis.url, PROVENANT_TRUST_PROXY: '1' };
  nodes = [await startTestServer(env), await startTestServer(env)];
});

test.after(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  probe?.disconnect();
  await redis?.stop();
});

test('two nodes share one window: the 31st verify from one IP is 429 on either node', async () => {
  await sharedWindowHolds(nextIp());
  const health = await healthz(nodes[0]);
  assert.is(health.status, 200);
  assert.is(health.body.status, 'ok');
  assert.is(health.body.parts.redis.status, 'ok');
  assert.is(health.body.parts.rate_limits.shared, true);
});

test('two nodes share the contact relay\'s 3 an hour per IP: the 4th request, on the other node, is answered alike and not queued', async () => {
  const ip = nextIp();
  const body = JSON.stringify({
    signer_agent_key: agentKeyFromPublicKey(randomBytes(32)), sender_name: 'Bea Buyer', sender_email: 'bea@buyer.example',
    message: 'May I license this photo?', purpose: 'licensing',
  });
  // queued = still waiting, or already taken by a relay (an unknown signer's request is dropped there)
  const queued = async () => {
    await Promise.all(nodes.map((n) => n.deps.contactRelay.idle()));
    return (await Promise.all(nodes.map(async (n) => (await n.deps.store.contacts.pending()) + n.deps.contactRelay.counts.dropped + n.deps.contactRelay.counts.sent))).reduce((a, b) => a + b, 0);
  };
  const before = await queued();
  const answers = new Set<string>();
  for (const node of [nodes[0], nodes[1], nodes[0], nodes[1], nodes[0]]) {
    const res = await fetch(`${node.url}/api/v1/sign-it/contact`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip }, body });
    assert.is(res.status, 200);
    answers.add(await res.text());
  }
  assert.is(answers.size, 1, 'one answer for every request, over the limit too');
  assert.is((await queued()) - before, 3, 'three queued across both nodes, not three per node');
  assert.is(await probe.get(`provenant:take:sign-it:contact:${ip}`), '5');
  const ttl = await probe.pttl(`provenant:take:sign-it:contact:${ip}`);
  assert.ok(ttl > 3_500_000 && ttl <= 3_600_000, `the window ends within the hour (${ttl} ms)`);
});

test('Redis away: each node limits alone and /healthz says degraded; back: shared again without a restart', async () => {
  await redis.stop();
  const ip = nextIp();
  // node 0 alone: its own window of 30, still answering (not 503, not unlimited)
  for (let i = 0; i < 30; i++) {
    const res = await verify(nodes[0], ip);
    assert.is(res.status, 200, `request ${i + 1} while Redis is away`);
    assert.is(res.headers.get('x-ratelimit-remaining'), String(29 - i));
  }
  assert.is((await verify(nodes[0], ip)).status, 429);
  // node 1 has its own window for that IP: the price of failing to the node
  assert.is((await verify(nodes[1], ip)).status, 200);

  const degraded = await healthz(nodes[0]);
  assert.is(degraded.status, 200, 'the node stays in rotation');
  assert.is(degraded.body.status, 'degraded');
  assert.is(degraded.body.parts.redis.status, 'degraded');
  assert.is(degraded.body.parts.redis.connected, false);
  assert.ok(degraded.body.parts.rate_limits.fallbacks >= 30);

  await redis.start();
  await until('both nodes reconnect to Redis', 10_000, async () => {
    const all = await Promise.all(nodes.map(healthz));
    return all.every((h) => h.body.parts.redis.status === 'ok');
  });
  await until('the probe reconnects', 5_000, async () => probe.status === 'ready');
  assert.is((await healthz(nodes[1])).body.status, 'ok');
  await sharedWindowHolds(nextIp());
});

test('a route that fails behind the shared limiter fails once (its error is not taken for Redis\'s)', async () => {
  const shared = new SharedRedis(redis.url, createLogger('silent'));
  await shared.start();
  const deps = { config: loadConfig({ PROVENANT_TRUST_PROXY: '0' }), rateLimits: new RateLimitStores(shared) };
  let calls = 0;
  const app = new Koa();
  app.use(renderErrors(createLogger('silent')));
  app.use(rateLimit(deps, { name: 'failing-route', max: 5, durationMs: 60_000 }));
  app.use(() => {
    calls += 1;
    throw new Error('the route failed');
  });
  const server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    assert.is(res.status, 500);
    assert.is(res.headers.get('x-ratelimit-remaining'), '4', 'counted once, in Redis');
    assert.is(calls, 1);
    assert.is(deps.rateLimits.fallbacks, 0);
  } finally {
    server.close();
    await shared.close();
  }
});

test('a start on an unreachable Redis fails naming PROVENANT_REDIS_URL', async () => {
  const port = await freePort(); // nobody listens there
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PROVENANT_DATA_DIR: nodes[0].dataDir, // the store opens; the Redis part then fails and everything closes
    PROVENANT_LOG_LEVEL: 'silent',
    PROVENANT_WORKERS: '1',
    PROVENANT_REDIS_URL: `redis://127.0.0.1:${port}`,
  });
  try {
    await composeServer(config);
    assert.unreachable('started without its Redis');
  } catch (err) {
    assert.instance(err, Error);
    assert.match((err as Error).message, /^PROVENANT_REDIS_URL: cannot reach Redis/);
  }
});

test('PROVENANT_REDIS_URL must be a redis:// or rediss:// URL', () => {
  assert.is(loadConfig({ PROVENANT_REDIS_URL: 'rediss://:pw@cache.internal:6380/2' }).redisUrl, 'rediss://:pw@cache.internal:6380/2');
  assert.is(loadConfig({}).redisUrl, null);
  for (const bad of ['http://127.0.0.1:6379', 'not a url']) {
    try {
      loadConfig({ PROVENANT_REDIS_URL: bad });
      assert.unreachable(bad);
    } catch (err) {
      assert.instance(err, ConfigError);
      assert.is((err as ConfigError).variable, 'PROVENANT_REDIS_URL');
    }
  }
});

runWithRedis(test);
