// A detached C2PA manifest store (`application/c2pa`, the bytes a Soft Binding Resolution
// API's GET /manifests/{id} serves; issue 33), read with the reference reader
// (@contentauth/c2pa-wasm) and reduced to what a manifest repository decides on:
// - the active manifest's label, its manifest id (C2PA 2.x, 8.3: urn:c2pa:UUID...);
// - the reader's verdict on the store as a store. Without its asset, the hard binding
//   (c2pa.hash.data, .bmff, .boxes) cannot hold: the reader reports it as
//   assertion.<kind>Hash.mismatch, always. Those codes are set aside (listed in
//   `detached_codes`), every other check counts;
// - the soft bindings (c2pa.soft-binding assertions) of the active manifest;
// - the Ed25519 key of the certificate that signed the active claim, read from its
//   COSE_Sign1 (the reader validates the signature with that certificate but reports
//   only its names): the key is taken only when the certificate's subject common name and
//   serial number are the ones the reader reports, so both read the same certificate;
// - a store of the active manifest alone (GET /manifests/{id}?returnActiveManifest=true).
//
// Like readContentCredentials, this parses hostile bytes: the server calls it in the
// decoder sandbox (op `manifest-store`), under C2PA_LIMITS and a deadline.
import { X509Certificate } from 'node:crypto';
import { WasmReader } from '@contentauth/c2pa-wasm';
import { READER_SETTINGS, credentialsFromStore, initReader } from './c2pa.js';
import { measureManifestStore } from './c2pa-limits.js';
import type { CredentialsFound, CredentialsState } from '../lib/content-credentials.js';

/** The media type of a detached manifest store (C2PA 2.x, 11.3). */
export const C2PA_STORE_TYPE = 'application/c2pa';

/**
 * Bytes of a detached store the repository takes at most (POST /api/v1/sign-it/manifests;
 * a vault's is about 10-12 KB: its certificate chain and the record with its integrity
 * report). Reading one is bounded by C2PA_LIMITS (32 MiB) instead, as for stores in files:
 * `provenant c2pa recover` reads what other repositories serve.
 */
export const MANIFEST_STORE_MAX_BYTES = 1 << 20;

/** The reader's hard-binding failures, which a store read without its asset always has. */
const DETACHED_CODES = new Set(['assertion.dataHash.mismatch', 'assertion.bmffHash.mismatch', 'assertion.boxesHash.mismatch', 'assertion.collectionHash.mismatch']);

/** Blocks of soft bindings kept per manifest, and characters per value. */
const MAX_SOFT_BINDINGS = 16;
const MAX_SOFT_BINDING_VALUE = 1024;

export interface SoftBinding {
  /** The algorithm (the C2PA soft binding algorithm list's `alg`, e.g. io.iscc.v0). */
  alg: string;
  /** Each block's value, as the assertion holds it (c2pa-rs reads a value as text). */
  values: string[];
}

export interface ManifestStoreReading {
  /** The active manifest's label. */
  manifest_id: string;
  /** The reader's verdict, the detached hard binding set aside. */
  validation_state: CredentialsState;
  /** The reader's failure codes that count (each once). */
  validation_codes: string[];
  /** The hard-binding failures set aside. */
  detached_codes: string[];
  /** The active manifest as verify-file reports credentials (its provenant.record among them). */
  credentials: CredentialsFound;
  soft_bindings: SoftBinding[];
  /** The signing certificate's Ed25519 public key (hex), or null when it is not Ed25519 or not the reader's. */
  signer_public_key: string | null;
  /** A store holding the active manifest alone. */
  active_manifest: Uint8Array;
}

/** The pool task's answer (workers/manifest-store.ts): the reading, a store refused (why), or the sandbox failed. */
export type ManifestStoreOutcome = { reading: ManifestStoreReading } | { refused: string } | { failed: string };

/** A store the reader (or the box walk) refuses, with the reason. */
export class ManifestStoreError extends Error {}

// ---- JUMBF (ISO 19566-5) boxes ----

