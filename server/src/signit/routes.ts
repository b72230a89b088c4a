// Sign-it routes (spec 4.1, 4.4, 4.5, 4.7-4.10, 4.12, 4.14; decisions.md 2), relative
// to /api/v1/sign-it (the app mounts the router there). Each route: limits, auth,
// one service call, the response.
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireAuth } from '../auth/middleware.js';
import type { ServerDeps } from '../deps.js';
import { rateLimit } from '../ratelimit.js';
import type { AuthState } from '../types.js';
import { verifyCacheOf } from './cache.js';
import {
  mySignatures,
  publish,
  publishRevocation,
  quotaByAgent,
  quotaForCaller,
  revoke,
  setThumbnail,
  signBatch,
  signOne,
  syncQuotaByAgent,
  verifyBody,
} from './service.js';
import { jsonBody } from '../body.js';

const MINUTE = 60_000;

function authOf(ctx: Context): AuthState {
  return ctx.state.auth as AuthState;
}

function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
}

export function signItRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody()); // the routes here read JSON bodies (body.ts)
  verifyCacheOf(deps); // subscribe to writes from the start, so no answer is cached stale

  // Spec 4.1: public, 30/min per IP, read through the verify cache.
  router.get('/verify', rateLimit(deps, { name: 'sign-it:verify', max: 30, durationMs: MINUTE }), async (ctx) => {
    const body = await verifyBody(deps, ctx.query.hash);
    ctx.type = 'application/json';
    ctx.body = body;
  });

  // Spec 4.7 (deprecated): quota-gated, not rate-limited.
  router.post('/sign', requireAuth('sign'), async (ctx) => {
    ctx.body = await signOne(deps, authOf(ctx), ctx.request.body);
  });

  // Spec 4.8 (deprecated).
  router.post('/sign-batch', requireAuth('sign'), async (ctx) => {
    ctx.body = await signBatch(deps, authOf(ctx), ctx.request.body);
  });

  // Spec 4.10.
  router.post('/revoke', requireAuth('sign'), async (ctx) => {
    ctx.body = await revoke(deps, authOf(ctx), ctx.request.body);
  });

  // Spec 4.12.
  router.post('/set-thumbnail', requireAuth('sign'), async (ctx) => {
    ctx.body = await setThumbnail(deps, authOf(ctx), ctx.request.body);
  });

  // Spec 4.9.
  router.get('/my-signatures', requireAuth('verify'), async (ctx) => {
    noStore(ctx);
    ctx.body = await mySignatures(deps, authOf(ctx));
  });

  // Spec 4.4: no per-IP limit.
  router.get('/quota', requireAuth('verify'), async (ctx) => {
    noStore(ctx);
    ctx.body = await quotaForCaller(deps, authOf(ctx));
  });

  // Spec 4.5: public, 60/min per IP.
  router.get('/quota/by-agent', rateLimit(deps, { name: 'sign-it:quota-by-agent', max: 60, durationMs: MINUTE }), async (ctx) => {
    noStore(ctx);
    ctx.body = await quotaByAgent(deps, ctx.query.agent_pub_key, ctx.query.client_id);
  });

  // Spec 4.14, decisions.md 2: 60/min per IP.
  router.post('/quota/sync-by-agent', rateLimit(deps, { name: 'sign-it:quota-sync', max: 60, durationMs: MINUTE }), async (ctx) => {
    noStore(ctx);
    ctx.body = await syncQuotaByAgent(deps, ctx.request.body);
  });

  // decisions.md 2: vault publishing; the Ed25519 signature authenticates the body.
  router.post('/publish', async (ctx) => {
    ctx.body = await publish(deps, ctx.request.body);
  });

  router.post('/publish-revocation', async (ctx) => {
    ctx.body = await publishRevocation(deps, ctx.request.body);
  });

  return router;
}
