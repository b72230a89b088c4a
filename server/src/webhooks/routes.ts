// /api/v1/webhooks (spec 4.15): parse, one domain call, present. Management takes a
// developer session token (spec 5); the catalog is public; creates are limited to 30 a
// minute per developer (spec 8).
import { Router } from '@koa/router';
import type { Context } from 'koa';
import type { ServerDeps } from '../deps.js';
import { requireAuth } from '../auth/middleware.js';
import { jsonBody } from '../body.js';
import { ApiError } from '../errors.js';
import { rateLimit } from '../ratelimit.js';
import { parseInput } from '../validate.js';
import { createWebhook, deleteWebhook, listWebhooks, updateWebhook, type WebhookCaller, type WebhookDeps } from '../domain/webhooks.js';
import { createWebhookBody, updateWebhookBody, webhookQuery } from './schema.js';
import { catalogAnswer, createdAnswer, listAnswer, webhookView } from './present.js';

// Mounted at /api/v1 with paths under /webhooks: the collection is itself an endpoint,
// and @koa/router cannot route an empty path under a prefix (nor should the API
// description show it as /api/v1/webhooks/).
export const WEBHOOKS_PREFIX = '/api/v1';

/** Spec 5: webhook management is for developer session tokens, not an app's OAuth tokens. */
function sessionCaller(ctx: Context): WebhookCaller {
  const auth = ctx.state.auth!;
  if (auth.kind !== 'session') throw new ApiError('invalid_token', 'Webhook management needs a developer session token.', {}, { 'WWW-Authenticate': 'Bearer' });
  const { app_id } = parseInput(webhookQuery, ctx.query);
  return { userId: auth.userId, tokenAppId: auth.appId, appId: app_id ?? null };
}

export function webhookRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody());
  const domain: WebhookDeps = { store: deps.store, config: deps.config, resolveHost: deps.webhooks.resolveHost };

  router.get('/webhooks/events', (ctx) => {
    ctx.body = catalogAnswer();
  });

  router.post(
    '/webhooks',
    requireAuth(),
    rateLimit(deps, { name: 'webhooks:create', max: 30, durationMs: 60_000, key: (ctx) => ctx.state.auth!.userId }),
    async (ctx) => {
      const caller = sessionCaller(ctx);
      const body = parseInput(createWebhookBody, ctx.request.body);
      const { webhook, secret } = await createWebhook(domain, caller, body);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = createdAnswer(webhook, secret);
    },
  );

  router.get('/webhooks', requireAuth(), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = listAnswer(await listWebhooks(domain, sessionCaller(ctx)));
  });

  router.put('/webhooks/:id', requireAuth(), async (ctx) => {
    const caller = sessionCaller(ctx);
    const body = parseInput(updateWebhookBody, ctx.request.body);
    ctx.body = { webhook: webhookView(await updateWebhook(domain, caller, ctx.params.id, body)) };
  });

  router.delete('/webhooks/:id', requireAuth(), async (ctx) => {
    await deleteWebhook(domain, sessionCaller(ctx), ctx.params.id);
    ctx.body = { success: true };
  });

  return router;
}
