// `vault sign FILE --c2pa OUT` (issue 21 part 2): a copy of the signed file with Content
// Credentials that carry the published record (a provenant.record assertion: the
// record, its signature, its action hash and the service it went to) and the declared
// AI generation as a c2pa.actions digitalSourceType, signed with the vault's own key
// under a self-issued certificate (src/media/c2pa-write.ts). Readers call the signer
// untrusted; the record inside is what vouches, and verify-file re-verifies it offline.
// Issue 33: the manifest also carries the record's ISCC Content-Code as a soft binding,
// and its store is published to the repository, so a stripped copy finds it again.
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ISCC_SOFT_BINDING_ALG, PROVENANT_RECORD_LABEL, SOFT_BINDING_LABEL, type ProvenantRecordAssertionData } from '../lib/content-credentials.js';
import { canonicalRecordBytes, isccContentUnit, type SignedRecord } from '../lib/records.js';
import { writeContentCredentialsAndStore } from '../media/c2pa-write.js';
import type { Vault } from './vault.js';

const IPTC = 'http://cv.iptc.org/newscodes/digitalsourcetype/';

/**
 * The IPTC digital source type for a record's ai_generation: Generated is media made by
 * a trained model, Assisted a composite with such media, None media a person made with
 * non-generative tools (digitalCreation). Undeclared has none: C2PA's c2pa.created
 * action requires one, so --c2pa needs a declaration.
 */
export const SOURCE_TYPE_FOR_AI_GENERATION: Record<'None' | 'Assisted' | 'Generated', string> = {
  None: `${IPTC}digitalCreation`,
  Assisted: `${IPTC}compositeWithTrainedAlgorithmicMedia`,
  Generated: `${IPTC}trainedAlgorithmicMedia`,
};

/**
 * Issue 33: the c2pa.soft-binding assertion (C2PA 2.x 18.10) of a record's ISCC
 * Content-Code: one block over the whole content, its value the code's canonical text
 * (`ISCC:...`; the reference reader reads a block's value as text). None for a record
 * without a Content-Code.
 */
export function isccSoftBinding(record: Pick<SignedRecord, 'iscc'>): { label: string; data: unknown } | null {
  const content = typeof record.iscc === 'string' ? isccContentUnit(record.iscc) : null;
  if (content === null) return null;
  return { label: SOFT_BINDING_LABEL, data: { alg: ISCC_SOFT_BINDING_ALG, blocks: [{ scope: {}, value: content }], pad: [0] } };
}

/**
 * Writes to `out` a copy of `file` with Content Credentials carrying `record` (published
 * to `service` as `actionHash`) and its ISCC soft binding; answers the manifest store the
 * copy embeds, detached (for the repository: POST /api/v1/sign-it/manifests).
 */
export async function writeSignedCopy(vault: Vault, file: string, out: string, record: SignedRecord, actionHash: string, service: string): Promise<Uint8Array> {
  if (record.ai_generation === null) throw new Error('Content Credentials need a declared AI generation (--ai-generation none|assisted|generated)');
  const { signature, ...fields } = record;
  // the record as its canonical text (RFC 8785, the bytes signed): C2PA stores assertions
  // as CBOR, whose round trip through JSON drops nulls, and a record with a field dropped
  // no longer matches its signature
  const canonical = new TextDecoder().decode(canonicalRecordBytes(fields));
  const assertion: ProvenantRecordAssertionData = { record: canonical, signature, action_hash: actionHash, service };
  const bytes = new Uint8Array(await readFile(file));
  const binding = isccSoftBinding(record);
  const signed = await writeContentCredentialsAndStore(bytes, {
    title: basename(file),
    digitalSourceType: SOURCE_TYPE_FOR_AI_GENERATION[record.ai_generation],
    assertions: [{ label: PROVENANT_RECORD_LABEL, data: assertion }, ...(binding === null ? [] : [binding])],
    generator: { name: 'Provenant vault', version: '1' },
  }, { privateKeyPkcs8: vault.privateKey, commonName: vault.key.agentPubKey });
  await writeFile(out, signed.asset);
  return signed.store;
}
