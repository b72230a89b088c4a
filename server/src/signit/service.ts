// Sign-it: what each endpoint does, free of Koa. Routes parse, call one function here,
// and render its result; errors are ApiErrors from the one table.
//
// Seams for later issues:
// - webhooks: `sign.created` / `sign.revoked` rows go to the event outbox in the same
//   transaction as the sign or revocation (decisions.md 8), only for REST calls made
//   with a token that carries an app (spec 6); the dispatcher reads
//   `store.signatures.pendingEvents()`.
// - the perceptual match index subscribes with `store.signatures.subscribe({stored,
//   revoked})` and loads existing rows with `store.signatures.listFingerprinted()`.
import {
  InvalidFieldError,
  actionHash,
  canonicalRecordBytes,
  canonicalRevocationBytes,
  commentProblem,
  didFromAgentKey,
  isHex64,
  isPlainObject,
  normalizeAgentKey,
  parseAgentKey,
  parseRecord,
  parseRevocation,
  parseSignatureHex,
  quotaSyncMessage,
  recordValueProblem,
  toBase64,
  verifyBytes,
  verifyRecord,
  verifyRevocation,
  type FreeFormField,
  type SignatureRecord,
} from 'provenant';
import type { NewSignature, OutboxEvent, StoredSignature } from '../store/signatures.js';
import type { User } from '../store/accounts.js';
import { serverCellAgentKey, signManyWithCell, signWithCell } from '../accounts/cells.js';
import type { ServerDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { AuthState } from '../types.js';
import { verifyCacheOf } from './cache.js';
import { chooseQuota, decideCharge, quotaPeriod, type PoolPlan, type QuotaState } from './quota.js';
import {
  fromFieldError,
  parseBatch,
  parseClientId,
  parseHashQuery,
  parseQuotaSync,
  parseRevoke,
  parseSignFields,
  parseThumbnail,
  toRecord,
  type SignRequest,
} from './schema.js';

/** decisions.md 2: vault records and revocations must be signed within 10 minutes of our clock. */
export const PUBLISH_WINDOW_MS = 10 * 60 * 1000;
/** decisions.md 2: a quota sync's timestamp must be within 5 minutes. */
export const QUOTA_SYNC_WINDOW_MS = 5 * 60 * 1000;

// ---------------------------------------------------------------- response shapes

/**
 * A stored free-form field as answered: null when it is beyond the limits a record is
 * checked against now (a row stored before they held, or written past the service),
 * so that one such row answers without that field instead of failing the answer of its
 * hash, or of its signer's list, for everyone (nesting thousands deep overflows
 * JSON.stringify).
 */
function answered<T>(field: FreeFormField, value: T): T | null {
  return value === undefined || recordValueProblem(field, value) !== null ? null : value;
}

/** Spec 2.1 (without profile/revocation) + 2.4 share these record fields. */
function recordFields(s: StoredSignature, supersededBy: string | null) {
  const r = s.record;
  return {
    file_hash: r.file_hash,
    action_hash: s.action_hash,
    signer: r.signer,
    signed_at: r.signed_at,
    intent: r.intent,
    ai_generation: r.ai_generation,
    content_rights: answered('content_rights', r.content_rights),
    integrity_report: answered('integrity_report', r.integrity_report),
    perceptual_hash: answered('perceptual_hash', r.perceptual_hash),
    comment: r.comment,
    supersedes: r.supersedes,
    superseded_by: supersededBy,
    expires_at: answered('expires_at', r.expires_at),
    tags: answered('tags', r.tags),
  };
}

/**
 * `superseded_by` within one result set (spec 2.1, 3.1): the newest unrevoked record
 * of the same signer whose `supersedes` names it. Another signer cannot amend a record.
 */
export function supersededByMap(list: readonly StoredSignature[]): Map<string, string> {
  const byHash = new Map(list.map((s) => [s.action_hash, s]));
  const out = new Map<string, string>();
  const when = new Map<string, number>();
  for (const s of list) {
    const target = s.record.supersedes;
    if (target === null || s.revocation !== null) continue;
    const old = byHash.get(target);
    if (old === undefined || old.record.signer !== s.record.signer) continue;
    if ((when.get(target) ?? -Infinity) < s.record.signed_at) {
      out.set(target, s.action_hash);
      when.set(target, s.record.signed_at);
    }
  }
  return out;
}

/** Spec 2.1: the full public signature shape, profile fields only where the signer granted them. */
export function publicSignature(s: StoredSignature, supersededBy: string | null) {
  const grants = new Set(s.profile?.public_fields ?? []);
  const fields = recordFields(s, supersededBy);
  const rights = fields.content_rights;
  return {
    ...fields,
    signer_did: didFromAgentKey(s.record.signer),
    signer_display_name: grants.has('display_name') ? (s.profile?.display_name ?? null) : null,
    signer_username: grants.has('username') ? (s.profile?.username ?? null) : null,
    signer_profile_picture: grants.has('profile_picture') ? (s.profile?.profile_picture ?? null) : null,
    revoked: s.revocation !== null,
    revoked_at: s.revocation?.revoked_at ?? null,
    revocation_reason: s.revocation?.reason ?? null,
    contactable: s.revocation === null && rights?.contact_preference === 'AllowContactRequests',
  };
}

/** Spec 2.1 for a list, with `superseded_by` computed within it. */
export function publicSignatures(list: readonly StoredSignature[]) {
  const map = supersededByMap(list);
  return list.map((s) => publicSignature(s, map.get(s.action_hash) ?? null));
}

/** Spec 2.4: record fields plus signature, revocation (as `revoked_reason`) and thumbnail. */
export function ownSignature(s: StoredSignature, supersededBy: string | null) {
  return {
    ...recordFields(s, supersededBy),
    signature: s.signature,
    revoked: s.revocation !== null,
    revoked_at: s.revocation?.revoked_at ?? null,
    revoked_reason: s.revocation?.reason ?? null,
    thumbnail: s.thumbnail,
  };
}

// ---------------------------------------------------------------- quota plans

let lastSignedAt = 0;
/**
 * Unix ms for a server-made record, strictly increasing in this process: two signs of
 * the same file with the same fields in the same millisecond would otherwise be the
 * same record (Ed25519 is deterministic) and collide on the action hash.
 */
export function nextSignedAt(now = Date.now()): number {
  lastSignedAt = Math.max(now, lastSignedAt + 1);
  return lastSignedAt;
}

async function userOrThrow(deps: ServerDeps, userId: string): Promise<User> {
  const user = await deps.store.accounts.getUser(userId);
  if (!user) throw new ApiError('invalid_token', 'The account of this token no longer exists.');
  return user;
}

/**
 * The pools a sign by `user` through `appId` may draw on (decisions.md 6): the app's
 * org pool when the app is active and has an organization, else the personal quota.
 */
export async function poolPlan(deps: ServerDeps, user: User, appId: string | null): Promise<PoolPlan & { appName: string | null }> {
  const plan: PoolPlan & { appName: string | null } = { userId: user.id, personalTier: user.tier, org: null, appWithoutOrg: false, appName: null };
  if (appId === null) return plan;
  const app = await deps.store.accounts.getApp(appId);
  if (!app || !app.active) return plan;
  plan.appName = app.name;
  const org = app.orgId === null ? null : await deps.store.accounts.getOrg(app.orgId);
  if (org === null) plan.appWithoutOrg = true;
  else plan.org = { orgId: org.id, tier: org.tier, customLimit: org.customLimit, appName: app.name };
  return plan;
}

/** The quota state of a plan now (spec 2.5), with `sponsor` when asked for. */
export async function quotaStateOf(deps: ServerDeps, plan: PoolPlan & { appName: string | null }, withSponsor: boolean): Promise<QuotaState> {
  const period = quotaPeriod(Date.now());
  const usage = await deps.store.signatures.countUsage(plan.userId, plan.org?.orgId ?? null, period.start, period.end);
  const choice = chooseQuota(plan, usage, period);
  const state: QuotaState = { ...choice.state };
  if (withSponsor && plan.org !== null) state.sponsor = { app_name: plan.org.appName, exhausted: choice.sponsorExhausted };
  return state;
}

function isUniqueActionHash(err: unknown): boolean {
  return err instanceof Error && /UNIQUE constraint failed: signatures\.action_hash/.test(err.message);
}

// ---------------------------------------------------------------- GET /verify

/** Spec 4.1: the JSON body (UTF-8) of `{signatures, count}` for a hash, through the verify cache. */
export async function verifyBody(deps: ServerDeps, hashQuery: unknown): Promise<Buffer> {
  const hash = parseHashQuery(hashQuery);
  return verifyCacheOf(deps).get(hash, async () => {
    const list = await deps.store.signatures.findByFileHash(hash);
    const signatures = publicSignatures(list);
    return Buffer.from(JSON.stringify({ signatures, count: signatures.length }), 'utf8');
  });
}

// ---------------------------------------------------------------- POST /sign, /sign-batch

function cellRefusal(message: string): ApiError {
  return new ApiError('signing_failed', message);
}

async function cellSigned(deps: ServerDeps, userId: string, record: SignatureRecord): Promise<NewSignature> {
  const { signature } = await signWithCell(deps, userId, canonicalRecordBytes(record));
  return cellSignedAs(record, signature, userId);
}

function cellSignedAs(record: SignatureRecord, signature: Uint8Array, userId: string): NewSignature {
  const signatureText = toBase64(signature);
  return { record, signature: signatureText, action_hash: actionHash(record, signatureText), userId, appId: null, source: 'rest' };
}

/** Spec 4.7. */
export async function signOne(deps: ServerDeps, auth: AuthState, body: unknown) {
  const request = parseSignFields(body);
  const user = await userOrThrow(deps, auth.userId);
  const signer = await serverCellAgentKey(deps, user.id);
  if (signer === null) throw new ApiError('signing_failed');
  // Spec 4.7: an unknown intent is not a 400; the commit refuses it.
  if (request.intent === null) throw cellRefusal(`Signing failed: ${request.intentError}`);
  const record = toRecord(request, signer, nextSignedAt());
  const [signed, plan] = await Promise.all([cellSigned(deps, user.id, record), poolPlan(deps, user, auth.appId)]);
  signed.appId = auth.appId;
  const period = quotaPeriod(Date.now());
  const events: OutboxEvent[] =
    auth.appId === null
      ? []
      : [
          {
            appId: auth.appId,
            type: 'sign.created',
            payload: { file_hash: record.file_hash, action_hash: signed.action_hash, signer, signed_at: record.signed_at, intent: record.intent },
          },
        ];
  await deps.store.signatures.insertSignatures(
    [signed],
    { userId: user.id, orgId: plan.org?.orgId ?? null, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period) },
    events,
  );
  return { success: true as const, file_hash: record.file_hash, agent_pub_key: signer, signed_at: record.signed_at, action_hash: signed.action_hash };
}

