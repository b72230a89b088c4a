// /api/v1/webhooks (spec 4.15): parse, one domain call, present. Management takes a
// developer session token (spec 5: an app's OAuth token is refused, 403 forbidden); the
// catalog is public; creates are limited to 30 a minute per developer (spec 8). Every
// route checks the named app (app_id, or the token's) before anything else: 403
// forbidden for an app the caller does not own.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import type { ServerDeps } from '../deps.js';
import { requireAuth, SESSION_ONLY } from '../auth/middleware.js';
import { jsonBody } from '../body.js';
import { rateLimit } from '../ratelimit.js';
import { parseInput } from '../validate.js';
import { createWebhook, deleteWebhook, listWebhooks, namedAppIsOwned, updateWebhook, type WebhookCaller, type WebhookDeps } from '../domain/webhooks.js';
import { createWebhookBody, updateWebhookBody, webhookQuery } from './schema.js';
import { catalogAnswer, createdAnswer, listAnswer, webhookView } from './present.js';
import { rateLimitOf } from '../rate-limits.js';

// Mounted at /api/v1 with paths under /webhooks: the collection is itself an endpoint,
// and @koa/router cannot route an empty path under a prefix (nor should the API
// description show it as /api/v1/webhooks/).
export const WEBHOOKS_PREFIX = '/api/v1';

/** The caller (a session token: requireAuth's SESSION_ONLY) and the app it names, which must be theirs (403 forbidden) before anything else is read. */
async function sessionCaller(deps: WebhookDeps, ctx: Context): Promise<WebhookCaller> {
  const auth = ctx.state.auth!;
  const { app_id } = parseInput(webhookQuery, ctx.query);
  const caller = { userId: auth.userId, tokenAppId: auth.appId, appId: app_id ?? null };
  await namedAppIsOwned(deps, caller);
  return caller;
}

export function webhookRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody());
  const domain: WebhookDeps = { store: deps.store, secrets: deps.secrets, config: deps.config, resolveHost: deps.webhooks.resolveHost };
  const session = requireAuth(deps, SESSION_ONLY);

  router.get('/webhooks/events', (ctx) => {
    ctx.body = catalogAnswer();
  });

  router.post(
    '/webhooks',
    session,
    rateLimit(deps, { ...rateLimitOf('webhooks:create'), key: (ctx) => ctx.state.auth!.userId }),
    async (ctx) => {
      const caller = await sessionCaller(domain, ctx);
      const body = parseInput(createWebhookBody, ctx.request.body);
      const { webhook, secret } = await createWebhook(domain, caller, body);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = createdAnswer(webhook, secret);
    },
  );

  router.get('/webhooks', session, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = listAnswer(await listWebhooks(domain, await sessionCaller(domain, ctx)));
  });

  router.put('/webhooks/:id', session, async (ctx) => {
    const caller = await sessionCaller(domain, ctx);
    const body = parseInput(updateWebhookBody, ctx.request.body);
    ctx.body = { webhook: webhookView(await updateWebhook(domain, caller, ctx.params.id, body)) };
  });

  router.delete('/webhooks/:id', session, async (ctx) => {
    await deleteWebhook(domain, await sessionCaller(domain, ctx), ctx.params.id);
    ctx.body = { success: true };
  });

  return router;
}
