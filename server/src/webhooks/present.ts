// /api/v1/webhooks answers (spec 2.7, 4.15; decisions.md 8).
import type { Webhook } from '../store/index.js';
import { EVENT_CATALOG } from '../domain/webhooks.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Spec 4.15 POST: the one answer that shows the secret. */
export function createdAnswer(webhook: Webhook, secret: string) {
  return {
    webhook: { id: webhook.id, url: webhook.url, events: webhook.events, filters: webhook.filters, secret, created_at: iso(webhook.createdAt) },
    message: 'Webhook created. Store the secret now: it is not shown again.',
  };
}

/** The listing shape (spec 4.15 GET; decisions.md 8: PUT answers it too); the last failure's time is kept, not shown. */
export function webhookView(webhook: Webhook) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    filters: webhook.filters,
    active: webhook.active,
    failure_count: webhook.failureCount,
    last_triggered_at: iso(webhook.lastTriggeredAt),
    created_at: iso(webhook.createdAt),
  };
}

export const listAnswer = (webhooks: readonly Webhook[]) => ({ webhooks: webhooks.map(webhookView) });

/** decisions.md 8: `{events: [{type, description, fires, fields}]}`. */
export const catalogAnswer = () => ({ events: EVENT_CATALOG.map((e) => ({ type: e.type, description: e.description, fires: e.fires, fields: [...e.fields] })) });