export interface BatchItemResult {
  file_hash: string | null;
  action_hash: string | null;
  success: boolean;
  error?: string;
}

/**
 * Spec 4.8. Each file is checked alone: a file that fails its checks (bad hash,
 * comment, supersedes, enumeration, intent, an exact duplicate of an earlier file)
 * fails alone with its error code, and only the valid files are signed. The valid
 * files must all fit the remaining quota (else 402 for the whole request) and are
 * stored in one transaction: all of them or none.
 */
export async function signBatch(deps: ServerDeps, auth: AuthState, body: unknown) {
  const { items } = parseBatch(body);
  const user = await userOrThrow(deps, auth.userId);
  const signer = await serverCellAgentKey(deps, user.id);
  if (signer === null) throw new ApiError('signing_failed');
  const signedAt = nextSignedAt();
  // Check every file first; then sign the valid ones with the cell key opened once, keeping the request order.
  const checked = items.map((item): { fileHash: string | null; request?: SignRequest; error?: string } => {
    const fileHash = isPlainObject(item) && typeof item.file_hash === 'string' ? item.file_hash.toLowerCase() : null;
    try {
      const request = parseSignFields(item);
      // Spec 4.7: an unknown intent fails at commit; here, that file alone.
      return request.intent === null ? { fileHash, error: 'signing_failed' } : { fileHash, request };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return { fileHash, error: err.code };
    }
  });
  const records = checked.map((c) => (c.request === undefined ? null : toRecord(c.request, signer, signedAt)));
  const valid = records.filter((r): r is SignatureRecord => r !== null);
  const signatures = await signManyWithCell(deps, user.id, valid.map(canonicalRecordBytes));
  let next = 0;
  const signedItems = records.map((record) => (record === null ? null : cellSignedAs(record, signatures[next++].signature, user.id)));
  const results: BatchItemResult[] = [];
  const toStore: NewSignature[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < checked.length; i++) {
    const signed = signedItems[i];
    if (signed === null) {
      results.push({ file_hash: checked[i].fileHash, action_hash: null, success: false, error: checked[i].error });
      continue;
    }
    if (seen.has(signed.action_hash)) {
      results.push({ file_hash: signed.record.file_hash, action_hash: null, success: false, error: 'duplicate' });
      continue;
    }
    seen.add(signed.action_hash);
    signed.appId = auth.appId;
    results.push({ file_hash: signed.record.file_hash, action_hash: signed.action_hash, success: true });
    toStore.push(signed);
  }
  if (toStore.length > 0) {
    const plan = await poolPlan(deps, user, auth.appId);
    const period = quotaPeriod(Date.now());
    const events: OutboxEvent[] =
      auth.appId === null
        ? []
        : toStore.map((s) => ({
            appId: auth.appId!,
            type: 'sign.created',
            // Spec 6: `intent` is absent for batch signatures.
            payload: { file_hash: s.record.file_hash, action_hash: s.action_hash, signer, signed_at: s.record.signed_at },
          }));
    await deps.store.signatures.insertSignatures(
      toStore,
      { userId: user.id, orgId: plan.org?.orgId ?? null, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period, { batch: true }) },
      events,
    );
  }
  const signed = toStore.length;
  return { results, signed, failed: results.length - signed };
}

