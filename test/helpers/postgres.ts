// A throwaway PostgreSQL 15 for tests: initdb in a temporary directory, the server on a
// free loopback port (its socket in the same directory), trust authentication for the
// role `provenant`, durability off (fsync, synchronous_commit: a test cluster is thrown
// away), stopped and removed by stop() or when the process exits. PostgreSQL refuses to
// run as root, so as root its tools run as the `postgres` user (runuser). Where the
// binaries are missing the suites that need them are skipped and say why; under CI=true
// that is a failure (.ci/run installs postgresql).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from './redis.js';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const ROLE = 'provenant';
const asRoot = process.getuid?.() === 0;

/** The uid and gid of the `postgres` user (as root, the server runs as that user). */
function postgresUser(): { uid: number; gid: number } | null {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Why no PostgreSQL can be started here (null: it can). */
export function postgresUnavailable(): string | null {
  for (const tool of ['initdb', 'pg_ctl', 'postgres']) {
    if (!existsSync(join(PG_BIN, tool))) return `${join(PG_BIN, tool)} is missing (apt-get install postgresql, or set PG_BIN)`;
  }
  if (asRoot && postgresUser() === null) return 'running as root and there is no `postgres` user to run PostgreSQL as';
  return null;
}

/**
 * Runs `run` (which runs the suites) when PostgreSQL can be started; otherwise says why
 * and skips them, or under CI=true runs one failing test in their place.
 */
export function runWithPostgres(run: () => void | Promise<void>): void | Promise<void> {
  const reason = postgresUnavailable();
  if (reason === null) return run();
  if (process.env.CI === 'true') {
    const ci = suite('PostgreSQL (CI)');
    ci('PostgreSQL is installed', () => assert.unreachable(reason));
    return ci.run();
  }
  console.log(`  (skipped: ${reason})`);
}

export interface TestPostgres {
  port: number;
  /** postgres://provenant@127.0.0.1:PORT/provenant (a database made at start). */
  url: string;
  /** A new empty database, for one suite or one test; its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server (fast shutdown), keeping its data: connections fail until up(). */
  down(): Promise<void>;
  /** Starts it again on the same port, with its data (after down()). */
  up(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** A PostgreSQL tool, as the postgres user when we are root. */
function runTool(tool: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args]] : [join(PG_BIN, tool), args];
  const res = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  return { status: res.status, stdout: res.stdout ?? '', stderr: (res.stderr ?? '') + (res.error ? String(res.error) : '') };
}

let databases = 0;
let signalsHandled = false;

/** Ctrl-C or a SIGTERM ends the process through exit(), so the 'exit' handlers stop every server. */
function exitOnSignals(): void {
  if (signalsHandled) return;
  signalsHandled = true;
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/** Initialises and starts a PostgreSQL on a free loopback port; resolves once it accepts connections. */
export async function startPostgres(): Promise<TestPostgres> {
  const reason = postgresUnavailable();
  if (reason !== null) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'provenant-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const user = postgresUser()!;
    chownSync(dir, user.uid, user.gid);
  }
  chmodSync(dir, 0o700);
  const init = runTool('initdb', ['-D', data, '-U', ROLE, '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr.trim()}`);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  let running = false;
  const stopNow = (mode: 'fast' | 'immediate') => {
    if (!running) return;
    runTool('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
    running = false;
  };
  // a test process that ends (or is interrupted) leaves no server behind
  exitOnSignals();
  const onExit = () => {
    stopNow('immediate');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  async function up(): Promise<void> {
    if (running) throw new Error('this PostgreSQL is running');
    const started = runTool('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
    if (started.status !== 0) throw new Error(`pg_ctl start failed: ${started.stderr.trim() || started.stdout.trim()}`);
    running = true;
  }

  await up();
  const admin = async (sql: string) => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: ROLE, database: 'postgres' });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const urlOf = (database: string) => `postgres://${ROLE}@127.0.0.1:${port}/${database}`;
  await admin(`CREATE DATABASE ${ROLE}`);
  return {
    port,
    url: urlOf(ROLE),
    async createDatabase() {
      databases += 1;
      const name = `test_${process.pid}_${databases}`;
      await admin(`CREATE DATABASE ${name}`);
      return urlOf(name);
    },
    async down() {
      stopNow('fast');
    },
    up,
    async stop() {
      process.removeListener('exit', onExit);
      onExit();
    },
  };
}

let shared: Promise<TestPostgres> | undefined;

/** One PostgreSQL for the whole test process, started on first use, stopped when the process exits. */
export function sharedPostgres(): Promise<TestPostgres> {
  return (shared ??= startPostgres());
}
