// Public surfaces (spec 4.6, 4.13, 4.14; decisions.md 9; issue 19): the creator profile
// (JSON, or a page for browsers), content rights, the badge, the blind contact relay,
// the API description and the verification page with its assets. Paths are absolute:
// the sign-it ones sit beside the sign-it router's, the pages at the root.
import Router from '@koa/router';
import type { Context } from 'koa';
import { jsonBody } from '../body.js';
import type { ServerDeps } from '../deps.js';
import { requestContact } from '../domain/contact.js';
import { fileRights, findCreator } from '../domain/creators.js';
import { ApiError } from '../errors.js';
import { clientKey, rateLimit } from '../ratelimit.js';
import { parseHashQuery } from '../signit/schema.js';
import { ASSETS, assetBytes } from './assets.js';
import { openApiDocument } from './openapi.js';
import { badgeJson, badgeSvg, contentRightsAnswer, CONTACT_ANSWER, creatorAnswer, creatorHtml, publicProfile } from './present.js';
import { parseBadgeOptions, parseContact, parseCreatorId } from './schema.js';
import { rateLimitOf } from '../rate-limits.js';

export const SIGN_IT = '/api/v1/sign-it';
/** Spec 4.14: content rights may be cached for 5 minutes, here and at the edge. */
export const CONTENT_RIGHTS_MAX_AGE_SECONDS = 300;
/** Spec 8: POST /contact, 3 per hour per IP. */
export const CONTACT_RATE = rateLimitOf('sign-it:contact');
/** Far above any valid request (500 + 254 + 100 characters of fields, JSON-escaped). */
const CONTACT_BODY_LIMIT = 16 * 1024;

/**
 * The pages' policy: scripts and styles from this origin only (no inline script), the
 * WebAssembly kernels compiled ('wasm-unsafe-eval'), images from here, data: URIs
 * (thumbnails) and https (profile pictures), requests to this origin only.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: https:; " +
  "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function pageHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}

/** Whether the client asked for a page rather than JSON (Accept naming text/html before JSON). */
function wantsHtml(ctx: Context): boolean {
  return ctx.accepts('application/json', 'text/html') === 'text/html' && ctx.get('accept').includes('text/html');
}

/**
 * Takes one of the client's 3 contact requests this hour (shared by every node through
 * Redis when configured); false when they are used up. Unlike rateLimit() it never
 * answers 429: spec 4.13 answers an over-limit request like any other.
 */
function takeContactSlot(deps: ServerDeps, ctx: Context): Promise<boolean> {
  if (!deps.config.rateLimit) return Promise.resolve(true);
  return deps.rateLimits.take(CONTACT_RATE, clientKey(ctx, deps.config));
}

export function publicRoutes(deps: ServerDeps): Router {
  const router = new Router();
  const readContactBody = jsonBody({ limitBytes: CONTACT_BODY_LIMIT });

  // Spec 4.6: JSON, or the creator's page for a browser (Accept: text/html); 30/min per IP.
  router.get(`${SIGN_IT}/creator/:id`, rateLimit(deps, rateLimitOf('sign-it:creator')), async (ctx) => {
    const creator = await findCreator(deps.store, parseCreatorId(ctx.params.id));
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Vary', 'Accept');
    if (wantsHtml(ctx)) {
      pageHeaders(ctx);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = creatorHtml(creatorAnswer(creator), publicProfile(creator));
      return;
    }
    ctx.body = creatorAnswer(creator);
  });

  // The creator's page at a short address (same limit as the JSON).
  router.get('/c/:id', rateLimit(deps, rateLimitOf('sign-it:creator')), async (ctx) => {
    const creator = await findCreator(deps.store, parseCreatorId(ctx.params.id));
    ctx.set('Cache-Control', 'no-store');
    pageHeaders(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = creatorHtml(creatorAnswer(creator), publicProfile(creator));
  });

  // Spec 4.14, decisions.md 9: 60/min per IP; cached 5 minutes (dropped when the file's records change).
  router.get(`${SIGN_IT}/content-rights`, rateLimit(deps, rateLimitOf('sign-it:content-rights')), async (ctx) => {
    const hash = parseHashQuery(ctx.query.hash);
    const body = await deps.contentRightsCache.get(hash, async () => contentRightsAnswer(await fileRights(deps.store, hash)));
    ctx.set('Cache-Control', `public, max-age=${CONTENT_RIGHTS_MAX_AGE_SECONDS}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = body;
  });

  // Spec 4.14, decisions.md 9: SVG (embedded as an image anywhere) or JSON; 60/min per IP.
  router.get(`${SIGN_IT}/badge`, rateLimit(deps, rateLimitOf('sign-it:badge')), async (ctx) => {
    const hash = parseHashQuery(ctx.query.hash);
    const options = parseBadgeOptions(ctx.query);
    const json = badgeJson(await fileRights(deps.store, hash));
    ctx.set('Cache-Control', `public, max-age=${CONTENT_RIGHTS_MAX_AGE_SECONDS}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (options.format === 'json') {
      ctx.body = json;
      return;
    }
    // an SVG opened on its own is a document: it may run nothing
    ctx.set('Content-Security-Policy', "default-src 'none'");
    ctx.type = 'image/svg+xml; charset=utf-8';
    ctx.body = badgeSvg(json, options);
  });

  // Spec 4.13: the same 200 and the same bytes for every request; nothing is decided
  // here but whether to queue it. A failure of ours is logged, and answered alike.
  router.post(`${SIGN_IT}/contact`, async (ctx) => {
    try {
      if (await takeContactSlot(deps, ctx)) {
        await readContactBody(ctx, async () => undefined);
        const request = parseContact(ctx.request.body, Date.now());
        if (request !== null) await requestContact({ store: deps.store, relay: deps.contactRelay }, request);
      }
    } catch (err) {
      if (!(err instanceof ApiError)) deps.log.error('contact relay: queueing failed', { error: err instanceof Error ? err.message : String(err) });
    }
    ctx.status = 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = CONTACT_ANSWER;
  });

  // The API description (OpenAPI 3.1) of every endpoint.
  let description: string | undefined;
  router.get('/openapi.json', (ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = (description ??= JSON.stringify(openApiDocument(deps.config.baseUrl)));
  });

  // The verification page and its files.
  for (const [path, asset] of ASSETS) {
    router.get(path, async (ctx) => {
      let bytes: Buffer;
      try {
        bytes = await assetBytes(path);
      } catch {
        throw new ApiError('not_found', `${path} is not built; run "npm run build".`);
      }
      if (asset.type.startsWith('text/html')) pageHeaders(ctx);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', path === '/' ? 'no-cache' : 'public, max-age=300');
      if (path === '/badge.js') ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Content-Type', asset.type);
      ctx.body = bytes;
    });
  }

  return router;
}
