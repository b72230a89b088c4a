// A delivery is not sent twice when its sender is slow or stalls past its lease (issue
// 25 item 11), on SQLite and PostgreSQL: two dispatchers (two nodes) share one store,
// with a lease of 1 s so that the test does not wait 15 s.
// - A slow receiver (3 s to answer): the sender renews its lease while the request is in
//   flight, so the other node never claims the delivery again.
// - A stalled sender: its connection hangs (a TCP proxy holds it) and it cannot reach
//   the store (its renewals wait), so the lease runs out and a later claim (the other
//   node's) sends; when the stalled one resumes, it finds its claim gone and sends
//   nothing.
// Real HTTPS receiver on loopback with its own CA; PostgreSQL skipped (and why) without
// its binaries, a failure under CI=true.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SignatureRecord } from 'provenant';
import { createWebhook } from '../../server/src/domain/webhooks.js';
import { createLogger } from '../../server/src/log.js';
import { openPostgresStore, openSqliteStore, type Charge, type Store } from '../../server/src/store/index.js';
import { WebhookDispatcher } from '../../server/src/webhooks/dispatcher.js';
import { createHostResolver } from '../../server/src/domain/url-rules.js';
import { runWithPostgres, sharedPostgres } from '../helpers/postgres.js';
import { makeTestCa, Receiver, type TestCa } from './fixtures.js';
import { Secrets } from '../../server/src/secrets.js';

/** Short, so that the test does not wait 15 s; long enough that a loaded machine's event-loop lag does not stall the renewals (every third of it). */
const LEASE_MS = 1_000;
const silent = createLogger(process.env.LEASE_LOG === '1' ? 'debug' : 'silent');
const hex = () => randomBytes(32).toString('hex');
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, done: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) assert.unreachable(`timed out waiting for ${what}`);
    await tick(20);
  }
}

