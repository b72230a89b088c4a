// Other nodes' changes on PostgreSQL: the change feed (../feed.ts) tells them of this
// node's commits by NOTIFY (pg_notify in the appending transaction is delivered at its
// commit), and each node keeps one LISTEN connection of its own, waking its onRemote
// listeners, who catch up with since() from their own seq. The connection reconnects
// with backoff after a drop and wakes them once it is back, so changes committed while
// it was down are read too: a notification carries no data, and missing one loses nothing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { RemoteChanges } from '../feed.js';
import type { Queryable } from '../sql.js';

/** The NOTIFY channel; the payload is the writing node's id (a node ignores its own). */
const CHANNEL = 'provenant_changes';
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export class PgNotifications implements RemoteChanges {
  private readonly remote = new Set<() => void>();
  /** This node's id in notifications. */
  private readonly nodeId = randomUUID();
  private listener: pg.Client | null = null;
  private reconnect: NodeJS.Timeout | undefined;
  private backoffMs = RECONNECT_MIN_MS;
  private closed = false;
  /** The LISTEN connection is up (for /healthz). */
  listening = false;

  constructor(
    /** The connection settings of the pool (db.ts). */
    private readonly config: pg.ClientConfig,
    private readonly onConnectionError: (err: Error) => void,
  ) {}

  async notify(tx: Queryable): Promise<void> {
    await tx.run('SELECT pg_notify(?, ?)', [CHANNEL, this.nodeId]);
  }

  onRemote(listener: () => void): () => void {
    // a wrapper per registration: the same function registered twice is woken twice
    const entry = () => listener();
    this.remote.add(entry);
    return () => this.remote.delete(entry);
  }

  private wake(): void {
    for (const listener of this.remote) {
      try {
        listener();
      } catch {
        // a consumer's failure must not stop the others
      }
    }
  }

  /** Opens the LISTEN connection (and keeps it open until close()). */
  async listen(): Promise<void> {
    const client = new pg.Client(this.config);
    // an error on the connection is followed by 'end'; handled there
    client.on('error', (err) => this.onConnectionError(err));
    client.on('end', () => {
      if (this.listener !== client) return;
      this.listener = null;
      this.listening = false;
      this.scheduleReconnect();
    });
    client.on('notification', (msg) => {
      if (msg.payload !== this.nodeId) this.wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.listening = true;
    this.backoffMs = RECONNECT_MIN_MS;
    // whatever was committed while no connection listened is read now
    this.wake();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnect !== undefined) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      this.listen().catch((err: Error) => {
        this.onConnectionError(err);
        this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
        this.scheduleReconnect();
      });
    }, this.backoffMs);
    this.reconnect.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    this.reconnect = undefined;
    const client = this.listener;
    this.listener = null;
    this.listening = false;
    if (client) await client.end().catch(() => undefined);
  }
}
