// A node on PostgreSQL: /healthz names the engine; PostgreSQL stopped under a running
// node gives 503 service_unavailable (not a hang, not a crash) and a /healthz error,
// and the node answers again once PostgreSQL is back, without a restart; nodes sharing
// a database must share their secrets (the fingerprint the first one recorded).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, ConfigError } from '../../server/src/config.js';
import { composeServer } from '../../server/src/root.js';
import type { PgStore } from '../../server/src/store/postgres/index.js';
import { apiRequest, startTestServer, type TestServer } from '../helpers/server.js';
import { runWithPostgres, sharedPostgres, startPostgres, type TestPostgres } from '../helpers/postgres.js';

const hex = () => randomBytes(32).toString('hex');

/** Retries `probe` every 100 ms until it returns true or `ms` pass. */
async function until(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const outage = suite<{ pg: TestPostgres; srv: TestServer }>('PostgreSQL away and back');

outage.before(async (ctx) => {
  // a PostgreSQL of its own: this suite stops it
  ctx.pg = await startPostgres();
  ctx.srv = await startTestServer({ PROVENANT_DATABASE_URL: await ctx.pg.createDatabase(), PROVENANT_RATE_LIMIT: 'off' });
});
outage.after(async ({ pg, srv }) => {
  await srv?.close();
  await pg?.stop();
});

outage('/healthz names the engine; requests answer from PostgreSQL', async ({ srv }) => {
  const health = await apiRequest(srv.url, 'GET', '/healthz');
  assert.is(health.status, 200);
  assert.equal(health.body.parts.store, { status: 'ok', engine: 'postgres' });
  assert.is((srv.deps.store as PgStore).listening, true);
  const { user } = await srv.register();
  const rows = await (await srv.sql()).all<{ id: string }>('SELECT id FROM users WHERE id = ?', [user.id]);
  assert.equal(rows, [{ id: user.id }], 'the user is in PostgreSQL');
});

outage('stopped: 503 service_unavailable for reads and writes, /healthz 503 with the store in error; back: 200s', async ({ pg, srv }) => {
  // stopped while the new account's verification link is being stored: a pooled
  // connection ended while checked out fails its caller, not the process
  await srv.register();
  await pg.down();
  const started = Date.now();
  const verify = await apiRequest(srv.url, 'GET', `/api/v1/sign-it/verify?hash=${hex()}`);
  assert.is(verify.status, 503, verify.text);
  assert.is(verify.body.error, 'service_unavailable');
  assert.is(verify.headers.get('retry-after'), '5');
  const register = await apiRequest(srv.url, 'POST', '/api/v1/auth/register', { body: { email: `${hex().slice(0, 12)}@example.com`, password: 'correct horse battery staple' } });
  assert.is(register.status, 503, register.text);
  assert.is(register.body.error, 'service_unavailable');
  assert.ok(Date.now() - started < 15_000, 'answered, not hung (the connect timeout is 5 s)');
  const health = await apiRequest(srv.url, 'GET', '/healthz');
  assert.is(health.status, 503);
  assert.is(health.body.parts.store.status, 'error');
  assert.is(health.body.parts.store.engine, 'postgres');
  // a part that failed while the database was away (the log's checkpointer failed a round)
  // must not go on reporting that failure once the database is back
  assert.ok(await until(async () => (await apiRequest(srv.url, 'GET', '/healthz')).body.parts.transparency_log.status === 'error', 15_000), 'the checkpointer failed a round');

  await pg.up();
  assert.ok(await until(async () => (await apiRequest(srv.url, 'GET', `/api/v1/sign-it/verify?hash=${hex()}`)).status === 200, 15_000), 'verify answers again');
  const back = await apiRequest(srv.url, 'GET', '/healthz');
  assert.is(back.status, 200, back.text);
  const { user } = await srv.register();
  assert.ok(user.id, 'writes work again');
  assert.ok(await until(async () => (srv.deps.store as PgStore).listening, 15_000), 'the LISTEN connection is back');
});

const secrets = suite<{ dirs: string[] }>('nodes sharing a database share their secrets');

secrets.before((ctx) => {
  ctx.dirs = [];
});
secrets.after(({ dirs }) => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

secrets('the first node records the fingerprint; a node with the same keys starts, one with other keys refuses naming PROVENANT_SECRETS_DIR', async ({ dirs }) => {
  const url = await (await sharedPostgres()).createDatabase();
  const node = (secretsDir: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-node-'));
    dirs.push(dataDir);
    return loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_DATABASE_URL: url, PROVENANT_SECRETS_DIR: secretsDir, PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WORKERS: '1' });
  };
  const shared = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  dirs.push(shared);
  const first = await composeServer(node(join(shared, 'keys')));
  await first.parts.close();

  const copy = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  dirs.push(copy);
  cpSync(join(shared, 'keys'), join(copy, 'keys'), { recursive: true });
  const second = await composeServer(node(join(copy, 'keys')));
  await second.parts.close();

  const other = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  dirs.push(other);
  try {
    const third = await composeServer(node(join(other, 'keys')));
    await third.parts.close();
    assert.unreachable('a node with other keys started');
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.match((err as Error).message, /^PROVENANT_SECRETS_DIR: the keys in .* differ from those of the nodes that share this database/);
  }
});

runWithPostgres(async () => {
  outage.run();
  secrets.run();
});
