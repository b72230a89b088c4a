// OAuth rows as both engines read them (same columns and JSON text on SQLite and
// PostgreSQL), and their mapping to the store's values. No SQL here: the queries stay in
// each engine.
import type { OAuthGrant, StoredOAuthCode, StoredRefreshToken } from '../types.js';

export interface GrantRow {
  id: string;
  user_id: string;
  app_id: string;
  scopes: string;
  shared_email: string | null;
  created_at: number;
  updated_at: number;
}

export const toGrant = (r: GrantRow): OAuthGrant => ({
  id: r.id,
  userId: r.user_id,
  appId: r.app_id,
  scopes: JSON.parse(r.scopes) as string[],
  sharedEmail: r.shared_email,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface CodeRow {
  hash: string;
  grant_id: string;
  user_id: string;
  app_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export const toCode = (r: CodeRow): StoredOAuthCode => ({
  hash: r.hash,
  grantId: r.grant_id,
  userId: r.user_id,
  appId: r.app_id,
  redirectUri: r.redirect_uri,
  scopes: JSON.parse(r.scopes) as string[],
  codeChallenge: r.code_challenge,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
});

export interface RefreshRow {
  hash: string;
  grant_id: string;
  user_id: string;
  app_id: string;
  scopes: string;
  expires_at: number;
  revoked_at: number | null;
}

export const toRefresh = (r: RefreshRow): StoredRefreshToken => ({
  hash: r.hash,
  grantId: r.grant_id,
  userId: r.user_id,
  appId: r.app_id,
  scopes: JSON.parse(r.scopes) as string[],
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});
