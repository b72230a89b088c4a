// /api/v1/developer answers (decisions.md 5).
import type { App } from '../store/index.js';

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

/** The caller's apps. */
export function appsAnswer(apps: readonly App[]): { apps: AppView[] } {
  return { apps: apps.map(appView) };
}

/** A session token carrying the app (`app_id`), valid SESSION_TTL_SECONDS. */
export function appTokenAnswer(token: string, appId: string, expiresIn: number) {
  return { token, app_id: appId, expires_in: expiresIn };
}
