// `provenant verify FILE [--server URL] [--json] [--key FILE]`: who signed this file or
// a perceptually similar one. The SHA-256 is computed here (GET /verify, the exact
// matches) and the file is sent to POST /verify-file (the perceptual matches, which are
// then looked up by their hash for revocation and amend chain). A record whose
// signature this machine holds (the vault's log, or /my-signatures with the vault's
// session) is re-verified offline; one that no longer matches its signature is refused
// (exit 1). The service does not publish other signers' signatures, so theirs show as
// "not held". Every line goes through visible() (lib/terminal-text.ts): comments, custom
// licences, display names, claim generators and the server's messages are others' text.
import { readFile } from 'node:fs/promises';
import { fileSha256Hex } from '../lib/digest.js';
import { actionHash, verifyRecord, type SignatureRecord } from '../lib/records.js';
import { terminalJson, visible, visibleLines } from '../lib/terminal-text.js';
import { readFailure } from '../media/errors.js';
import { ProvenantClient, type VerifyFileAnswer, type Signature, type VerifyAnswer } from '../sdk/client.js';
import { ProvenantError } from '../sdk/errors.js';
import { openKeyFile } from '../vault/keyfile.js';
import { defaultKeyFile, VaultState } from '../vault/state.js';
import type { Command } from './command.js';
import { conflictLines, credentialsLines } from './credentials.js';
import { commandLine, USAGE_ERROR } from './usage.js';
import { LogForkError, proveRecord, viewLog, type LogView } from './log-client.js';
import { verifyCheckpoint } from '../lib/tlog/checkpoint.js';

const USAGE = `usage: provenant verify FILE [--server URL] [--json] [--key FILE] [--witness VKEY ...]
  exact (SHA-256) and perceptual matches: signer, date, intent, rights, revocation,
  amend chain, whether each record's signature re-verifies offline, and each record's
  proof of inclusion in the server's transparency log
  --server   default $PROVENANT_SERVER, else http://localhost:8080
  --json     {exact, perceptual, log}: the answers of GET /verify and POST /verify-file;
             log.proofs: per action hash, verified | not_logged | failed | unchecked
  --witness  a witness's cosignature key: its cosignature on the checkpoint is checked
  The largest checkpoint seen per log is kept in $XDG_CONFIG_HOME/provenant/logs; a later
  tree that does not extend it is a fork: reported, exit 3.
`;

const OPTIONS = { server: { type: 'string' }, json: { type: 'boolean' }, key: { type: 'string' }, witness: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } } as const;

/** Exit status of a log that shows two histories (or changed its key). */
export const FORK_EXIT = 3;

type Check = 'verified' | 'tampered' | 'not held';

/** Signatures this machine holds, by action hash: the vault's log, and the vault account's records on `server`. */
async function heldSignatures(keyFile: string, server: string): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  let state: VaultState;
  try {
    state = new VaultState(openKeyFile(keyFile).path);
  } catch {
    return held; // no vault here: nothing held
  }
  for (const e of state.log()) if (e.kind === 'record') held.set(e.action_hash, e.record.signature);
  const session = state.session();
  if (session !== null && session.server === server) {
    try {
      const mine = await new ProvenantClient({ baseUrl: server, token: session.token }).mySignatures();
      for (const s of mine.signatures) held.set(s.action_hash, s.signature);
    } catch {
      // an expired session: the log alone
    }
  }
  return held;
}

function check(s: Signature, held: Map<string, string>): Check {
  const signature = held.get(s.action_hash);
  if (signature === undefined) return 'not held';
  const record = s as SignatureRecord;
  return verifyRecord({ ...record, signature }) && actionHash(record, signature) === s.action_hash ? 'verified' : 'tampered';
}

function rights(r: Signature['content_rights']): string {
  if (!r) return '-';
  const parts = Object.entries(r).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => `${k}=${typeof v === 'object' ? `Custom(${(v as { Custom: string }).Custom})` : v}`);
  return parts.length > 0 ? parts.join(' ') : '-';
}

