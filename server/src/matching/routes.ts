// Perceptual matching routes (spec 4.2, 4.3, 4.11), relative to /api/v1/sign-it (the
// app mounts this router there, beside the sign-it router). Uploads are raw bodies,
// read by their routes with the 50 MB limit and fingerprinted in the pool;
// verify-fuzzy takes JSON (jsonBody).
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireAuth, sessionOrScope } from '../auth/middleware.js';
import type { ServerDeps } from '../deps.js';
import { jsonBody } from '../body.js';
import { ApiError } from '../errors.js';
import { rateLimit } from '../ratelimit.js';
import { parseFuzzyQuery } from './schema.js';
import { verifyFile, verifyFuzzy } from './service.js';
import { examineUpload, fingerprintUpload, readUpload } from './upload.js';
import { rateLimitOf } from '../rate-limits.js';


/**
 * Sends an answer that is JSON text already (present.ts). The header is set
 * before the body, so Koa does not look a type up for it.
 */
function sendJsonText(ctx: Context, text: Buffer | string): void {
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = text;
}

export function matchingRoutes(deps: ServerDeps): Router {
  const router = new Router();

  /** The upload's bytes, then `work` on them (not on an empty body), holding a place at the gate meanwhile. */
  async function withUpload<T>(ctx: Context, emptyIsError: boolean, work: (bytes: Buffer) => Promise<T>): Promise<T | null> {
    const leave = deps.uploads.enter(ctx);
    try {
      const bytes = await readUpload(deps, ctx);
      if (bytes.length === 0) {
        if (emptyIsError) throw new ApiError('no_file');
        return null;
      }
      return await work(bytes);
    } finally {
      leave();
    }
  }

  // Spec 4.2: public, 30/min per IP; matches >= 60 (null similarities kept); issue 21: the file's Content Credentials.
  router.post('/verify-file', rateLimit(deps, rateLimitOf('sign-it:verify-file')), async (ctx) => {
    // an empty body is no_file: never null here
    const examined = (await withUpload(ctx, true, (bytes) => examineUpload(deps, bytes)))!;
    sendJsonText(ctx, await verifyFile(deps, examined));
  });

  // Spec 4.3: public, 30/min per IP; matches >= 70 (null similarities kept).
  router.post('/verify-fuzzy', rateLimit(deps, rateLimitOf('sign-it:verify-fuzzy')), jsonBody(), async (ctx) => {
    sendJsonText(ctx, await verifyFuzzy(deps.matching, parseFuzzyQuery(ctx.request.body)));
  });

  // Spec 4.11: sign scope; null for unsupported or unreadable files.
  router.post('/fingerprint', requireAuth(deps, sessionOrScope('sign')), async (ctx) => {
    ctx.body = { fingerprint: await withUpload(ctx, false, (bytes) => fingerprintUpload(deps, bytes)) };
  });

  return router;
}
