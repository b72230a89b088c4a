// Issue 33: the C2PA Soft Binding Resolution API (C2PA 2.2; its OpenAPI document's four
// paths, relative to the mount point /c2pa/v1: the spec's server URL ends in /v1), and
// the manifest repository's intake, POST /api/v1/sign-it/manifests (manifestIntakeRoutes).
// Public, like verify-file: the document's `fetch:manifests` OAuth scope is not asked
// for (README "Decisions of ours"); every route has a per-IP rate limit, byContent
// verify-file's upload limits, gate and deadline.
import Router from '@koa/router';
import type { Context } from 'koa';
import { C2PA_STORE_TYPE, MANIFEST_STORE_MAX_BYTES, PoolError, type ManifestStoreOutcome, type ManifestStoreReading } from 'provenant';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { discardBody, jsonBody, readRawBody } from '../body.js';
import { rateLimit } from '../ratelimit.js';
import { rateLimitOf } from '../rate-limits.js';
import { storeManifest } from '../domain/manifests.js';
import { examineUpload, readUpload } from '../matching/upload.js';
import { parseBindingBody, parseBindingQuery, parseContentQuery, parseManifestId, parseReturnActive, SUPPORTED_FINGERPRINTS } from './schema.js';
import { resolveByBinding, resolveByContent } from './service.js';
import { algList, manifestPublished, queryResult } from './present.js';

export const C2PA_PREFIX = '/c2pa/v1';

/** Characters of a GET query at most before 414 (the document: "Query too long, consider using POST instead"). */
const MAX_QUERY_CHARS = 2048;

type Query = Record<string, string | string[] | undefined>;

export function c2paRoutes(deps: ServerDeps): Router {
  const router = new Router();

  router.get('/services/supportedAlgorithms', rateLimit(deps, rateLimitOf('c2pa:supported-algorithms')), (ctx) => {
    ctx.body = algList(SUPPORTED_FINGERPRINTS);
  });

  router.get('/matches/byBinding', rateLimit(deps, rateLimitOf('c2pa:by-binding')), async (ctx) => {
    if (ctx.querystring.length > MAX_QUERY_CHARS) throw new ApiError('query_too_long');
    ctx.body = queryResult(await resolveByBinding(deps, parseBindingQuery(ctx.query as Query)));
  });

  router.post('/matches/byBinding', rateLimit(deps, rateLimitOf('c2pa:by-binding')), jsonBody(), async (ctx) => {
    refusingBody(ctx, () => requireJson(ctx));
    ctx.body = queryResult(await resolveByBinding(deps, parseBindingBody(ctx.request.body, ctx.query as Query)));
  });

  // verify-file's pipeline over the asset (every fingerprint), its limits: 50 MB, the
  // upload gate, the fingerprint deadline; a type the pool cannot fingerprint is 415
  router.post('/matches/byContent', rateLimit(deps, rateLimitOf('c2pa:by-content')), async (ctx) => {
    const query = refusingBody(ctx, () => parseContentQuery(ctx.query as Query));
    const leave = deps.uploads.enter(ctx);
    try {
      const bytes = await readUpload(deps, ctx);
      if (bytes.length === 0) throw new ApiError('no_file');
      const found = await examineUpload(deps, bytes, { credentials: false });
      if (found.fingerprint === null && found.pdq_hash === null && (found.iscc?.content ?? null) === null) {
        throw new ApiError('unsupported_asset_type', found.failure === undefined ? 'This service cannot fingerprint that type of asset.' : `The asset could not be fingerprinted (${found.failure.code}: corrupt, truncated or past a decoder's limits).`);
      }
      ctx.body = queryResult(await resolveByContent(deps, found, query));
    } finally {
      leave();
    }
  });

  router.get('/manifests/:manifestId', rateLimit(deps, rateLimitOf('c2pa:manifests')), async (ctx) => {
    const id = parseManifestId(ctx.params.manifestId);
    const bytes = await deps.store.manifests.bytes(id, parseReturnActive(ctx.query as Query) ? 'active' : 'store');
    if (bytes === undefined) throw new ApiError('not_found', `No manifest ${id} is stored here.`);
    ctx.set('Content-Type', C2PA_STORE_TYPE);
    // a manifest id names one store for good (the repository never replaces one)
    ctx.set('Cache-Control', 'public, max-age=86400, immutable');
    ctx.body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  });

  return router;
}

/** `parse`'s value; when it throws, the upload is discarded unread (a refusal sent before the body was read, as the upload gate's). */
function refusingBody<T>(ctx: Context, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    discardBody(ctx);
    throw err;
  }
}

/** A JSON body (POST byBinding): 415 for another content type, which jsonBody leaves unread. */
function requireJson(ctx: Context): void {
  if (ctx.request.body === undefined && (ctx.request.length || ctx.get('transfer-encoding'))) throw new ApiError('unsupported_media_type');
}

/**
 * A detached store read by the reference reader in the pool's sandbox: 400
 * invalid_manifest when it refuses it (or fails on it), 503 busy when the pool is full.
 */
async function readManifestUpload(deps: ServerDeps, bytes: Buffer): Promise<ManifestStoreReading> {
  const copy = new Uint8Array(bytes); // its own buffer, transferred to the worker
  let outcome: ManifestStoreOutcome;
  try {
    outcome = await deps.pool.run<ManifestStoreOutcome>('manifest-store', { buffer: copy.buffer }, [copy.buffer]);
  } catch (err) {
    if (err instanceof PoolError && (err.code === 'busy' || err.code === 'closed')) throw new ApiError('busy', undefined, {}, { 'Retry-After': '1' });
    if (err instanceof PoolError && err.code === 'timeout') throw new ApiError('invalid_manifest', 'Reading the manifest store ran past its deadline.');
    throw err;
  }
  if ('refused' in outcome) throw new ApiError('invalid_manifest', `The reference reader refused the store: ${outcome.refused}`);
  if ('failed' in outcome) throw new ApiError('invalid_manifest', `The reference reader failed on the store: ${outcome.failed}`);
  return outcome.reading;
}

/** Content types a manifest store is accepted as. */
const STORE_TYPES = new Set([C2PA_STORE_TYPE, 'application/octet-stream']);

/**
 * POST /api/v1/sign-it/manifests: a detached manifest store (application/c2pa, at most
 * MANIFEST_STORE_MAX_BYTES) for a record this server stores; no bearer token, as for
 * publish: the store's signature by the record's signer authenticates it
 * (domain/manifests.ts). 201 stored, 200 when this id holds these bytes already.
 */
export function manifestIntakeRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.post('/manifests', rateLimit(deps, rateLimitOf('sign-it:manifests')), async (ctx) => {
    const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
    refusingBody(ctx, () => {
      if (!STORE_TYPES.has(type)) throw new ApiError('unsupported_media_type', `Send the manifest store's bytes as ${C2PA_STORE_TYPE}.`);
    });
    const leave = deps.uploads.enter(ctx);
    try {
      const bytes = await readRawBody(ctx, MANIFEST_STORE_MAX_BYTES, { pace: { graceMs: deps.config.uploadGraceMs, minRate: deps.config.uploadMinRate } });
      if (bytes.length === 0) throw new ApiError('no_file', 'The body is empty; send the manifest store\'s bytes.');
      const stored = await storeManifest(deps.store, bytes, await readManifestUpload(deps, bytes), Date.now());
      ctx.status = stored.created ? 201 : 200;
      ctx.body = manifestPublished(stored);
    } finally {
      leave();
    }
  });
  return router;
}
