// Webhook management and routing (spec 2.7, 3.2, 4.15, 6; decisions.md 8): which app a
// call manages, the tier rules, the URL rules at registration, the secret (sealed at
// rest), and which webhooks an event goes to. Registration never requests the URL: the
// first request a receiver sees is a delivery.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { DomainError } from '../errors.js';
import type { App, OrgTier, QueuedEvent, Webhook, WebhookFilters, WebhookPatch } from '../store/index.js';
import { checkedAddresses, parseWebhookUrl, WebhookUrlError, type HostResolver } from './url-rules.js';
import type { DomainDeps } from './deps.js';

/** Spec 8: webhooks per organization, across its apps (null: unlimited). */
export const WEBHOOK_LIMITS: Record<OrgTier, number | null> = { free: 0, starter: 10, pro: 100, enterprise: null };

/** Spec 3.2, 8: consecutive failures that make a webhook inactive. */
export const MAX_CONSECUTIVE_FAILURES = 10;

/** Spec 6: every event type, the fields its envelope carries, and whether it fires yet. */
export const EVENT_CATALOG = [
  { type: 'sign.created', description: 'POST /sign or /sign-batch with a token of the app (not signatures made in the vault)', fires: true, fields: ['file_hash', 'action_hash', 'signer', 'signed_at', 'intent'] },
  { type: 'sign.revoked', description: 'POST /revoke by the app (not revocations in the vault)', fires: true, fields: ['action_hash', 'revoker', 'reason'] },
  { type: 'oauth.authorized', description: 'A user grants the app consent (first authorization or new scopes)', fires: true, fields: ['user_id', 'scopes'] },
  { type: 'oauth.token.revoked', description: 'A refresh token of the app revoked via POST /oauth/revoke', fires: true, fields: ['token_type'] },
  { type: 'user.profile.updated', description: 'A user holding an unrevoked refresh token of the app changes their display name', fires: true, fields: ['user_id', 'fields_changed'] },
  { type: 'subscription.upgraded', description: 'Reserved: accepted at registration, never fired', fires: false, fields: [] },
  { type: 'subscription.downgraded', description: 'Reserved: accepted at registration, never fired', fires: false, fields: [] },
  { type: 'subscription.cancelled', description: 'Reserved: accepted at registration, never fired', fires: false, fields: [] },
  { type: 'user.2fa.enabled', description: 'Reserved: accepted at registration, never fired', fires: false, fields: [] },
  { type: 'user.2fa.disabled', description: 'Reserved: accepted at registration, never fired', fires: false, fields: [] },
] as const;

export const EVENT_TYPES: readonly string[] = EVENT_CATALOG.map((e) => e.type);

/** What webhook management needs beyond the domain's deps: the resolver of URL hosts and the tests-only switch. */
export interface WebhookDeps extends DomainDeps {
  resolveHost: HostResolver;
  config: { webhookAllowPrivate: boolean };
}

/** Who manages: the user, the app their token carries, and the app_id they named (query). */
export interface WebhookCaller {
  userId: string;
  tokenAppId: string | null;
  appId: string | null;
}

export interface WebhookInput {
  url: string;
  events: string[];
  filters?: WebhookFilters;
}

// ---------------------------------------------------------------- the secret at rest

/**
 * The HMAC key must be readable to sign, so it cannot be hashed: it is sealed with
 * AES-256-GCM under a key derived from the data directory's cell.key, bound to the
 * webhook's id, so a database copy alone does not reveal it.
 */
function secretKey(deps: Pick<DomainDeps, 'secrets'>): Buffer {
  return Buffer.from(hkdfSync('sha256', deps.secrets.key('cell.key'), Buffer.alloc(0), 'provenant webhook secret v1', 32));
}

