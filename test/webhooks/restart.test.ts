// Durability of the outbox (decisions.md 8; issue 18): the compiled server (`npm run
// build:ts` first) as a child process, killed with SIGKILL right after a sign that
// queued an event, while the delivery cannot get out (the receiver's name does not
// resolve yet: the test's DNS server holds its answer back). After a restart the event
// is delivered, once. The child trusts the receiver's CA through NODE_EXTRA_CA_CERTS.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseFile, loadConfig } from '../../server/src/config.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { openSqliteStore, type Store } from '../../server/src/store/index.js';
import { apiRequest } from '../helpers/server.js';
import { makeTestCa, Receiver, TEST_DOMAIN, TestDns, type TestCa } from './fixtures.js';
import { Secrets } from '../../server/src/secrets.js';

const root = new URL('../..', import.meta.url).pathname;
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const HOST = `hooks.${TEST_DOMAIN}`;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it is true; fails after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await wait(100);
  }
}

let ca: TestCa;
let receiver: Receiver;
let dns: TestDns;
let holdAnswers = false;
let dataDir: string;
let port: number;
let child: ChildProcess | undefined;
let output = '';

const url = () => `http://127.0.0.1:${port}`;

async function startServer(): Promise<void> {
  child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd: root,
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1',
      PROVENANT_DNS_SERVERS: dns.server,
      PROVENANT_RATE_LIMIT: 'off',
      PROVENANT_WORKERS: '1',
      PROVENANT_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d));
  child.stderr!.on('data', (d: Buffer) => (output += d));
  const proc = child;
  await until('the server to become healthy', async () => {
    if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}): ${output.slice(-2000)}`);
    return fetch(`${url()}/healthz`).then((r) => r.ok, () => false);
  }, 60_000);
}

async function kill(): Promise<void> {
  const proc = child!;
  child = undefined;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}

const test = suite('webhooks: SIGKILL and restart');
test.before(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build:ts first`);
  ca = makeTestCa();
  receiver = await Receiver.start(ca);
  dns = await TestDns.start((name, type) => {
    if (name !== HOST) return null;
    if (holdAnswers) return 'hang';
    return type === 'A' ? ['127.0.0.1'] : [];
  });
  dataDir = mkdtempSync(join(tmpdir(), 'provenant-webhook-restart-'));
  port = await freePort();
});
test.after(async () => {
  if (child) await kill();
  await receiver.close();
  await dns.close();
  ca.remove();
  rmSync(dataDir, { recursive: true, force: true });
});

test('killed right after a sign that queued an event: after the restart the event is delivered, once', async () => {
  await startServer();
  assert.match(output, /PROVENANT_WEBHOOK_ALLOW_PRIVATE=1/, 'the tests-only switch is warned about at start');

  // a developer on a paid tier with a server-hosted cell and an app (set up through the store beside the server)
  const registered = await apiRequest(url(), 'POST', '/api/v1/auth/register', { body: { email: 'dev@example.com', password: 'correct horse battery staple' } });
  const { token, user } = registered.body;
  const config = loadConfig({ PROVENANT_DATA_DIR: dataDir });
  let store: Store | undefined = await openSqliteStore(databaseFile(config));
  try {
    await store.accounts.setOrgTier((await store.accounts.personalOrg(user.id))!.id, 'pro');
    await store.accounts.setUserTier(user.id, 'premium');
    await createServerCell({ store, secrets: new Secrets(config.secretsDir) }, user.id);
  } finally {
    await store.close();
    store = undefined;
  }
  const appId = (await apiRequest(url(), 'POST', '/api/v1/developer/apps', { token, body: { name: 'app' } })).body.client_id;
  const appToken = (await apiRequest(url(), 'POST', `/api/v1/developer/apps/${appId}/token`, { token })).body.token;
  const created = await apiRequest(url(), 'POST', '/api/v1/webhooks', { token: appToken, body: { url: receiver.url('/durable', HOST), events: ['sign.created'] } });
  assert.is(created.status, 201, created.text);
  receiver.secrets.set('/durable', created.body.webhook.secret);

  holdAnswers = true; // the delivery now waits on DNS
  const signed = await apiRequest(url(), 'POST', '/api/v1/sign-it/sign', { token: appToken, body: { file_hash: randomBytes(32).toString('hex') } });
  assert.is(signed.status, 200, signed.text);
  await kill();
  assert.is(receiver.received.length, 0, 'nothing got out before the kill');

  holdAnswers = false;
  await startServer();
  await until('the delivery', () => receiver.received.length > 0, 45_000);
  // then until the server has nothing left to route or send
  await until('an empty webhook backlog', async () => {
    const parts = (await (await fetch(`${url()}/healthz`)).json()).parts;
    return parts.webhooks.events === 0 && parts.webhooks.deliveries === 0 && parts.webhooks.in_flight === 0;
  }, 30_000);
  await wait(1_500); // a second copy would be under way by now
  const got = receiver.at('/durable');
  assert.is(got.length, 1, 'delivered once');
  assert.is(got[0].signatureValid, true);
  assert.equal([got[0].body.event, got[0].body.action_hash, got[0].body.file_hash], ['sign.created', signed.body.action_hash, signed.body.file_hash]);
  const [listed] = (await apiRequest(url(), 'GET', `/api/v1/webhooks?app_id=${appId}`, { token })).body.webhooks;
  assert.equal([listed.failure_count, listed.active], [0, true]);
  assert.ok(listed.last_triggered_at !== null);
});

test.run();
