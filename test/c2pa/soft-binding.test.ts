// Issue 33: Provenant as a C2PA manifest repository behind the Soft Binding Resolution
// API, over real HTTP on loopback with the pool (a worker, its decoder sandbox and the
// reference reader), on SQLite and (test/postgres/suites.test.ts) PostgreSQL. End to end
// for a real photo and a real audio track: `vault sign --c2pa` writes the copy and stores
// its manifest; a stripped copy (re-encoded, resized) finds it through byContent and
// verify-file; GET /manifests gives bytes the reference reader validates, whose soft
// binding is the original's ISCC (provenant's, and iscc-core's where Python has it). A
// manifest written with the reference library's builder is found by byBinding. The
// repository refuses what it must (another signer, an unknown record, not a store), and
// every answer is checked against the C2PA OpenAPI document itself (helpers/c2pa-openapi.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, linkedVaultEnv, PHOTO, ROOT, signWithCredentials } from '../helpers/vault.js';
import { tempDir } from '../helpers/temp.js';
import { c2paAnswerProblem } from '../helpers/c2pa-openapi.js';
import { readManifestStore } from '../../src/media/c2pa-store.js';
import { writeContentCredentialsAndStore } from '../../src/media/c2pa-write.js';
import { isccOfFile } from '../../src/media/iscc.js';
import { openVault, signContent, type Vault } from '../../src/vault/vault.js';
import { ProvenantClient } from '../../src/sdk/client.js';
import { draftRecords } from '../../src/vault/sign.js';
import { generateSigningKey } from '../../src/lib/identity.js';
import { agentKeyFromPublicKey } from '../../src/lib/keys.js';
import { isccContentUnit } from '../../src/lib/records.js';
import { isccFromBytes, isccToBytes } from '../../src/lib/iscc-codec.js';
import { PROVENANT_RECORD_LABEL } from '../../src/lib/content-credentials.js';
import { canonicalRecordBytes } from '../../src/lib/records.js';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const C = '/c2pa/v1';
const S = '/api/v1/sign-it';
const BRIDGE = join(ROOT, 'test/fixtures/pdq/images/reg-test-input/dih/bridge-1-original.jpg');
const AUDIO = join(ROOT, 'test/fixtures/audio/frontiers-25s.mp3');

let srv: TestServer;
let alice: { env: Record<string, string>; vault: Vault };

interface Answer { status: number; contentType: string; body: Uint8Array; json: any }

/** A request to the API, its answer checked against the C2PA document (statuses it does not declare only when named). */
async function api(method: string, path: string, init: { body?: BodyInit; type?: string; extra?: number[] } = {}): Promise<Answer> {
  const res = await fetch(`${srv.url}${C}${path}`, { method, body: init.body, headers: init.type ? { 'content-type': init.type } : {} });
  const body = new Uint8Array(await res.arrayBuffer());
  const contentType = res.headers.get('content-type') ?? '';
  assert.is(c2paAnswerProblem(method, path.split('?')[0], { status: res.status, contentType, body }, init.extra), null, 'the answer conforms to the C2PA OpenAPI document');
  let json: any = null;
  if (contentType.startsWith('application/json')) json = JSON.parse(new TextDecoder().decode(body));
  return { status: res.status, contentType, body, json };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A vault linked to a fresh premium account (more than the free tier's two signs a month). */
async function linkedVault(): Promise<{ env: Record<string, string>; vault: Vault }> {
  const env = await linkedVaultEnv(srv, 'premium');
  return { env, vault: await openVault(env.PROVENANT_VAULT_KEY, env) };
}

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_WORKERS: '1' });
  alice = await linkedVault();
});

test.after(async () => {
  await srv.close();
});

test('the C2PA document check refuses what the document does not allow', () => {
  const json = (v: unknown) => ({ status: 200, contentType: 'application/json', body: new TextEncoder().encode(JSON.stringify(v)) });
  assert.is(c2paAnswerProblem('GET', '/matches/byBinding', json({ matches: [{ manifestId: 'urn:c2pa:x', similarityScore: 70 }] })), null);
  assert.match(c2paAnswerProblem('GET', '/matches/byBinding', json({ matches: [{ manifestId: 7 }] }))!, /manifestId/);
  assert.match(c2paAnswerProblem('GET', '/matches/byBinding', json({ matches: [], extra: 1 }))!, /additional/);
  assert.match(c2paAnswerProblem('GET', '/matches/byBinding', json({ matches: [{ manifestId: 'x', similarityScore: 101 }] }))!, /maximum|<= 100/);
  assert.match(c2paAnswerProblem('POST', '/matches/byContent', { ...json({}), status: 404 })!, /not declared/);
  assert.is(c2paAnswerProblem('POST', '/matches/byContent', { ...json({}), status: 400 }, [400]), null);
  assert.match(c2paAnswerProblem('GET', '/manifests/urn:c2pa:x', { status: 200, contentType: 'application/json', body: new Uint8Array() })!, /content type/);
});

