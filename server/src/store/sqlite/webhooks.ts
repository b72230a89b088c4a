// Webhooks and their deliveries on SQLite (spec 2.7, 3.2; decisions.md 8). The one
// writer serialises every transaction here, so a claim never hands a delivery to two
// dispatchers and a count never races a create; leases cover a dispatcher that dies.
import { randomUUID } from 'node:crypto';
import type { Webhook, WebhookDelivery, WebhooksStore } from '../types.js';
import { toEvent, toWebhook, type OutboxRow, type WebhookRow } from '../rows/webhooks.js';
import type { Db, Queryable } from './db.js';

/** A webhooks row as SQLite holds it: `active` is 0 or 1. */
type SqliteWebhookRow = Omit<WebhookRow, 'active'> & { active: number };

const toSqliteWebhook = (r: SqliteWebhookRow): Webhook => toWebhook({ ...r, active: r.active === 1 });

async function getWebhook(q: Queryable, id: string): Promise<Webhook | null> {
  const row = await q.get<SqliteWebhookRow>('SELECT * FROM webhooks WHERE id = ?', [id]);
  return row ? toSqliteWebhook(row) : null;
}

/** Ends the webhook's unfinished deliveries without sending them (it went inactive). */
async function dropPending(q: Queryable, webhookId: string, now: number): Promise<void> {
  await q.run("UPDATE webhook_deliveries SET finished_at = ?, outcome = 'dropped' WHERE webhook_id = ? AND finished_at IS NULL", [now, webhookId]);
}

// Per webhook, its oldest unfinished delivery only: a webhook with one in flight (leased)
// has nothing due, which keeps its requests one at a time and in event order.
const CLAIMABLE = `
  SELECT d.seq, d.id, d.webhook_id, d.attempts, w.url, w.sealed_secret,
         e.id AS event_id, e.app_id, e.type, e.payload, e.created_at
  FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id
  JOIN event_outbox e ON e.id = d.event_id
  WHERE d.seq IN (SELECT min(seq) FROM webhook_deliveries WHERE finished_at IS NULL GROUP BY webhook_id)
    AND d.due_at <= ? AND w.active = 1
  ORDER BY d.seq
  LIMIT ?`;