function sealSecret(deps: Pick<DomainDeps, 'secrets'>, webhookId: string, secret: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secretKey(deps), nonce);
  cipher.setAAD(Buffer.from(webhookId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
}

/** The webhook's secret (the dispatcher's HMAC key). */
export function openSecret(deps: Pick<DomainDeps, 'secrets'>, webhookId: string, sealed: string): string {
  const [nonce, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', secretKey(deps), nonce);
  decipher.setAAD(Buffer.from(webhookId));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
}

// ---------------------------------------------------------------- the rules, one each

/** Spec 4.15: the named app_id, else the app the token carries, else 403 app_required. */
function appIdOf(caller: WebhookCaller): string {
  const appId = caller.appId ?? caller.tokenAppId;
  if (appId === null) throw new DomainError('app_required');
  return appId;
}

/** Spec 4.15: an app the caller does not own (or that does not exist) is 403 forbidden. */
async function ownedApp(deps: DomainDeps, caller: WebhookCaller): Promise<App> {
  const appId = appIdOf(caller);
  const app = /^[0-9a-f-]{36}$/i.test(appId) ? await deps.store.accounts.getApp(appId) : null;
  if (app === null || app.ownerId !== caller.userId) throw new DomainError('forbidden', 'app_id: not an app you own.');
  return app;
}

/**
 * Issue 25 item 8, spec 4.15: the app a call names (app_id, else the token's) must be
 * the caller's (403 forbidden), checked before the body or the webhook id. Returns
 * the app's id, or null when the call names none.
 */
export async function namedAppIsOwned(deps: DomainDeps, caller: WebhookCaller): Promise<string | null> {
  if (caller.appId === null && caller.tokenAppId === null) return null;
  return (await ownedApp(deps, caller)).id;
}

/** The organization an app's webhooks count against: its own, or its owner's personal one. */
async function orgOf(deps: DomainDeps, app: App): Promise<{ id: string; tier: OrgTier }> {
  const org = app.orgId !== null ? await deps.store.accounts.getOrg(app.orgId) : await deps.store.accounts.personalOrg(app.ownerId);
  if (org === null) throw new DomainError('forbidden', 'The app has no organization.');
  return org;
}

/** Spec 8: the free tier has no webhooks (402 tier_required); the others their limit. */
function tierLimit(tier: OrgTier): number | null {
  const limit = WEBHOOK_LIMITS[tier];
  if (limit === 0) throw new DomainError('tier_required', `Webhooks need a paid developer tier; this organization is on "${tier}".`);
  return limit;
}

/** Spec 4.15, 6: every event type is one of the catalog's (reserved ones included). */
function checkedEvents(events: readonly string[]): string[] {
  events.forEach((type, i) => {
    if (!EVENT_TYPES.includes(type)) throw new DomainError('invalid_request', `events[${i}]: unknown event type "${type}"; see GET /api/v1/webhooks/events.`);
  });
  return [...new Set(events)];
}

/** Spec 4.15: https on a public hostname whose every address is public (400 invalid_url). */
async function checkedUrl(deps: WebhookDeps, text: string): Promise<string> {
  try {
    const url = parseWebhookUrl(text);
    await checkedAddresses(url, { resolveHost: deps.resolveHost, allowPrivate: deps.config.webhookAllowPrivate });
    return url.href;
  } catch (err) {
    if (err instanceof WebhookUrlError) throw new DomainError('invalid_url', err.message);
    throw err;
  }
}

/** Spec 2.7: only `file_hash`, kept in lower case (matched case-insensitively). */
function checkedFilters(filters: WebhookFilters | undefined): WebhookFilters {
  return filters?.file_hash === undefined ? {} : { file_hash: filters.file_hash.toLowerCase() };
}

/**
 * A webhook of an app the caller owns. The app first (spec 4.15, issue 25 item 8): an
 * app named by app_id or the token that the caller does not own is 403 forbidden,
 * whatever the id; then a webhook that is not that app's (or, with no app named, not
 * of an app the caller owns) is 404 not_found (someone else's is not told apart).
 */
async function ownedWebhook(deps: DomainDeps, caller: WebhookCaller, id: string): Promise<Webhook> {
  const named = await namedAppIsOwned(deps, caller);
  const webhook = /^[0-9a-f-]{36}$/i.test(id) ? await deps.store.webhooks.get(id) : null;
  if (webhook !== null && (named === null || named === webhook.appId)) {
    const app = await deps.store.accounts.getApp(webhook.appId);
    if (app !== null && app.ownerId === caller.userId) return webhook;
  }
  throw new DomainError('not_found', 'No webhook with this id.');
}

// ---------------------------------------------------------------- management

/** Spec 4.15 POST: the webhook and its secret (shown this once). */
export async function createWebhook(deps: WebhookDeps, caller: WebhookCaller, input: WebhookInput, now = Date.now()): Promise<{ webhook: Webhook; secret: string }> {
  const app = await ownedApp(deps, caller);
  const org = await orgOf(deps, app);
  const limit = tierLimit(org.tier);
  const events = checkedEvents(input.events);
  const url = await checkedUrl(deps, input.url);
  const id = randomUUID();
  const secret = randomBytes(32).toString('hex');
  const created = await deps.store.webhooks.create(
    { id, appId: app.id, orgId: org.id, url, events, filters: checkedFilters(input.filters), sealedSecret: sealSecret(deps, id, secret), createdAt: now },
    limit,
  );
  if (created === 'limit_reached') throw new DomainError('limit_reached', `The organization has its ${limit} webhooks (tier "${org.tier}").`);
  return { webhook: created, secret };
}

/** Spec 4.15 GET: the app's webhooks, oldest first. */
export async function listWebhooks(deps: DomainDeps, caller: WebhookCaller): Promise<Webhook[]> {
  const app = await ownedApp(deps, caller);
  return deps.store.webhooks.listForApp(app.id);
}

/** Spec 4.15 PUT, 3.2: `{active: true}` re-enables (failure count back to 0). */
export async function updateWebhook(deps: WebhookDeps, caller: WebhookCaller, id: string, input: Partial<WebhookInput> & { active?: boolean }): Promise<Webhook> {
  const webhook = await ownedWebhook(deps, caller, id);
  const patch: WebhookPatch = {};
  if (input.events !== undefined) patch.events = checkedEvents(input.events);
  if (input.filters !== undefined) patch.filters = checkedFilters(input.filters);
  if (input.url !== undefined) patch.url = await checkedUrl(deps, input.url);
  if (input.active !== undefined) patch.active = input.active;
  const updated = await deps.store.webhooks.update(webhook.id, patch, Date.now());
  if (updated === null) throw new DomainError('not_found', 'No webhook with this id.');
  return updated;
}

/** Spec 4.15 DELETE. */
export async function deleteWebhook(deps: DomainDeps, caller: WebhookCaller, id: string): Promise<void> {
  const webhook = await ownedWebhook(deps, caller, id);
  if (!(await deps.store.webhooks.delete(webhook.id))) throw new DomainError('not_found', 'No webhook with this id.');
}

// ---------------------------------------------------------------- routing

/**
 * Spec 6 rule 1: the app's active webhooks subscribed to the event, `filters.file_hash`
 * applied to `sign.created` (any case). Routing runs after the event's commit, so a
 * webhook registered or re-enabled in between is passed over: a webhook gets what
 * happened while it was active (spec 3.2: delivery resumes on the next event).
 */
export function routeEvent(event: QueuedEvent, webhooks: readonly Webhook[]): Webhook[] {
  return webhooks.filter((w) => {
    if (!w.active || w.appId !== event.appId || !w.events.includes(event.type)) return false;
    if (event.createdAt < w.activeSince) return false;
    if (event.type === 'sign.created' && w.filters.file_hash !== undefined) {
      return String(event.payload.file_hash).toLowerCase() === w.filters.file_hash;
    }
    return true;
  });
}