test('GET /services/supportedAlgorithms: io.iscc.v0 among the fingerprints', async () => {
  const res = await api('GET', '/services/supportedAlgorithms');
  assert.is(res.status, 200);
  assert.equal(res.json, { watermarks: [], fingerprints: [{ alg: 'io.iscc.v0' }] });
});

test('a photo end to end: vault sign --c2pa, stripped copy, byContent, the manifest, its soft binding', async () => {
  const original = new Uint8Array(readFileSync(PHOTO));
  const { copy, action_hash, manifest_id } = await signWithCredentials(alice.env, PHOTO, 'jpg');
  // stripped: resized to 80 % and re-encoded, no metadata kept
  const meta = await sharp(copy).metadata();
  const stripped = new Uint8Array(await sharp(copy).resize(Math.round(meta.width! * 0.8)).jpeg({ quality: 85 }).toBuffer());
  const verified = await (await fetch(`${srv.url}${S}/verify-file`, { method: 'POST', body: new Blob([stripped as Uint8Array<ArrayBuffer>]) })).json();
  assert.is(verified.content_credentials.present, false, 'the copy carries no credentials');

  const found = await api('POST', '/matches/byContent', { body: new Blob([stripped as Uint8Array<ArrayBuffer>]), type: 'image/jpeg' });
  assert.is(found.status, 200);
  assert.is(found.json.matches[0]?.manifestId, manifest_id, JSON.stringify(found.json));
  assert.ok(found.json.matches[0].similarityScore >= 60);

  const got = await api('GET', `/manifests/${encodeURIComponent(manifest_id)}`);
  assert.is(got.status, 200);
  assert.is(got.contentType, 'application/c2pa');
  const reading = await readManifestStore(got.body);
  assert.equal([reading.manifest_id, reading.validation_state, reading.validation_codes], [manifest_id, 'untrusted_signer', ['signingCredential.untrusted']]);
  assert.equal(reading.detached_codes, ['assertion.dataHash.mismatch'], 'only the hard binding, which needs the asset, fails');
  assert.is(reading.credentials.provenant_record?.action_hash, action_hash);
  const iscc = await isccOfFile(original);
  assert.equal(reading.soft_bindings, [{ alg: 'io.iscc.v0', values: [iscc.content!.code] }], 'the soft binding is the original\'s Content-Code');

  // the active manifest alone: here the store's only manifest, a store the reader reads the same
  const active = await api('GET', `/manifests/${encodeURIComponent(manifest_id)}?returnActiveManifest=true`);
  assert.is(active.status, 200);
  assert.is((await readManifestStore(active.body)).manifest_id, manifest_id);

  // verify-file: the stripped copy's recovered credentials
  assert.equal(verified.recovered_credentials.map((r: any) => [r.manifest_id, r.action_hash, r.validation_state, r.soft_binding_matches]), [[manifest_id, action_hash, 'untrusted_signer', true]]);
  // byBinding by the original's code finds it too
  const byBinding = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(b64(iscc.content!.code))}`);
  assert.equal(byBinding.json.matches.map((m: any) => m.manifestId), [manifest_id]);

  // provenant c2pa recover: the same manifest through the standard routes, written to --out
  const dir = tempDir('provenant-sb-recover-');
  writeFileSync(join(dir, 'stripped.jpg'), stripped);
  const recovered = await cli(['c2pa', 'recover', join(dir, 'stripped.jpg'), '--server', srv.url, '--out', join(dir, 'm.c2pa'), '--json'], alice.env);
  assert.is(recovered.status, 0, recovered.stderr);
  const report = JSON.parse(recovered.stdout);
  assert.equal([report.manifest_id, report.server, report.manifest.validation_state, report.manifest.soft_binding_matches, report.manifest.provenant_record.signature_valid], [manifest_id, `${srv.url}/c2pa/v1`, 'untrusted_signer', true, true]);
  assert.ok(Buffer.from(readFileSync(join(dir, 'm.c2pa'))).equals(Buffer.from(got.body)), '--out holds the bytes the repository serves');
  const text = await cli(['c2pa', 'recover', join(dir, 'stripped.jpg'), '--server', `${srv.url}/c2pa/v1`], alice.env);
  assert.is(text.status, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`recovered ${manifest_id}`));
  assert.match(text.stdout, /matches this file/);
  sharedStripped = { path: join(dir, 'stripped.jpg'), manifest: got.body, manifest_id };
});

let sharedStripped: { path: string; manifest: Uint8Array; manifest_id: string } | undefined;

test('provenant c2pa recover asks another repository through the standard routes only (one that resolves no ISCC: byContent)', async () => {
  assert.ok(sharedStripped !== undefined);
  const { createServer } = await import('node:http');
  const seen: string[] = [];
  const other = createServer((req, res) => {
    seen.push(`${req.method} ${req.url!.split('?')[0]}`);
    req.resume();
    req.on('end', () => {
      if (req.url === '/sbr/v1/services/supportedAlgorithms') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ watermarks: [{ alg: 'com.example.wm' }], fingerprints: [] }));
      if (req.method === 'POST' && req.url === '/sbr/v1/matches/byContent') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ matches: [{ manifestId: sharedStripped!.manifest_id, similarityScore: 77 }] }));
      if (req.url === `/sbr/v1/manifests/${encodeURIComponent(sharedStripped!.manifest_id)}`) return res.writeHead(200, { 'content-type': 'application/c2pa' }).end(sharedStripped!.manifest);
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}/sbr/v1`;
    const run = await cli(['c2pa', 'recover', sharedStripped!.path, '--server', url, '--json'], alice.env);
    assert.is(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal([report.found_by, report.manifest_id, report.manifest.soft_binding_matches], ['byContent', sharedStripped!.manifest_id, true]);
    assert.equal(seen, ['GET /sbr/v1/services/supportedAlgorithms', 'POST /sbr/v1/matches/byContent', `GET /sbr/v1/manifests/${encodeURIComponent(sharedStripped!.manifest_id)}`]);
    // a picture nobody signed: exit 1, saying so
    const unsigned = join(tempDir('provenant-sb-none-'), 'unsigned.png');
    const pixels = Buffer.from(Array.from({ length: 256 * 256 * 3 }, (_, i) => ((i * 2654435761) >>> 13) & 0xff));
    await sharp(pixels, { raw: { width: 256, height: 256, channels: 3 } }).png().toFile(unsigned);
    const none = await cli(['c2pa', 'recover', unsigned, '--server', srv.url], alice.env);
    assert.is(none.status, 1, none.stderr);
    assert.match(none.stdout, /holds no manifest/);
    const unreachable = await cli(['c2pa', 'recover', PHOTO, '--server', 'http://127.0.0.1:9/c2pa/v1'], alice.env);
    assert.is(unreachable.status, 1);
    assert.match(unreachable.stderr, /cannot reach/);
  } finally {
    other.close();
  }
});

