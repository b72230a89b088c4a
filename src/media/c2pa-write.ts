// Writing Content Credentials (issue 21 part 2): a copy of a file with a C2PA manifest
// signed by an Ed25519 key (the vault's), built by the reference implementation
// (@contentauth/c2pa-wasm's WasmBuilder). Its certificate is self-issued: a one-time
// issuer, whose key is thrown away, certifies the key for C2PA's certificate profile
// (c2pa-rs refuses a self-signed end-entity certificate as signingCredential.invalid,
// and wants digitalSignature, an extended key usage and the authority key identifier).
// Readers report the signer untrusted (on no trust list), which is the truth: the
// assertions are vouched for by the Provenant record inside, not by a certificate
// authority.
//
// c2pa-wasm 0.13 signs with "direct COSE handling": its callback gets the claim's bytes
// and returns the whole COSE_Sign1 (RFC 9052), which this module builds: protected
// header {alg: EdDSA, x5chain: [leaf, issuer]}, detached payload, and an unprotected
// `pad` that makes it exactly the reserved size (the manifest's place in the file is
// fixed before signing; any other size breaks the data hash's exclusion range).
import { createPrivateKey, createPublicKey, sign as signEd25519, webcrypto } from 'node:crypto';
import { WasmBuilder } from '@contentauth/c2pa-wasm';
import { detectType } from '../lib/detect.js';
import { READER_SETTINGS, initReader } from './c2pa.js';
import { measureManifestStores } from './c2pa-limits.js';

/** Bytes reserved for the COSE signature (two certificates of about 400 bytes each, and the pad). */
const SIGNATURE_RESERVE = 8192;
const COSE_ALG_EDDSA = -8;
const COSE_HEADER_ALG = 1;
const COSE_HEADER_X5CHAIN = 33;
const COSE_SIGN1_TAG = 18;
/** id-kp-emailProtection: an extended key usage C2PA's certificate profile accepts for signers. */
const EKU_EMAIL_PROTECTION = '1.3.6.1.5.5.7.3.4';
const DAY_MS = 86_400_000;

export interface C2paSigningKey {
  /** The Ed25519 private key, PKCS #8 DER (the vault's). */
  privateKeyPkcs8: Uint8Array;
  /** The certificate's common name (the vault's agent key). */
  commonName: string;
}

export interface C2paManifest {
  /** The title of the asset in the manifest (the file's name). */
  title: string;
  /** The IPTC digitalSourceType of the c2pa.created action, or null for none declared. */
  digitalSourceType: string | null;
  /** More assertions, by label (e.g. provenant.record). */
  assertions: { label: string; data: unknown }[];
  /** The claim generator's name and version. */
  generator: { name: string; version: string };
}

// ---- CBOR (RFC 8949), the few types COSE_Sign1 needs ----

type Cbor = number | string | Uint8Array | null | Cbor[] | Map<number | string, Cbor> | { tag: number; value: Cbor };

function cborHead(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** The CBOR encoding of `v` (definite lengths, as COSE requires). */
export function cborEncode(v: Cbor): Buffer {
  if (v === null) return Buffer.from([0xf6]);
  if (typeof v === 'number') return v >= 0 ? cborHead(0, v) : cborHead(1, -1 - v);
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([cborHead(3, b.length), b]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([cborHead(2, v.length), v]);
  if (Array.isArray(v)) return Buffer.concat([cborHead(4, v.length), ...v.map(cborEncode)]);
  if (v instanceof Map) return Buffer.concat([cborHead(5, v.size), ...[...v].flatMap(([k, x]) => [cborEncode(k), cborEncode(x)])]);
  return Buffer.concat([cborHead(6, v.tag), cborEncode(v.value)]);
}

// ---- the certificate ----


/** The x5chain for `key`: its certificate, issued by a one-time issuer, and the issuer's (DER). */
export async function selfIssuedChain(key: C2paSigningKey, now = Date.now()): Promise<[Uint8Array, Uint8Array]> {
  // @peculiar/x509 registers its classes with tsyringe, which needs the Reflect metadata API at load
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as Crypto);
  const ed25519 = { name: 'Ed25519' };
  const issuerKeys = (await webcrypto.subtle.generateKey(ed25519, true, ['sign', 'verify'])) as CryptoKeyPair;
  const spki = createPublicKey(createPrivateKey({ key: Buffer.from(key.privateKeyPkcs8), format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
  const publicKey = await webcrypto.subtle.importKey('spki', spki, ed25519, true, ['verify']);
  const validity = { notBefore: new Date(now - DAY_MS), notAfter: new Date(now + 10 * 365 * DAY_MS) };
  const issuer = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01', name: 'CN=Provenant vault issuer (self-issued), O=Provenant', keys: issuerKeys, signingAlgorithm: ed25519, ...validity,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      await x509.SubjectKeyIdentifierExtension.create(issuerKeys.publicKey),
    ],
  });
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02', subject: `CN=${key.commonName}, O=Provenant vault (self-issued)`, issuer: issuer.subject,
    publicKey, signingKey: issuerKeys.privateKey, signingAlgorithm: ed25519, ...validity,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([EKU_EMAIL_PROTECTION], false),
      await x509.AuthorityKeyIdentifierExtension.create(issuerKeys.publicKey),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
    ],
  });
  return [new Uint8Array(leaf.rawData), new Uint8Array(issuer.rawData)];
}

