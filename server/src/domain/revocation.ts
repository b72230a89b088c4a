// Revocation by a server-hosted cell (spec 4.10, 3.1): only the original signer; the
// cell refuses anything else, and its refusals are `revocation_failed` with its reason.
import { canonicalRevocationBytes, commentProblem, isHex64, toBase64 } from 'provenant';
import { DomainError } from '../errors.js';
import type { OutboxEvent } from '../store/index.js';
import { signAsCell } from './cells.js';
import type { Caller, DomainDeps } from './deps.js';

function refused(message: string): DomainError {
  return new DomainError('revocation_failed', `Revocation failed: ${message}.`);
}

/**
 * Spec 4.10: revokes `actionHash` (any case) with `reason` as sent, both the cell's to
 * refuse (no such record, another signer's, a reason that is not text of at most 280
 * characters, already revoked). Through an app, writes `sign.revoked` to the outbox
 * with the revocation (spec 6).
 */
export async function revoke(deps: DomainDeps, caller: Caller, input: { actionHash: string; reason: unknown }, now = Date.now()): Promise<void> {
  const cell = await deps.store.accounts.getCell(caller.userId);
  if (cell === null) throw refused('this identity has no server-hosted cell');
  const hash = input.actionHash.toLowerCase();
  const stored = isHex64(hash) ? await deps.store.signatures.get(hash) : undefined;
  if (stored === undefined) throw refused('no signature has this action hash');
  if (stored.record.signer !== cell.agentKey) throw refused('only the original signer may revoke a signature');
  const reasonProblem = input.reason === null ? null : commentProblem('reason', input.reason);
  if (reasonProblem !== null) throw refused(reasonProblem);
  if (stored.revocation !== null) throw refused('the signature is already revoked');
  const entry = { action_hash: hash, reason: input.reason as string | null, revoked_at: now, signer: cell.agentKey };
  const [{ signature }] = signAsCell(deps, cell, [canonicalRevocationBytes(entry)]);
  const events: OutboxEvent[] =
    caller.appId === null ? [] : [{ appId: caller.appId, type: 'sign.revoked', payload: { action_hash: hash, revoker: cell.agentKey, reason: entry.reason } }];
  const outcome = await deps.store.signatures.insertRevocation({ ...entry, signature: toBase64(signature), source: 'rest', appId: caller.appId }, events);
  if (outcome === 'already_revoked') throw refused('the signature is already revoked');
  if (outcome === 'unknown') throw refused('no signature has this action hash');
}
