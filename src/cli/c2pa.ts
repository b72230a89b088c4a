// `provenant c2pa recover FILE --server URL [--out FILE] [--json]` (issue 33): the
// Content Credentials of a file whose own were stripped, asked of any C2PA Soft Binding
// Resolution API (ours or another's) through its standard routes only:
// 1. GET  {server}/services/supportedAlgorithms;
// 2. where it resolves io.iscc.v0 and the file has an ISCC Content-Code (computed here),
//    GET {server}/matches/byBinding; when that finds nothing, POST /matches/byContent
//    with the file;
// 3. GET {server}/manifests/{id} of the best match: written to --out, and read here by
//    the reference reader in a sandbox process (the repository's bytes are a stranger's),
//    its soft binding compared with the file's code, its provenant.record re-verified.
// `--server` is the API's server URL (its path ends in /v1); a bare origin means a
// Provenant server, whose API is at /c2pa/v1. Every line goes through visible().
import { readFile, writeFile } from 'node:fs/promises';
import { ISCC_BINDING_MAX_DISTANCE } from '../lib/iscc-index.js';
import { isccDistance } from '../lib/iscc-codec.js';
import { ISCC_SOFT_BINDING_ALG } from '../lib/content-credentials.js';
import { actionHash, parseRecord, verifyRecord } from '../lib/records.js';
import { terminalJson, visible, visibleLines } from '../lib/terminal-text.js';
import { C2PA_LIMITS } from '../media/c2pa-limits.js';
import { readFailure } from '../media/errors.js';
import { isccOfFile } from '../media/iscc.js';
import { readManifestStoreLocally } from '../media/local-credentials.js';
import { detectType } from '../lib/detect.js';
import { READER_FORMAT } from '../media/c2pa.js';
import type { ManifestStoreReading } from '../media/c2pa-store.js';
import type { Command } from './command.js';
import { commandLine, USAGE_ERROR } from './usage.js';

const USAGE = `usage: provenant c2pa recover FILE --server URL [--out FILE] [--json]
  the Content Credentials (a C2PA manifest store) of a file that lost its own, found by a
  C2PA Soft Binding Resolution API: by the file's ISCC Content-Code (io.iscc.v0,
  byBinding), else by its content (byContent)
  --server   the API's URL, e.g. https://repo.example/c2pa/v1 (a bare origin: /c2pa/v1)
  --out      write the recovered manifest store (application/c2pa) there
  --json     {file, server, found_by, matches, manifest_id, manifest}
`;

const OPTIONS = { server: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

/** How long one request may take, and how many bytes of an answer are read at most. */
const REQUEST_TIMEOUT_MS = 60_000;
const MAX_JSON_BYTES = 1 << 20;

class RecoverError extends Error {}

/** The API's base URL: --server as given, or a bare origin's /c2pa/v1. */
export function apiBase(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new RecoverError(`--server is not a URL: ${server}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RecoverError('--server must be an http or https URL');
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/c2pa/v1' : path}`;
}

/** One request's answer, its body read up to `maxBytes` (more fails). */
async function request(url: string, init: RequestInit, maxBytes: number): Promise<{ status: number; type: string; body: Uint8Array }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), redirect: 'follow' });
  } catch (err) {
    throw new RecoverError(`cannot reach ${new URL(url).origin}: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`);
  }
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw new RecoverError(`${url} answered ${declared} bytes, more than ${maxBytes}`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (let part = await reader?.read(); part !== undefined && !part.done; part = await reader!.read()) {
    size += part.value.length;
    if (size > maxBytes) {
      await reader!.cancel();
      throw new RecoverError(`${url} answered more than ${maxBytes} bytes`);
    }
    chunks.push(part.value);
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: new Uint8Array(Buffer.concat(chunks)) };
}