function status(s: Signature): string {
  if (s.revoked) return `REVOKED ${new Date(Number(s.revoked_at)).toISOString()}${s.revocation_reason ? ` (${s.revocation_reason})` : ''}`;
  return s.superseded_by ? `superseded by ${s.superseded_by.slice(0, 12)}` : 'active';
}

/**
 * Per action hash in `--json`, whether its inclusion proof checked: `verified` (proven
 * under the checkpoint named), `not_logged` (not under a checkpoint yet), `failed` (the
 * proof or the entry was refused: `reason`), `unchecked` (the log could not be read).
 * `cosignatures.verified` is null when no --witness key was given.
 */
export interface ProofStatus {
  status: 'verified' | 'not_logged' | 'failed' | 'unchecked';
  index?: number;
  checkpoint?: { origin: string; size: number; cosignatures: { verified: number | null; of: number; other_signatures: number } };
  reason?: string;
}

/**
 * How a perceptual match was found: its similarity, the fingerprint that found it, and
 * (issue 32) the geometric check that confirmed it when the record has local features.
 */
function matchedHow(m: VerifyFileAnswer['signatures'][number]): string {
  const by = m.matched_by === undefined ? '' : ` by ${m.matched_by}${m.pdq_distance === undefined ? '' : ` (distance ${m.pdq_distance})`}`;
  const checked = m.feature_inliers === undefined ? '' : `; confirmed by ${m.feature_inliers} matching local features covering ${Math.round(100 * (m.feature_coverage ?? 0))} % of this file`;
  return `similarity ${m.similarity ?? 'unknown'}${by}${checked}`;
}

/** Per action hash, the line saying where the record is in the log (or why it is not shown). */
type LogLines = Map<string, string>;

function describe(s: Signature, checked: Check, prefix: string, log: LogLines = new Map()): string[] {
  const inLog = log.get(s.action_hash);
  return [
    `${prefix}${s.action_hash}`,
    `    signer      ${s.signer}${s.signer_display_name ? ` (${s.signer_display_name})` : ''}`,
    `    signed      ${new Date(s.signed_at).toISOString()}   intent ${s.intent}   AI ${s.ai_generation ?? '-'}`,
    `    rights      ${rights(s.content_rights)}`,
    ...(s.comment ? [`    comment     ${JSON.stringify(s.comment)}`] : []),
    `    status      ${status(s)}${s.supersedes ? `; amends ${s.supersedes.slice(0, 12)}` : ''}`,
    `    signature   ${checked === 'verified' ? 're-verified offline' : checked === 'tampered' ? 'DOES NOT MATCH THE RECORD' : 'not held here (the service publishes records, not signatures)'}`,
    ...(inLog !== undefined ? [`    log         ${inLog}`] : []),
  ];
}

/**
 * The log's checkpoint checked against the one remembered (LogForkError: a fork), and
 * each record's inclusion proven: a line per action hash. A record whose entry carries its
 * own signature is re-verified from the entry with the record /verify answered.
 */
