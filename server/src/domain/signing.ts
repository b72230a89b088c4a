// Server-side signing with a server-hosted cell (spec 4.7, 4.8; deprecated endpoints).
// The route checks each file once (signit/schema.ts) and hands over its content; here
// the caller's user and cell are read once, the records made and signed (the cell's
// key opened once per request), and stored with their charge and outbox rows in one
// transaction (storeSigned).
import { actionHash, canonicalRecordBytes, recordOf, toBase64, type RecordContent, type SignatureRecord } from 'provenant';
import { DomainError, type ErrorCode } from '../errors.js';
import type { Cell, NewSignature, OutboxEvent, User } from '../store/index.js';
import { ACCOUNT_GONE, userOfToken } from './accounts.js';
import { signAsCell } from './cells.js';
import type { Caller, DomainDeps } from './deps.js';
import { chargeOf, quotaPlan } from './quota-plans.js';

/** One file of a sign request as the route checked it. */
export interface SignRequest {
  /** The record but its signer and time, in response form. */
  content: RecordContent;
  /** Why the requested intent is not one, or null (spec 4.7: the sign then fails at commit, not as a 400). */
  intentProblem: string | null;
}

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

/** The caller's user and server-hosted cell, each read once; signing_failed without a cell (spec 4.7). */
async function signingCell(deps: DomainDeps, userId: string): Promise<{ user: User; cell: Cell }> {
  const user = await userOfToken(deps, userId, ACCOUNT_GONE);
  const cell = await deps.store.accounts.getCell(user.id);
  if (cell === null) throw new DomainError('signing_failed');
  return { user, cell };
}

/** `records` signed by `cell` (its key opened once), as REST signs of the caller. */
function signedByCell(deps: DomainDeps, cell: Cell, caller: Caller, records: readonly SignatureRecord[]): NewSignature[] {
  const signatures = signAsCell(deps, cell, records.map(canonicalRecordBytes));
  return records.map((record, i) => {
    const signature = toBase64(signatures[i].signature);
    return { record, signature, action_hash: actionHash(record, signature), userId: caller.userId, appId: caller.appId, source: 'rest' };
  });
}

/**
 * The one write of REST signs: the records, charged to the quota the user's plan names
 * (counted inside the transaction, all or nothing; a batch refused whole), with a
 * `sign.created` outbox row each when the caller acts through an app (spec 6, where
 * `intent` is absent for batch signatures).
 */
async function storeSigned(deps: DomainDeps, user: User, caller: Caller, signed: NewSignature[], opts: { batch: boolean; now: number }): Promise<void> {
  const plan = await quotaPlan(deps, user, caller.appId);
  const appId = caller.appId;
  const events: OutboxEvent[] =
    appId === null
      ? []
      : signed.map(({ record, action_hash }) => ({
          appId,
          type: 'sign.created',
          payload: opts.batch
            ? { file_hash: record.file_hash, action_hash, signer: record.signer, signed_at: record.signed_at }
            : { file_hash: record.file_hash, action_hash, signer: record.signer, signed_at: record.signed_at, intent: record.intent },
        }));
  await deps.store.signatures.insertSignatures(signed, chargeOf(plan, opts.now, { batch: opts.batch }), events);
}

/**
 * Spec 4.7: signs one file with the caller's cell. invalid_token when the account is
 * gone, signing_failed without a cell or for an intent that is not one, quota_exceeded
 * over quota.
 */
export async function signOne(deps: DomainDeps, caller: Caller, request: SignRequest, now = Date.now()): Promise<NewSignature> {
  const { user, cell } = await signingCell(deps, caller.userId);
  if (request.intentProblem !== null) throw new DomainError('signing_failed', `Signing failed: ${request.intentProblem}`);
  const [signed] = signedByCell(deps, cell, caller, [recordOf(request.content, cell.agentKey, nextSignedAt(now))]);
  await storeSigned(deps, user, caller, [signed], { batch: false, now });
  return signed;
}

/** A file of a batch: its request, or the code of the check it failed; `fileHash` as sent (lower-cased) when it was a string. */
export type BatchFile = { fileHash: string | null } & ({ request: SignRequest } | { error: ErrorCode });

export interface BatchOutcome {
  fileHash: string | null;
  /** The stored record's action hash; null when the file failed. */
  actionHash: string | null;
  /** The code of a failed file: a check's, signing_failed (intent), or duplicate (the same record as an earlier file). */
  error: string | null;
}

/**
 * Spec 4.8: each file fails alone (its check, an intent that is not one, an exact
 * duplicate of an earlier file); the others are signed at one time and must all fit
 * the remaining quota (else quota_exceeded for the whole batch), stored in one
 * transaction. Outcomes in request order.
 */
export async function signBatch(deps: DomainDeps, caller: Caller, files: readonly BatchFile[], now = Date.now()): Promise<BatchOutcome[]> {
  const { user, cell } = await signingCell(deps, caller.userId);
  const signedAt = nextSignedAt(now);
  const records = files.map((file) =>
    'request' in file && file.request.intentProblem === null ? recordOf(file.request.content, cell.agentKey, signedAt) : null);
  const signed = signedByCell(deps, cell, caller, records.filter((r): r is SignatureRecord => r !== null));
  const outcomes: BatchOutcome[] = [];
  const toStore: NewSignature[] = [];
  const seen = new Set<string>();
  let next = 0;
  files.forEach((file, i) => {
    if (records[i] === null) {
      outcomes.push({ fileHash: file.fileHash, actionHash: null, error: 'error' in file ? file.error : 'signing_failed' });
      return;
    }
    const s = signed[next++];
    if (seen.has(s.action_hash)) {
      outcomes.push({ fileHash: s.record.file_hash, actionHash: null, error: 'duplicate' });
      return;
    }
    seen.add(s.action_hash);
    outcomes.push({ fileHash: s.record.file_hash, actionHash: s.action_hash, error: null });
    toStore.push(s);
  });
  if (toStore.length > 0) await storeSigned(deps, user, caller, toStore, { batch: true, now });
  return outcomes;
}