async function requestJson(url: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> {
  const res = await request(url, { ...init, headers: { accept: 'application/json', ...(init.headers ?? {}) } }, MAX_JSON_BYTES);
  let json: unknown = null;
  try {
    json = JSON.parse(new TextDecoder().decode(res.body));
  } catch {
    // not JSON: json stays null, the status says what happened
  }
  return { status: res.status, json };
}

interface Match { manifestId: string; similarityScore?: number }

/** c2pa.softBindingQueryResult's matches, the well-formed ones (a stranger's answer). */
function matchesOf(json: unknown): Match[] {
  const matches = (json as { matches?: unknown })?.matches;
  if (!Array.isArray(matches)) return [];
  return matches.filter((m): m is Match => typeof m?.manifestId === 'string' && m.manifestId.length <= 1000).slice(0, 100);
}

function refusal(what: string, res: { status: number; json: unknown }): RecoverError {
  const message = (res.json as { message?: unknown })?.message;
  return new RecoverError(`${what} answered ${res.status}${typeof message === 'string' ? `: ${message.slice(0, 300)}` : ''}`);
}

/** What the reference reader says of the recovered store, against the file. */
function manifestReport(reading: ManifestStoreReading, content: string | null) {
  const binding = reading.soft_bindings.find((b) => b.alg === ISCC_SOFT_BINDING_ALG)?.values[0] ?? null;
  let distance: number | null = null;
  if (binding !== null && content !== null) {
    try {
      distance = isccDistance(binding, content);
    } catch {
      distance = null; // different content types: no comparison
    }
  }
  const assertion = reading.credentials.provenant_record;
  let recordVerifies: boolean | null = null;
  if (assertion !== null) {
    try {
      const record = parseRecord(assertion.record);
      recordVerifies = verifyRecord({ ...record, signature: assertion.signature }) && actionHash(record, assertion.signature) === assertion.action_hash;
    } catch {
      recordVerifies = false;
    }
  }
  return {
    validation_state: reading.validation_state,
    validation_codes: reading.validation_codes,
    detached_codes: reading.detached_codes,
    signer: reading.credentials.signer,
    claim_generator: reading.credentials.claim_generator,
    soft_binding: binding,
    soft_binding_distance: distance,
    soft_binding_matches: distance === null ? null : distance <= ISCC_BINDING_MAX_DISTANCE,
    provenant_record: assertion === null ? null : { action_hash: assertion.action_hash, service: assertion.service, signature_valid: recordVerifies },
  };
}

async function recover(file: string, server: string, out: string | undefined, json: boolean): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (err) {
    throw new RecoverError(readFailure(file, err).message);
  }
  const base = apiBase(server);
  const algorithms = await requestJson(`${base}/services/supportedAlgorithms`);
  if (algorithms.status !== 200) throw refusal('GET /services/supportedAlgorithms', algorithms);
  const fingerprints = (algorithms.json as { fingerprints?: { alg?: unknown }[] })?.fingerprints ?? [];
  const resolvesIscc = Array.isArray(fingerprints) && fingerprints.some((f) => f?.alg === ISCC_SOFT_BINDING_ALG);
  const content = (await isccOfFile(bytes)).content?.code ?? null;

  let foundBy: 'byBinding' | 'byContent' = 'byBinding';
  let matches: Match[] = [];
  if (resolvesIscc && content !== null) {
    const value = encodeURIComponent(Buffer.from(content).toString('base64'));
    const res = await requestJson(`${base}/matches/byBinding?alg=${ISCC_SOFT_BINDING_ALG}&value=${value}`);
    if (res.status !== 200) throw refusal('GET /matches/byBinding', res);
    matches = matchesOf(res.json);
  }
  if (matches.length === 0) {
    foundBy = 'byContent';
    const detected = detectType(bytes);
    const type = detected === null ? 'application/octet-stream' : (READER_FORMAT[detected.format] ?? `${detected.kind}/${detected.format}`);
    const res = await requestJson(`${base}/matches/byContent`, { method: 'POST', headers: { 'content-type': type }, body: bytes as Uint8Array<ArrayBuffer> });
    if (res.status === 415) throw new RecoverError('the repository cannot fingerprint this type of file (415)');
    if (res.status !== 200) throw refusal('POST /matches/byContent', res);
    matches = matchesOf(res.json);
  }
  if (matches.length === 0) {
    if (json) process.stdout.write(`${terminalJson({ file, server: base, found_by: null, matches: [], manifest_id: null, manifest: null })}\n`);
    else process.stdout.write(`${visible(`${file}: ${base} holds no manifest for this file (asked by its ISCC and by its content)`)}\n`);
    return 1;
  }
  const best = matches[0];
  const got = await request(`${base}/manifests/${encodeURIComponent(best.manifestId)}`, { headers: { accept: 'application/c2pa' } }, C2PA_LIMITS.maxBytes);
  if (got.status !== 200) throw new RecoverError(`GET /manifests/${best.manifestId} answered ${got.status}`);
  if (out !== undefined) await writeFile(out, got.body);
  let report: ReturnType<typeof manifestReport> | { error: string };
  try {
    report = manifestReport(await readManifestStoreLocally(got.body), content);
  } catch (err) {
    report = { error: `the reference reader refused the recovered store: ${(err as Error).message.slice(0, 300)}` };
  }
  if (json) {
    process.stdout.write(`${terminalJson({ file, server: base, found_by: foundBy, matches, manifest_id: best.manifestId, manifest: report, written: out ?? null })}\n`);
    return 'error' in report ? 1 : 0;
  }
  const lines = [`${file}: recovered ${best.manifestId} from ${base} (${foundBy}${best.similarityScore === undefined ? '' : `, similarity ${best.similarityScore}`})`];
  if ('error' in report) lines.push(`  ${report.error}`);
  else {
    lines.push(`  manifest    ${report.validation_state}${report.validation_codes.length > 0 ? ` (${report.validation_codes.join(', ')})` : ''}; hard binding not checkable without the original (${report.detached_codes.join(', ') || 'none reported'})`);
    if (report.signer !== null) lines.push(`  signer      ${report.signer.common_name ?? '?'} (issuer ${report.signer.issuer ?? '?'}, ${report.signer.algorithm ?? '?'})`);
    lines.push(`  binding     ${report.soft_binding === null ? 'no io.iscc.v0 soft binding' : `${report.soft_binding}: ${report.soft_binding_matches === null ? 'not comparable with this file' : report.soft_binding_matches ? `matches this file (${report.soft_binding_distance} bits apart)` : `does NOT match this file (${report.soft_binding_distance} bits apart)`}`}`);
    if (report.provenant_record !== null) lines.push(`  record      ${report.provenant_record.action_hash} on ${report.provenant_record.service}: ${report.provenant_record.signature_valid ? 're-verified offline' : 'DOES NOT VERIFY'}`);
  }
  if (matches.length > 1) lines.push(`  also        ${matches.slice(1, 6).map((m) => m.manifestId).join(', ')}`);
  if (out !== undefined) lines.push(`  written     ${out}`);
  process.stdout.write(`${visibleLines(lines)}\n`);
  return 'error' in report ? 1 : 0;
}

export const run: Command = async (args) => {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === undefined) {
    (sub === undefined ? process.stderr : process.stdout).write(USAGE);
    return sub === undefined ? USAGE_ERROR : 0;
  }
  if (sub !== 'recover') {
    process.stderr.write(`${visible(`provenant c2pa: unknown subcommand ${sub}`)}\n${USAGE}`);
    return USAGE_ERROR;
  }
  const parsed = commandLine('c2pa recover', USAGE, rest, OPTIONS);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || typeof values.server !== 'string') {
    process.stderr.write(`provenant c2pa recover: name one FILE and --server URL\n${USAGE}`);
    return USAGE_ERROR;
  }
  try {
    return await recover(positionals[0], values.server, values.out, values.json === true);
  } catch (err) {
    if (!(err instanceof RecoverError)) throw err;
    process.stderr.write(`${visible(`provenant c2pa recover: ${err.message}`)}\n`);
    return 1;
  }
};
