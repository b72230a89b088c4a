// Developer apps (decisions.md 5): an app's client_id is its UUID; its owner may mint
// session tokens that carry the app (`app_id`).
import { randomUUID } from 'node:crypto';
import type { App } from '../store/accounts.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { issueSessionToken, SESSION_TTL_SECONDS } from '../auth/tokens.js';

export interface AppView {
  client_id: string;
  name: string;
  org_id: string | null;
  redirect_uris: string[];
  scopes: string[];
  active: boolean;
  created_at: string;
}

export function appView(app: App): AppView {
  return {
    client_id: app.id,
    name: app.name,
    org_id: app.orgId,
    redirect_uris: app.redirectUris,
    scopes: app.scopes,
    active: app.active,
    created_at: new Date(app.createdAt).toISOString(),
  };
}

/** `openid` is always included (spec 2.8); the org, when named, must be the caller's (403 forbidden). */
export async function createApp(
  deps: Pick<ServerDeps, 'store'>,
  ownerId: string,
  input: { name: string; redirect_uris: string[]; scopes: string[]; org_id?: string | null },
): Promise<App> {
  if (input.org_id) {
    const org = await deps.store.accounts.getOrg(input.org_id);
    if (!org || org.ownerId !== ownerId) throw new ApiError('forbidden', 'org_id: not an organization you own.');
  }
  const scopes = [...new Set(['openid', ...input.scopes])];
  return deps.store.accounts.createApp({
    id: randomUUID(),
    orgId: input.org_id ?? null,
    ownerId,
    name: input.name,
    redirectUris: [...new Set(input.redirect_uris)],
    scopes,
  });
}

/** The app if the caller owns it: 404 not_found for an unknown id, 403 forbidden for someone else's. */
export async function ownedApp(deps: Pick<ServerDeps, 'store'>, userId: string, appId: string): Promise<App> {
  const app = /^[0-9a-f-]{36}$/i.test(appId) ? await deps.store.accounts.getApp(appId) : null;
  if (!app) throw new ApiError('not_found', 'No app with this client_id.');
  if (app.ownerId !== userId) throw new ApiError('forbidden');
  return app;
}

export async function appToken(
  deps: Pick<ServerDeps, 'store' | 'config'>,
  userId: string,
  appId: string,
): Promise<{ token: string; app_id: string; expires_in: number }> {
  const app = await ownedApp(deps, userId, appId);
  return { token: await issueSessionToken(deps, userId, app.id), app_id: app.id, expires_in: SESSION_TTL_SECONDS };
}
