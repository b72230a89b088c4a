// Thumbnails (spec 4.12): a `data:image/...` URI shown with the record in
// /my-signatures, set by the original signer's server-hosted cell only.
import { DomainError } from '../errors.js';
import type { Caller, DomainDeps } from './deps.js';
import { serverCellAgentKey } from './cells.js';

/** Sets (or replaces) the thumbnail of `actionHash` (lower-case hex): signing_failed without a cell, not_found, forbidden for another signer's record. */
export async function setThumbnail(deps: DomainDeps, caller: Caller, input: { actionHash: string; thumbnail: string }, now = Date.now()): Promise<void> {
  const signer = await serverCellAgentKey(deps, caller.userId);
  if (signer === null) throw new DomainError('signing_failed');
  const stored = await deps.store.signatures.get(input.actionHash);
  if (stored === undefined) throw new DomainError('not_found', 'No signature has this action hash.');
  if (stored.record.signer !== signer) throw new DomainError('forbidden', 'Only the original signer may set the thumbnail.');
  await deps.store.signatures.setThumbnail(input.actionHash, input.thumbnail, now);
}
