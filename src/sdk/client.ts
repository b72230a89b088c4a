// A typed client of the sign-it REST contract (spec 4) and the vault login endpoints
// (decisions.md 5), on fetch alone, so it runs in Node and in browsers. Every method
// answers the service's JSON as typed here, or rejects with ProvenantError.
import { base64 } from '@scure/base';
import type { SignedRecord } from '../lib/records.js';
import type { RevocationEntry } from '../lib/records.js';
import type {
  ChallengeAnswer,
  DeviceKey,
  FuzzyQuery,
  ManifestPublishAnswer,
  MatchAnswer,
  OwnSignature,
  PublishAnswer,
  QuotaState,
  QuotaSyncRequest,
  SessionAnswer,
  SessionsRevokedAnswer,
  SignAnswer,
  SignedChallengeRequest,
  SignRequest,
  User,
  VerifyAnswer,
  VerifyFileAnswer,
} from '../api/index.js';
import { errorOfAnswer, ProvenantError } from './errors.js';

// The answers' types are inferred from the service's own schemas (provenant/api, src/api/):
// the server validates and describes with the same zod definitions, so they cannot drift.
export type {
  Signature,
  ReducedSignature,
  OwnSignature,
  QuotaState,
  VerifyAnswer,
  MatchAnswer,
  VerifyFileAnswer,
  EmbeddedRecordAnswer,
  SessionAnswer,
  DeviceKey,
  FuzzyQuery,
  SignRequest,
} from '../api/index.js';

export interface ClientOptions {
  /** The service's base URL, e.g. `https://provenant.example` (no `/api/v1`). */
  baseUrl: string;
  /** A JWT session token or an OAuth access token, for the calls that need one. */
  token?: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

const SIGN_IT = '/api/v1/sign-it';
const AUTH = '/api/v1/auth';

export class ProvenantClient {
  readonly baseUrl: string;
  token: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Spec 4.1 (public). */
  verify(fileHash: string): Promise<VerifyAnswer> {
    return this.call('GET', `${SIGN_IT}/verify?hash=${encodeURIComponent(fileHash)}`);
  }

  /** Spec 4.2 (public): the file's bytes, fingerprinted by the service and discarded. */
  verifyFile(bytes: Uint8Array | Blob): Promise<VerifyFileAnswer> {
    return this.call('POST', `${SIGN_IT}/verify-file`, { raw: bytes });
  }

  /** Spec 4.3 (public). */
  verifyFuzzy(query: FuzzyQuery): Promise<MatchAnswer> {
    return this.call('POST', `${SIGN_IT}/verify-fuzzy`, { json: query });
  }

  /** Spec 4.4: the caller's quota (session, or OAuth `verify`). */
  quota(): Promise<QuotaState> {
    return this.call('GET', `${SIGN_IT}/quota`, { auth: true });
  }

  /** Spec 4.5 (public): an agent's quota, or its sponsoring app's pool with `clientId`. */
  quotaByAgent(agentPubKey: string, clientId?: string | null): Promise<QuotaState> {
    const query = new URLSearchParams({ agent_pub_key: agentPubKey });
    if (clientId) query.set('client_id', clientId);
    return this.call('GET', `${SIGN_IT}/quota/by-agent?${query}`);
  }

  /** decisions.md 2: the quota recounted, asked with a vault's hex signature of quotaSyncMessage. */
  syncQuota(body: QuotaSyncRequest): Promise<QuotaState> {
    return this.call('POST', `${SIGN_IT}/quota/sync-by-agent`, { json: body });
  }

  /** Spec 4.9: the caller's records with their signatures (session, or OAuth `verify`). */
  mySignatures(): Promise<{ signatures: OwnSignature[] }> {
    return this.call('GET', `${SIGN_IT}/my-signatures`, { auth: true });
  }

  /** Spec 4.7 (deprecated): signing by a server-hosted cell (OAuth `sign`). */
  sign(request: SignRequest): Promise<SignAnswer> {
    return this.call('POST', `${SIGN_IT}/sign`, { json: request, auth: true });
  }