test('an audio track end to end: vault sign --c2pa, re-encoded copy, byContent and the manifest', async () => {
  const { copy, manifest_id } = await signWithCredentials(alice.env, AUDIO, 'mp3');
  const dir = tempDir('provenant-sb-audio-');
  const signedPath = join(dir, 'signed.mp3');
  const strippedPath = join(dir, 'stripped.mp3');
  writeFileSync(signedPath, copy);
  execFileSync(ffmpegPath(), ['-v', 'error', '-i', signedPath, '-map_metadata', '-1', '-map', '0:a', '-b:a', '96k', '-ar', '44100', strippedPath]);
  const stripped = new Uint8Array(readFileSync(strippedPath));
  const found = await api('POST', '/matches/byContent', { body: new Blob([stripped as Uint8Array<ArrayBuffer>]), type: 'audio/mpeg' });
  assert.is(found.status, 200);
  assert.ok(found.json.matches.some((m: any) => m.manifestId === manifest_id), JSON.stringify(found.json));
  const got = await api('GET', `/manifests/${encodeURIComponent(manifest_id)}`);
  const reading = await readManifestStore(got.body);
  assert.is(reading.validation_state, 'untrusted_signer');
  assert.equal(reading.soft_bindings[0].values, [(await isccOfFile(new Uint8Array(readFileSync(AUDIO)))).content!.code]);
});