interface Box {
  type: string;
  start: number;
  end: number;
  /** Where the payload begins (after the header, 8 or 16 bytes). */
  body: number;
}

const u32 = (b: Uint8Array, o: number) => ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
const type4 = (b: Uint8Array, o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);

/** The boxes between `from` and `to`, each within them. */
function boxes(b: Uint8Array, from: number, to: number): Box[] {
  const out: Box[] = [];
  for (let o = from; o < to; ) {
    if (o + 8 > to) throw new ManifestStoreError('a box header runs past its parent');
    let size = u32(b, o);
    let head = 8;
    if (size === 1) {
      if (o + 16 > to) throw new ManifestStoreError('a box header runs past its parent');
      size = u32(b, o + 8) * 2 ** 32 + u32(b, o + 12);
      head = 16;
    }
    if (size < head || o + size > to) throw new ManifestStoreError('a box runs past its parent');
    out.push({ type: type4(b, o + 4), start: o, end: o + size, body: o + head });
    o += size;
  }
  return out;
}

interface Superbox {
  box: Box;
  /** The description box (jumd). */
  description: Box;
  /** The first four bytes of its type UUID (c2pa, c2ma, c2um, c2as, c2cl, c2cs, ...). */
  kind: string;
  label: string | null;
  children: Box[];
}

function superbox(b: Uint8Array, box: Box): Superbox {
  if (box.type !== 'jumb') throw new ManifestStoreError(`a ${JSON.stringify(box.type)} box where a JUMBF superbox belongs`);
  const [description, ...children] = boxes(b, box.body, box.end);
  if (description?.type !== 'jumd' || description.body + 17 > description.end) throw new ManifestStoreError('a superbox without its description box');
  const toggles = b[description.body + 16];
  let label: string | null = null;
  if (toggles & 0x02) {
    const from = description.body + 17;
    const nul = b.subarray(from, description.end).indexOf(0);
    if (nul < 0) throw new ManifestStoreError('a superbox label without its terminator');
    label = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(from, from + nul));
  }
  return { box, description, kind: type4(b, description.body), label, children };
}

// ---- CBOR (RFC 8949), read as far as a COSE_Sign1 header needs ----

type Cbor = number | bigint | string | Uint8Array | boolean | null | undefined | Cbor[] | Map<Cbor, Cbor> | { tag: number; value: Cbor };

const MAX_CBOR_DEPTH = 16;
const MAX_CBOR_ITEMS = 4096;

/** One CBOR item of `b` (definite lengths only, as COSE requires), refusing what is malformed. */
function cborDecode(b: Uint8Array): Cbor {
  let o = 0;
  let items = 0;
  const need = (n: number) => {
    if (o + n > b.length) throw new ManifestStoreError('a CBOR item runs past its bytes');
  };
  const argument = (info: number): number => {
    if (info < 24) return info;
    const n = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
    if (n === 0) throw new ManifestStoreError('an indefinite or reserved CBOR length');
    need(n);
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + b[o + i];
    o += n;
    if (!Number.isSafeInteger(v)) throw new ManifestStoreError('a CBOR length past 2^53');
    return v;
  };
  const item = (depth: number): Cbor => {
    if (depth > MAX_CBOR_DEPTH || ++items > MAX_CBOR_ITEMS) throw new ManifestStoreError('CBOR nested or repeated past the limits');
    need(1);
    const head = b[o++];
    const major = head >> 5;
    const info = head & 31;
    if (major === 7) {
      if (info === 20 || info === 21) return info === 21;
      if (info === 22) return null;
      if (info === 23) return undefined;
      argument(info); // floats and simple values: skipped over
      return undefined;
    }
    const n = argument(info);
    switch (major) {
      case 0:
        return n;
      case 1:
        return -1 - n;
      case 2:
      case 3: {
        need(n);
        const bytes = b.subarray(o, o + n);
        o += n;
        return major === 2 ? bytes : new TextDecoder().decode(bytes);
      }
      case 4:
        return Array.from({ length: n }, () => item(depth + 1));
      case 5: {
        const m = new Map<Cbor, Cbor>();
        for (let i = 0; i < n; i++) {
          const k = item(depth + 1);
          m.set(k, item(depth + 1));
        }
        return m;
      }
      default:
        return { tag: n, value: item(depth + 1) };
    }
  };
  return item(0);
}