// ---------------------------------------------------------------- POST /revoke, /set-thumbnail

function revocationRefused(message: string): ApiError {
  return new ApiError('revocation_failed', message);
}

/** Spec 4.10: refusals of the cell are `500 revocation_failed` with its message. */
export async function revoke(deps: ServerDeps, auth: AuthState, body: unknown) {
  const { actionHash: hashText, reason } = parseRevoke(body);
  const signer = await serverCellAgentKey(deps, auth.userId);
  if (signer === null) throw revocationRefused('Revocation failed: this identity has no server-hosted cell.');
  const hash = hashText.toLowerCase();
  const stored = isHex64(hash) ? await deps.store.signatures.get(hash) : undefined;
  if (stored === undefined) throw revocationRefused('Revocation failed: no signature has this action hash.');
  if (stored.record.signer !== signer) throw revocationRefused('Revocation failed: only the original signer may revoke a signature.');
  const reasonProblem = reason === null ? null : commentProblem('reason', reason);
  if (reasonProblem !== null) throw revocationRefused(`Revocation failed: ${reasonProblem}.`);
  if (stored.revocation !== null) throw revocationRefused('Revocation failed: the signature is already revoked.');
  const entry = { action_hash: hash, reason: reason as string | null, revoked_at: Date.now(), signer };
  const { signature } = await signWithCell(deps, auth.userId, canonicalRevocationBytes(entry));
  const events: OutboxEvent[] =
    auth.appId === null ? [] : [{ appId: auth.appId, type: 'sign.revoked', payload: { action_hash: hash, revoker: signer, reason: entry.reason } }];
  const outcome = await deps.store.signatures.insertRevocation(
    { ...entry, signature: toBase64(signature), source: 'rest', appId: auth.appId },
    events,
  );
  if (outcome === 'already_revoked') throw revocationRefused('Revocation failed: the signature is already revoked.');
  if (outcome === 'unknown') throw revocationRefused('Revocation failed: no signature has this action hash.');
  return { success: true as const };
}

