// Issue 25 item 2 on several nodes: /oauth/token's windows live in the Redis every
// node shares (RateLimitStores.window), so junk naming a client from one address fills
// that address's failure window on every node, and the client's real exchange from
// another address still succeeds. Two servers on one throwaway Redis; callers on two
// loopback source addresses. Skipped (and why) without redis-server; a failure under CI=true.
import { request as httpRequest } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Redis } from 'ioredis';
import { runWithRedis, startRedis, type TestRedis } from '../helpers/redis.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { authorizeQuery, Browser, newAccount, pkce, registerApp } from './support.js';

const test = suite('oauth token limit through Redis');
let redis: TestRedis;
let nodes: TestServer[] = [];
let probe: Redis;

test.before(async () => {
  redis = await startRedis();
  probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await probe.connect();
  nodes = [await startTestServer({ PROVENANT_REDIS_URL: redis.url }), await startTestServer({ PROVENANT_REDIS_URL: redis.url })];
});

test.after(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  probe?.disconnect();
  await redis?.stop();
});

/** A JSON POST from a chosen loopback source address. */
function postFrom(base: string, localAddress: string, path: string, payload: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(payload);
    const req = httpRequest(new URL(path, base), { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

test('junk naming a client from one address, on the other node, fills that address\'s shared window; the client\'s exchange from another address succeeds', async () => {
  const [home, other] = nodes;
  const victim = await registerApp(home, ['openid']);
  const account = await newAccount(home);
  const { verifier, challenge } = pkce();
  const code = (await new Browser(home.url).authorize(authorizeQuery(victim, {}, challenge), account)).searchParams.get('code')!;
  const junk = { grant_type: 'refresh_token', refresh_token: 'pvrt_junk', client_id: victim.clientId };
  for (let i = 0; i < 50; i++) assert.is((await postFrom(other.url, '127.0.0.2', '/oauth/token', junk)).status, 400, `junk ${i + 1}`);
  assert.is(await probe.get(`provenant:window:oauth:token:failures:client:${victim.clientId}|ip:127.0.0.2`), '50', 'counted in Redis');
  const refused = await postFrom(home.url, '127.0.0.2', '/oauth/token', junk);
  assert.equal([refused.status, refused.body.error], [429, 'rate_limited'], 'the junk address is limited on every node');
  const exchanged = await postFrom(home.url, '127.0.0.1', '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: victim.redirectUri, client_id: victim.clientId, code_verifier: verifier });
  assert.is(exchanged.status, 200, JSON.stringify(exchanged.body));
  assert.is(await probe.get(`provenant:window:oauth:token:client:${victim.clientId}`), '1', 'the success in the client\'s own window');
});

runWithRedis(test);
