// `vault sign` as a function of options (so C2PA output can be one more option): the
// quota is checked before anything is computed or signed (spec 7's check-before-
// approval), each file is hashed, fingerprinted and checked locally with the library,
// the user approves what will be published, then each record is signed, published and
// logged; the server's action hash must be the one computed here.
import { access, constants, readFile } from 'node:fs/promises';
import { fileSha256Hex } from '../lib/digest.js';
import { sha256Hex } from '../lib/sha256.js';
import { encodeFeatureSet, recordFeatures } from '../lib/features.js';
import { normalizeRecordContent, type RecordContent, type SignedRecord } from '../lib/records.js';
import { examineFile } from '../media/examine.js';
import { withCredentialsReader } from '../media/local-credentials.js';
import { integrityReport } from '../media/integrity.js';
import type { ProvenantClient, QuotaState } from '../sdk/client.js';
import { ProvenantError } from '../sdk/errors.js';
import { VaultCommandError } from './errors.js';
import { actionHashOf, signContent, type Vault } from './vault.js';

/** What the signer declares for every file, in request form (spec 4.7's tokens). */
export interface Declaration {
  intent?: string;
  ai_generation?: string;
  content_rights?: Record<string, unknown>;
  comment?: string;
  supersedes?: string;
}

export interface SignOptions {
  files: string[];
  declaration: Declaration;
  /** The sponsoring app whose organization pool the records draw on. */
  clientId: string | null;
  client: ProvenantClient;
}

/** A file ready to sign: its record content, computed locally. */
export interface Draft {
  file: string;
  content: RecordContent;
  /** Issue 32: the encoded feature set whose SHA-256 `content.features.digest` is (published beside the record). */
  features: Uint8Array | null;
}

export interface SignResult {
  file: string;
  file_hash: string;
  action_hash: string | null;
  error: string | null;
  /** The record as signed (for a C2PA copy, src/vault/c2pa.ts). */
  record: SignedRecord;
}

export interface SignUi {
  /** `done` of `total` files through `stage`. */
  progress(stage: 'reading' | 'publishing', done: number, total: number): void;
  /** Whether the user approves publishing these records (not asked with --yes). */
  approve(drafts: Draft[], quota: QuotaState): Promise<boolean>;
}

/** The error a vault command shows for a failed server call. */
export function commandErrorOf(err: unknown, server: string): unknown {
  if (!(err instanceof ProvenantError)) return err;
  if (err.code === 'unreachable') return new VaultCommandError('unreachable', err.message);
  if (err.code === 'agent_not_found') return new VaultCommandError('not_linked', server);
  if (err.code === 'quota_exceeded') return new VaultCommandError('over_quota', quotaSentence(err.body as unknown as QuotaState));
  return new VaultCommandError('server_refused', `${err.code}: ${err.message}`);
}

function quotaSentence(q: Partial<QuotaState>, needed?: number): string {
  const limit = q.limit === null || q.limit === undefined ? 'unlimited' : String(q.limit);
  const parts = [`${q.scope ?? 'personal'} quota (tier ${q.tier ?? 'unknown'}) has used ${q.used ?? '?'} of ${limit} signs this period`];
  if (needed !== undefined) parts.unshift(`${needed} file${needed === 1 ? '' : 's'} need${needed === 1 ? 's' : ''} ${needed} sign${needed === 1 ? '' : 's'}`);
  if (q.resets_at) parts.push(`it resets at ${q.resets_at}`);
  if (q.upgrade_tier) parts.push(`upgrade to ${q.upgrade_tier} for more`);
  return parts.join('; ');
}

/** Paid organization tiers meter overage and never block (spec 3.3); everything else is a hard limit. */
function blocks(quota: QuotaState, needed: number): boolean {
  if (!quota.allowed) return true;
  if (quota.limit === null) return false;
  if (quota.scope === 'org' && quota.tier !== 'free') return false;
  return quota.used + needed > quota.limit;
}

