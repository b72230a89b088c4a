// The Redis the nodes of a cluster share (PROVENANT_REDIS_URL): one ioredis client per
// node, built and closed by the composition root. It holds the per-IP rate-limit windows
// (ratelimit.ts); cache invalidations do not go through it, they follow the store's
// change feed (docs/deployment.md says why).
//
// Commands never wait for a connection that is not there: no offline queue, one try,
// a short command timeout. So while Redis is away a command fails at once and its
// caller falls back (the rate limiter to the node's own windows); ioredis reconnects in
// the background and the next command after 'ready' uses Redis again, without a restart.
import { Redis } from 'ioredis';
import type { Logger } from './log.js';
import type { PartHealth } from './parts.js';

/** A command that has not answered after this is failed (the request then falls back). */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 2_000;
/** Reconnect backoff: 100 ms more per attempt, at most 2 s between attempts. */
const MAX_RECONNECT_DELAY_MS = 2_000;

export class SharedRedis {
  readonly client: Redis;
  /** When the connection was lost (null while connected), for /healthz and the log. */
  private downSince: number | null = null;

  constructor(
    url: string,
    private readonly log: Logger,
  ) {
    this.client = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
      keyPrefix: 'provenant:',
    });
    // without a listener an 'error' event would end the process
    this.client.on('error', (err: Error) => {
      if (this.downSince === null) {
        this.downSince = Date.now();
        this.log.error('redis unavailable; rate limits fall back to this node alone until it returns', { error: err.message });
      }
    });
    this.client.on('close', () => {
      this.downSince ??= Date.now();
    });
    this.client.on('ready', () => {
      if (this.downSince !== null) this.log.warn('redis is back', { down_ms: Date.now() - this.downSince });
      this.downSince = null;
    });
  }

  /** Connects and checks Redis answers: a node does not start on a Redis it cannot reach (a wrong URL shows at once). */
  async start(): Promise<void> {
    try {
      await this.client.connect();
      await this.client.ping();
    } catch (err) {
      this.client.disconnect();
      throw new Error(`PROVENANT_REDIS_URL: cannot reach Redis (${err instanceof Error ? err.message : String(err)})`);
    }
    this.downSince = null;
  }

  /** Connected and ready for commands. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /**
   * ok with the round trip, or degraded while Redis is away: the node still answers
   * (rate limits per node), so it stays in a load balancer's rotation.
   */
  async health(): Promise<PartHealth> {
    if (!this.ready) {
      return { status: 'degraded', connected: false, down_ms: this.downSince === null ? null : Date.now() - this.downSince };
    }
    const started = performance.now();
    try {
      await this.client.ping();
    } catch (err) {
      return { status: 'degraded', connected: false, error: err instanceof Error ? err.message : String(err) };
    }
    return { status: 'ok', connected: true, ping_ms: Math.round((performance.now() - started) * 10) / 10 };
  }

  /** QUIT when connected (pending replies arrive first), else drops the reconnect loop. */
  async close(): Promise<void> {
    if (this.ready) {
      await this.client.quit().catch(() => this.client.disconnect());
    } else {
      this.client.disconnect();
    }
  }
}
