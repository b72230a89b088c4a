// Serving: open the database under the data directory, build the store and the app,
// listen, and close gracefully (stop accepting, finish in-flight requests, then close
// the pool and the database).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Db } from '../store/db.js';
import { createSqliteStore } from '../store/index.js';
import { createApp } from './app.js';
import type { Config } from './config.js';
import type { ServerDeps } from './deps.js';
import { createLogger, type Logger } from './log.js';
import { Metrics } from './metrics.js';
import { loadSecret } from './secrets.js';
import { closeVerifyCache } from './signit/cache.js';
import { closeMatching } from './matching/service.js';

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:8080. */
  url: string;
  deps: ServerDeps;
  server: Server;
  /** Stops accepting, waits for in-flight requests (up to `graceMs`, default 10 s), closes pool and db. */
  close(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  /** The fingerprint pool, when the matching feature provides one. */
  pool?: unknown;
}

export function databaseFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'provenant.db');
}

/** Opens the database and builds ServerDeps (no listening): for the server and the admin CLI. */
export async function openDeps(config: Config, options: StartOptions = {}): Promise<ServerDeps> {
  const log = options.log ?? createLogger(config.logLevel);
  const db = await Db.open(databaseFile(config), ({ version, name, ms }) => {
    if (ms === undefined) log.info('applying database migration', { version, name });
    else log.info('database migration applied', { version, name, ms });
  });
  // Generate the secrets now, not on the first request that needs them.
  loadSecret(config.dataDir, 'jwt.key');
  loadSecret(config.dataDir, 'cell.key');
  return { config, store: createSqliteStore(db), db, log, metrics: new Metrics(), pool: options.pool };
}

async function closePool(pool: unknown): Promise<void> {
  const p = pool as { close?: () => unknown; destroy?: () => unknown } | undefined;
  if (!p) return;
  if (typeof p.close === 'function') await p.close();
  else if (typeof p.destroy === 'function') await p.destroy();
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const deps = await openDeps(config, options);
  if (config.webhookAllowPrivate) {
    deps.log.warn('PROVENANT_WEBHOOK_ALLOW_PRIVATE=1: webhooks may reach loopback and private addresses. Tests only.');
  }
  if (!config.rateLimit) deps.log.warn('PROVENANT_RATE_LIMIT=off: per-IP rate limits are disabled.');
  const app = createApp(deps);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5_000;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await deps.db.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  // The default base URL names the port actually bound (PORT=0 picks one).
  if (!config.baseUrlFromEnv) config.baseUrl = url;
  deps.log.info('listening', { url, base_url: config.baseUrl, data_dir: config.dataDir });

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      force.unref();
      await stopped;
      clearTimeout(force);
      closeVerifyCache(deps);
      await closeMatching(deps);
      await closePool(deps.pool);
      await deps.db.close();
      deps.log.info('stopped');
    })());

  return { url, deps, server, close };
}
