// The manifest repository's rules (issue 33), no HTTP: which detached C2PA manifest stores
// are stored, and how a stored manifest's soft binding is compared with a query. A store
// is kept only when, in this order:
// 1. the reference reader read it (in the sandbox, under C2PA_LIMITS) with no failure but
//    the detached hard binding and an untrusted signer, and its active manifest's label
//    is a manifest id (readableStore);
// 2. its active manifest carries a provenant.record assertion (carriesRecord);
// 3. whose record verifies, has the action hash it says, and is stored here (recordStoredHere);
// 4. and the store was signed by the key that signed that record (signedByRecordSigner):
//    nobody can attach a manifest to someone else's record.
// Then it is stored under its active manifest's label, with what the reader said.
import { ISCC_BINDING_MAX_DISTANCE, ISCC_SOFT_BINDING_ALG, decodeIscc, isccDistance, parseAgentKey, type ManifestStoreReading } from 'provenant';
import type { Examination, ProvenantRecordAssertion } from 'provenant';
import type { RecoveredCredentials } from 'provenant/api';
import { DomainError } from '../errors.js';
import { StoreConflictError, StoreNotFoundError, type ManifestEntry, type Store, type StoredSignature } from '../store/index.js';
import { embeddedRecord } from './embedded-record.js';

/** What a stored manifest answers: its id and the record it was stored for. */
export interface StoredManifest {
  manifestId: string;
  actionHash: string;
  /** false when this id held these very bytes already. */
  created: boolean;
}

/** Characters of a manifest id at most. */
const MAX_MANIFEST_ID = 300;

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
/**
 * A manifest label (C2PA 2.x, 8.3 Unique identifiers): urn:c2pa:UUID with an optional
 * claim generator identifier and version/reason, or a 1.x urn:uuid:UUID.
 */
const MANIFEST_LABEL = new RegExp(`^(?:urn:c2pa:${UUID}(?::[A-Za-z0-9._-]{0,128}(?::[0-9]{1,9}(?:_[0-9]{1,9})?)?)?|urn:uuid:${UUID})$`);

/** A manifest label as the repository stores and serves them (the id of GET /c2pa/v1/manifests/{manifestId}). */
export function isManifestLabel(id: string): boolean {
  return id.length <= MAX_MANIFEST_ID && MANIFEST_LABEL.test(id);
}

type Readable = ManifestStoreReading & { validation_state: 'valid' | 'untrusted_signer' };

/** Rule 1: the reader's verdict, the detached hard binding set aside, holds but for the signer's trust. */
function readableStore(reading: ManifestStoreReading): Readable {
  if (!isManifestLabel(reading.manifest_id)) throw new DomainError('invalid_manifest', 'The active manifest\'s label is not a C2PA manifest id (urn:c2pa:UUID...).');
  if (reading.validation_state !== 'valid' && reading.validation_state !== 'untrusted_signer') {
    throw new DomainError('invalid_manifest', `The reference reader found the store ${reading.validation_state}: ${reading.validation_codes.join(', ') || 'no code given'}.`);
  }
  return reading as Readable;
}

/** Rule 2: the active manifest's provenant.record assertion. */
function carriesRecord(reading: Readable): ProvenantRecordAssertion {
  const assertion = reading.credentials.provenant_record;
  if (assertion === null) throw new DomainError('invalid_manifest', 'The active manifest carries no provenant.record assertion (a vault writes one: vault sign --c2pa).');
  return assertion;
}

/** Rule 3: the assertion's record verifies, its action hash is the one it says, and this server stores it. */
async function recordStoredHere(store: Store, assertion: ProvenantRecordAssertion): Promise<StoredSignature> {
  const embedded = await embeddedRecord(store, assertion);
  if (!embedded.signature_valid) throw new DomainError('invalid_manifest', 'The record in the provenant.record assertion does not verify with its signer\'s key.');
  if (!embedded.action_hash_matches) throw new DomainError('invalid_manifest', 'The provenant.record assertion\'s action_hash is not its record\'s.');
  const stored = embedded.stored ? await store.signatures.get(assertion.action_hash) : undefined;
  if (stored === undefined) throw new DomainError('record_not_found', `This server stores no record ${assertion.action_hash}: publish the record first.`);
  return stored;
}