/** Spec 4.12: only the original signer (the caller's server-hosted cell). */
export async function setThumbnail(deps: ServerDeps, auth: AuthState, body: unknown) {
  const { actionHash: hash, thumbnail } = parseThumbnail(body);
  const signer = await serverCellAgentKey(deps, auth.userId);
  if (signer === null) throw new ApiError('signing_failed');
  const stored = await deps.store.signatures.get(hash);
  if (stored === undefined) throw new ApiError('not_found', 'No signature has this action hash.');
  if (stored.record.signer !== signer) throw new ApiError('forbidden', 'Only the original signer may set the thumbnail.');
  await deps.store.signatures.setThumbnail(hash, thumbnail, Date.now());
  return { success: true as const };
}

// ---------------------------------------------------------------- GET /my-signatures, quotas

/** Spec 4.9: the user's records and those of their linked agents, newest first. */
export async function mySignatures(deps: ServerDeps, auth: AuthState) {
  const list = await deps.store.signatures.findForUser(auth.userId);
  const map = supersededByMap(list);
  return { signatures: list.map((s) => ownSignature(s, map.get(s.action_hash) ?? null)) };
}

/** Spec 4.4: the pool the caller's next sign would draw on. */
export async function quotaForCaller(deps: ServerDeps, auth: AuthState): Promise<QuotaState> {
  const user = await userOrThrow(deps, auth.userId);
  return quotaStateOf(deps, await poolPlan(deps, user, auth.appId), false);
}