async function logLines(server: string, signatures: readonly Signature[], witnesses: readonly string[]): Promise<{ lines: LogLines; view: LogView | null; indexes: Record<string, number | null>; proofs: Record<string, ProofStatus>; problem?: string }> {
  const lines: LogLines = new Map();
  const indexes: Record<string, number | null> = {};
  const proofs: Record<string, ProofStatus> = {};
  let view: LogView;
  try {
    view = await viewLog(server);
  } catch (err) {
    if (err instanceof LogForkError) throw err;
    const problem = `not checked: ${(err as Error).message}`;
    for (const s of signatures) proofs[s.action_hash] = { status: 'unchecked', reason: problem };
    return { lines, view: null, indexes, proofs, problem };
  }
  const origin = view.checkpoint.checkpoint.origin;
  let cosigned = `${view.otherSignatures} other signature${view.otherSignatures === 1 ? '' : 's'} (no --witness key to check them)`;
  let witnessed: number | null = null;
  if (witnesses.length > 0) {
    witnessed = verifyCheckpoint(view.note, { logKeys: [view.vkey], witnesses: [...witnesses] }).cosignatures.length;
    cosigned = `cosigned by ${witnessed} witness${witnessed === 1 ? '' : 'es'} of ${witnesses.length}`;
  }
  const checkpoint = { origin, size: view.checkpoint.checkpoint.size, cosignatures: { verified: witnessed, of: witnesses.length, other_signatures: view.otherSignatures } };
  for (const s of signatures) {
    if (lines.has(s.action_hash)) continue;
    try {
      const found = await proveRecord(view, s.action_hash);
      indexes[s.action_hash] = found?.index ?? null;
      if (found === null) {
        lines.set(s.action_hash, 'not under a checkpoint yet (try again in a second)');
        proofs[s.action_hash] = { status: 'not_logged', checkpoint };
        continue;
      }
      const entry = found.entry as { record?: SignatureRecord };
      if (entry.record !== undefined && (entry.record.file_hash !== s.file_hash || entry.record.signer !== s.signer || entry.record.signed_at !== s.signed_at)) {
        lines.set(s.action_hash, `THE LOG'S ENTRY ${found.index} IS NOT THIS RECORD`);
        proofs[s.action_hash] = { status: 'failed', index: found.index, checkpoint: { ...checkpoint, size: found.size }, reason: `the log's entry ${found.index} is not this record` };
        continue;
      }
      lines.set(s.action_hash, `in the log at index ${found.index}, checkpoint ${found.size} signed by ${origin}, ${cosigned}`);
      proofs[s.action_hash] = { status: 'verified', index: found.index, checkpoint: { ...checkpoint, size: found.size } };
    } catch (err) {
      if (err instanceof LogForkError) throw err;
      lines.set(s.action_hash, `PROOF REFUSED: ${(err as Error).message}`);
      proofs[s.action_hash] = { status: 'failed', checkpoint, reason: (err as Error).message };
    }
  }
  return { lines, view, indexes, proofs };
}

/**
 * Issue 33: the Content Credentials the repository holds for the records a file without
 * its own matched (verify-file's recovered_credentials).
 */
function recoveredLines(recovered: NonNullable<VerifyFileAnswer['recovered_credentials']>, server: string): string[] {
  if (recovered.length === 0) return [];
  const lines = ['', `Recovered Content Credentials (this file has none; ${server} holds the manifests of the records it matched):`];
  for (const r of recovered) {
    const binding = r.soft_binding_matches === null ? 'no ISCC soft binding to compare' : r.soft_binding_matches ? `the file's ISCC matches its soft binding (${r.soft_binding_distance} bits apart)` : `the file's ISCC does NOT match its soft binding (${r.soft_binding_distance} bits apart)`;
    lines.push(`  ${r.manifest_id}  for record ${r.action_hash}`, `    manifest    ${r.validation_state}${r.validation_codes.length > 0 ? ` (${r.validation_codes.join(', ')})` : ''}; ${binding}`, `    fetch       provenant c2pa recover FILE --server ${server}`);
  }
  return lines;
}