/**
 * A manifest store written by the reference library's builder (c2pa-wasm's WasmBuilder,
 * through writeContentCredentialsAndStore, which hands it the definition and signs the
 * COSE with `key`): provenant.record for `record` and an io.iscc.v0 soft binding.
 */
async function builderManifest(asset: Uint8Array, record: { record: Record<string, unknown>; signature: string; action_hash: string }, softBinding: string, key: { privateKeyPkcs8: Uint8Array; commonName: string }): Promise<Uint8Array> {
  const assertions = [
    { label: PROVENANT_RECORD_LABEL, data: { record: new TextDecoder().decode(canonicalRecordBytes(record.record as never)), signature: record.signature, action_hash: record.action_hash, service: srv.url } },
    { label: 'c2pa.soft-binding', data: { alg: 'io.iscc.v0', blocks: [{ scope: {}, value: softBinding }], pad: [0] } },
  ];
  const written = await writeContentCredentialsAndStore(asset, { title: 'bridge.jpg', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture', assertions, generator: { name: 'soft-binding test', version: '1' } }, key);
  return written.store;
}

async function publishStore(store: Uint8Array, type = 'application/c2pa'): Promise<{ status: number; json: any }> {
  const res = await fetch(`${srv.url}${S}/manifests`, { method: 'POST', headers: { 'content-type': type }, body: new Blob([store as Uint8Array<ArrayBuffer>]) });
  return { status: res.status, json: await res.json() };
}

/** A record for `file` signed by `vault` and published (features and all, as the vault does). */
async function publishRecord(vault: Vault, file: string): Promise<{ record: Record<string, unknown>; signature: string; action_hash: string }> {
  const [draft] = await draftRecords([file], { intent: 'Authorship', ai_generation: 'none' }, () => {});
  const signed = signContent(vault, draft.content);
  const answer = await new ProvenantClient({ baseUrl: srv.url }).publish(signed.record, null, draft.features);
  assert.is(answer.action_hash, signed.action_hash);
  const { signature, ...record } = signed.record;
  return { record, signature, action_hash: signed.action_hash };
}

test('a manifest written by the reference library\'s builder, stored for a record, is found by byBinding (GET and POST)', async () => {
  const bridge = new Uint8Array(readFileSync(BRIDGE));
  const record = await publishRecord(alice.vault, BRIDGE);
  const code = isccContentUnit(record.record.iscc as string)!;
  const store = await builderManifest(bridge, record, code, { privateKeyPkcs8: alice.vault.privateKey, commonName: alice.vault.key.agentPubKey });
  const stored = await publishStore(store);
  assert.is(stored.status, 201, JSON.stringify(stored.json));
  assert.is(stored.json.action_hash, record.action_hash);
  const again = await publishStore(store);
  assert.equal([again.status, again.json.manifest_id], [200, stored.json.manifest_id], 'the same bytes again: stored before');

  const get = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(b64(code))}&maxResults=5`);
  assert.equal(get.json.matches, [{ manifestId: stored.json.manifest_id, similarityScore: 100 }]);
  const post = await api('POST', '/matches/byBinding?maxResults=5', { body: JSON.stringify({ alg: 'io.iscc.v0', value: b64(code) }), type: 'application/json' });
  assert.equal(post.json, get.json);
  // the code's binary form, and its text without the prefix, are the same query
  const binary = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(Buffer.from(isccToBytes(code)).toString('base64'))}`);
  assert.equal(binary.json, get.json);
  const bare = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(b64(code.slice(5)))}`);
  assert.equal(bare.json, get.json);
  // the value unescaped in the URL (a client that forgot to: a '+' arrives as a space) is read the same
  const raw = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${b64(code)}`);
  assert.equal(raw.json, get.json);
  // a code a few bits away still finds it; far away, not
  const near = flipBits(code, 3);
  assert.equal((await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(b64(near))}`)).json.matches.map((m: any) => m.manifestId), [stored.json.manifest_id]);
  const far = flipBits(code, 20);
  assert.equal((await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(b64(far))}`)).json.matches, []);
});

/** A Content-Code with its first `n` body bits flipped. */
function flipBits(code: string, n: number): string {
  const bytes = isccToBytes(code);
  for (let i = 0; i < n; i++) bytes[2 + (i >> 3)] ^= 0x80 >> (i & 7);
  return isccFromBytes(bytes);
}

