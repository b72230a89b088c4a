// The blind contact relay's rules (spec 4.13, 1.7): a request is queued as received and
// answered alike whatever becomes of it; who the signer is, whether they opted in and
// where their mail goes are decided later, off the request path, so that neither the
// answer nor its timing tells a sender anything about the signer.
import type { NewContactRequest, QueuedContactRequest, Store } from '../store/index.js';

/** Spec 4.13: purposes a request may name; anything else is recorded as `other`. */
export const CONTACT_PURPOSES = ['licensing', 'ai_training', 'collaboration', 'other'] as const;

/** Spec 8: the longest sender_name, sender_email and message, in characters. */
export const CONTACT_LIMITS = { sender_name: 100, sender_email: 254, message: 500 } as const;

/** What the relay is told after a request is queued: work is waiting. */
export interface ContactQueueWaker {
  wake(): void;
}

/** Queues a checked request durably and wakes the relay; resolves once it is committed. */
export async function requestContact(deps: { store: Store; relay: ContactQueueWaker }, request: NewContactRequest): Promise<void> {
  await deps.store.contacts.enqueue(request);
  deps.relay.wake();
}

/** Why a request goes nowhere (logged without addresses), or the signer's address. */
export type ContactRecipient = { to: string } | { dropped: 'unknown_signer' | 'no_address' | 'not_opted_in' };

/**
 * Spec 4.13: the relay delivers only if the signer opted in: for a signature contact,
 * the signer's latest unrevoked signature of that file allows contact requests; for a
 * profile contact, the account's own setting (decisions.md 5 `contact_opt_in`). An
 * address its owner never confirmed counts as not opted in: anyone can register with
 * someone else's address, and the relay must not mail a stranger on their behalf.
 */
export async function contactRecipient(store: Store, request: QueuedContactRequest): Promise<ContactRecipient> {
  const user = await store.accounts.findUserByAgentKey(request.signerAgentKey);
  if (user === null) return { dropped: 'unknown_signer' };
  if (user.email === null) return { dropped: 'no_address' };
  if (!user.emailVerified) return { dropped: 'not_opted_in' };
  if (request.fileHash === null) return user.contactOptIn ? { to: user.email } : { dropped: 'not_opted_in' };
  const own = (await store.signatures.findByFileHash(request.fileHash)).filter(
    (s) => s.record.signer === request.signerAgentKey && s.revocation === null,
  );
  const latest = own.reduce<(typeof own)[number] | undefined>((a, s) => (a === undefined || s.record.signed_at >= a.record.signed_at ? s : a), undefined);
  return latest?.record.content_rights?.contact_preference === 'AllowContactRequests' ? { to: user.email } : { dropped: 'not_opted_in' };
}
