// Reading Content Credentials (C2PA) with the reference implementation, c2pa-rs built
// to WebAssembly (@contentauth/c2pa-wasm), into the ContentCredentials of
// src/lib/content-credentials.ts.
//
// Where it runs: in the decoder sandbox process (sandbox.ts, op `content-credentials`,
// and inside the integrity report), never on a server's event loop. The reader parses
// hostile bytes (JUMBF boxes, CBOR, COSE, X.509) in WebAssembly, whose memory grows on
// demand up to 4 GB: in a worker thread no heap limit bounds it, in the sandbox process
// RLIMIT_DATA does, and a reader that runs away or traps fails that file only. The
// CLI and the vault call it in their own process (one file, a person waiting).
//
// Never fetching: a file may carry only a URL to its manifest (a remote manifest); a
// server that followed it would make requests wherever a stranger's file points (SSRF).
// The reader is configured with verify.remote_manifest_fetch false (and OCSP fetching
// off), so it stops with the URL and fetches nothing: test/c2pa/remote.test.ts points
// a file's URL at a loopback server and checks that it sees no request (and that the
// reader's default would have made one).
//
// Bounded: the reader's work grows with the square of the assertions, so a store past
// C2PA_LIMITS (c2pa-limits.ts: assertions, ingredients, manifests, JUMBF depth and
// bytes, measured by a cheap walk of its boxes) is not given to it: present null, and
// the message names the limit. A server's read has its own short deadline besides
// (CREDENTIALS_TIMEOUT_MS, workers/fingerprint.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { initSync, WasmReader } from '@contentauth/c2pa-wasm';
import { detectType, type MediaFormat } from '../lib/detect.js';
import { measureManifestStores } from './c2pa-limits.js';
import {
  PROVENANT_RECORD_LABEL, isAiSourceType,
  type ContentCredentials, type CredentialsAction, type CredentialsFound, type CredentialsState, type ProvenantRecordAssertion,
} from '../lib/content-credentials.js';

/** The reader's settings (c2pa-rs Settings, as its context JSON): nothing is fetched. */
export const READER_SETTINGS = JSON.stringify({ verify: { remote_manifest_fetch: false, ocsp_fetch: false } });

/** Bounds on what one file's credentials put in a report (a hostile manifest can list thousands). */
const MAX_ITEMS = 50;
const MAX_TEXT = 200;

/** The MIME type the reader is given per detected format; formats without C2PA embedding are not read. */
export const READER_FORMAT: Partial<Record<MediaFormat, string>> = {
  jpeg: 'image/jpeg', png: 'image/png', tiff: 'image/tiff', gif: 'image/gif', webp: 'image/webp',
  mp3: 'audio/mpeg', wav: 'audio/wav', mp4: 'video/mp4', avi: 'video/avi',
};

let initialised = false;

/** Instantiates the reader's WebAssembly once per process (about 0.1-0.5 s). */
export function initReader(): void {
  if (initialised) return;
  const wasm = createRequire(import.meta.url).resolve('@contentauth/c2pa-wasm/c2pa.wasm');
  initSync({ module: readFileSync(wasm) });
  initialised = true;
}

/** The content credentials of a file's bytes. Never throws for what the bytes hold. */
export async function readContentCredentials(bytes: Uint8Array): Promise<ContentCredentials> {
  const format = detectType(bytes)?.format;
  const mime = format === undefined ? undefined : READER_FORMAT[format];
  if (mime === undefined) return { present: false };
  const { over } = measureManifestStores(bytes, format!);
  if (over !== null) return { present: null, message: `not read: the manifest store is past the reader's limits (${over}; docs/c2pa.md)` };
  initReader();
  let reader: WasmReader;
  try {
    reader = await WasmReader.fromBytes(mime, bytes, READER_SETTINGS);
  } catch (e) {
    return credentialsFromReaderError(e);
  }
  try {
    return credentialsFromStore(reader.manifestStore() as ManifestStore);
  } finally {
    reader.free();
  }
}

/** The parts of the reader's manifest store (c2pa-rs Reader JSON) used here. */
interface ManifestStore {
  active_manifest?: string;
  manifests?: Record<string, Manifest>;
  validation_state?: string;
  validation_status?: { code?: string }[];
}

interface Manifest {
  claim_generator?: string;
  claim_generator_info?: { name?: string; version?: string }[];
  signature_info?: { alg?: string; issuer?: string; common_name?: string; time?: string };
  ingredients?: { title?: string }[];
  assertions?: { label?: string; data?: { actions?: { action?: string; digitalSourceType?: string }[] } & Record<string, unknown> }[];
}

function text(v: unknown): string | null {
  return typeof v === 'string' ? v.slice(0, MAX_TEXT) : null;
}

function found({ validation_state, ...fields }: Partial<CredentialsFound> & Pick<CredentialsFound, 'validation_state'>): CredentialsFound {
  return {
    present: true, validation_state, validation_codes: [], manifests: null, remote_url: null, claim_generator: null, signer: null, signed_at: null,
    actions: [], created: false, edited: false, ai_generated: false, ingredients: { count: 0, titles: [] }, provenant_record: null, message: null,
    ...fields,
  };
}

/**
 * The reader's verdict as ours: Invalid is invalid; Valid (all checks passed, the
 * signer not on a trust list: c2pa-rs reports `signingCredential.untrusted` then) is
 * untrusted_signer; Trusted, or Valid with no such code, is valid.
 */
