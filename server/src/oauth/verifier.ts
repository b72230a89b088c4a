// OAuth access tokens as bearer tokens of the API (spec 5): one more TokenVerifier on
// the server's list (root.ts), after the session tokens'. The caller it returns
// carries the app (its webhooks hear of the signs and revocations made through it,
// spec 6) and the token's scopes (requireAuth checks sign and verify).
import type { TokenVerifier } from '../deps.js';
import { accessOf } from '../domain/oauth.js';

export const oauthAccessTokenVerifier: TokenVerifier = async (deps, token) => {
  const access = await accessOf(deps, token);
  return access === null ? null : { userId: access.userId, kind: 'oauth', appId: access.appId, scopes: access.scopes };
};
