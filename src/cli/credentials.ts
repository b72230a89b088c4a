// Content Credentials (issue 21) as lines for `provenant integrity` and `provenant verify`.
import type { ContentCredentials, CredentialsConflict } from '../lib/content-credentials.js';

const STATE_TEXT: Record<string, string> = {
  valid: 'valid',
  untrusted_signer: 'valid, but the signer is not on a trust list',
  invalid: 'INVALID',
  unknown_algorithm: 'signed with an algorithm the reader does not know',
  remote: 'remote manifest, not fetched',
};

/** What the file's embedded credentials say, indented under a heading. */
export function credentialsLines(c: ContentCredentials | undefined): string[] {
  if (c === undefined) return [];
  if (c.present === false) return ['content credentials: none'];
  if (c.present === null) return [`content credentials: not read (${c.message})`];
  const lines = [`content credentials: ${STATE_TEXT[c.validation_state]}`];
  if (c.remote_url !== null) lines.push(`  manifest URL   ${c.remote_url}`);
  if (c.claim_generator !== null) lines.push(`  generator      ${c.claim_generator}`);
  if (c.signer !== null) lines.push(`  signer         ${c.signer.common_name ?? '?'} (issuer ${c.signer.issuer ?? '?'}, ${c.signer.algorithm ?? '?'})`);
  if (c.signed_at !== null) lines.push(`  signed         ${c.signed_at}`);
  if (c.actions.length > 0) lines.push(`  actions        ${c.actions.map((a) => (a.digital_source_type ? `${a.action} (${a.digital_source_type.slice(a.digital_source_type.lastIndexOf('/') + 1)})` : a.action)).join(', ')}`);
  if (c.ai_generated) lines.push('  AI generation  declared by the credentials');
  if (c.ingredients.count > 0) lines.push(`  ingredients    ${c.ingredients.count}: ${c.ingredients.titles.join(', ')}`);
  if (c.validation_codes.length > 0) lines.push(`  codes          ${c.validation_codes.join(', ')}`);
  if (c.provenant_record !== null) lines.push(`  record         ${c.provenant_record.action_hash} on ${c.provenant_record.service}`);
  return lines;
}

/** The cross-check's conflicts, one line each. */
export function conflictLines(conflicts: readonly CredentialsConflict[] | undefined): string[] {
  return (conflicts ?? []).map((c) => `CONFLICT: record for ${c.file_hash.slice(0, 12)} says AI generation ${c.ai_generation}; the Content Credentials declare ${c.content_credentials}`);
}