/** The quota for `needed` more records, or over_quota / not_linked / unreachable before anything is signed. */
export async function checkQuota(vault: Vault, client: ProvenantClient, needed: number, clientId: string | null): Promise<QuotaState> {
  let quota: QuotaState;
  try {
    quota = await client.quotaByAgent(vault.key.agentPubKey, clientId);
  } catch (err) {
    throw commandErrorOf(err, client.baseUrl);
  }
  if (blocks(quota, needed)) throw new VaultCommandError('over_quota', quotaSentence(quota, needed));
  return quota;
}

/** The declaration checked as the server would check it (errors name the field), before any file is read. */
export function checkDeclaration(declaration: Declaration): void {
  normalizeRecordContent({ ...declaration, file_hash: '0'.repeat(64) });
}

/**
 * Hash, examination (the fingerprint, PDQ or vPDQ (issue 28), the ISCC-CODE as the ISCC
 * SDK makes it (issue 33)) and integrity report of each file, computed locally.
 */
export async function draftRecords(files: string[], declaration: Declaration, progress: SignUi['progress']): Promise<Draft[]> {
  const drafts: Draft[] = [];
  // each file's credentials are read in a sandbox process with a deadline (local-credentials.ts)
  await withCredentialsReader(async (credentials) => {
    for (const file of files) {
      const bytes = new Uint8Array(await readFile(file));
      const [found, integrity_report] = await Promise.all([examineFile(bytes, { isccExact: true, recordFeatures: true }), integrityReport(bytes, { credentials })]);
      const { fingerprint: perceptual_hash, pdq_hash } = found;
      // issue 32: the record's feature set, the first RECORD_FEATURES_MAX (all the examination made), bound by its digest
      const set = found.features ? recordFeatures(found.features) : null;
      const encoded = set === null ? null : encodeFeatureSet(set);
      const features = set === null ? null : { version: set.version, count: set.count, digest: sha256Hex(encoded!) };
      drafts.push({ file, features: encoded, content: normalizeRecordContent({ ...declaration, file_hash: fileSha256Hex(bytes), perceptual_hash, pdq_hash, iscc: found.iscc?.code, features, integrity_report }) });
      progress('reading', drafts.length, files.length);
    }
  });
  return drafts;
}

/**
 * The whole flow. Resolves with one result per file (a failed publish is that file's
 * `error`); rejects with VaultCommandError before signing (over_quota, declined,
 * not_linked, unreachable) or when the server answers another action hash (tampered).
 */
export async function signAndPublish(vault: Vault, options: SignOptions, ui: SignUi): Promise<SignResult[]> {
  checkDeclaration(options.declaration);
  for (const file of options.files) {
    await access(file, constants.R_OK).catch((err: NodeJS.ErrnoException) => {
      throw new VaultCommandError('unreadable_file', file, err.code === 'ENOENT' ? 'no such file' : err.message);
    });
  }
  const quota = await checkQuota(vault, options.client, options.files.length, options.clientId);
  const drafts = await draftRecords(options.files, options.declaration, ui.progress);
  if (!(await ui.approve(drafts, quota))) throw new VaultCommandError('declined');
  const results: SignResult[] = [];
  for (const draft of drafts) {
    const signed = signContent(vault, draft.content);
    let published: string | null = null;
    let error: string | null = null;
    try {
      published = (await options.client.publish(signed.record, options.clientId, draft.features)).action_hash;
    } catch (err) {
      const shown = commandErrorOf(err, options.client.baseUrl);
      error = shown instanceof Error ? shown.message : String(shown);
    }
    if (published !== null && published !== actionHashOf(signed.record)) {
      throw new VaultCommandError('tampered', `the server answered action hash ${published} for ${draft.file}, not ${signed.action_hash}`);
    }
    vault.state.append({ kind: 'record', record: signed.record, action_hash: signed.action_hash, published: published !== null, server: options.client.baseUrl, file: draft.file });
    results.push({ file: draft.file, file_hash: draft.content.file_hash, action_hash: published, error, record: signed.record });
    ui.progress('publishing', results.length, drafts.length);
  }
  return results;
}
