// Operations: GET /healthz (database and, when present, the fingerprint pool) and
// GET /metrics (Prometheus text format), served only with PROVENANT_METRICS_TOKEN as
// its bearer token: the counters tell who uses what, and how much.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../auth/middleware.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics.js';

/** What a pool may expose to the health check (duck-typed: the pool arrives later). */
interface HealthReporting {
  health?: () => unknown;
}

async function poolHealth(pool: unknown): Promise<'ok' | 'error' | 'absent'> {
  if (pool === undefined || pool === null) return 'absent';
  const check = (pool as HealthReporting).health;
  if (typeof check !== 'function') return 'ok';
  try {
    const result = await check.call(pool);
    return result === false ? 'error' : 'ok';
  } catch {
    return 'error';
  }
}

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

  router.get('/healthz', async (ctx) => {
    let db: 'ok' | 'error' = 'ok';
    try {
      await deps.db.get('SELECT 1 AS ok');
    } catch (err) {
      db = 'error';
      deps.log.error('health check: database failed', { error: err instanceof Error ? err.message : String(err) });
    }
    const pool = await poolHealth(deps.pool);
    const healthy = db === 'ok' && pool !== 'error';
    ctx.status = healthy ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: healthy ? 'ok' : 'error', db, pool };
  });

  router.get('/metrics', async (ctx) => {
    requireMetricsToken(ctx, deps.config.metricsToken);
    ctx.set('Content-Type', PROMETHEUS_CONTENT_TYPE);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deps.metrics.render();
  });

  return router;
}
