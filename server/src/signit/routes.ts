// Sign-it routes (spec 4.1, 4.4, 4.5, 4.7-4.10, 4.12, 4.14; decisions.md 2), relative
// to /api/v1/sign-it (the app mounts the router there). Each route: limits, auth, the
// request checked (schema.ts), one domain call, the answer shaped (present.ts).
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireAuth, sessionOrScope } from '../auth/middleware.js';
import type { ServerDeps } from '../deps.js';
import { publish, publishRevocation } from '../domain/publishing.js';
import { agentQuota, callerQuota, syncAgentQuota } from '../domain/quota-plans.js';
import { QuotaExceededError } from '../domain/quota.js';
import { revoke } from '../domain/revocation.js';
import { signBatch, signOne } from '../domain/signing.js';
import { setThumbnail } from '../domain/thumbnails.js';
import { ApiError } from '../errors.js';
import { rateLimit } from '../ratelimit.js';
import type { AuthState } from '../types.js';
import { batchAnswer, mySignaturesAnswer, publishedAnswer, signAnswer, SUCCESS, verifyAnswer } from './present.js';
import {
  parseAgentKeyQuery,
  parseBatch,
  parseClientIdQuery,
  parseHashQuery,
  parsePublish,
  parsePublishRevocation,
  parseQuotaSync,
  parseRevoke,
  parseSignRequest,
  parseThumbnail,
} from './schema.js';
import { jsonBody } from '../body.js';
import { rateLimitOf } from '../rate-limits.js';


function authOf(ctx: Context): AuthState {
  return ctx.state.auth as AuthState;
}

function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
}

export function signItRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody()); // the routes here read JSON bodies (body.ts)

  // Spec 4.1: public, 30/min per IP, read through the verify cache.
  router.get('/verify', rateLimit(deps, rateLimitOf('sign-it:verify')), async (ctx) => {
    const hash = parseHashQuery(ctx.query.hash);
    const body = await deps.verifyCache.get(hash, async () => {
      const list = await deps.store.signatures.findByFileHash(hash);
      if (list.length === 0) return verifyAnswer(list);
      // issue 27: each record's index in the log, null until a checkpoint covers it
      const log = deps.transparencyLog.store;
      const [indexes, checkpoint] = await Promise.all([log.recordIndexes(list.map((s) => s.action_hash)), log.latestCheckpoint()]);
      return verifyAnswer(list, { indexes, checkpointSize: checkpoint?.size ?? 0 });
    });
    ctx.type = 'application/json';
    ctx.body = body;
  });

  // Spec 4.7 (deprecated): quota-gated, not rate-limited.
  router.post('/sign', requireAuth(deps, sessionOrScope('sign')), async (ctx) => {
    ctx.body = signAnswer(await signOne(deps, authOf(ctx), parseSignRequest(ctx.request.body)));
  });

  // Spec 4.8 (deprecated).
  router.post('/sign-batch', requireAuth(deps, sessionOrScope('sign')), async (ctx) => {
    ctx.body = batchAnswer(await signBatch(deps, authOf(ctx), parseBatch(ctx.request.body)));
  });

  // Spec 4.10.
  router.post('/revoke', requireAuth(deps, sessionOrScope('sign')), async (ctx) => {
    await revoke(deps, authOf(ctx), parseRevoke(ctx.request.body));
    ctx.body = SUCCESS;
  });

  // Spec 4.12.
  router.post('/set-thumbnail', requireAuth(deps, sessionOrScope('sign')), async (ctx) => {
    await setThumbnail(deps, authOf(ctx), parseThumbnail(ctx.request.body));
    ctx.body = SUCCESS;
  });

  // Spec 4.9.
  router.get('/my-signatures', requireAuth(deps, sessionOrScope('verify')), async (ctx) => {
    noStore(ctx);
    ctx.body = mySignaturesAnswer(await deps.store.signatures.findForUser(authOf(ctx).userId));
  });

  // Spec 4.4: no per-IP limit.
  router.get('/quota', requireAuth(deps, sessionOrScope('verify')), async (ctx) => {
    noStore(ctx);
    ctx.body = await callerQuota(deps, authOf(ctx));
  });

  // Spec 4.5: public, 60/min per IP.
  router.get('/quota/by-agent', rateLimit(deps, rateLimitOf('sign-it:quota-by-agent')), async (ctx) => {
    noStore(ctx);
    ctx.body = await agentQuota(deps, parseAgentKeyQuery(ctx.query.agent_pub_key), parseClientIdQuery(ctx.query.client_id));
  });

  // Spec 4.14, decisions.md 2: 60/min per IP.
  router.post('/quota/sync-by-agent', rateLimit(deps, rateLimitOf('sign-it:quota-sync')), async (ctx) => {
    noStore(ctx);
    ctx.body = await syncAgentQuota(deps, parseQuotaSync(ctx.request.body));
  });

  // decisions.md 2: vault publishing; the Ed25519 signature authenticates the body.
  // Over quota it answers 403 quota_exceeded, not REST signing's 402 (decisions.md 2, spec 7).
  router.post('/publish', async (ctx) => {
    const input = parsePublish(ctx.request.body);
    try {
      ctx.body = publishedAnswer(await publish(deps, input));
    } catch (err) {
      throw err instanceof QuotaExceededError ? ApiError.of(err, 403) : err;
    }
  });

  router.post('/publish-revocation', async (ctx) => {
    const input = parsePublishRevocation(ctx.request.body);
    await publishRevocation(deps, input);
    ctx.body = publishedAnswer(input.entry.action_hash);
  });

  return router;
}
