// Operations: GET /healthz (database and, when present, the fingerprint pool) and
// GET /metrics (Prometheus text format).
import { Router } from '@koa/router';
import type { ServerDeps } from '../deps.js';
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
    ctx.set('Content-Type', PROMETHEUS_CONTENT_TYPE);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deps.metrics.render();
  });

  return router;
}
