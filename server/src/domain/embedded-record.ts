// A record found inside a file's Content Credentials (issue 21 part 2): a rule over the
// record and the store, no HTTP; verify-file (matching/service.ts) answers it.
import { actionHash, parseRecord, verifyRecord, type ProvenantRecordAssertion } from 'provenant';
import type { Store } from '../store/index.js';

/**
 * The record a vault embedded in the file's Content Credentials (issue 21 part 2), found
 * whatever the file's hash and fingerprint now are (a crop changes both): its signature
 * re-verified offline from the record's own signer key, its action hash recomputed, and
 * whether this server holds it. `found_by` says which path found it.
 */
export async function embeddedRecord(store: Store, embedded: ProvenantRecordAssertion) {
  let signatureValid = false;
  let actionHashMatches = false;
  try {
    const record = parseRecord(embedded.record);
    signatureValid = verifyRecord({ ...record, signature: embedded.signature });
    actionHashMatches = actionHash(record, embedded.signature) === embedded.action_hash;
  } catch {
    // not a record: neither holds
  }
  const stored = signatureValid && actionHashMatches && (await store.signatures.get(embedded.action_hash)) !== undefined;
  return {
    found_by: 'content_credentials' as const,
    action_hash: embedded.action_hash,
    service: embedded.service,
    signature_valid: signatureValid,
    action_hash_matches: actionHashMatches,
    stored,
    record: embedded.record,
  };
}

export type EmbeddedRecord = Awaited<ReturnType<typeof embeddedRecord>>;
