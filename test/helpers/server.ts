// A real server for tests, built by the server's own composition root (startServer ->
// composeServer): fresh temp data directory, real SQLite file (or, with engine
// 'postgres', a fresh database on the test process's throwaway PostgreSQL), port 0 on
// 127.0.0.1, rate limits on unless overridden, logging silent.
import { createPublicKey, generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { databaseFile, loadConfig } from '../../server/src/config.js';
import type { ServerDeps } from '../../server/src/deps.js';
import pg from 'pg';
import { Db } from '../../server/src/store/sqlite/db.js';
import type { ComposeOptions } from '../../server/src/root.js';
import { startServer } from '../../server/src/serve.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';
import * as assert from 'uvu/assert';
import { sharedPostgres } from './postgres.js';
import { contractError, watchContract } from './contract.js';
import { tempDir } from './temp.js';

export type TestEngine = 'sqlite' | 'postgres';

/**
 * The engine a test file runs its servers on: `?engine=postgres` on the importing
 * module's URL (a file that runs another file's suites on PostgreSQL imports it so),
 * else PROVENANT_TEST_ENGINE, else SQLite.
 */
export function testEngine(moduleUrl: string): TestEngine {
  const engine = new URL(moduleUrl).searchParams.get('engine') ?? process.env.PROVENANT_TEST_ENGINE ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`unknown test engine "${engine}"`);
  return engine;
}

/**
 * The test's own connection to the server's database, for writes past the store
 * (tampering, ageing): statements with `?` placeholders, as SQLite takes them; on
 * PostgreSQL each `?` outside a quoted string becomes $1, $2, ...
 */
export interface TestSql {
  get<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  run(sql: string, params?: unknown[]): Promise<{ changes: number }>;
  close(): Promise<void>;
}

async function sqliteSql(file: string): Promise<TestSql> {
  const db = await Db.open(file);
  return {
    get: (sql, params = []) => db.get(sql, params),
    all: (sql, params = []) => db.all(sql, params),
    run: async (sql, params = []) => ({ changes: await db.run(sql, params) }),
    close: () => db.close(),
  };
}

function postgresSql(url: string): TestSql {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // an idle connection dropped by a stopped PostgreSQL must not crash the test process
  pool.on('error', () => undefined);
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/'(?:[^']|'')*'|\?/g, (m) => (m === '?' ? `$${++n}` : m));
  };
  const query = (sql: string, params: unknown[] = []) => pool.query(numbered(sql), params);
  return {
    get: async (sql, params) => (await query(sql, params)).rows[0],
    all: async (sql, params) => (await query(sql, params)).rows,
    run: async (sql, params) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
    close: () => pool.end(),
  };
}

export interface TestServerOptions extends ComposeOptions {
  /** Default: testEngine() of this helper (PROVENANT_TEST_ENGINE, else SQLite). */
  engine?: TestEngine;
}

export interface TestUser {
  token: string;
  user: { id: string; email: string | null; [key: string]: unknown };
}

export interface TestServer {
  url: string;
  deps: ServerDeps;
  dataDir: string;
  /** The node:http server (e.g. to wait for a request to arrive). */
  http: Server;
  /** Which engine holds the server's data. */
  engine: TestEngine;
  /** A connection of the test's own to the server's database, for writes past the store (tampering, ageing); closed by close(). */
  sql(): Promise<TestSql>;
  close(): Promise<void>;
  /** Registers (POST /api/v1/auth/register) a user; a unique e-mail when none is given. */
  register(email?: string, opts?: { password?: string; display_name?: string; username?: string }): Promise<TestUser>;
}

let counter = 0;

export async function startTestServer(envOverrides: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const { engine = testEngine(import.meta.url), ...composeOptions } = options;
  const dataDir = tempDir('provenant-test-');
  const databaseUrl = engine === 'postgres' ? await (await sharedPostgres()).createDatabase() : undefined;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PROVENANT_DATA_DIR: dataDir,
    PROVENANT_LOG_LEVEL: 'silent',
    PROVENANT_WORKERS: '1',
    ...(databaseUrl === undefined ? {} : { PROVENANT_DATABASE_URL: databaseUrl }),
    ...envOverrides,
  });
  const running = await startServer(config, composeOptions);
  // every JSON answer is checked against GET /openapi.json's schema for its route and status (contract.ts)
  const contract = watchContract(running.server);
  let db: Promise<TestSql> | undefined;
  return {
    url: running.url,
    deps: running.deps,
    dataDir,
    engine,
    http: running.server,
    sql: () => (db ??= config.databaseUrl === null ? sqliteSql(databaseFile(config)) : Promise.resolve(postgresSql(config.databaseUrl))),
    async close() {
      await running.close(2_000);
      if (db) await (await db).close();
      rmSync(dataDir, { recursive: true, force: true });
      const broken = contractError(contract);
      if (broken) throw broken;
    },
    async register(email, opts = {}) {
      counter += 1;
      const body = {
        email: email ?? `user${process.pid}-${Date.now()}-${counter}@example.com`,
        password: opts.password ?? 'correct horse battery staple',
        ...(opts.display_name !== undefined ? { display_name: opts.display_name } : {}),
        ...(opts.username !== undefined ? { username: opts.username } : {}),
      };
      const res = await fetch(`${running.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as TestUser & { error?: string; message?: string };
      if (res.status !== 201) throw new Error(`register failed: ${res.status} ${json.error}: ${json.message}`);
      return { token: json.token, user: json.user };
    },
  };
}

/** An answer of `apiRequest`: the status, the headers, the body as text and as JSON (null when it is none). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any; // tests read answers of many shapes
}

/**
 * A request to a test server: a bearer `token`, and a JSON body given as a value
 * (`body`, stringified) or as text (`text`, sent as is: values JSON.stringify cannot
 * make, such as nesting deeper than its stack).
 */
export async function apiRequest(baseUrl: string, method: string, path: string, opts: { token?: string; body?: unknown; text?: string } = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const payload = opts.text ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: left null, the caller sees `text`
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** A registered user of `srv` with a server-hosted cell on `tier`: its session token, id and the cell's agent key. */
export async function serverCellUser(srv: TestServer, tier: 'premium' | 'premium_plus'): Promise<{ token: string; userId: string; agentKey: string }> {
  const { token, user } = await srv.register();
  const cell = await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, tier);
  return { token, userId: user.id, agentKey: cell.agentKey };
}

/** A vault identity of the test's own: its key, agent key, and the token and user id of its login. */
export interface VaultDevice {
  privateKey: KeyObject;
  agentKey: string;
  token: string;
  userId: string;
}

/** A fresh vault identity on the server at `baseUrl`: a key made here, logged in by challenge (its account is created then). */
export async function vaultDevice(baseUrl: string): Promise<VaultDevice> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const agentKey = agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(jwk.x), 'base64url')));
  const ch = await apiRequest(baseUrl, 'POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: agentKey } });
  const signature = edSign(null, Buffer.from(ch.body.challenge, 'utf8'), privateKey).toString('base64');
  const login = await apiRequest(baseUrl, 'POST', '/api/v1/auth/vault/token', { body: { challenge: ch.body.challenge, agent_pub_key: agentKey, signature } });
  assert.ok(login.status === 200 || login.status === 201, login.text);
  return { privateKey, agentKey, token: login.body.token, userId: login.body.user.id };
}
