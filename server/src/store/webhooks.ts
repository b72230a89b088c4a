// Webhooks, their deliveries and the event outbox they are fed from (spec 2.7, 3.2;
// decisions.md 8). The interface, its values, the rows as both engines read them and
// the queries, written once for every engine (./sql.ts).
//
// Several dispatchers (nodes) at once: one routes the outbox at a time (the routing
// lock, tried, never waited for), so a webhook's deliveries queue in event order; a
// claim passes over deliveries another dispatcher is claiming (FOR UPDATE SKIP LOCKED;
// SQLite's one writer serialises claims anyway), and a lease covers a dispatcher that
// dies; a create counts its organization's webhooks under that organization's row lock.
import { randomUUID } from 'node:crypto';
import { flag, type Db, type Queryable } from './sql.js';

/** A row for the webhook dispatcher (decisions.md 8), written with its cause. */
export interface OutboxEvent {
  appId: string;
  type: string;
  /** The event-specific fields of spec 6 (the dispatcher adds `event` and `timestamp`). */
  payload: Record<string, unknown>;
}

/** Spec 2.7 filters: only `file_hash` (lowercase hex), applied to `sign.created`. */
export interface WebhookFilters {
  file_hash?: string;
}

/** A webhook as stored (spec 2.7, 3.2). */
export interface Webhook {
  id: string;
  appId: string;
  /** The organization its count is charged to (the app's, or its owner's personal one). */
  orgId: string;
  url: string;
  events: string[];
  filters: WebhookFilters;
  /** The signing secret as the domain sealed it (the store does not read it). */
  sealedSecret: string;
  active: boolean;
  /** When it last became active (its creation, or the PUT that re-enabled it): events from before are not its. */
  activeSince: number;
  /** Consecutive failed deliveries (spec 3.2). */
  failureCount: number;
  lastTriggeredAt: number | null;
  /** Kept, never returned (spec 2.7). */
  lastFailureAt: number | null;
  createdAt: number;
}

export type NewWebhook = Omit<Webhook, 'active' | 'activeSince' | 'failureCount' | 'lastTriggeredAt' | 'lastFailureAt'>;

/** A PUT (spec 4.15): `active: true` also resets the failure count; a change of `active` drops its pending deliveries. */
export interface WebhookPatch {
  url?: string;
  events?: string[];
  filters?: WebhookFilters;
  active?: boolean;
}

/** An outbox row as the dispatcher routes it. */
export interface QueuedEvent {
  id: number;
  appId: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: number;
}

/** One event for one webhook, claimed for sending. */
export interface WebhookDelivery {
  /** A UUID, the X-Service-Delivery header: the same on every attempt of this event to this webhook. */
  id: string;
  webhookId: string;
  url: string;
  sealedSecret: string;
  event: QueuedEvent;
  /** Claims so far, this one included (above 1: a dispatcher died while sending it). */
  attempts: number;
}