export function createSqliteWebhooksStore(db: Db): WebhooksStore {
  return {
    create(webhook, limit) {
      return db.transaction(async (tx) => {
        if (limit !== null) {
          const row = await tx.get<{ n: number }>('SELECT count(*) AS n FROM webhooks WHERE org_id = ?', [webhook.orgId]);
          if ((row?.n ?? 0) >= limit) return 'limit_reached' as const;
        }
        await tx.run(
          `INSERT INTO webhooks (id, app_id, org_id, url, events, filters, sealed_secret, created_at, active_since) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [webhook.id, webhook.appId, webhook.orgId, webhook.url, JSON.stringify(webhook.events), JSON.stringify(webhook.filters), webhook.sealedSecret, webhook.createdAt, webhook.createdAt],
        );
        return (await getWebhook(tx, webhook.id))!;
      }, 'app');
    },

    get: (id) => getWebhook(db, id),

    async listForApp(appId) {
      const rows = await db.all<SqliteWebhookRow>('SELECT * FROM webhooks WHERE app_id = ? ORDER BY created_at, id', [appId]);
      return rows.map(toSqliteWebhook);
    },

    update(id, patch, now) {
      return db.transaction(async (tx) => {
        const current = await getWebhook(tx, id);
        if (current === null) return null;
        const reenabled = patch.active === true;
        await tx.run(
          `UPDATE webhooks SET url = ?, events = ?, filters = ?, active = ?,
             failure_count = CASE WHEN ? THEN 0 ELSE failure_count END,
             active_since = CASE WHEN ? AND active = 0 THEN ? ELSE active_since END WHERE id = ?`,
          [
            patch.url ?? current.url,
            JSON.stringify(patch.events ?? current.events),
            JSON.stringify(patch.filters ?? current.filters),
            (patch.active ?? current.active) ? 1 : 0,
            reenabled ? 1 : 0,
            reenabled ? 1 : 0,
            now,
            id,
          ],
        );
        // off: nothing more goes out; back on: what was queued before is not its (activeSince)
        if (patch.active !== undefined && patch.active !== current.active) await dropPending(tx, id, now);
        return getWebhook(tx, id);
      });
    },

    async delete(id) {
      return (await db.run('DELETE FROM webhooks WHERE id = ?', [id])).changes > 0;
    },

    async routeEvents(limit, now, route) {
      // a read first: the writer (which every sign waits for) is taken only when there is work
      if (!(await db.get('SELECT 1 FROM event_outbox WHERE dispatched_at IS NULL LIMIT 1'))) return 0;
      return db.transaction(async (tx) => {
        const rows = await tx.all<OutboxRow>(
          'SELECT id, app_id, type, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT ?',
          [limit],
        );
        for (const row of rows) {
          const event = toEvent(row);
          const candidates = (await tx.all<SqliteWebhookRow>('SELECT * FROM webhooks WHERE app_id = ? AND active = 1 ORDER BY created_at, id', [event.appId])).map(toSqliteWebhook);
          for (const webhook of route(event, candidates)) {
            await tx.run('INSERT INTO webhook_deliveries (id, event_id, webhook_id, due_at) VALUES (?, ?, ?, ?)', [randomUUID(), event.id, webhook.id, now]);
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
        const claimed: WebhookDelivery[] = [];
        for (const r of rows) {
          await tx.run('UPDATE webhook_deliveries SET due_at = ?, attempts = attempts + 1 WHERE seq = ?', [leaseUntil, r.seq]);
          claimed.push({
            id: r.id,
            webhookId: r.webhook_id,
            url: r.url,
            sealedSecret: r.sealed_secret,
            attempts: r.attempts + 1,
            event: toEvent({ id: r.event_id, app_id: r.app_id, type: r.type, payload: r.payload, created_at: r.created_at }),
          });
        }
        return claimed;
      });
    },

    finishDelivery(id, outcome, maxFailures, claim) {
      return db.transaction(async (tx) => {
        const delivery = await tx.get<{ webhook_id: string }>(
          'SELECT webhook_id FROM webhook_deliveries WHERE id = ? AND finished_at IS NULL AND (? IS NULL OR attempts = ?)',
          [id, claim ?? null, claim ?? null],
        );
        if (!delivery) return 'gone' as const;
        await tx.run('UPDATE webhook_deliveries SET finished_at = ?, outcome = ? WHERE id = ?', [outcome.at, outcome.ok ? 'delivered' : 'failed', id]);
        if (outcome.ok) {
          await tx.run('UPDATE webhooks SET failure_count = 0, last_triggered_at = ? WHERE id = ?', [outcome.at, delivery.webhook_id]);
          return 'delivered' as const;
        }
        await tx.run('UPDATE webhooks SET failure_count = failure_count + 1, last_failure_at = ? WHERE id = ?', [outcome.at, delivery.webhook_id]);
        const row = await tx.get<{ failure_count: number }>('SELECT failure_count FROM webhooks WHERE id = ?', [delivery.webhook_id]);
        if ((row?.failure_count ?? 0) < maxFailures) return 'failed' as const;
        await tx.run('UPDATE webhooks SET active = 0 WHERE id = ?', [delivery.webhook_id]);
        await dropPending(tx, delivery.webhook_id, outcome.at);
        return 'disabled' as const;
      });
    },

    async renewDelivery(id, claim, leaseUntil) {
      // the one writer orders this against claims: a claim after it sees the new lease
      const { changes } = await db.run('UPDATE webhook_deliveries SET due_at = ? WHERE id = ? AND attempts = ? AND finished_at IS NULL', [leaseUntil, id, claim]);
      return changes > 0;
    },

    async backlog() {
      const events = await db.get<{ n: number }>('SELECT count(*) AS n FROM event_outbox WHERE dispatched_at IS NULL');
      const deliveries = await db.get<{ n: number }>('SELECT count(*) AS n FROM webhook_deliveries WHERE finished_at IS NULL');
      return { events: events?.n ?? 0, deliveries: deliveries?.n ?? 0 };
    },
  };
}
