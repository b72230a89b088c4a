// Developer apps (decisions.md 5): an app's client_id is its UUID; its owner may mint
// session tokens that carry the app (`app_id`).
import { randomUUID } from 'node:crypto';
import { issueSessionToken } from './tokens.js';
import { DomainError } from '../errors.js';
import type { App } from '../store/index.js';
import type { DomainDeps } from './deps.js';

export interface NewApp {
  name: string;
  redirect_uris: string[];
  scopes: string[];
  org_id?: string | null;
}

/** `openid` is always included (spec 2.8); the org, when named, must be the owner's (forbidden). */
export async function createApp(deps: DomainDeps, ownerId: string, input: NewApp): Promise<App> {
  if (input.org_id) {
    const org = await deps.store.accounts.getOrg(input.org_id);
    if (!org || org.ownerId !== ownerId) throw new DomainError('forbidden', 'org_id: not an organization you own.');
  }
  return deps.store.accounts.createApp({
    id: randomUUID(),
    orgId: input.org_id ?? null,
    ownerId,
    name: input.name,
    redirectUris: [...new Set(input.redirect_uris)],
    scopes: [...new Set(['openid', ...input.scopes])],
  });
}

/** The app if `userId` owns it: not_found for an unknown id, forbidden for someone else's. */
export async function ownedApp(deps: DomainDeps, userId: string, appId: string): Promise<App> {
  const app = /^[0-9a-f-]{36}$/i.test(appId) ? await deps.store.accounts.getApp(appId) : null;
  if (!app) throw new DomainError('not_found', 'No app with this client_id.');
  if (app.ownerId !== userId) throw new DomainError('forbidden');
  return app;
}

/** A session token of `userId`, carrying `appId` when given (which the user must own). */
export async function sessionToken(deps: DomainDeps, userId: string, appId: string | null): Promise<string> {
  if (appId !== null) await ownedApp(deps, userId, appId);
  return issueSessionToken(deps, userId, appId);
}