export interface WebhooksStore {
  /**
   * In one transaction: counts the webhooks of `webhook.orgId` (across its apps) and
   * stores the webhook unless that count has reached `limit` (null: unlimited), so
   * concurrent creates never pass the limit.
   */
  create(webhook: NewWebhook, limit: number | null): Promise<Webhook | 'limit_reached'>;
  get(id: string): Promise<Webhook | null>;
  /** Oldest first. */
  listForApp(appId: string): Promise<Webhook[]>;
  /** Null when no such webhook. Re-enabling an inactive one makes `now` its activeSince. */
  update(id: string, patch: WebhookPatch, now: number): Promise<Webhook | null>;
  /** Removes the webhook and its pending deliveries; false when no such webhook. */
  delete(id: string): Promise<boolean>;
  /**
   * In one transaction: takes up to `limit` undelivered outbox rows, oldest first (rows
   * another dispatcher is routing are skipped, never waited for), asks `route` which of
   * the app's active webhooks each goes to, queues one delivery per chosen webhook and
   * marks the row dispatched at `now`. Returns the number of rows routed.
   */
  routeEvents(limit: number, now: number, route: (event: QueuedEvent, webhooks: readonly Webhook[]) => readonly Webhook[]): Promise<number>;
  /**
   * Up to `limit` deliveries due at `now`, each leased until `leaseUntil`: per webhook
   * only its oldest unfinished delivery, and only while its webhook is active, so a
   * webhook gets one request at a time, in event order. A lease that runs out (a
   * dispatcher died) makes the delivery due again, with the same id.
   */
  claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Records the outcome (spec 3.2): 2xx resets the failure count and sets
   * last_triggered_at; a failure counts, and the `maxFailures`th consecutive one makes
   * the webhook inactive and drops its pending deliveries. 'gone' when the delivery or
   * its webhook was deleted meanwhile, and, with `claim` (WebhookDelivery.attempts),
   * when another claim has taken the delivery since (nothing is recorded then).
   */
  finishDelivery(id: string, outcome: { ok: boolean; at: number }, maxFailures: number, claim?: number): Promise<'delivered' | 'failed' | 'disabled' | 'gone'>;
  /**
   * Extends the lease of a delivery being sent to `leaseUntil`, if `claim` (its
   * WebhookDelivery.attempts: each claim numbers it) is still the current claim and the
   * delivery is unfinished: true then. False when another claim took it (the lease ran
   * out and someone claimed it again) or it was finished or deleted: the sender must not
   * send (or record) it. A claim that took it waits for a lease renewed meanwhile.
   */
  renewDelivery(id: string, claim: number, leaseUntil: number): Promise<boolean>;
  /** Outbox rows not yet routed and deliveries not yet finished (for /healthz). */
  backlog(): Promise<{ events: number; deliveries: number }>;
}
// ---------------------------------------------------------------- rows

interface WebhookRow {
  id: string;
  app_id: string;
  org_id: string;
  url: string;
  events: string;
  filters: string;
  sealed_secret: string;
  active: boolean | number;
  active_since: number;
  failure_count: number;
  last_triggered_at: number | null;
  last_failure_at: number | null;
  created_at: number;
}

const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  appId: r.app_id,
  orgId: r.org_id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  filters: JSON.parse(r.filters) as Webhook['filters'],
  sealedSecret: r.sealed_secret,
  active: flag(r.active),
  activeSince: r.active_since,
  failureCount: r.failure_count,
  lastTriggeredAt: r.last_triggered_at,
  lastFailureAt: r.last_failure_at,
  createdAt: r.created_at,
});

interface OutboxRow {
  id: number;
  app_id: string;
  type: string;
  payload: string;
  created_at: number;
}

const toEvent = (r: OutboxRow): QueuedEvent => ({
  id: r.id,
  appId: r.app_id,
  type: r.type,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  createdAt: r.created_at,
});

// ---------------------------------------------------------------- queries

/** Writes `events` to the outbox in the caller's transaction, in order, as one statement. */
export async function insertEvents(db: Db, tx: Queryable, events: readonly OutboxEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  const batch = db.dialect.batch(
    [['app_id', 'text'], ['type', 'text'], ['payload', 'text']],
    events.map((e) => [e.appId, e.type, JSON.stringify(e.payload)]),
  );
  await tx.run(`INSERT INTO event_outbox (app_id, type, payload, created_at) SELECT app_id, type, payload, ? FROM ${batch.from} ORDER BY n`, [
    now,
    ...batch.params,
  ]);
}

/** Ends the webhook's unfinished deliveries without sending them (it went inactive). */
async function dropPending(q: Queryable, webhookId: string, now: number): Promise<void> {
  await q.run("UPDATE webhook_deliveries SET finished_at = ?, outcome = 'dropped' WHERE webhook_id = ? AND finished_at IS NULL", [now, webhookId]);
}

