// Webhook and outbox rows as both engines read them, and their mapping to the store's
// values. `active` is a boolean here as on PostgreSQL; SQLite, which stores 0/1, converts
// it in its engine. No SQL here: the queries stay in each engine.
import type { QueuedEvent, Webhook } from '../types.js';

export interface WebhookRow {
  id: string;
  app_id: string;
  org_id: string;
  url: string;
  events: string;
  filters: string;
  sealed_secret: string;
  active: boolean;
  active_since: number;
  failure_count: number;
  last_triggered_at: number | null;
  last_failure_at: number | null;
  created_at: number;
}

export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  appId: r.app_id,
  orgId: r.org_id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  filters: JSON.parse(r.filters) as Webhook['filters'],
  sealedSecret: r.sealed_secret,
  active: r.active,
  activeSince: r.active_since,
  failureCount: r.failure_count,
  lastTriggeredAt: r.last_triggered_at,
  lastFailureAt: r.last_failure_at,
  createdAt: r.created_at,
});

export interface OutboxRow {
  id: number;
  app_id: string;
  type: string;
  payload: string;
  created_at: number;
}

export const toEvent = (r: OutboxRow): QueuedEvent => ({
  id: r.id,
  appId: r.app_id,
  type: r.type,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  createdAt: r.created_at,
});
