// The client SDK for app developers (environment-neutral: fetch and WebCrypto): the
// sign-it calls, OAuth 2.0 + PKCE, and requests to the user's local vault.
export { ProvenantClient } from './client.js';
export type {
  ClientOptions, Signature, ReducedSignature, OwnSignature, QuotaState, VerifyAnswer, MatchAnswer, VerifyFileAnswer, EmbeddedRecordAnswer, SessionAnswer, DeviceKey, FuzzyQuery, SignRequest,
} from './client.js';
export { ProvenantError } from './errors.js';
export type { ServiceErrorCode } from './errors.js';
export {
  createPkce, codeChallengeOf, randomState, authorizationUrl, authorizationCode, exchangeCode, refreshAccessToken, revokeToken, userInfo,
} from './oauth.js';
export type { Pkce, OAuthApp, TokenResponse, UserInfo } from './oauth.js';
export {
  requestVaultSignature, VaultError, VAULT_FAILURES, VAULT_DEFAULT_PORT, VAULT_DEFAULT_URL, VAULT_APPROVAL_TIMEOUT_MS, VAULT_SIGN_PATH,
} from './vault.js';
export type { VaultFailureCode, VaultSignRequest, VaultSignature, VaultRequestOptions } from './vault.js';
// Webhook receivers check X-Service-Signature with the library's function (issue 18's), re-exported here.
export { verifyWebhookSignature } from '../lib/webhook.js';
