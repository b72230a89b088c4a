// Serving: the parts from the composition root (root.ts), the app over them, listen,
// and close gracefully (stop accepting, finish in-flight requests, then close the
// parts in reverse order).
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import type { Config } from './config.js';
import type { ServerDeps } from './deps.js';
import { composeServer, type ComposeOptions } from './root.js';

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:8080. */
  url: string;
  deps: ServerDeps;
  server: Server;
  /** Stops accepting, waits for in-flight requests (up to `graceMs`, default 10 s), closes the parts. */
  close(graceMs?: number): Promise<void>;
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

export async function startServer(config: Config, options: ComposeOptions = {}): Promise<RunningServer> {
  const deps = await composeServer(config, options);
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
    // what was started keeps the process alive (the pool, the index thread) or the database open
    await deps.parts.close().catch((closeErr: Error) => deps.log.error('closing after a failed start', { error: closeErr.message }));
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
      await deps.parts.close();
      deps.log.info('stopped');
    })());

  return { url, deps, server, close };
}