async function userOfAgentKey(deps: ServerDeps, agentPubKey: unknown): Promise<User> {
  if (typeof agentPubKey !== 'string' || agentPubKey === '') throw new ApiError('invalid_agent_pub_key');
  const key = normalizeAgentKey(agentPubKey);
  if (key === null) throw new ApiError('invalid_agent_pub_key');
  const user = await deps.store.accounts.findUserByAgentKey(key);
  if (!user) throw new ApiError('agent_not_found');
  return user;
}

function firstQueryValue(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

/** Spec 4.5. */
export async function quotaByAgent(deps: ServerDeps, agentPubKey: unknown, clientId: unknown): Promise<QuotaState> {
  const user = await userOfAgentKey(deps, firstQueryValue(agentPubKey));
  const client = firstQueryValue(clientId);
  const appId = typeof client === 'string' && client !== '' ? client : null;
  const plan = await poolPlan(deps, user, appId);
  // `unknown` tier is for an OAuth app's token (spec 2.5); by client_id an app without an org shows the personal quota.
  plan.appWithoutOrg = false;
  return quotaStateOf(deps, plan, appId !== null);
}

/** decisions.md 2: a vault proves it holds the key, then gets its recounted quota state. */
export async function syncQuotaByAgent(deps: ServerDeps, body: unknown): Promise<QuotaState> {
  const req = parseQuotaSync(body);
  const key = parseAgentKey(req.agentPubKey);
  if (key === null) throw new ApiError('invalid_agent_pub_key');
  const signature = parseSignatureHex(req.signature);
  const message = new TextEncoder().encode(quotaSyncMessage(req.agentPubKey, req.timestamp, req.count, req.clientId));
  if (signature === null || !verifyBytes(key, message, signature)) {
    throw new ApiError('invalid_signature', 'The signature does not verify over the quota-sync message.');
  }
  if (Math.abs(Date.now() - req.timestamp) > QUOTA_SYNC_WINDOW_MS) {
    throw new ApiError('invalid_request', 'timestamp (Unix ms) must be within 5 minutes of the server clock.', { field: 'timestamp' });
  }
  return quotaByAgent(deps, req.agentPubKey, req.clientId);
}

// ---------------------------------------------------------------- vault publishing

function checkFresh(field: string, value: number): void {
  if (Math.abs(Date.now() - value) > PUBLISH_WINDOW_MS) {
    throw new ApiError('invalid_request', `${field} must be within 10 minutes of the server clock.`, { field });
  }
}

/**
 * decisions.md 2, `POST S:/publish`: a record signed in a vault. Checks, in order: the
 * record's shape (400), the signature (400 invalid_signature), signed_at within 10
 * minutes (400 invalid_request), the signer's account (404 agent_not_found), the quota
 * (403 quota_exceeded). Publishing the same record again answers its action hash and
 * charges nothing.
 */
export async function publish(deps: ServerDeps, body: unknown) {
  if (!isPlainObject(body)) throw new ApiError('invalid_request', 'The body must be a signed record.');
  let record: SignatureRecord;
  try {
    record = parseRecord(body);
  } catch (err) {
    if (err instanceof InvalidFieldError) fromFieldError(err);
    throw err;
  }
  const clientId = parseClientId(body);
  const signature = typeof body.signature === 'string' ? body.signature : '';
  if (!verifyRecord({ ...record, signature })) throw new ApiError('invalid_signature', 'The signature does not verify over the record.');
  checkFresh('signed_at', record.signed_at);
  const user = await deps.store.accounts.findUserByAgentKey(record.signer);
  if (!user) throw new ApiError('agent_not_found');
  const hash = actionHash(record, signature);
  if (await deps.store.signatures.get(hash)) return { success: true as const, action_hash: hash };
  const plan = await poolPlan(deps, user, clientId);
  plan.appWithoutOrg = false;
  const period = quotaPeriod(Date.now());
  try {
    await deps.store.signatures.insertSignatures(
      [{ record, signature, action_hash: hash, userId: user.id, appId: clientId !== null && plan.appName !== null ? clientId : null, source: 'vault' }],
      { userId: user.id, orgId: plan.org?.orgId ?? null, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period, { status: 403 }) },
    );
  } catch (err) {
    if (!isUniqueActionHash(err)) throw err;
  }
  return { success: true as const, action_hash: hash };
}

