// /api/v1/developer: apps and app-carrying session tokens (decisions.md 5).
import { Router } from '@koa/router';
import type { ServerDeps } from '../deps.js';
import { requireAuth } from '../auth/middleware.js';
import { parseInput } from '../validate.js';
import { createAppBody } from './schema.js';
import { appToken, appView, createApp } from './service.js';
import { jsonBody } from '../body.js';

export const DEVELOPER_PREFIX = '/api/v1/developer';

export function developerRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody()); // the routes here read JSON bodies (body.ts)

  router.post('/apps', requireAuth(), async (ctx) => {
    const body = parseInput(createAppBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = appView(await createApp(deps, ctx.state.auth!.userId, body));
  });

  router.get('/apps', requireAuth(), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { apps: (await deps.store.accounts.listApps(ctx.state.auth!.userId)).map(appView) };
  });

  router.post('/apps/:id/token', requireAuth(), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await appToken(deps, ctx.state.auth!.userId, ctx.params.id);
  });

  return router;
}
