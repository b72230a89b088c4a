// A local cluster for trying Provenant's scale-out: PostgreSQL 15, Redis and two nodes
// (`provenant serve` from the compiled server) on two ports, all on 127.0.0.1.
//
//   npm run build:ts && node scripts/cluster.mjs [--dir DIR] [--ports 8081,8082]
//
// Data goes in DIR (kept, and reused on the next run) or in a temporary directory
// (removed at the end): DIR/postgres (the database cluster, owned by the postgres user
// when run as root), DIR/secrets (the keys both nodes share), DIR/node-1 and DIR/node-2.
// PostgreSQL and Redis listen on free loopback ports; PostgreSQL trusts loopback (a
// local playground, not a deployment: docs/deployment.md). Ctrl-C stops everything.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, chownSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const CLI = join(root, 'dist/src/cli/main.js');

const { values } = parseArgs({
  options: { dir: { type: 'string' }, ports: { type: 'string', default: '8081,8082' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help) {
  console.log('usage: node scripts/cluster.mjs [--dir DIR] [--ports PORT1,PORT2]');
  process.exit(0);
}
const ports = values.ports.split(',').map(Number);
if (ports.length !== 2 || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) fail(`--ports: expected two ports, got "${values.ports}"`);
if (!existsSync(CLI) || !existsSync(join(root, 'server/dist'))) fail('the compiled server is missing: run npm run build:ts first');
for (const bin of [join(PG_BIN, 'initdb'), join(PG_BIN, 'pg_ctl')]) if (!existsSync(bin)) fail(`${bin} is missing: apt-get install postgresql (or set PG_BIN)`);
if (spawnSync('redis-server', ['--version']).status !== 0) fail('redis-server is missing: apt-get install redis-server');

const keep = values.dir !== undefined;
const dir = keep ? resolve(values.dir) : mkdtempSync(join(tmpdir(), 'provenant-cluster-'));
mkdirSync(dir, { recursive: true, mode: 0o700 });
const pgData = join(dir, 'postgres');
const asRoot = userInfo().uid === 0;
const children = [];
let stopping = false;

function fail(message) {
  console.error(`cluster: ${message}`);
  process.exit(1);
}

function freePort() {
  return new Promise((done, failed) => {
    const server = createServer();
    server.on('error', failed);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its tools run as the postgres user. */
function pgCommand(tool, args) {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args]] : [join(PG_BIN, tool), args];
}

function runPg(tool, args) {
  const [cmd, argv] = pgCommand(tool, args);
  const res = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${tool} failed: ${(res.stderr || res.stdout).trim()}`);
  return res.stdout;
}

/** Starts a long-running child whose output lines are prefixed with its name. */
function start(name, cmd, args, env = {}) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream, out) => {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) out.write(`[${name}] ${line}\n`);
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`cluster: ${name} exited (${signal ?? code}); stopping the rest`);
      void stopAll(1);
    }
  });
  children.push({ name, child });
  return child;
}

async function waitFor(what, check, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what} did not come up within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function startPostgres(port) {
  if (!existsSync(join(pgData, 'PG_VERSION'))) {
    mkdirSync(pgData, { recursive: true, mode: 0o700 });
    if (asRoot) {
      const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
      const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
      chownSync(pgData, Number(pw.stdout), Number(gid.stdout));
      // the postgres user must be able to reach DIR (tmpdir is 0700 root otherwise)
      spawnSync('chmod', ['o+x', dir]);
    }
    runPg('initdb', ['-D', pgData, '-U', 'provenant', '--auth=trust', '-E', 'UTF8', '--no-locale']);
  }
  const [cmd, argv] = pgCommand('postgres', ['-D', pgData, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${pgData}`, '-c', 'max_connections=200']);
  start('postgres', cmd, argv);
  await waitFor('PostgreSQL', async () => spawnSync(join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'provenant', '-d', 'postgres']).status === 0);
  const exists = spawnSync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'provenant', '-d', 'postgres', '-tAc', "SELECT 1 FROM pg_database WHERE datname = 'provenant'"], { encoding: 'utf8' });
  if (exists.stdout.trim() !== '1') {
    const made = spawnSync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'provenant', '-d', 'postgres', '-c', 'CREATE DATABASE provenant'], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`CREATE DATABASE failed: ${made.stderr.trim()}`);
  }
  return `postgres://provenant@127.0.0.1:${port}/provenant`;
}

async function healthy(url) {
  const res = await fetch(`${url}/healthz`);
  return res.status === 200;
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  // nodes first (they drain on SIGTERM), then Redis and PostgreSQL
  for (const { child } of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  if (!keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`cluster: data kept in ${dir}`);
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  const databaseUrl = await startPostgres(await freePort());
  const redisPort = await freePort();
  mkdirSync(join(dir, 'redis'), { recursive: true });
  start('redis', 'redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', join(dir, 'redis')]);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const secretsDir = join(dir, 'secrets');
  const env = { PROVENANT_DATABASE_URL: databaseUrl, PROVENANT_REDIS_URL: redisUrl, PROVENANT_SECRETS_DIR: secretsDir };
  writeFileSync(join(dir, 'cluster.env'), Object.entries(env).map(([k, v]) => `${k}=${v}\n`).join(''), { mode: 0o600 });
  // one node at a time: the first makes the secrets and applies the migrations
  const urls = [];
  for (const [i, port] of ports.entries()) {
    const dataDir = join(dir, `node-${i + 1}`);
    const url = `http://127.0.0.1:${port}`;
    start(`node-${i + 1}`, process.execPath, [CLI, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], env);
    await waitFor(`node ${i + 1}`, () => healthy(url), 60_000);
    urls.push(url);
  }
  console.log(`
cluster: up
  node 1          ${urls[0]}
  node 2          ${urls[1]}
  PostgreSQL      ${databaseUrl}
  Redis           ${redisUrl}
  secrets         ${secretsDir}
  variables       ${join(dir, 'cluster.env')} (for the admin CLI: set -a; . ${join(dir, 'cluster.env')}; set +a)
Ctrl-C stops all.`);
} catch (err) {
  console.error(`cluster: ${err.message}`);
  await stopAll(1);
}