// ---- COSE_Sign1 ----

/** The COSE_Sign1 over `claim` (detached), exactly `size` bytes long. */
export function coseSign1(claim: Uint8Array, chain: Uint8Array[], privateKeyPkcs8: Uint8Array, size: number): Uint8Array {
  const protectedHeader = cborEncode(new Map<number, Cbor>([[COSE_HEADER_ALG, COSE_ALG_EDDSA], [COSE_HEADER_X5CHAIN, chain]]));
  const toBeSigned = cborEncode(['Signature1', protectedHeader, new Uint8Array(0), claim]);
  const key = createPrivateKey({ key: Buffer.from(privateKeyPkcs8), format: 'der', type: 'pkcs8' });
  const signature = new Uint8Array(signEd25519(null, toBeSigned, key));
  const withPad = (n: number) => cborEncode({ tag: COSE_SIGN1_TAG, value: [protectedHeader, new Map([['pad', new Uint8Array(n)]]), null, signature] });
  // the pad's length header grows at 24 and 256 bytes: step down to the exact size
  for (let n = Math.max(0, size - withPad(0).length); n >= 0; n--) {
    const out = withPad(n);
    if (out.length === size) return new Uint8Array(out);
    if (out.length < size) break;
  }
  throw new Error(`the COSE signature does not fit in ${size} bytes`);
}

// ---- the builder's Blob in Node ----

/**
 * WasmBuilder.sign reads its source Blob with FileReaderSync, a browser worker API Node
 * lacks. A Blob that keeps its bytes (and slices to such Blobs) and a FileReaderSync
 * that reads them serve it; the FileReaderSync is defined only when absent.
 */
class BytesBlob extends Blob {
  constructor(readonly content: Uint8Array) {
    super([content as Uint8Array<ArrayBuffer>]);
  }

  override slice(start = 0, end = this.content.length): BytesBlob {
    return new BytesBlob(this.content.subarray(start, end));
  }
}

function ensureFileReaderSync(): void {
  const g = globalThis as { FileReaderSync?: unknown };
  if (g.FileReaderSync !== undefined) return;
  g.FileReaderSync = class {
    readAsArrayBuffer(blob: BytesBlob): ArrayBuffer {
      if (!(blob instanceof BytesBlob)) throw new TypeError('FileReaderSync here reads only the C2PA writer\'s own blobs');
      return blob.content.slice().buffer;
    }
  };
}

const MIME: Record<string, string> = { jpeg: 'image/jpeg', png: 'image/png', tiff: 'image/tiff', gif: 'image/gif', webp: 'image/webp', mp4: 'video/mp4', wav: 'audio/wav', mp3: 'audio/mpeg' };

/** A copy of `bytes` with a C2PA manifest: a c2pa.created action (with its digitalSourceType) and `manifest.assertions`, signed by `key`. */
export async function writeContentCredentials(bytes: Uint8Array, manifest: C2paManifest, key: C2paSigningKey): Promise<Uint8Array> {
  return (await writeContentCredentialsAndStore(bytes, manifest, key)).asset;
}

/**
 * As writeContentCredentials, and the manifest store the copy embeds, detached
 * (`application/c2pa`: what a manifest repository stores and serves, issue 33).
 */
export async function writeContentCredentialsAndStore(bytes: Uint8Array, manifest: C2paManifest, key: C2paSigningKey): Promise<{ asset: Uint8Array; store: Uint8Array }> {
  const format = detectType(bytes)?.format;
  const mime = format === undefined ? undefined : MIME[format];
  if (mime === undefined) throw new Error(`Content Credentials cannot be written into this file type (${format ?? 'unknown'})`);
  // the writer replaces a store the file holds: one past the reader's limits is not handed to it either
  const { over } = measureManifestStores(bytes, format!);
  if (over !== null) throw new Error(`the file's manifest store is past the reader's limits (${over}; docs/c2pa.md)`);
  initReader();
  ensureFileReaderSync();
  const chain = await selfIssuedChain(key);
  const created: Record<string, unknown> = { action: 'c2pa.created' };
  if (manifest.digitalSourceType !== null) created.digitalSourceType = manifest.digitalSourceType;
  const definition = {
    claim_generator_info: [manifest.generator],
    title: manifest.title,
    format: mime,
    assertions: [{ label: 'c2pa.actions.v2', data: { actions: [created] } }, ...manifest.assertions],
  };
  const builder = WasmBuilder.fromJson(JSON.stringify(definition), READER_SETTINGS);
  try {
    const signer = {
      alg: 'ed25519',
      reserveSize: SIGNATURE_RESERVE,
      sign: async (claim: Uint8Array) => coseSign1(claim, chain, key.privateKeyPkcs8, SIGNATURE_RESERVE) as Uint8Array<ArrayBuffer>,
    };
    const signed = (await builder.signAndGetManifestBytes(signer, [], mime, new BytesBlob(bytes))) as { asset: Uint8Array; manifest: Uint8Array };
    return { asset: signed.asset, store: signed.manifest };
  } finally {
    builder.free();
  }
}
