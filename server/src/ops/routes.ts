// Operations: GET /healthz (every part of the server, as the composition root lists
// them) and GET /metrics (Prometheus text format), served only with
// PROVENANT_METRICS_TOKEN as its bearer token: the counters tell who uses what, and
// how much.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../auth/middleware.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics.js';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Unset token: /metrics does not exist (404, as any unknown path). Otherwise the
 * bearer token must match, compared in constant time over equal-length digests
 * (timingSafeEqual tells lengths apart by throwing).
 */
function requireMetricsToken(ctx: Context, expected: string | null): void {
  if (expected === null) throw new ApiError('not_found');
  const given = bearerToken(ctx);
  if (given === null || !timingSafeEqual(digest(given), digest(expected))) {
    throw new ApiError('invalid_token', 'Send PROVENANT_METRICS_TOKEN as Authorization: Bearer <token>.', {}, { 'WWW-Authenticate': 'Bearer' });
  }
}

export function opsRoutes(deps: ServerDeps): Router {
  const router = new Router();

  // 200 unless a part is in error (then 503); a degraded part (the node still answers)
  // makes the status 'degraded'; each part's status and figures either way.
  router.get('/healthz', async (ctx) => {
    const parts = await deps.parts.health();
    const statuses = Object.values(parts).map((p) => p.status);
    const status = statuses.includes('error') ? 'error' : statuses.includes('degraded') ? 'degraded' : 'ok';
    ctx.status = status === 'error' ? 503 : 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status, parts };
  });

  router.get('/metrics', async (ctx) => {
    requireMetricsToken(ctx, deps.config.metricsToken);
    ctx.set('Content-Type', PROMETHEUS_CONTENT_TYPE);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deps.metrics.render();
  });

  return router;
}
