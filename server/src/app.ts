// The Koa application: app-level middleware in a fixed order, then the feature
// routers, each under its prefix (STYLE.md 8: server/src/<feature>/routes.ts).
import Koa, { type Context, type Next } from 'koa';
import type { Router } from '@koa/router';
import type { AppState } from './types.js';
import type { ServerDeps } from './deps.js';
import { ApiError } from './errors.js';
import { accessLog, renderErrors, requestId } from './middleware.js';
import { opsRoutes } from './ops/routes.js';
import { AUTH_PREFIX, authRoutes } from './auth/routes.js';
import { DEVELOPER_PREFIX, developerRoutes } from './developer/routes.js';
import { signItRoutes } from './signit/routes.js';
import { matchingRoutes } from './matching/routes.js';
import { C2PA_PREFIX, c2paRoutes, manifestIntakeRoutes } from './c2pa/routes.js';
import { publicRoutes } from './public/routes.js';
import { transparencyLogRouter } from './tlog/routes.js';
import { WEBHOOKS_PREFIX, webhookRoutes } from './webhooks/routes.js';
import { ACCOUNT_PREFIX, accountAppsRoutes, OAUTH_PREFIX, oauthMetadataRoutes, oauthRoutes, WELL_KNOWN_PREFIX } from './oauth/routes.js';

/** [prefix, router factory] of every feature, in mount order (GET /openapi.json's test walks them). */
export const FEATURES: [string, (deps: ServerDeps) => Router][] = [
  ['', opsRoutes],
  [AUTH_PREFIX, authRoutes],
  [DEVELOPER_PREFIX, developerRoutes],
  ['/api/v1/sign-it', signItRoutes],
  ['/api/v1/sign-it', matchingRoutes],
  ['/api/v1/sign-it', manifestIntakeRoutes],
  [C2PA_PREFIX, c2paRoutes],
  ['', publicRoutes],
  ['', (deps) => transparencyLogRouter(deps.transparencyLog)],
  [WEBHOOKS_PREFIX, webhookRoutes],
  [OAUTH_PREFIX, oauthRoutes],
  [WELL_KNOWN_PREFIX, oauthMetadataRoutes],
  [ACCOUNT_PREFIX, accountAppsRoutes],
];

export function createApp(deps: ServerDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  // Errors are rendered by renderErrors; Koa's own handler would only log them again.
  app.silent = true;
  app.on('error', (err: Error) => deps.log.error('koa error', { error: err.message, stack: err.stack }));

  app.use(requestId());
  app.use(accessLog(deps.log, deps.metrics));
  app.use(renderErrors(deps.log));
  // Bodies are read by the routes that take them (body.ts jsonBody, upload.ts readUpload).

  for (const [prefix, make] of FEATURES) {
    const router = make(deps);
    if (prefix) router.prefix(prefix);
    const routes = router.routes();
    // without `throw`, the router sets 405/501 with Allow, which refuseMethod keeps
    const allowed = router.allowedMethods();
    // the router's routes, then its 405/501 answers, as two app.use calls would run them
    app.use(
      underPrefix(prefix, (ctx: Parameters<typeof allowed>[0], next: Next) =>
        routes(ctx, () => allowed(ctx, next).then(() => refuseMethod(ctx)))),
    );
  }
  return app;
}

/**
 * The error of a 405 (or 501) the router set: method_not_allowed, carrying the Allow
 * header of the path's methods (RFC 9110 15.5.6) into the rendered answer.
 */
function refuseMethod(ctx: Context): void {
  if ((ctx.status !== 405 && ctx.status !== 501) || ctx.body != null) return;
  const allow = ctx.response.get('Allow');
  throw new ApiError('method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}.`, {}, { Allow: allow });
}

/**
 * Runs `middleware` only for paths at or under `prefix` ('' = every path): a router
 * cannot match outside its prefix, and skipping it spares each request the routers'
 * route scans and host checks.
 */
function underPrefix<C extends { path: string }, R>(prefix: string, middleware: (ctx: C, next: Next) => R): (ctx: C, next: Next) => R | Promise<void> {
  if (prefix === '') return middleware;
  const under = `${prefix}/`;
  return (ctx, next) => {
    const path = ctx.path;
    return path === prefix || path.startsWith(under) ? middleware(ctx, next) : next();
  };
}
