// /api/v1/developer: apps and app-carrying session tokens (decisions.md 5). Each route:
// auth, the body checked (schema.ts), one domain call, the answer (present.ts).
import { Router } from '@koa/router';
import type { ServerDeps } from '../deps.js';
import { requireAuth, SESSION_ONLY } from '../auth/middleware.js';
import { parseInput } from '../validate.js';
import { createAppBody } from './schema.js';
import { SESSION_TTL_SECONDS } from '../domain/tokens.js';
import { createApp, sessionToken } from '../domain/apps.js';
import { appsAnswer, appTokenAnswer, appView } from './present.js';
import { jsonBody } from '../body.js';

export const DEVELOPER_PREFIX = '/api/v1/developer';

export function developerRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody()); // the routes here read JSON bodies (body.ts)

  router.post('/apps', requireAuth(deps, SESSION_ONLY), async (ctx) => {
    const body = parseInput(createAppBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = appView(await createApp(deps, ctx.state.auth!.userId, body));
  });

  router.get('/apps', requireAuth(deps, SESSION_ONLY), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = appsAnswer(await deps.store.accounts.listApps(ctx.state.auth!.userId));
  });

  router.post('/apps/:id/token', requireAuth(deps, SESSION_ONLY), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const appId = ctx.params.id;
    ctx.body = appTokenAnswer(await sessionToken(deps, ctx.state.auth!.userId, appId), appId, SESSION_TTL_SECONDS);
  });

  return router;
}
