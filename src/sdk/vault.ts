// The local vault's signing service as a web app or a desktop app sees it (spec 1
// points 2-3, spec 7's vault path): `provenant vault serve` listens on 127.0.0.1 at
// VAULT_DEFAULT_PORT; requestVaultSignature() asks it to sign a file hash with record
// fields, the user approves in the vault's terminal, and the answer is the signed
// record, not published (action_hash null). Every failure is a VaultError whose code is
// one of VAULT_FAILURES, the table the service answers from as well.
import { ed25519 } from '@noble/curves/ed25519.js';
import { isKey, normalizeAgentKey } from '../lib/keys.js';
import { verifyRecordWith } from '../lib/record-bytes.js';
import type { SignedRecord } from '../lib/records.js';

/** The vault service's fixed default port (documented in docs/vault.md). */
export const VAULT_DEFAULT_PORT = 7733;
export const VAULT_DEFAULT_URL = `http://127.0.0.1:${VAULT_DEFAULT_PORT}`;
/** How long the vault waits for the user's answer before it declines (spec 7: about 60 s). */
export const VAULT_APPROVAL_TIMEOUT_MS = 60_000;
/** The path of a sign request on the vault service. */
export const VAULT_SIGN_PATH = '/v1/sign';

/**
 * Every way a vault request fails, with the HTTP status the service answers it with
 * (0: no answer reaches the client) and the message. Spec 7 lists the first six.
 */
export const VAULT_FAILURES = {
  vault_absent: [0, 'No vault answers: start it with `provenant vault serve`.'],
  vault_locked: [423, 'The vault is locked: type its passphrase in the vault terminal.'],
  blocked: [403, 'The vault does not accept requests from this origin (allow it with `provenant vault allow ORIGIN`), or the browser blocked the request.'],
  other_identity: [409, 'The vault holds another identity than the one this request names.'],
  declined: [403, 'The user declined to sign.'],
  timeout: [408, 'Nobody answered the approval prompt in time.'],
  quota_exceeded: [403, 'Publishing this would exceed the signing quota.'],
  invalid_request: [400, 'The request is malformed.'],
  invalid_answer: [502, 'The vault answered a record that does not match the request or its signature.'],
} as const satisfies Record<string, readonly [number, string]>;
export type VaultFailureCode = keyof typeof VAULT_FAILURES;

export class VaultError extends Error {
  override readonly name = 'VaultError';
  readonly code: VaultFailureCode;
  /** The service's answer body (a quota_exceeded carries the quota fields), when there was one. */
  readonly body: Record<string, unknown> | null;
  constructor(code: VaultFailureCode, message: string = VAULT_FAILURES[code][1], body: Record<string, unknown> | null = null) {
    super(message);
    this.code = code;
    this.body = body;
  }
}

/** What a client asks the vault to sign: a file hash and the record fields, in request form (spec 4.7's tokens). */
export interface VaultSignRequest {
  file_hash: string;
  intent?: string;
  ai_generation?: string;
  content_rights?: Record<string, unknown>;
  comment?: string;
  supersedes?: string;
  perceptual_hash?: object;
  integrity_report?: object;
  expires_at?: unknown;
  tags?: unknown;
  /** The agent key the app expects (e.g. from OAuth userinfo): another identity in the vault is `other_identity`. */
  signer?: string;
  /** A desktop app linked to the identity (it names `signer`) may have the vault publish; web pages may not. */
  publish?: boolean;
  /** The sponsoring app whose pool a published record draws on. */
  client_id?: string;
}

/** The vault's answer: the signed record, and its action hash only when the vault published it. */
export interface VaultSignature {
  record: SignedRecord;
  action_hash: string | null;
}

export interface VaultRequestOptions {
  /** The vault service's URL; VAULT_DEFAULT_URL by default. */
  vaultUrl?: string;
  fetch?: typeof fetch;
  /** Gives up (code `timeout`) after this long; a little over the vault's own prompt timeout by default. */
  timeoutMs?: number;
}

function verifyEd25519(publicKey: Uint8Array, bytes: Uint8Array, signature: Uint8Array): boolean {
  if (!isKey(publicKey) || signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, bytes, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

function isVaultFailure(code: unknown): code is VaultFailureCode {
  return typeof code === 'string' && Object.hasOwn(VAULT_FAILURES, code);
}

/**
 * Tells `blocked` from `vault_absent` after fetch failed without an answer: in a browser
 * both are a TypeError, but a no-cors request (which needs no CORS permission) still
 * reaches a running vault. In Node there is no CORS: a failed fetch means no vault.
 */
async function whyUnanswered(fetchImpl: typeof fetch, url: string): Promise<VaultFailureCode> {
  if (typeof (globalThis as { document?: unknown }).document === 'undefined') return 'vault_absent';
  try {
    await fetchImpl(url, { method: 'GET', mode: 'no-cors' });
    return 'blocked';
  } catch {
    return 'vault_absent';
  }
}

/**
 * Asks the local vault to sign `request.file_hash` with the given fields; resolves once
 * the user approved, with the record (re-verified here: signature, file hash and, when
 * named, signer) and `action_hash` null unless a linked desktop app asked to publish.
 * Rejects with VaultError: vault_absent, vault_locked, blocked, other_identity,
 * declined, timeout (spec 7), quota_exceeded (publish only, before any prompt),
 * invalid_request, invalid_answer.
 */
export async function requestVaultSignature(request: VaultSignRequest, options: VaultRequestOptions = {}): Promise<VaultSignature> {
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const url = `${(options.vaultUrl ?? VAULT_DEFAULT_URL).replace(/\/+$/, '')}${VAULT_SIGN_PATH}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? VAULT_APPROVAL_TIMEOUT_MS + 10_000);
  let res: Response;
  try {
    res = await fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: controller.signal,
    });
  } catch (err) {
    if (controller.signal.aborted) throw new VaultError('timeout');
    throw new VaultError(await whyUnanswered(fetchImpl, url), undefined);
  } finally {
    clearTimeout(timer);
  }
  let body: Record<string, unknown> | null = null;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const code = isVaultFailure(body?.error) ? body.error : res.status === 403 ? 'blocked' : 'invalid_answer';
    throw new VaultError(code, typeof body?.message === 'string' ? body.message : undefined, body);
  }
  const answer = body as unknown as VaultSignature | null;
  const record = answer?.record;
  if (!record || !verifyRecordWith(record, verifyEd25519) || record.file_hash !== request.file_hash.toLowerCase()
    || (request.signer !== undefined && record.signer !== normalizeAgentKey(request.signer))) {
    throw new VaultError('invalid_answer');
  }
  return { record, action_hash: typeof answer.action_hash === 'string' ? answer.action_hash : null };
}