test('the repository refuses: another signer, an unknown record, no record assertion, not a store, wrong type, too large', async () => {
  const bridge = new Uint8Array(readFileSync(BRIDGE));
  const record = await publishRecord(alice.vault, BRIDGE);
  const code = isccContentUnit(record.record.iscc as string)!;
  // Mallory copies Alice's record into a manifest he signs
  const mallory = generateSigningKey();
  const forged = await builderManifest(bridge, record, code, { privateKeyPkcs8: mallory.privateKeyPkcs8, commonName: alice.vault.key.agentPubKey });
  const refused = await publishStore(forged);
  assert.equal([refused.status, refused.json.error], [403, 'manifest_signer_mismatch']);
  // a record this server does not store (signed by Mallory's own key, never published)
  const malloryVault = { ...alice.vault, privateKey: mallory.privateKeyPkcs8, key: { ...alice.vault.key, agentPubKey: agentKeyFromPublicKey(mallory.publicKey) } } as Vault;
  const [draft] = await draftRecords([BRIDGE], { intent: 'Authorship', ai_generation: 'none' }, () => {});
  const unpublished = signContent(malloryVault, draft.content);
  const { signature, ...fields } = unpublished.record;
  const unknown = await builderManifest(bridge, { record: fields, signature, action_hash: unpublished.action_hash }, code, { privateKeyPkcs8: mallory.privateKeyPkcs8, commonName: malloryVault.key.agentPubKey });
  const notStored = await publishStore(unknown);
  assert.equal([notStored.status, notStored.json.error], [404, 'record_not_found']);
  // no provenant.record: a plain manifest
  const plain = (await writeContentCredentialsAndStore(bridge, { title: 'b.jpg', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture', assertions: [], generator: { name: 't', version: '1' } }, { privateKeyPkcs8: alice.vault.privateKey, commonName: 'x' })).store;
  const noRecord = await publishStore(plain);
  assert.equal([noRecord.status, noRecord.json.error], [400, 'invalid_manifest']);
  assert.match(noRecord.json.message, /provenant\.record/);
  // a whole JPEG, random bytes, a truncated store
  for (const bytes of [bridge, new Uint8Array(4096).fill(7), plain.subarray(0, plain.length - 100)]) {
    const r = await publishStore(bytes);
    assert.equal([r.status, r.json.error], [400, 'invalid_manifest'], JSON.stringify(r.json));
  }
  assert.equal((await publishStore(plain, 'application/json')).status, 415);
  const huge = await publishStore(new Uint8Array((1 << 20) + 1));
  assert.equal([huge.status, huge.json.error], [413, 'payload_too_large']);
  const empty = await publishStore(new Uint8Array(0));
  assert.equal([empty.status, empty.json.error], [400, 'no_file']);
});

test('malformed and missing parameters are 400 naming which; unknown ids 404; long queries 414', async () => {
  const code = b64((await isccOfFile(new Uint8Array(readFileSync(PHOTO)))).content!.code);
  const cases: [string, string, string | undefined][] = [
    ['/matches/byBinding?value=QUJD', 'invalid_parameter', 'alg'],
    ['/matches/byBinding?alg=io.iscc.v0', 'invalid_parameter', 'value'],
    ['/matches/byBinding?alg=com.adobe.trustmark.Q&value=QUJD', 'unsupported_algorithm', 'alg'],
    ['/matches/byBinding?alg=io.iscc.v0&value=***', 'invalid_parameter', 'value'],
    ['/matches/byBinding?alg=io.iscc.v0&value=QUJD', 'invalid_parameter', 'value'],
    ['/matches/byBinding?alg=io.iscc.v0&alg=io.iscc.v0&value=QUJD', 'invalid_parameter', 'alg'],
    [`/matches/byBinding?alg=io.iscc.v0&value=${b64('ISCC:KACYPXW445FTYNJ3CYSXHAFJMA2HUWULUNRFE3BLHRSCXYH2M5AEGQY')}`, 'invalid_parameter', 'value'], // an ISCC-CODE, not a Content-Code
    [`/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(code)}&maxResults=0`, 'invalid_parameter', 'maxResults'],
    [`/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(code)}&maxResults=ten`, 'invalid_parameter', 'maxResults'],
  ];
  for (const [path, error, field] of cases) {
    const res = await api('GET', path);
    assert.equal([res.status, res.json.error, res.json.field], [400, error, field], path);
  }
  const long = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${'A'.repeat(3000)}`);
  assert.equal([long.status, long.json.error], [414, 'query_too_long']);
  const notJson = await api('POST', '/matches/byBinding', { body: 'alg=x', type: 'application/xml', extra: [415] });
  assert.is(notJson.status, 415);
  const badBody = await api('POST', '/matches/byBinding', { body: JSON.stringify([1]), type: 'application/json' });
  assert.equal([badBody.status, badBody.json.field], [400, 'body']);

  for (const id of ['nonsense', 'urn:c2pa:not-a-uuid', `urn:c2pa:${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}/../x`, `urn:c2pa:${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}\u0000`, 'x'.repeat(5000)]) {
    const res = await api('GET', `/manifests/${encodeURIComponent(id)}`);
    assert.equal([res.status, res.json.error], [400, 'invalid_manifest_id'], id.slice(0, 80));
  }
  // odd spellings: a broken percent-escape, a trailing slash
  const broken = await api('GET', '/manifests/%E0%A4%A');
  assert.equal([broken.status, broken.json.error], [400, 'invalid_manifest_id']);
  const slash = await fetch(`${srv.url}/c2pa/v1/services/supportedAlgorithms/`);
  assert.is(slash.status, 200);
  const unknown = await api('GET', `/manifests/${encodeURIComponent('urn:c2pa:6a0f2b3c-1111-4222-8333-944455556666')}`);
  assert.equal([unknown.status, unknown.json.error], [404, 'not_found']);
  const badFlag = await api('GET', `/manifests/${encodeURIComponent('urn:c2pa:6a0f2b3c-1111-4222-8333-944455556666')}?returnActiveManifest=yes`);
  assert.equal([badFlag.status, badFlag.json.field], [400, 'returnActiveManifest']);

  // the store failing under a request: the document's 500, the server still up
  const manifests = srv.deps.store.manifests;
  const { bytes, bySeqs } = manifests;
  manifests.bytes = async () => { throw new Error('disk on fire'); };
  manifests.bySeqs = async () => { throw new Error('disk on fire'); };
  try {
    const failed = await api('GET', `/manifests/${encodeURIComponent('urn:c2pa:6a0f2b3c-1111-4222-8333-944455556666')}`);
    assert.equal([failed.status, failed.json.error], [500, 'internal_error']);
    assert.not.match(JSON.stringify(failed.json), /disk on fire/, 'the cause stays in the log');
    const byBinding = await api('GET', `/matches/byBinding?alg=io.iscc.v0&value=${encodeURIComponent(code)}`);
    assert.is(byBinding.status, 500);
  } finally {
    Object.assign(manifests, { bytes, bySeqs });
  }
  assert.is((await api('GET', '/services/supportedAlgorithms')).status, 200);

  // byContent: not a type we fingerprint is 415; an empty body, a bad parameter 400 (the document lists neither for this operation)
  const noise = new Uint8Array(1000).map((_, i) => (i * 151 + 7) & 0xff); // no media type, not text
  const unknownType = await api('POST', '/matches/byContent', { body: new Blob([noise]), type: 'application/octet-stream' });
  assert.equal([unknownType.status, unknownType.json.error], [415, 'unsupported_asset_type']);
  const truncated = await api('POST', '/matches/byContent', { body: new Blob([new Uint8Array(readFileSync(PHOTO)).subarray(0, 600)]), type: 'image/jpeg' });
  assert.equal([truncated.status, truncated.json.error], [415, 'unsupported_asset_type']);
  // text is an asset type with an ISCC Content-Code (Text): matched, nothing found
  const text = await api('POST', '/matches/byContent', { body: 'A plain text that nobody signed here. '.repeat(20), type: 'text/plain' });
  assert.equal([text.status, text.json], [200, { matches: [] }]);
  const empty = await api('POST', '/matches/byContent', { body: new Blob([]), type: 'image/jpeg', extra: [400] });
  assert.equal([empty.status, empty.json.error], [400, 'no_file']);
  const hint = await api('POST', '/matches/byContent?hintAlg=io.iscc.v0', { body: new Blob([new Uint8Array(readFileSync(PHOTO))]), type: 'image/jpeg', extra: [400] });
  assert.equal([hint.status, hint.json.field], [400, 'hintValue']);
  const alg = await api('POST', '/matches/byContent?alg=org.example.none', { body: new Blob([new Uint8Array(readFileSync(PHOTO))]), type: 'image/jpeg', extra: [400] });
  assert.equal([alg.status, alg.json.error], [400, 'unsupported_algorithm']);
});

test.run();
