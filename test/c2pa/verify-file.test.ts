// Content Credentials in POST /verify-file answers (issue 21), over real HTTP on
// loopback with the pool (a worker and its decoder sandbox): every fixture's
// credentials beside unchanged spec fields; the cross-check of a record that says
// ai_generation none against credentials that declare AI generation; and part 2: a
// vault signs a photo with `--c2pa`, the copy reads back valid apart from trust with its
// provenant.record assertion intact, and verify-file finds the record from the
// assertion even in a cropped copy whose hash and fingerprint match nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, PHOTO, vaultEnv } from '../helpers/vault.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { readContentCredentials } from '../../src/media/c2pa.js';
import { writeContentCredentials } from '../../src/media/c2pa-write.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { sha256Hex } from '../../src/lib/sha256.js';
import { generateSigningKey } from '../../src/lib/identity.js';
import { verifyRecord } from '../../src/browser.js'; // @noble/curves: an Ed25519 implementation other than the server's
import type { CredentialsFound } from '../../src/lib/content-credentials.js';
import { tempDir } from '../helpers/temp.js';

const S = '/api/v1/sign-it';
const FIX = join(import.meta.dirname, '..', 'fixtures');
const fixture = (dir: string, name: string) => new Uint8Array(readFileSync(join(FIX, dir, name)));
const IPTC = 'http://cv.iptc.org/newscodes/digitalsourcetype/';
const SPEC_FIELDS = ['count', 'signatures'];

let srv: TestServer;
let token: string;

async function verifyFile(bytes: Uint8Array): Promise<any> {
  const res = await fetch(`${srv.url}${S}/verify-file`, { method: 'POST', body: new Blob([bytes as Uint8Array<ArrayBuffer>]) });
  assert.is(res.status, 200);
  return res.json();
}

/** A copy of fruits.jpg whose credentials' c2pa.created action has this digitalSourceType. */
async function fruitsDeclaring(sourceType: string): Promise<Uint8Array> {
  const key = generateSigningKey();
  return writeContentCredentials(fixture('media', 'fruits.jpg'), { title: 'fruits.jpg', digitalSourceType: sourceType, assertions: [], generator: { name: 'test', version: '1' } }, { privateKeyPkcs8: key.privateKeyPkcs8, commonName: 'test signer' });
}

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_WORKERS: '1' });
  const { user, token: t } = await srv.register();
  token = t;
  await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium');
});

test.after(async () => {
  await srv.close();
});

test('every fixture: content_credentials as the reader gives them, beside the spec\'s fields', async () => {
  for (const name of ['CA.jpg', 'CACA.jpg', 'E-sig-CA.jpg', 'XCA.jpg', 'adobe-20220124-E-clm-CAICAI.jpg', 'cloud.jpg', 'no_alg.jpg', 'no_manifest.jpg', 'video1.mp4']) {
    const bytes = fixture('c2pa', name);
    const body = await verifyFile(bytes);
    assert.equal(body.content_credentials, await readContentCredentials(bytes), name);
    assert.equal(body.conflicts, [], name);
    assert.is(body.embedded_record, null, name);
    for (const f of SPEC_FIELDS) assert.ok(f in body, `${name}: ${f}`);
    assert.is(body.count, body.signatures.length);
  }
});

test('cross-check: credentials declaring AI generation against a record saying none are a conflict', async () => {
  const fruits = fixture('media', 'fruits.jpg');
  const fileHash = sha256Hex(fruits);
  const signed = await fetch(`${srv.url}${S}/sign`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ file_hash: fileHash, intent: 'Authorship', ai_generation: 'none', perceptual_hash: await fingerprintFile(fruits) }),
  });
  assert.is(signed.status, 200);

  const ai = await verifyFile(await fruitsDeclaring(`${IPTC}trainedAlgorithmicMedia`));
  assert.is(ai.content_credentials.ai_generated, true);
  assert.is(ai.content_credentials.validation_state, 'untrusted_signer');
  assert.ok(ai.signatures.some((s: any) => s.file_hash === fileHash), 'the copy matches the record by its fingerprint');
  assert.equal(ai.conflicts.map((c: any) => [c.file_hash, c.ai_generation, c.content_credentials]), [[fileHash, 'None', `${IPTC}trainedAlgorithmicMedia`]]);

  const human = await verifyFile(await fruitsDeclaring(`${IPTC}digitalCreation`));
  assert.ok(human.signatures.some((s: any) => s.file_hash === fileHash));
  assert.is(human.content_credentials.ai_generated, false);
  assert.equal(human.conflicts, []);
});