function stateOf(readerState: string | undefined, codes: readonly string[]): CredentialsState {
  if (readerState === 'Invalid') return 'invalid';
  if (codes.includes('signingCredential.untrusted')) return 'untrusted_signer';
  return readerState === 'Valid' || readerState === 'Trusted' ? 'valid' : 'invalid';
}

/** The claim generator: the claim's own string (v1 claims), else its generator info as name/version. */
function claimGenerator(m: Manifest): string | null {
  if (typeof m.claim_generator === 'string') return text(m.claim_generator);
  const info = (m.claim_generator_info ?? []).filter((i) => typeof i?.name === 'string');
  return info.length === 0 ? null : text(info.map((i) => (typeof i.version === 'string' ? `${i.name}/${i.version}` : i.name)).join(' '));
}

/** The actions of the manifest's c2pa.actions assertions (v1 and v2), in order. */
function actionsOf(m: Manifest): CredentialsAction[] {
  const out: CredentialsAction[] = [];
  for (const a of m.assertions ?? []) {
    if (typeof a?.label !== 'string' || !/^c2pa\.actions(\.v\d+)?$/.test(a.label)) continue;
    for (const act of a.data?.actions ?? []) {
      if (out.length >= MAX_ITEMS || typeof act?.action !== 'string') continue;
      const source = text(act.digitalSourceType);
      out.push({ action: text(act.action)!, digital_source_type: source, ai_generated: isAiSourceType(source) });
    }
  }
  return out;
}

/** Largest provenant.record record text taken: a record is at most about 70 KB (its integrity report at most 64 KB). */
const MAX_RECORD_ASSERTION_CHARS = 128 * 1024;

/** The active manifest's provenant.record assertion (a vault's, part 2), its record parsed, when it has the expected shape. */
function provenantRecordOf(m: Manifest): ProvenantRecordAssertion | null {
  const data = m.assertions?.find((a) => a?.label === PROVENANT_RECORD_LABEL)?.data;
  if (data === undefined || data === null || typeof data !== 'object') return null;
  const { record, signature, action_hash, service } = data as Record<string, unknown>;
  if (typeof record !== 'string' || record.length > MAX_RECORD_ASSERTION_CHARS) return null;
  if (typeof signature !== 'string' || typeof action_hash !== 'string' || typeof service !== 'string') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(record);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  return { record: parsed as Record<string, unknown>, signature: signature.slice(0, MAX_TEXT), action_hash: action_hash.slice(0, MAX_TEXT), service: service.slice(0, MAX_TEXT) };
}

/** Actions that make the asset rather than change it (C2PA 2.x: `c2pa.created`, `c2pa.opened` open a parent). */
const NOT_EDITS = new Set(['c2pa.created', 'c2pa.opened']);

/** The reduced ContentCredentials of a manifest store the reader returned. */
export function credentialsFromStore(store: ManifestStore): ContentCredentials {
  const manifests = store.manifests ?? {};
  const active = store.active_manifest === undefined ? undefined : manifests[store.active_manifest];
  if (active === undefined) return { present: false };
  const codes = [...new Set((store.validation_status ?? []).map((s) => s?.code).filter((c): c is string => typeof c === 'string'))].slice(0, MAX_ITEMS);
  const actions = actionsOf(active);
  const sig = active.signature_info;
  const titles = (active.ingredients ?? []).map((i) => text(i?.title)).filter((t): t is string => t !== null);
  return found({
    validation_state: stateOf(store.validation_state, codes),
    validation_codes: codes,
    manifests: Object.keys(manifests).length,
    claim_generator: claimGenerator(active),
    signer: sig === undefined ? null : { issuer: text(sig.issuer), common_name: text(sig.common_name), algorithm: text(sig.alg) },
    signed_at: text(sig?.time),
    actions,
    created: actions.some((a) => a.action === 'c2pa.created'),
    edited: actions.some((a) => !NOT_EDITS.has(a.action)),
    ai_generated: actions.some((a) => a.ai_generated),
    ingredients: { count: active.ingredients?.length ?? 0, titles: titles.slice(0, MAX_ITEMS) },
    provenant_record: provenantRecordOf(active),
  });
}

/**
 * The reader's refusal as ContentCredentials. c2pa-rs errors reach JavaScript as their
 * Debug text, e.g. `C2pa(RemoteManifestUrl("https://..."))`, `C2pa(UnknownAlgorithm)`,
 * `C2pa(JumbfNotFound)`.
 */
export function credentialsFromReaderError(err: unknown): ContentCredentials {
  const message = (err instanceof Error ? err.message : String(err)).slice(0, MAX_TEXT);
  const kind = /^C2pa\((\w+)/.exec(message)?.[1];
  switch (kind) {
    case 'JumbfNotFound':
    case 'ProvenanceMissing':
    case 'UnsupportedType':
      return { present: false };
    case 'RemoteManifestUrl': {
      const url = /RemoteManifestUrl\("([^"]*)"\)/.exec(message)?.[1] ?? null;
      return found({ validation_state: 'remote', remote_url: url, message: 'remote manifest, not fetched' });
    }
    case 'InvalidAsset':
      // the container itself could not be parsed (truncated, corrupt): whether it holds credentials is unknown
      return { present: null, message: `not read: the reader could not parse the file (${message})` };
    case 'UnknownAlgorithm':
      // C2PA 2.x names this failure algorithm.unsupported
      return found({ validation_state: 'unknown_algorithm', validation_codes: ['algorithm.unsupported'], message });
    default:
      // the reader found credentials it could not read through (corrupt JUMBF or CBOR)
      return found({ validation_state: 'invalid', validation_codes: ['general.error'], message });
  }
}
