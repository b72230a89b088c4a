// Webhooks and their deliveries on PostgreSQL (spec 2.7, 3.2; decisions.md 8), as
// ../sqlite/webhooks.ts, for several nodes: one node routes the outbox at a time (a
// transaction advisory lock, tried, never waited for); deliveries are claimed with
// FOR UPDATE SKIP LOCKED (a node passes over what another is claiming, never waits),
// deliveries with a lease that a dead node's successor waits out; a create counts its
// organization's webhooks under that organization's row lock.
import { randomUUID } from 'node:crypto';
import type { Webhook, WebhookDelivery, WebhooksStore } from '../types.js';
import { toEvent, toWebhook, type OutboxRow, type WebhookRow } from '../rows/webhooks.js';
import { LOCKS, type PgDb, type Queryable } from './db.js';

async function getWebhook(q: Queryable, id: string): Promise<Webhook | null> {
  const row = await q.get<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [id]);
  return row ? toWebhook(row) : null;
}

async function dropPending(q: Queryable, webhookId: string, now: number): Promise<void> {
  await q.run("UPDATE webhook_deliveries SET finished_at = $1, outcome = 'dropped' WHERE webhook_id = $2 AND finished_at IS NULL", [now, webhookId]);
}

// Per webhook its oldest unfinished delivery only (one request at a time, in order);
// a head another node is claiming is skipped, and its webhook then has nothing due here.
const CLAIM = `
  WITH heads AS (
    SELECT DISTINCT ON (webhook_id) seq FROM webhook_deliveries WHERE finished_at IS NULL ORDER BY webhook_id, seq
  ), due AS (
    SELECT d.seq FROM webhook_deliveries d
    JOIN heads h ON h.seq = d.seq
    JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.due_at <= $1 AND w.active
    ORDER BY d.seq LIMIT $3
    FOR UPDATE OF d SKIP LOCKED
  )
  UPDATE webhook_deliveries d SET due_at = $2, attempts = d.attempts + 1 FROM due WHERE d.seq = due.seq
  RETURNING d.seq`;

const CLAIMED = `
  SELECT d.seq, d.id, d.webhook_id, d.attempts, w.url, w.sealed_secret,
         e.id AS event_id, e.app_id, e.type, e.payload, e.created_at
  FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id
  JOIN event_outbox e ON e.id = d.event_id
  WHERE d.seq = ANY($1::bigint[])
  ORDER BY d.seq`;