/** `copy` cropped to its left half, re-encoded, with the copy's C2PA segments (APP11) put back after SOI. */
async function croppedKeepingCredentials(copy: Uint8Array): Promise<Uint8Array> {
  const meta = await sharp(copy).metadata();
  const cropped = new Uint8Array(await sharp(copy).extract({ left: 0, top: 0, width: Math.floor(meta.width! / 2), height: meta.height! }).jpeg({ quality: 80 }).toBuffer());
  const app11: Uint8Array[] = [];
  for (let at = 2; at + 4 <= copy.length && copy[at] === 0xff && copy[at + 1] !== 0xda;) {
    const length = (copy[at + 2] << 8) | copy[at + 3];
    if (copy[at + 1] === 0xeb) app11.push(copy.subarray(at, at + 2 + length));
    at += 2 + length;
  }
  assert.ok(app11.length > 0, 'the copy carries its manifest in APP11 segments');
  return new Uint8Array(Buffer.concat([cropped.subarray(0, 2), ...app11, cropped.subarray(2)]));
}

test('part 2: vault sign --c2pa writes a copy whose assertion carries the record; verify-file finds it from there', async () => {
  const env = vaultEnv(srv.url);
  const email = `c2pa-${Math.random().toString(36).slice(2)}@example.org`;
  await srv.register(email, { password: 'correct horse battery staple' });
  assert.is((await cli(['vault', 'init'], env)).status, 0);
  assert.is((await cli(['vault', 'link', '--email', email, '--password-stdin'], env, 'correct horse battery staple\n')).status, 0);
  const out = join(tempDir('provenant-c2pa-'), 'signed.jpg');
  const refused = await cli(['vault', 'sign', PHOTO, '--c2pa', out, '--yes'], env);
  assert.is(refused.status, 2, refused.stderr);
  assert.match(refused.stderr, /--ai-generation/);

  const run = await cli(['vault', 'sign', PHOTO, '--c2pa', out, '--ai-generation', 'generated', '--yes', '--json'], env);
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stderr, /untrusted/);
  const [{ action_hash }] = JSON.parse(run.stdout).results;
  const copy = new Uint8Array(readFileSync(out));

  // read back with the same reader: valid apart from trust, the assertion intact
  const c = (await readContentCredentials(copy)) as CredentialsFound;
  assert.equal([c.validation_state, c.validation_codes], ['untrusted_signer', ['signingCredential.untrusted']]);
  assert.equal([c.signer?.algorithm, c.ai_generated, c.actions[0].digital_source_type], ['Ed25519', true, `${IPTC}trainedAlgorithmicMedia`]);
  const embedded = c.provenant_record!;
  assert.equal([embedded.action_hash, embedded.service], [action_hash, srv.url]);
  assert.is(embedded.record.file_hash, sha256Hex(new Uint8Array(readFileSync(PHOTO))));
  assert.ok(verifyRecord({ ...(embedded.record as any), signature: embedded.signature }), 'the record re-verifies with another Ed25519 implementation');
  assert.is(c.signer?.common_name, embedded.record.signer);

  // the copy itself: found by its fingerprint and from its credentials
  const whole = await verifyFile(copy);
  assert.equal([whole.embedded_record.found_by, whole.embedded_record.action_hash, whole.embedded_record.signature_valid, whole.embedded_record.stored], ['content_credentials', action_hash, true, true]);

  // a cropped copy: its hash does not find the record; the assertion does, and so (issue 32)
  // do the local features the vault signed with it, though the global hashes no longer would
  const crop = await croppedKeepingCredentials(copy);
  const cropped = await verifyFile(crop);
  const byFeatures = cropped.signatures.find((s: any) => s.file_hash === embedded.record.file_hash);
  assert.ok(byFeatures !== undefined && byFeatures.feature_inliers >= 26, `the crop is confirmed by its features: ${JSON.stringify(byFeatures)}`);
  const byHash = await (await fetch(`${srv.url}${S}/verify?hash=${sha256Hex(crop)}`)).json();
  assert.is(byHash.count ?? byHash.signatures?.length ?? 0, 0);
  assert.is(cropped.content_credentials.validation_state, 'invalid'); // the pixels no longer match the manifest's data hash
  assert.ok(cropped.content_credentials.validation_codes.includes('assertion.dataHash.mismatch'));
  assert.equal([cropped.embedded_record.action_hash, cropped.embedded_record.signature_valid, cropped.embedded_record.action_hash_matches, cropped.embedded_record.stored], [action_hash, true, true, true]);

  // a record altered inside the assertion no longer verifies
  const forged = { ...embedded, record: { ...embedded.record, ai_generation: 'None' } };
  const { embeddedRecord } = await import('../../server/src/domain/embedded-record.js');
  const checked = await embeddedRecord(srv.deps.store, forged);
  assert.equal([checked.signature_valid, checked.stored], [false, false]);
});

test.run();
