// Vault publishing (decisions.md 2): records and revocations signed on the signer's own
// device, authenticated by their Ed25519 signatures (no token). They draw no webhooks
// (spec 6); a record draws on the signer's quota, or a sponsoring app's org quota.
import { createHash } from 'node:crypto';
import { actionHash, decodeFeatureSet, RECORD_FEATURES_MAX, verifyRecord, verifyRevocation, type FeatureSet, type RevocationEntry, type SignatureRecord } from 'provenant';
import { DomainError } from '../errors.js';
import { StoreConflictError, type User } from '../store/index.js';
import { linkedOwner } from './agents.js';
import type { DomainDeps } from './deps.js';
import { chargeOf, quotaPlan } from './quota-plans.js';

/** decisions.md 2: vault records and revocations must be signed within 10 minutes of our clock. */
export const PUBLISH_WINDOW_MS = 10 * 60 * 1000;

function checkFresh(field: string, value: number, now: number): void {
  if (Math.abs(now - value) > PUBLISH_WINDOW_MS) {
    throw new DomainError('invalid_request', `${field} must be within 10 minutes of the server clock.`, { field });
  }
}

/**
 * Issue 32: the feature set published beside a record with `features`: present exactly
 * when the record names one, its SHA-256 the signed digest (so nobody can attach
 * features to another person's record: the signature covers the digest), and a valid set
 * of the version and count the record states. Returns the bytes to store, or null.
 */
function checkFeatures(record: SignatureRecord, data: Uint8Array | null): Uint8Array | null {
  const ref = record.features;
  if (ref === undefined || ref === null) {
    if (data !== null) throw new DomainError('invalid_request', 'features_data is only sent with a record that has features.', { field: 'features_data' });
    return null;
  }
  if (data === null) throw new DomainError('invalid_request', 'A record with features is published with its feature set (features_data).', { field: 'features_data' });
  if (createHash('sha256').update(data).digest('hex') !== ref.digest) throw new DomainError('invalid_request', 'features_data does not have the SHA-256 the record signs (features.digest).', { field: 'features_data' });
  let set: FeatureSet;
  try {
    set = decodeFeatureSet(data);
  } catch (err) {
    throw new DomainError('invalid_request', `features_data is not a feature set: ${(err as Error).message}`, { field: 'features_data' });
  }
  if (set.version !== ref.version || set.count !== ref.count || set.count > RECORD_FEATURES_MAX) {
    throw new DomainError('invalid_request', `features_data holds ${set.count} features of version ${set.version}; the record says ${ref.count} of version ${ref.version} (at most ${RECORD_FEATURES_MAX}).`, { field: 'features' });
  }
  return data;
}

/** The signer's account: agent_not_found for a key no account holds, agent_unlinked for one its user unlinked. */
async function signerAccount(deps: DomainDeps, agentKey: string): Promise<User> {
  const user = await linkedOwner(deps, agentKey);
  if (!user) throw new DomainError('agent_not_found');
  return user;
}

/**
 * `POST S:/publish`, a record as the vault signed it (checked by the route). In order:
 * the signature (invalid_signature), signed_at within 10 minutes (invalid_request), the
 * signer's account (agent_not_found), the quota (quota_exceeded, which this endpoint
 * answers with 403). Publishing the same record again answers its action hash and
 * charges nothing. Returns the action hash.
 */
export async function publish(
  deps: DomainDeps,
  input: { record: SignatureRecord; signature: string; clientId: string | null; features?: Uint8Array | null },
  now = Date.now(),
): Promise<string> {
  const { record, signature, clientId } = input;
  if (!verifyRecord({ ...record, signature })) throw new DomainError('invalid_signature', 'The signature does not verify over the record.');
  checkFresh('signed_at', record.signed_at, now);
  const features = checkFeatures(record, input.features ?? null);
  const user = await signerAccount(deps, record.signer);
  const hash = actionHash(record, signature);
  if (await deps.store.signatures.get(hash)) return hash;
  const plan = await quotaPlan(deps, user, clientId);
  // the tier `unknown` of spec 2.5 is for an app's token; a vault sponsored by an app without an org uses the personal quota
  plan.appWithoutOrg = false;
  try {
    await deps.store.signatures.insertSignatures(
      [{ record, signature, action_hash: hash, userId: user.id, appId: clientId !== null && plan.appName !== null ? clientId : null, source: 'vault', ...(features === null ? {} : { features }) }],
      chargeOf(plan, now),
    );
  } catch (err) {
    // the same record published at the same moment by another request: stored once
    if (!(err instanceof StoreConflictError && err.what === 'action_hash')) throw err;
  }
  return hash;
}

/**
 * `POST S:/publish-revocation`, a revocation as the vault signed it (checked by the
 * route): the signature, revoked_at within 10 minutes, the signer's account, the record
 * (not_found), only its signer (forbidden), once (invalid_request). No quota, no webhook.
 */
export async function publishRevocation(deps: DomainDeps, input: { entry: RevocationEntry; signature: string }, now = Date.now()): Promise<void> {
  const { entry, signature } = input;
  if (!verifyRevocation({ ...entry, signature })) throw new DomainError('invalid_signature', 'The signature does not verify over the revocation.');
  checkFresh('revoked_at', entry.revoked_at, now);
  await signerAccount(deps, entry.signer);
  const stored = await deps.store.signatures.get(entry.action_hash);
  if (stored === undefined) throw new DomainError('not_found', 'No signature has this action hash.');
  if (stored.record.signer !== entry.signer) throw new DomainError('forbidden', 'Only the original signer may revoke a signature.');
  const outcome = await deps.store.signatures.insertRevocation({ ...entry, signature, source: 'vault', appId: null });
  if (outcome === 'already_revoked') throw new DomainError('invalid_request', 'The signature is already revoked.', { field: 'action_hash' });
  if (outcome === 'unknown') throw new DomainError('not_found', 'No signature has this action hash.');
}