/** Rule 4: the certificate that signed the active claim holds the record signer's Ed25519 key. */
function signedByRecordSigner(reading: Readable, record: StoredSignature): void {
  const signer = parseAgentKey(record.record.signer);
  if (signer === null || reading.signer_public_key === null || Buffer.from(signer).toString('hex') !== reading.signer_public_key) {
    throw new DomainError('manifest_signer_mismatch');
  }
}

/** The store's io.iscc.v0 soft binding: the first block's value when it is an ISCC Content-Code, else null. */
export function isccSoftBindingOf(reading: Pick<ManifestStoreReading, 'soft_bindings'>): string | null {
  for (const b of reading.soft_bindings) {
    if (b.alg !== ISCC_SOFT_BINDING_ALG) continue;
    for (const value of b.values) if (isContentCode(value)) return value;
  }
  return null;
}

function isContentCode(value: string): boolean {
  try {
    return decodeIscc(value).mainType === 2; // MainType CONTENT
  } catch {
    return false;
  }
}

/** Stores a detached manifest store the reader read as `reading` (the rules above), at `now`. */
export async function storeManifest(store: Store, bytes: Uint8Array, reading: ManifestStoreReading, now: number): Promise<StoredManifest> {
  const readable = readableStore(reading);
  const record = await recordStoredHere(store, carriesRecord(readable));
  signedByRecordSigner(readable, record);
  try {
    const outcome = await store.manifests.insert({
      manifestId: readable.manifest_id,
      seq: record.seq,
      store: bytes,
      active: readable.active_manifest,
      validationState: readable.validation_state,
      validationCodes: readable.validation_codes,
      softBinding: isccSoftBindingOf(readable),
      storedAt: now,
    });
    return { manifestId: readable.manifest_id, actionHash: record.action_hash, created: outcome === 'stored' };
  } catch (err) {
    if (err instanceof StoreConflictError && err.what === 'manifest') throw new DomainError('manifest_exists', `Another manifest store is stored as ${readable.manifest_id}.`);
    if (err instanceof StoreConflictError && err.what === 'manifest_limit') throw new DomainError('manifest_limit');
    if (err instanceof StoreNotFoundError) throw new DomainError('record_not_found');
    throw err;
  }
}

/**
 * How a stored manifest's io.iscc.v0 soft binding compares with an ISCC Content-Code
 * (C2PA 2.x 18.10.5.1: a located manifest's soft bindings must match the one that found
 * it): matches within ISCC_BINDING_MAX_DISTANCE bits; null when either has none or they
 * are of different content types.
 */
export function softBindingMatch(entry: Pick<ManifestEntry, 'softBinding'>, content: string | null): { matches: boolean; distance: number } | null {
  if (entry.softBinding === null || content === null) return null;
  try {
    const distance = isccDistance(entry.softBinding, content);
    return { matches: distance <= ISCC_BINDING_MAX_DISTANCE, distance };
  } catch {
    return null;
  }
}

/** Recovered credentials answered per verify-file at most. */
export const RECOVERED_LIMIT = 10;

/**
 * verify-file (issue 33): the stored manifests of the records a file without Content
 * Credentials of its own matched (`seqs`, best first), at most RECOVERED_LIMIT, each with
 * what the reader said of it when it was stored and whether the file's ISCC Content-Code
 * matches its soft binding.
 */
export async function recoverCredentials(store: Store, seqs: readonly number[], found: Examination): Promise<RecoveredCredentials[]> {
  if (seqs.length === 0) return [];
  const entries = await store.manifests.bySeqs(seqs);
  const content = found.iscc?.content ?? null;
  const out: RecoveredCredentials[] = [];
  for (const seq of seqs) {
    for (const e of entries) {
      if (e.seq !== seq || out.length >= RECOVERED_LIMIT) continue;
      const binding = softBindingMatch(e, content);
      out.push({
        manifest_id: e.manifestId,
        action_hash: e.actionHash,
        validation_state: e.validationState,
        validation_codes: e.validationCodes,
        soft_binding: e.softBinding === null ? null : { alg: ISCC_SOFT_BINDING_ALG, value: e.softBinding },
        soft_binding_matches: binding?.matches ?? null,
        soft_binding_distance: binding?.distance ?? null,
      });
    }
  }
  return out;
}
