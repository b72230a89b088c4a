// Request bodies and queries of /api/v1/webhooks (spec 2.7, 4.15). The URL's rules and
// the event names are the domain's (domain/webhooks.ts); here only the shapes.
import { z } from 'zod';

const url = z.string().min(1, 'must not be empty');
const events = z.array(z.string()).min(1, 'subscribe to at least one event').max(50);
/** Spec 2.7: only file_hash exists (for sign.created). */
const filters = z.strictObject({ file_hash: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters').optional() });

export const createWebhookBody = z.strictObject({ url, events, filters: filters.optional() });

export const updateWebhookBody = z
  .strictObject({ url: url.optional(), events: events.optional(), filters: filters.optional(), active: z.boolean().optional() })
  .refine((b) => Object.keys(b).length > 0, 'send at least one of url, events, filters, active');

export const webhookQuery = z.object({ app_id: z.string().min(1).optional() });