/** A TCP relay to the receiver that holds each connection it is told to until released (a sender's connection stuck in the network). */
class HoldingProxy {
  readonly connections: Socket[] = [];
  private readonly held: (() => void)[] = [];
  holdNext = 0;
  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(target: number): Promise<HoldingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new HoldingProxy(server, (server.address() as AddressInfo).port);
    server.on('connection', (client) => {
      proxy.connections.push(client);
      const relay = () => {
        const upstream = connect(target, '127.0.0.1');
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
      };
      if (proxy.holdNext > 0) {
        proxy.holdNext -= 1;
        proxy.held.push(relay); // what the client sends waits in the socket until then
      } else relay();
    });
    return proxy;
  }

  release(): void {
    for (const relay of this.held.splice(0)) relay();
  }

  close(): Promise<void> {
    for (const c of this.connections) c.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

type Open = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

function leaseSuite(engine: string, open: Open): void {
  const test = suite<{ store: Store; cleanup(): Promise<void>; ca: TestCa; receiver: Receiver; secretsDir: string; dispatchers: WebhookDispatcher[] }>(`webhooks on ${engine}: a lease outlived`);

  test.before(async (ctx) => {
    Object.assign(ctx, await open());
    ctx.ca = makeTestCa();
    ctx.receiver = await Receiver.start(ctx.ca);
    ctx.secretsDir = mkdtempSync(join(tmpdir(), 'provenant-lease-secrets-'));
    ctx.dispatchers = [];
  });
  test.after.each(async ({ dispatchers }) => {
    for (const d of dispatchers.splice(0)) await d.close();
  });
  test.after(async ({ store, cleanup, ca, receiver, secretsDir }) => {
    await receiver?.close();
    ca?.remove();
    await store?.close();
    await cleanup?.();
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  });

  /** A node's dispatcher on `store` with the short lease (not started). */
  const dispatcher = (ctx: { store: Store; ca: TestCa; secretsDir: string; dispatchers: WebhookDispatcher[] }, store: Store = ctx.store) => {
    const d = new WebhookDispatcher({ store, secrets: new Secrets(ctx.secretsDir), config: { dnsServers: [], webhookAllowPrivate: true }, log: silent, extraCa: ctx.ca.caPem, leaseMs: LEASE_MS });
    ctx.dispatchers.push(d);
    return d;
  };

  /** A user with a starter org, an app, and a webhook of it for `url`; then one sign.created event for it. Returns the webhook's secret. */
  async function oneEvent(ctx: { store: Store; secretsDir: string }, url: string): Promise<{ secret: string; fileHash: string }> {
    const { store } = ctx;
    const user = await store.accounts.createAccount({ user: { id: randomUUID(), createdAt: Date.now() }, personalOrg: { id: randomUUID(), name: 'P' } });
    const org = (await store.accounts.personalOrg(user.id))!;
    await store.accounts.setOrgTier(org.id, 'starter');
    const app = await store.accounts.createApp({ id: randomUUID(), orgId: org.id, ownerId: user.id, name: 'A', redirectUris: [], scopes: ['openid'] });
    const deps = { store, secrets: new Secrets(ctx.secretsDir), config: { webhookAllowPrivate: true }, resolveHost: createHostResolver([]) };
    const { secret } = await createWebhook(deps, { userId: user.id, tokenAppId: app.id, appId: null }, { url, events: ['sign.created'] }, Date.now() - 1);
    const record: SignatureRecord = {
      file_hash: hex(), signer: `uhCAk${randomBytes(36).toString('base64url')}`, signed_at: Date.now(), intent: 'Authorship', ai_generation: null,
      content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
    };
    const charge: Charge = { userId: user.id, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER, decide: (_u, n) => ({ quota: 'personal', orgId: null, overage: new Array(n).fill(false) }) };
    await store.signatures.insertSignatures(
      [{ record, signature: randomBytes(64).toString('base64'), action_hash: hex(), userId: user.id, appId: app.id, source: 'rest' }],
      charge,
      [{ appId: app.id, type: 'sign.created', payload: { file_hash: record.file_hash } }],
    );
    return { secret, fileHash: record.file_hash };
  }

  test('a slow receiver (3 s, the lease 1 s): the sender renews its lease; the other node never sends it again', async (ctx) => {
    const path = '/slow';
    ctx.receiver.answers.set(path, () => ({ status: 200, delayMs: 3_000 }));
    const { secret, fileHash } = await oneEvent(ctx, ctx.receiver.url(path));
    ctx.receiver.secrets.set(path, secret);
    const [a, b] = [dispatcher(ctx), dispatcher(ctx)];
    a.start();
    b.start();
    await until('the delivery', () => ctx.receiver.at(path).length >= 1);
    await until('its outcome', () => a.counts.delivered + b.counts.delivered >= 1);
    await Promise.all([a.idle(), b.idle()]);
    await tick(1_500); // both nodes have polled again since: a second copy would be under way by now
    await Promise.all([a.idle(), b.idle()]);
    const got = ctx.receiver.at(path);
    assert.is(got.length, 1, `sent ${got.length} times`);
    assert.equal([got[0].body.file_hash, got[0].signatureValid], [fileHash, true]);
    assert.is(a.counts.delivered + b.counts.delivered, 1);
    assert.equal(await ctx.store.webhooks.backlog(), { events: 0, deliveries: 0 });
  });

  test('a stalled sender (its connection and its store calls hang past the lease): a later claim sends once; the stalled one, resuming, finds its claim gone and sends nothing', async (ctx) => {
    const path = '/stalled';
    const proxy = await HoldingProxy.start(ctx.receiver.port);
    try {
      proxy.holdNext = 1;
      const { secret } = await oneEvent(ctx, `https://127.0.0.1:${proxy.port}${path}`);
      ctx.receiver.secrets.set(path, secret);
      // node A stalls once it has claimed: its store calls (renewals, further claims, outcomes) wait until resume()
      let resume!: () => void;
      const stalled = new Promise<void>((resolve) => (resume = resolve));
      let claims = 0;
      const real = ctx.store.webhooks;
      const stalledStore: Store = {
        ...ctx.store,
        webhooks: {
          ...real,
          claimDeliveries: async (...args) => {
            if (claims > 0) await stalled;
            const claimed = await real.claimDeliveries(...args);
            claims += claimed.length;
            return claimed;
          },
          renewDelivery: async (...args) => (await stalled, real.renewDelivery(...args)),
          finishDelivery: async (...args) => (await stalled, real.finishDelivery(...args)),
        },
      };
      const a = dispatcher(ctx, stalledStore);
      a.start();
      await until("A's connection", () => proxy.connections.length === 1);
      const b = dispatcher(ctx);
      b.start(); // claims once A's lease has run out (or A's next pass does, and stalls again)
      await until('a copy', () => ctx.receiver.at(path).length === 1);
      await until('its outcome', () => a.counts.delivered + b.counts.delivered === 1);
      proxy.release(); // A's first connection goes through
      await tick(300);
      resume(); // and A can reach the store again
      await Promise.all([a.idle(), b.idle()]);
      await tick(1_000);
      await Promise.all([a.idle(), b.idle()]);
      assert.is(ctx.receiver.at(path).length, 1, 'sent once');
      assert.ok(ctx.receiver.at(path)[0].signatureValid);
      assert.equal([a.counts.delivered + b.counts.delivered, a.counts.failed + b.counts.failed], [1, 0], 'one outcome recorded: the stalled claim recorded nothing');
      assert.equal(await ctx.store.webhooks.backlog(), { events: 0, deliveries: 0 });
    } finally {
      await proxy.close();
    }
  });

  test.run();
}

leaseSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-lease-'));
  return { store: await openSqliteStore(join(dir, 'provenant.db')), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

runWithPostgres(() =>
  leaseSuite('postgres', async () => ({ store: await openPostgresStore(await (await sharedPostgres()).createDatabase()), cleanup: async () => undefined })),
);