export const run: Command = async (args) => {
  const parsed = commandLine('verify', USAGE, args, OPTIONS);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    process.stderr.write(`provenant verify: expected one FILE, got ${positionals.length}\n${USAGE}`);
    return USAGE_ERROR;
  }
  const file = positionals[0];
  const server = String(values.server ?? process.env.PROVENANT_SERVER ?? 'http://localhost:8080').replace(/\/+$/, '');
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (err) {
    process.stderr.write(`${visible(`provenant verify: ${readFailure(file, err).message}`)}\n`);
    return 1;
  }
  const client = new ProvenantClient({ baseUrl: server });
  let exact: VerifyAnswer;
  let perceptual: VerifyFileAnswer;
  const byHash = new Map<string, Signature[]>();
  try {
    exact = await client.verify(fileSha256Hex(bytes));
    perceptual = await client.verifyFile(bytes);
    byHash.set(fileSha256Hex(bytes), exact.signatures);
    if (!values.json) {
      // the full records of the similar files, for revocation and amend chain (a few: /verify is rate-limited)
      for (const hash of [...new Set(perceptual.signatures.map((s) => s.file_hash))].slice(0, 5)) {
        if (!byHash.has(hash)) byHash.set(hash, (await client.verify(hash)).signatures);
      }
    }
  } catch (err) {
    const why = err instanceof ProvenantError && err.code === 'unreachable' ? `cannot reach the server: ${err.message}` : `the server refused: ${(err as Error).message}`;
    process.stderr.write(`${visible(`provenant verify: ${why}`)}\n`);
    return 1;
  }
  const held = await heldSignatures(String(values.key ?? defaultKeyFile()), server);
  const tampered = [...byHash.values()].flat().filter((s) => check(s, held) === 'tampered');
  if (tampered.length > 0) {
    process.stderr.write(`${visible(`provenant verify: refused: the server's record ${tampered.map((s) => s.action_hash).join(', ')} does not match the signature this machine holds for it`)}\n`);
    return 1;
  }
  let log: Awaited<ReturnType<typeof logLines>>;
  try {
    log = await logLines(server, [...byHash.values()].flat().slice(0, 50), (values.witness ?? []) as string[]);
  } catch (err) {
    process.stderr.write(`${visible(`provenant verify: FORK: ${(err as Error).message}`)}\n`);
    process.stderr.write('provenant verify: the server shows a history that contradicts one it showed before: do not trust its answers; keep the remembered checkpoint as evidence\n');
    return FORK_EXIT;
  }
  if (values.json) {
    const logJson = log.view === null ? { error: log.problem ?? null, proofs: log.proofs } : { origin: log.view.checkpoint.checkpoint.origin, size: log.view.checkpoint.checkpoint.size, indexes: log.indexes, proofs: log.proofs };
    process.stdout.write(`${terminalJson({ exact, perceptual, log: logJson })}\n`);
    return 0;
  }
  const lines = [`${file}: ${exact.count} exact, ${perceptual.count} perceptual match${perceptual.count === 1 ? '' : 'es'} on ${server}`];
  if (log.problem !== undefined) lines.push(`Transparency log: ${log.problem}`);
  if (exact.count > 0) lines.push('', 'Exact (same SHA-256):', ...exact.signatures.flatMap((s) => describe(s, check(s, held), '  ', log.lines)));
  if (perceptual.match_type === 'none') lines.push('', 'Perceptual: not a media file the service fingerprints');
  for (const m of perceptual.signatures) {
    if (byHash.get(m.file_hash) === exact.signatures) {
      lines.push('', `Perceptual, ${matchedHow(m)}: this file (above), signed by ${m.signer}`);
      continue;
    }
    const full = (byHash.get(m.file_hash) ?? []).filter((s) => s.signer === m.signer && s.signed_at === m.signed_at);
    lines.push('', `Perceptual, ${matchedHow(m)}: file ${m.file_hash}`);
    lines.push(...(full.length > 0 ? full.flatMap((s) => describe(s, check(s, held), '  ', log.lines)) : [`  signer ${m.signer}, signed ${new Date(m.signed_at).toISOString()}, intent ${m.intent}, rights ${rights(m.content_rights as Signature['content_rights'])}`]));
  }
  const embedded = perceptual.embedded_record;
  if (embedded) {
    const sig = embedded.signature_valid && embedded.action_hash_matches ? 're-verified offline' : 'DOES NOT VERIFY';
    lines.push('', `Found from the file's Content Credentials (provenant.record): ${embedded.action_hash}`, `    signature   ${sig}; ${embedded.stored ? 'held by' : 'not found on'} ${server}`);
  }
  const credentials = credentialsLines(perceptual.content_credentials);
  if (credentials.length > 0) lines.push('', ...credentials);
  lines.push(...recoveredLines(perceptual.recovered_credentials ?? [], server));
  lines.push(...conflictLines(perceptual.conflicts));
  process.stdout.write(`${visibleLines(lines)}\n`);
  return 0;
};
