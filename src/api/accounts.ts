// Accounts, developer apps, OAuth and webhooks (decisions.md 5, 7; spec 2.7, 2.8, 4.15,
// 4.16): the answers, and the requests the SDK sends, each defined once (see records.ts).
import { z } from 'zod';

/** A linked device key (GET /api/v1/auth/agents). */
export const deviceKey = z.object({ agent_pub_key: z.string(), did: z.string().nullable(), primary: z.boolean(), linked_at: z.string() });

/** The account view of /api/v1/auth (decisions.md 5). */
export const user = z.object({
  id: z.string(),
  email: z.string().nullable(),
  email_verified: z.boolean(),
  username: z.string().nullable(),
  display_name: z.string().nullable(),
  profile_picture: z.string().nullable(),
  public_fields: z.array(z.string()),
  contact_opt_in: z.boolean(),
  tier: z.string(),
  agent_pub_key: z.string().nullable(),
  did: z.string().nullable(),
  agents: z.array(deviceKey),
  server_cell: z.boolean(),
  personal_org_id: z.string().nullable(),
  created_at: z.string(),
});

export const sessionAnswer = z.object({ token: z.string(), user });
export const userAnswer = z.object({ user });
export const agentsAnswer = z.object({ agents: z.array(deviceKey) });
export const challengeAnswer = z.object({ challenge: z.string(), expires_at: z.string() });
export const sessionsRevokedAnswer = z.object({ success: z.literal(true), sessions_valid_after: z.string() });
export const verificationSentAnswer = z.object({ email: z.string(), email_verified: z.literal(false), verification_sent: z.literal(true) });
export const alreadyVerifiedAnswer = z.object({ email: z.string(), email_verified: z.literal(true), verification_sent: z.literal(false) });

/** decisions.md 5: a login challenge for an agent key. */
export const challengeRequest = z.object({ agent_pub_key: z.string().max(200) });
/** vault/token and agents: the challenge signed (base64 Ed25519) by agent_pub_key. */
export const signedChallengeRequest = z.object({ challenge: z.string().max(200), agent_pub_key: z.string().max(200), signature: z.string().max(200) });

// ---------------------------------------------------------------- developer apps

export const app = z.object({
  client_id: z.string(),
  name: z.string(),
  org_id: z.string().nullable(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()),
  active: z.boolean(),
  created_at: z.string(),
});
export const appsAnswer = z.object({ apps: z.array(app) });
export const appTokenAnswer = z.object({ token: z.string(), app_id: z.string(), expires_in: z.number().int() });
/** GET /api/v1/account/apps: the apps holding access to the account. */
export const grantedAppsAnswer = z.object({
  apps: z.array(z.object({ client_id: z.string(), name: z.string(), scopes: z.array(z.string()), email_shared: z.boolean(), authorized_at: z.string(), updated_at: z.string() })),
});

// ---------------------------------------------------------------- OAuth 2.0 + PKCE (spec 2.8, 4.16; decisions.md 7)

/** Spec 7: the error body of /oauth/token, /oauth/userinfo and /oauth/revoke. */
export const oauthError = z.object({ error: z.string(), error_description: z.string() }).catchall(z.unknown()).describe('spec 7: OAuth error body (extra fields such as retry_after)');
export const tokenResponse = z
  .object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int(), refresh_token: z.string(), scope: z.string() })
  .describe('spec 2.8');
/** Spec 2.8: who the access token belongs to, the fields its scopes allow. */
export const userInfo = z
  .object({
    sub: z.string(),
    name: z.string().nullable(),
    preferred_username: z.string().nullable(),
    did: z.string().nullable(),
    agent_pub_key: z.string().nullable(),
    profile_picture: z.string().nullable(),
    has_custom_picture: z.boolean(),
    email: z.string(),
    email_verified: z.boolean(),
    scope: z.string(),
  })
  .partial()
  .required({ sub: true, scope: true });
export const tokenRequest = z.union([
  z.object({ grant_type: z.literal('authorization_code'), code: z.string(), redirect_uri: z.string(), client_id: z.string(), code_verifier: z.string().min(43).max(128) }),
  z.object({ grant_type: z.literal('refresh_token'), refresh_token: z.string(), client_id: z.string(), scope: z.string().optional() }),
]);
export const tokenRevokeRequest = z.object({ token: z.string(), token_type_hint: z.enum(['refresh_token', 'access_token']).optional(), client_id: z.string() });

// ---------------------------------------------------------------- webhooks (spec 2.7, 4.15)

export const webhookFilters = z.object({ file_hash: z.string().regex(/^[0-9a-f]{64}$/).optional() });
export const listedWebhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    filters: webhookFilters,
    active: z.boolean(),
    failure_count: z.number().int(),
    last_triggered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .describe('spec 2.7, listing shape');
export const createdWebhookAnswer = z.object({
  webhook: z.object({ id: z.string(), url: z.string(), events: z.array(z.string()), filters: webhookFilters, secret: z.string().regex(/^[0-9a-f]{64}$/), created_at: z.string() }),
  message: z.string(),
});
export const webhooksAnswer = z.object({ webhooks: z.array(listedWebhook) });
export const webhookAnswer = z.object({ webhook: listedWebhook });
export const webhookEventsAnswer = z.object({ events: z.array(z.object({ type: z.string(), description: z.string(), fires: z.boolean(), fields: z.array(z.string()) })) });
