// OAuth answers (spec 2.8, 4.16; RFC 6749 5.1, RFC 8414): the token response, userinfo
// gated by scope, the server's metadata, and the user's list of authorized apps.
import { didFromAgentKey } from 'provenant';
import type { Config } from '../config.js';
import { OAUTH_SCOPES, type TokenSet, type UserInfoSource } from '../domain/oauth.js';
import type { OAuthGrantListing } from '../store/index.js';

/** Spec 2.8. */
export function tokenAnswer(tokens: TokenSet) {
  return {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: tokens.expiresIn,
    refresh_token: tokens.refreshToken,
    scope: tokens.scopes.join(' '),
  };
}

/** Spec 2.8: `sub` always; every other field only with the scope that names it. */
export function userInfoAnswer(info: UserInfoSource): Record<string, unknown> {
  const has = (scope: string) => info.scopes.includes(scope);
  const answer: Record<string, unknown> = { sub: info.user.id };
  if (has('display_name')) answer.name = info.user.displayName;
  if (has('username')) answer.preferred_username = info.user.username;
  if (has('did') || has('holochain')) answer.did = info.agentKey === null ? null : didFromAgentKey(info.agentKey);
  if (has('public_key') || has('holochain')) answer.agent_pub_key = info.agentKey;
  if (has('profile_picture')) {
    answer.profile_picture = info.user.profilePicture;
    answer.has_custom_picture = info.user.profilePicture !== null;
  }
  // only a verified address the user shared at consent (spec 2.8); none shared: neither field
  if (has('email') && info.sharedEmail !== null) {
    answer.email = info.sharedEmail;
    answer.email_verified = true;
  }
  answer.scope = info.scopes.join(' ');
  return answer;
}

/** RFC 8414 2, with RFC 9207's iss parameter and spec 4.16's endpoints. */
export function metadataAnswer(config: Pick<Config, 'baseUrl'>) {
  const issuer = config.baseUrl;
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: OAUTH_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** GET /api/v1/account/apps. */
export function authorizedAppsAnswer(grants: readonly OAuthGrantListing[]) {
  return {
    apps: grants.map((g) => ({
      client_id: g.appId,
      name: g.appName,
      scopes: g.scopes,
      email_shared: g.sharedEmail !== null,
      authorized_at: new Date(g.createdAt).toISOString(),
      updated_at: new Date(g.updatedAt).toISOString(),
    })),
  };
}