export function createWebhooksStore(db: Db): WebhooksStore {
  const d = db.dialect;
  const webhookOf = async (q: Queryable, id: string, lock = ''): Promise<Webhook | null> => {
    const row = await q.get<WebhookRow>(`SELECT * FROM webhooks WHERE id = ? ${lock}`, [id]);
    return row ? toWebhook(row) : null;
  };

  // Per webhook its oldest unfinished delivery only (one request at a time, in event
  // order); a head another dispatcher is claiming is skipped, and its webhook then has
  // nothing due here.
  const CLAIMABLE = `
    SELECT d.seq, d.id, d.webhook_id, d.attempts, w.url, w.sealed_secret,
           e.id AS event_id, e.app_id, e.type, e.payload, e.created_at
    FROM webhook_deliveries d
    JOIN webhooks w ON w.id = d.webhook_id
    JOIN event_outbox e ON e.id = d.event_id
    WHERE d.seq IN (SELECT min(seq) FROM webhook_deliveries WHERE finished_at IS NULL GROUP BY webhook_id)
      AND d.due_at <= ? AND w.active = ${d.true}
    ORDER BY d.seq
    LIMIT ?
    ${d.lock('update', { of: 'd', skipLocked: true })}`;

  return {
    create(webhook, limit) {
      return db.transaction(async (tx) => {
        if (limit !== null) {
          // the organization's row lock serialises its creates, so the count holds until commit
          await tx.get(`SELECT id FROM orgs WHERE id = ? ${d.lock('update')}`, [webhook.orgId]);
          const row = await tx.get<{ n: number }>('SELECT count(*) AS n FROM webhooks WHERE org_id = ?', [webhook.orgId]);
          if ((row?.n ?? 0) >= limit) return 'limit_reached' as const;
        }
        await tx.run(
          'INSERT INTO webhooks (id, app_id, org_id, url, events, filters, sealed_secret, created_at, active_since) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [webhook.id, webhook.appId, webhook.orgId, webhook.url, JSON.stringify(webhook.events), JSON.stringify(webhook.filters), webhook.sealedSecret, webhook.createdAt, webhook.createdAt],
        );
        return (await webhookOf(tx, webhook.id))!;
      }, 'app');
    },

    get: (id) => webhookOf(db, id),

    async listForApp(appId) {
      return (await db.all<WebhookRow>('SELECT * FROM webhooks WHERE app_id = ? ORDER BY created_at, id', [appId])).map(toWebhook);
    },

    update(id, patch, now) {
      return db.transaction(async (tx) => {
        const current = await webhookOf(tx, id, d.lock('update'));
        if (current === null) return null;
        const reenabled = patch.active === true;
        await tx.run(
          `UPDATE webhooks SET url = ?, events = ?, filters = ?, active = ?,
             failure_count = CASE WHEN ? THEN 0 ELSE failure_count END,
             active_since = CASE WHEN ? AND active = ${d.false} THEN ? ELSE active_since END WHERE id = ?`,
          [
            patch.url ?? current.url,
            JSON.stringify(patch.events ?? current.events),
            JSON.stringify(patch.filters ?? current.filters),
            patch.active ?? current.active,
            reenabled,
            reenabled,
            now,
            id,
          ],
        );
        // off: nothing more goes out; back on: what was queued before is not its (activeSince)
        if (patch.active !== undefined && patch.active !== current.active) await dropPending(tx, id, now);
        return webhookOf(tx, id);
      });
    },

    async delete(id) {
      return (await db.run('DELETE FROM webhooks WHERE id = ?', [id])) > 0;
    },

    async routeEvents(limit, now, route) {
      // a read first: a writing transaction (which signs may wait for) only when there is work
      if (!(await db.get('SELECT 1 FROM event_outbox WHERE dispatched_at IS NULL LIMIT 1'))) return 0;
      return db.transaction(async (tx) => {
        // one router at a time (another node routing now routes these too): a webhook's
        // deliveries then queue in event order, which concurrent routers would interleave; its
        // rows are waited for, never skipped (a skipped event would queue after later ones)
        if (!(await d.trySerialise(tx, 'webhookRouting'))) return 0;
        const rows = await tx.all<OutboxRow>(
          `SELECT id, app_id, type, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT ? ${d.lock('update')}`,
          [limit],
        );
        for (const row of rows) {
          const event = toEvent(row);
          // FOR SHARE: a concurrent disable (finishDelivery, PUT) waits for this commit, then drops
          // what it queued; one that committed first is seen here (its row no longer active)
          const candidates = await tx.all<WebhookRow>(`SELECT * FROM webhooks WHERE app_id = ? AND active = ${d.true} ORDER BY created_at, id ${d.lock('share')}`, [event.appId]);
          for (const webhook of route(event, candidates.map(toWebhook))) {
            await tx.run('INSERT INTO webhook_deliveries (id, event_id, webhook_id, due_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [randomUUID(), event.id, webhook.id, now]);
          }
          await tx.run('UPDATE event_outbox SET dispatched_at = ? WHERE id = ?', [now, event.id]);
        }
        return rows.length;
      });
    },

    async claimDeliveries(now, leaseUntil, limit) {
      if (!(await db.get('SELECT 1 FROM webhook_deliveries WHERE finished_at IS NULL AND due_at <= ? LIMIT 1', [now]))) return [];
      return db.transaction(async (tx) => {
        const rows = await tx.all<{
          seq: number; id: string; webhook_id: string; attempts: number; url: string; sealed_secret: string;
          event_id: number; app_id: string; type: string; payload: string; created_at: number;
        }>(CLAIMABLE, [now, limit]);
        if (rows.length === 0) return [];
        await tx.run(`UPDATE webhook_deliveries SET due_at = ?, attempts = attempts + 1 WHERE ${d.inList('seq', 'bigint')}`, [leaseUntil, d.list(rows.map((r) => r.seq))]);
        return rows.map((r): WebhookDelivery => ({
          id: r.id,
          webhookId: r.webhook_id,
          url: r.url,
          sealedSecret: r.sealed_secret,
          attempts: r.attempts + 1,
          event: toEvent({ id: r.event_id, app_id: r.app_id, type: r.type, payload: r.payload, created_at: r.created_at }),
        }));
      });
    },

    finishDelivery(id, outcome, maxFailures, claim) {
      return db.transaction(async (tx) => {
        const delivery = await tx.get<{ webhook_id: string }>(
          `UPDATE webhook_deliveries SET finished_at = ?, outcome = ? WHERE id = ? AND finished_at IS NULL ${claim === undefined ? '' : 'AND attempts = ?'} RETURNING webhook_id`,
          [outcome.at, outcome.ok ? 'delivered' : 'failed', id, ...(claim === undefined ? [] : [claim])],
        );
        if (!delivery) return 'gone' as const;
        if (outcome.ok) {
          await tx.run('UPDATE webhooks SET failure_count = 0, last_triggered_at = ? WHERE id = ?', [outcome.at, delivery.webhook_id]);
          return 'delivered' as const;
        }
        const row = await tx.get<{ failure_count: number }>(
          'UPDATE webhooks SET failure_count = failure_count + 1, last_failure_at = ? WHERE id = ? RETURNING failure_count',
          [outcome.at, delivery.webhook_id],
        );
        if ((row?.failure_count ?? 0) < maxFailures) return 'failed' as const;
        await tx.run(`UPDATE webhooks SET active = ${d.false} WHERE id = ?`, [delivery.webhook_id]);
        await dropPending(tx, delivery.webhook_id, outcome.at);
        return 'disabled' as const;
      });
    },

    async renewDelivery(id, claim, leaseUntil) {
      // a concurrent claim holds the row (FOR UPDATE; SQLite: the one writer): this waits
      // for it, then sees attempts moved
      const count = await db.run('UPDATE webhook_deliveries SET due_at = ? WHERE id = ? AND attempts = ? AND finished_at IS NULL', [leaseUntil, id, claim]);
      return count > 0;
    },

    async backlog() {
      const events = await db.get<{ n: number }>('SELECT count(*) AS n FROM event_outbox WHERE dispatched_at IS NULL');
      const deliveries = await db.get<{ n: number }>('SELECT count(*) AS n FROM webhook_deliveries WHERE finished_at IS NULL');
      return { events: events?.n ?? 0, deliveries: deliveries?.n ?? 0 };
    },
  };
}