const COSE_SIGN1_TAG = 18;
const COSE_HEADER_X5CHAIN = 33;

/** The first certificate of a COSE_Sign1's x5chain (protected header first, as c2pa-rs looks), DER. */
function leafCertificate(cose: Uint8Array): Uint8Array {
  let msg = cborDecode(cose);
  if (msg !== null && typeof msg === 'object' && 'tag' in msg && msg.tag === COSE_SIGN1_TAG) msg = msg.value;
  if (!Array.isArray(msg) || msg.length !== 4 || !(msg[0] instanceof Uint8Array)) throw new ManifestStoreError('the claim signature is not a COSE_Sign1');
  const headers = [msg[0].length === 0 ? new Map() : cborDecode(msg[0]), msg[1]];
  for (const h of headers) {
    if (!(h instanceof Map)) continue;
    const chain = h.get(COSE_HEADER_X5CHAIN);
    const leaf = Array.isArray(chain) ? chain[0] : chain;
    if (leaf instanceof Uint8Array) return leaf;
  }
  throw new ManifestStoreError('the claim signature names no certificate (x5chain)');
}

/**
 * The active manifest's superbox (the store's last manifest, C2PA 2.x 11.1.4.1, which
 * must carry the reader's active label) and a store holding it alone.
 */
function activeManifest(b: Uint8Array, label: string): { manifest: Superbox; alone: Uint8Array } {
  const top = boxes(b, 0, b.length);
  if (top.length !== 1) throw new ManifestStoreError('a detached store is one JUMBF superbox, nothing before or after it');
  const store = superbox(b, top[0]);
  if (store.kind !== 'c2pa') throw new ManifestStoreError('the superbox is not a C2PA manifest store');
  const manifests = store.children.map((c) => superbox(b, c));
  const last = manifests[manifests.length - 1];
  if (last === undefined || last.label !== label) throw new ManifestStoreError('the active manifest is not the store\'s last');
  if (manifests.filter((m) => m.label === label).length !== 1) throw new ManifestStoreError('two manifests carry the active label');
  const description = b.subarray(store.description.start, store.description.end);
  const manifest = b.subarray(last.box.start, last.box.end);
  const alone = new Uint8Array(8 + description.length + manifest.length);
  new DataView(alone.buffer).setUint32(0, alone.length);
  alone.set([0x6a, 0x75, 0x6d, 0x62], 4); // 'jumb'
  alone.set(description, 8);
  alone.set(manifest, 8 + description.length);
  return { manifest: last, alone };
}

/** The COSE_Sign1 bytes of a manifest's claim signature box (c2cs: one cbor content box). */
function claimSignature(b: Uint8Array, manifest: Superbox): Uint8Array {
  const signatures = manifest.children.filter((c) => c.type === 'jumb').map((c) => superbox(b, c)).filter((s) => s.kind === 'c2cs');
  if (signatures.length !== 1) throw new ManifestStoreError('the active manifest has no single claim signature');
  const cbor = signatures[0].children.filter((c) => c.type === 'cbor');
  if (cbor.length !== 1) throw new ManifestStoreError('the claim signature box holds no single CBOR box');
  return b.subarray(cbor[0].body, cbor[0].end);
}

/** A serial number as the reader prints it (decimal) and as X509Certificate does (hex): equal numbers. */
function sameSerial(readerSerial: unknown, hex: string): boolean {
  if (typeof readerSerial !== 'string' || !/^[0-9a-fA-F]{1,64}$/.test(hex)) return false;
  const n = BigInt(`0x${hex}`);
  return readerSerial === n.toString(10) || readerSerial.toLowerCase() === n.toString(16);
}