export function createPgWebhooksStore(db: PgDb): WebhooksStore {
  return {
    create(webhook, limit) {
      return db.transaction(async (tx) => {
        if (limit !== null) {
          // the organization's row lock serialises its creates, so the count holds until commit
          await tx.get('SELECT id FROM orgs WHERE id = $1 FOR UPDATE', [webhook.orgId]);
          const row = await tx.get<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE org_id = $1', [webhook.orgId]);
          if ((row?.n ?? 0) >= limit) return 'limit_reached' as const;
        }
        await tx.run(
          `INSERT INTO webhooks (id, app_id, org_id, url, events, filters, sealed_secret, created_at, active_since) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [webhook.id, webhook.appId, webhook.orgId, webhook.url, JSON.stringify(webhook.events), JSON.stringify(webhook.filters), webhook.sealedSecret, webhook.createdAt],
        );
        return (await getWebhook(tx, webhook.id))!;
      }, 'app');
    },

    get: (id) => getWebhook(db, id),

    async listForApp(appId) {
      const rows = await db.all<WebhookRow>('SELECT * FROM webhooks WHERE app_id = $1 ORDER BY created_at, id', [appId]);
      return rows.map(toWebhook);
    },

    update(id, patch, now) {
      return db.transaction(async (tx) => {
        const row = await tx.get<WebhookRow>('SELECT * FROM webhooks WHERE id = $1 FOR UPDATE', [id]);
        if (!row) return null;
        const current = toWebhook(row);
        await tx.run(
          `UPDATE webhooks SET url = $1, events = $2, filters = $3, active = $4,
             failure_count = CASE WHEN $5 THEN 0 ELSE failure_count END,
             active_since = CASE WHEN $5 AND NOT active THEN $7 ELSE active_since END WHERE id = $6`,
          [
            patch.url ?? current.url,
            JSON.stringify(patch.events ?? current.events),
            JSON.stringify(patch.filters ?? current.filters),
            patch.active ?? current.active,
            patch.active === true,
            id,
            now,
          ],
        );
        // off: nothing more goes out; back on: what was queued before is not its (activeSince)
        if (patch.active !== undefined && patch.active !== current.active) await dropPending(tx, id, now);
        return getWebhook(tx, id);
      });
    },

    async delete(id) {
      return (await db.run('DELETE FROM webhooks WHERE id = $1', [id])) > 0;
    },

    routeEvents(limit, now, route) {
      return db.transaction(async (tx) => {
        // one router at a time (another node routing now routes these too): a webhook's
        // deliveries then queue in event order, which concurrent routers would interleave; its
        // rows are waited for, never skipped (a skipped event would queue after later ones)
        const [lockClass, lockKey] = LOCKS.webhookRouting;
        const lock = await tx.get<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS ok', [lockClass, lockKey]);
        if (!lock?.ok) return 0;
        const rows = await tx.all<OutboxRow>(
          'SELECT id, app_id, type, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE',
          [limit],
        );
        for (const row of rows) {
          const event = toEvent(row);
          // FOR SHARE: a concurrent disable (finishDelivery, PUT) waits for this commit, then drops
          // what it queued; one that committed first is seen here (its row no longer active)
          const candidates = (await tx.all<WebhookRow>('SELECT * FROM webhooks WHERE app_id = $1 AND active ORDER BY created_at, id FOR SHARE', [event.appId])).map(toWebhook);
          for (const webhook of route(event, candidates)) {
            await tx.run('INSERT INTO webhook_deliveries (id, event_id, webhook_id, due_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [randomUUID(), event.id, webhook.id, now]);
          }
          await tx.run('UPDATE event_outbox SET dispatched_at = $1 WHERE id = $2', [now, event.id]);
        }
        return rows.length;
      });
    },

    claimDeliveries(now, leaseUntil, limit) {
      return db.transaction(async (tx) => {
        const seqs = (await tx.all<{ seq: number }>(CLAIM, [now, leaseUntil, limit])).map((r) => r.seq);
        if (seqs.length === 0) return [];
        const rows = await tx.all<{
          seq: number; id: string; webhook_id: string; attempts: number; url: string; sealed_secret: string;
          event_id: number; app_id: string; type: string; payload: string; created_at: number;
        }>(CLAIMED, [seqs]);
        return rows.map((r): WebhookDelivery => ({
          id: r.id,
          webhookId: r.webhook_id,
          url: r.url,
          sealedSecret: r.sealed_secret,
          attempts: r.attempts,
          event: toEvent({ id: r.event_id, app_id: r.app_id, type: r.type, payload: r.payload, created_at: r.created_at }),
        }));
      });
    },

    finishDelivery(id, outcome, maxFailures, claim) {
      return db.transaction(async (tx) => {
        const delivery = await tx.get<{ webhook_id: string }>(
          'UPDATE webhook_deliveries SET finished_at = $1, outcome = $2 WHERE id = $3 AND finished_at IS NULL AND ($4::integer IS NULL OR attempts = $4) RETURNING webhook_id',
          [outcome.at, outcome.ok ? 'delivered' : 'failed', id, claim ?? null],
        );
        if (!delivery) return 'gone' as const;
        if (outcome.ok) {
          await tx.run('UPDATE webhooks SET failure_count = 0, last_triggered_at = $1 WHERE id = $2', [outcome.at, delivery.webhook_id]);
          return 'delivered' as const;
        }
        const row = await tx.get<{ failure_count: number }>(
          'UPDATE webhooks SET failure_count = failure_count + 1, last_failure_at = $1 WHERE id = $2 RETURNING failure_count',
          [outcome.at, delivery.webhook_id],
        );
        if ((row?.failure_count ?? 0) < maxFailures) return 'failed' as const;
        await tx.run('UPDATE webhooks SET active = false WHERE id = $1', [delivery.webhook_id]);
        await dropPending(tx, delivery.webhook_id, outcome.at);
        return 'disabled' as const;
      });
    },

    async renewDelivery(id, claim, leaseUntil) {
      // a concurrent claim holds the row (FOR UPDATE): this waits for it, then sees attempts moved
      const count = await db.run('UPDATE webhook_deliveries SET due_at = $1 WHERE id = $2 AND attempts = $3 AND finished_at IS NULL', [leaseUntil, id, claim]);
      return count > 0;
    },

    async backlog() {
      const events = await db.get<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox WHERE dispatched_at IS NULL');
      const deliveries = await db.get<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE finished_at IS NULL');
      return { events: events?.n ?? 0, deliveries: deliveries?.n ?? 0 };
    },
  };
}