/**
 * decisions.md 2, `POST S:/publish-revocation`: `{action_hash, reason, revoked_at,
 * signer, signature}` signed in the vault; only the record's signer. Draws no quota
 * and no webhook.
 */
export async function publishRevocation(deps: ServerDeps, body: unknown) {
  let entry;
  try {
    entry = parseRevocation(body);
  } catch (err) {
    if (err instanceof InvalidFieldError) fromFieldError(err);
    throw err;
  }
  const signature = isPlainObject(body) && typeof body.signature === 'string' ? body.signature : '';
  if (!verifyRevocation({ ...entry, signature })) throw new ApiError('invalid_signature', 'The signature does not verify over the revocation.');
  checkFresh('revoked_at', entry.revoked_at);
  const user = await deps.store.accounts.findUserByAgentKey(entry.signer);
  if (!user) throw new ApiError('agent_not_found');
  const stored = await deps.store.signatures.get(entry.action_hash);
  if (stored === undefined) throw new ApiError('not_found', 'No signature has this action hash.');
  if (stored.record.signer !== entry.signer) throw new ApiError('forbidden', 'Only the original signer may revoke a signature.');
  const outcome = await deps.store.signatures.insertRevocation({ ...entry, signature, source: 'vault', appId: null });
  if (outcome === 'already_revoked') throw new ApiError('invalid_request', 'The signature is already revoked.', { field: 'action_hash' });
  if (outcome === 'unknown') throw new ApiError('not_found', 'No signature has this action hash.');
  return { success: true as const, action_hash: entry.action_hash };
}

// ---------------------------------------------------------------- seams

/**
 * Calls `fn` with every record stored on this server after its transaction commits
 * (REST signs, batches, vault publishes): the perceptual match index's feed. Returns
 * the function that stops it.
 */
export function onSignatureStored(deps: ServerDeps, fn: (signature: StoredSignature) => void): () => void {
  return deps.store.signatures.subscribe({ stored: (list) => list.forEach((s) => fn(s)) });
}

/** Calls `fn` with every revocation stored on this server after it commits. */
export function onRevoked(deps: ServerDeps, fn: (actionHash: string, fileHash: string) => void): () => void {
  return deps.store.signatures.subscribe({ revoked: (actionHash, fileHash) => fn(actionHash, fileHash) });
}