/** The Ed25519 key (hex) of the certificate that signed the claim, or null when it is not Ed25519 or is not the one the reader names. */
function signerKey(cose: Uint8Array, readerSignature: { common_name?: unknown; cert_serial_number?: unknown } | undefined): string | null {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(leafCertificate(cose));
  } catch (e) {
    if (e instanceof ManifestStoreError) throw e;
    return null; // not a certificate node reads: the reader could not have validated with it either
  }
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  if (cn !== readerSignature?.common_name || !sameSerial(readerSignature?.cert_serial_number, cert.serialNumber)) return null;
  if (cert.publicKey.asymmetricKeyType !== 'ed25519') return null;
  const x = cert.publicKey.export({ format: 'jwk' }).x;
  return x === undefined ? null : Buffer.from(x, 'base64url').toString('hex');
}

/** The soft bindings of a manifest's assertions (the reader's JSON), bounded. */
function softBindingsOf(assertions: { label?: unknown; data?: unknown }[] | undefined): SoftBinding[] {
  const out: SoftBinding[] = [];
  for (const a of assertions ?? []) {
    if (typeof a?.label !== 'string' || !/^c2pa\.soft-binding(__\d+)?$/.test(a.label)) continue;
    const { alg, blocks } = (a.data ?? {}) as { alg?: unknown; blocks?: unknown };
    if (typeof alg !== 'string' || !Array.isArray(blocks) || out.length >= MAX_SOFT_BINDINGS) continue;
    const values = blocks.map((blk) => (blk as { value?: unknown })?.value).filter((v): v is string => typeof v === 'string' && v.length <= MAX_SOFT_BINDING_VALUE);
    out.push({ alg: alg.slice(0, 200), values: values.slice(0, MAX_SOFT_BINDINGS) });
  }
  return out;
}

/**
 * Reads a detached manifest store. Throws ManifestStoreError for bytes that are not one
 * (past C2PA_LIMITS, refused by the reader, malformed boxes).
 */
export async function readManifestStore(bytes: Uint8Array): Promise<ManifestStoreReading> {
  const over = measureManifestStore(bytes);
  if (over !== null) throw new ManifestStoreError(`the store is past the reader's limits (${over}; docs/c2pa.md)`);
  initReader();
  let reader: WasmReader;
  try {
    reader = await WasmReader.fromBytes(C2PA_STORE_TYPE, bytes, READER_SETTINGS);
  } catch (e) {
    throw new ManifestStoreError(`the reader refused the store: ${(e instanceof Error ? e.message : String(e)).slice(0, 200)}`);
  }
  let store: { active_manifest?: string; manifests?: Record<string, { assertions?: { label?: unknown; data?: unknown }[]; signature_info?: { common_name?: unknown; cert_serial_number?: unknown } }>; validation_state?: string; validation_status?: { code?: unknown; url?: unknown }[] };
  try {
    store = reader.manifestStore();
  } finally {
    reader.free();
  }
  const label = store.active_manifest;
  const active = label === undefined ? undefined : store.manifests?.[label];
  if (label === undefined || active === undefined) throw new ManifestStoreError('the store has no active manifest');
  const { manifest, alone } = activeManifest(bytes, label);
  const failures = [...new Set((store.validation_status ?? []).map((s) => s?.code).filter((c): c is string => typeof c === 'string'))];
  const detached = failures.filter((c) => DETACHED_CODES.has(c));
  const counted = failures.filter((c) => !DETACHED_CODES.has(c));
  const credentials = credentialsFromStore({ ...store, validation_status: counted.map((code) => ({ code })), validation_state: counted.some((c) => c !== 'signingCredential.untrusted') ? 'Invalid' : 'Valid' } as never);
  if (credentials.present !== true) throw new ManifestStoreError('the store has no active manifest');
  return {
    manifest_id: label,
    validation_state: credentials.validation_state,
    validation_codes: counted,
    detached_codes: detached,
    credentials,
    soft_bindings: softBindingsOf(active.assertions),
    signer_public_key: signerKey(claimSignature(bytes, manifest), active.signature_info),
    active_manifest: alone,
  };
}