  /**
   * decisions.md 2: publishes a record signed by a vault; over quota rejects with 403
   * quota_exceeded. `features` (issue 32): the encoded feature set whose SHA-256 the
   * record's signed `features.digest` is, sent beside the record as `features_data`.
   */
  publish(signed: SignedRecord, clientId?: string | null, features?: Uint8Array | null): Promise<PublishAnswer> {
    const json: Record<string, unknown> = { ...signed };
    if (clientId) json.client_id = clientId;
    if (features) json.features_data = base64.encode(features);
    return this.call('POST', `${SIGN_IT}/publish`, { json });
  }

  /**
   * Issue 33: stores a detached C2PA manifest store (application/c2pa) in the repository,
   * for the record its provenant.record assertion names; the store's own signature, by
   * that record's signer, authenticates it. 201 stored, 200 stored before.
   */
  publishManifest(store: Uint8Array): Promise<ManifestPublishAnswer> {
    return this.call('POST', `${SIGN_IT}/manifests`, { raw: store, contentType: 'application/c2pa' });
  }

  /** decisions.md 2: publishes a revocation signed by the record's signer. */
  publishRevocation(revocation: RevocationEntry & { signature: string }): Promise<PublishAnswer> {
    return this.call('POST', `${SIGN_IT}/publish-revocation`, { json: revocation });
  }

  /** decisions.md 5: a login challenge for an agent key. */
  vaultChallenge(agentPubKey: string): Promise<ChallengeAnswer> {
    return this.call('POST', `${AUTH}/vault/challenge`, { json: { agent_pub_key: agentPubKey } });
  }

  /** decisions.md 5: a session for the signed challenge (a first login creates a device-hosted account). */
  vaultToken(signed: SignedChallengeRequest): Promise<SessionAnswer> {
    return this.call('POST', `${AUTH}/vault/token`, { json: signed });
  }

  /** decisions.md 5: links the device key that signed the challenge to the signed-in account. */
  linkAgent(signed: SignedChallengeRequest): Promise<{ user: User }> {
    return this.call('POST', `${AUTH}/agents`, { json: signed, auth: true });
  }

  /** The signed-in account's linked device keys, primary first (a session token; an app's OAuth token is refused). */
  agents(): Promise<{ agents: DeviceKey[] }> {
    return this.call('GET', `${AUTH}/agents`, { auth: true });
  }

  /**
   * Unlinks a device key: it can no longer sign in or publish; the records it signed
   * stay. Rejects with 409 agent_required for the only key (or a server-hosted cell's).
   */
  unlinkAgent(agentPubKey: string): Promise<{ agents: DeviceKey[] }> {
    return this.call('DELETE', `${AUTH}/agents/${encodeURIComponent(agentPubKey)}`, { auth: true });
  }

  /** Sign out everywhere: every session token of the account issued until now ends, this client's too. */
  signOutEverywhere(): Promise<SessionsRevokedAnswer> {
    return this.call('POST', `${AUTH}/sessions/revoke`, { auth: true });
  }

  /** Changes the password; every earlier session ends and the answer is a fresh one (use its token from now on). */
  changePassword(currentPassword: string, newPassword: string): Promise<SessionAnswer> {
    return this.call('POST', `${AUTH}/password`, { json: { current_password: currentPassword, new_password: newPassword }, auth: true });
  }

  /** decisions.md 5: a session for an e-mail (or username) and password. */
  login(emailOrUsername: string, password: string): Promise<SessionAnswer> {
    return this.call('POST', `${AUTH}/login`, { json: { email_or_username: emailOrUsername, password } });
  }

  private async call<T>(method: string, path: string, options: { json?: unknown; raw?: Uint8Array | Blob; contentType?: string; auth?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.auth) {
      if (!this.token) throw new ProvenantError(401, 'invalid_token', `${path} needs a token: pass one as ClientOptions.token`);
      headers.authorization = `Bearer ${this.token}`;
    }
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.raw !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/octet-stream';
      body = options.raw as BodyInit;
    }
    return requestJson<T>(this.fetchImpl, `${this.baseUrl}${path}`, { method, headers, body });
  }
}

/** One JSON call: the parsed answer of a 2xx, else ProvenantError (status 0 `unreachable` when no answer came). */
export async function requestJson<T>(fetchImpl: typeof fetch, url: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetchImpl(url, init);
  } catch (err) {
    throw new ProvenantError(0, 'unreachable', `cannot reach ${new URL(url).origin}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    if (res.ok) throw new ProvenantError(res.status, 'invalid_answer', `${url} answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) throw errorOfAnswer(res.status, parsed);
  return parsed as T;
}
