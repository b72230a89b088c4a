// Serving: open the database under the data directory, build the store and the app,
// listen, and close gracefully (stop accepting, finish in-flight requests, then close
// the pool and the database).
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Db } from './store/db.js';
import { createSqliteStore } from './store/index.js';
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
  try {
    // Generate the secrets now, not on the first request that needs them.
    loadSecret(config.dataDir, 'jwt.key');
    loadSecret(config.dataDir, 'cell.key');
  } catch (err) {
    await db.close();
    throw err;
  }
  return { config, store: createSqliteStore(db), db, log, metrics: new Metrics(), pool: options.pool };
}

async function closePool(pool: unknown): Promise<void> {
  const p = pool as { close?: () => unknown; destroy?: () => unknown } | undefined;
  if (!p) return;
  if (typeof p.close === 'function') await p.close();
  else if (typeof p.destroy === 'function') await p.destroy();
}

/**
 * Closes everything openDeps and the routers started (the verify cache's timer, the
 * match index thread, the pool, the database), in that order: the one list for a
 * shutdown and for a start that failed.
 */
export async function closeDeps(deps: ServerDeps): Promise<void> {
  closeVerifyCache(deps);
  await closeMatching(deps);
  await closePool(deps.pool);
  await deps.db.close();
}

/**
 * The node:http server with the configured timeouts: every phase in which the client
 * is the one to send has a bound (headers, the whole request, the pause between
 * keep-alive requests), and a socket with no traffic either way is destroyed (a
 * client that stops reading its answer).
 */
function httpServer(config: Config, handler: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      // how often node looks for requests past those bounds (its default, 30 s, would
      // let each overrun by up to that much)
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs / 2),
    },
    handler,
  );
  server.timeout = config.idleTimeoutMs;
  return server;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const deps = await openDeps(config, options);
  let server: Server;
  try {
    if (config.webhookAllowPrivate) {
      deps.log.warn('PROVENANT_WEBHOOK_ALLOW_PRIVATE=1: webhooks may reach loopback and private addresses. Tests only.');
    }
    if (!config.rateLimit) deps.log.warn('PROVENANT_RATE_LIMIT=off: per-IP rate limits are disabled.');
    server = httpServer(config, createApp(deps).callback());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // what was started keeps the process alive (the index thread) or the database open
    await closeDeps(deps).catch((closeErr: Error) => deps.log.error('closing after a failed start', { error: closeErr.message }));
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
      await closeDeps(deps);
      deps.log.info('stopped');
    })());

  return { url, deps, server, close };
}
