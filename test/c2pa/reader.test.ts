// Reading Content Credentials (issue 21) from the reference implementation's own test
// files (test/fixtures/c2pa, copied from contentauth/c2pa-rs with its README). The
// expected answers are that README's table of what the reference reader reports
// (manifests, validation state, codes), mapped to our states; the other fields are the
// fixtures' known contents (C2PA's test signing certificate, their ingredients).
// Each file is read in-process and through the decoder sandbox (the pool's path), and
// must give the same answer both ways.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readContentCredentials, credentialsFromStore, credentialsFromReaderError } from '../../src/media/c2pa.js';
import { DecoderSandbox } from '../../src/media/sandbox.js';
import { integrityReport } from '../../src/media/integrity.js';
import { aiGenerationConflicts, isAiSourceType, type ContentCredentials, type CredentialsFound } from '../../src/lib/content-credentials.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const c2paFile = (name: string) => new Uint8Array(readFileSync(join(FIX, 'c2pa', name)));

/** The fixture README's table: manifests, the reader's state (ours), and the codes it names. */
const EXPECTED: Record<string, { state: string; manifests: number | null; codes: string[] }> = {
  'CA.jpg': { state: 'untrusted_signer', manifests: 1, codes: ['signingCredential.untrusted'] },
  'CACA.jpg': { state: 'untrusted_signer', manifests: 2, codes: ['signingCredential.untrusted'] },
  'E-sig-CA.jpg': { state: 'invalid', manifests: 1, codes: ['claimSignature.mismatch'] },
  'XCA.jpg': { state: 'invalid', manifests: 1, codes: ['assertion.dataHash.mismatch'] },
  'adobe-20220124-E-clm-CAICAI.jpg': { state: 'invalid', manifests: 2, codes: ['ingredient.manifest.missing', 'assertion.hashedURI.mismatch'] },
  'cloud.jpg': { state: 'remote', manifests: null, codes: [] },
  'no_alg.jpg': { state: 'unknown_algorithm', manifests: null, codes: ['algorithm.unsupported'] },
  'video1.mp4': { state: 'untrusted_signer', manifests: 2, codes: ['signingCredential.untrusted'] },
};

function found(c: ContentCredentials, name: string): CredentialsFound {
  assert.is(c.present, true, `${name}: ${JSON.stringify(c)}`);
  return c as CredentialsFound;
}

const sandbox = new DecoderSandbox({ idleMs: 2000 });
test.after(() => sandbox.close());

for (const [name, want] of Object.entries(EXPECTED)) {
  test(`${name}: ${want.state}, ${want.manifests ?? 'no'} manifest(s), codes ${want.codes.join(', ') || 'none'}`, async () => {
    const c = found(await readContentCredentials(c2paFile(name)), name);
    assert.is(c.validation_state, want.state);
    assert.is(c.manifests, want.manifests);
    for (const code of want.codes) assert.ok(c.validation_codes.includes(code), `${name}: ${code} in ${c.validation_codes}`);
    // a valid chain names nothing but the test certificate's lack of trust
    if (want.state === 'untrusted_signer') assert.equal(c.validation_codes, ['signingCredential.untrusted']);
    assert.equal(await sandbox.contentCredentials(c2paFile(name)), c, `${name}: the sandbox's answer is the in-process one`);
  });
}

test('no_manifest.jpg: no Content Credentials', async () => {
  assert.equal(await readContentCredentials(c2paFile('no_manifest.jpg')), { present: false });
  assert.equal(await sandbox.contentCredentials(c2paFile('no_manifest.jpg')), { present: false });
});

test('CA.jpg: the active manifest: claim generator, signer, time, actions, ingredients', async () => {
  const c = found(await readContentCredentials(c2paFile('CA.jpg')), 'CA.jpg');
  assert.is(c.claim_generator, 'make_test_images/0.33.1 c2pa-rs/0.33.1');
  assert.equal(c.signer, { issuer: 'C2PA Test Signing Cert', common_name: 'C2PA Signer', algorithm: 'Ps256' });
  assert.is(c.signed_at, '2024-08-06T21:53:37+00:00');
  assert.equal(c.actions.map((a) => a.action), ['c2pa.opened', 'c2pa.color_adjustments']);
  assert.equal([c.created, c.edited, c.ai_generated], [false, true, false]);
  assert.equal(c.ingredients, { count: 1, titles: ['A.jpg'] });
  assert.is(c.remote_url, null);
});

test('CACA.jpg: the active manifest is the outer one, whose ingredient is CA.jpg', async () => {
  const c = found(await readContentCredentials(c2paFile('CACA.jpg')), 'CACA.jpg');
  assert.equal(c.ingredients, { count: 1, titles: ['CA.jpg'] });
  assert.is(c.claim_generator, 'make_test_images/0.67.1');
});

test('adobe-20220124-E-clm-CAICAI.jpg: two ingredients, placed and resized', async () => {
  const c = found(await readContentCredentials(c2paFile('adobe-20220124-E-clm-CAICAI.jpg')), 'CAICAI');
  assert.equal(c.ingredients, { count: 2, titles: ['A.jpg', 'CAI.jpg'] });
  assert.ok(c.actions.some((a) => a.action === 'c2pa.placed') && c.actions.some((a) => a.action === 'c2pa.resized'));
});

test('cloud.jpg: remote manifest, not fetched, with its URL', async () => {
  const c = found(await readContentCredentials(c2paFile('cloud.jpg')), 'cloud.jpg');
  assert.is(c.remote_url, 'https://cai-manifests.adobe.com/manifests/adobe-urn-uuid-5f37e182-3687-462e-a7fb-573462780391');
  assert.is(c.message, 'remote manifest, not fetched');
});

test('video1.mp4: an MP4 with an ingredient chain, signed with Es256', async () => {
  const c = found(await readContentCredentials(c2paFile('video1.mp4')), 'video1.mp4');
  assert.is(c.signer?.algorithm, 'Es256');
  assert.is(c.claim_generator, 'TestApp c2patool/0.6.2 c2pa-rs/0.28.2');
});

test('media without credentials and formats that carry none: present false', async () => {
  for (const name of ['media/fruits.jpg', 'media/cat.gif', 'media/cockatoo.mp4', 'media/cockatoo-vp8.webm', 'audio/frontiers-25s.mp3']) {
    assert.equal(await readContentCredentials(new Uint8Array(readFileSync(join(FIX, name)))), { present: false }, name);
  }
  assert.equal(await readContentCredentials(new TextEncoder().encode('not a media file')), { present: false });
  assert.equal(await readContentCredentials(new Uint8Array(0)), { present: false });
});

test('damaged credentials give an answer, never a throw: truncated, bytes flipped in the manifest', async () => {
  const ca = c2paFile('CA.jpg');
  // the reader cannot parse a JPEG cut short: nothing is claimed either way
  for (const cut of [200, 2000, 20_000, 60_000]) {
    const c = await readContentCredentials(ca.slice(0, cut));
    assert.is(c.present, null, `cut at ${cut}: ${JSON.stringify(c)}`);
    assert.match((c as { message: string }).message, /could not parse/);
  }
  // the manifest whole, the pixels cut: the data hash fails
  const tail = found(await readContentCredentials(ca.slice(0, ca.length - 10)), 'cut at the end');
  assert.equal([tail.validation_state, tail.validation_codes.includes('assertion.dataHash.mismatch')], ['invalid', true]);
  const flipped = ca.slice();
  const at = Buffer.from(flipped).indexOf('c2pa.assertions');
  for (let i = at; i < at + 400; i += 7) flipped[i] ^= 0x5a;
  const c = found(await readContentCredentials(flipped), 'flipped');
  assert.is(c.validation_state, 'invalid');
  assert.ok(c.validation_codes.length > 0);
});

test('the integrity report carries the file\'s content_credentials', async () => {
  const report = await integrityReport(c2paFile('XCA.jpg'));
  assert.is((report.content_credentials as CredentialsFound).validation_state, 'invalid');
  assert.ok((report.content_credentials as CredentialsFound).validation_codes.includes('assertion.dataHash.mismatch'));
  assert.equal((await sandbox.integrityReport(c2paFile('no_manifest.jpg'))).content_credentials, { present: false });
});

/** A manifest store as the reader returns it (c2pa-rs Reader JSON), with one actions assertion. */
function store(actions: object[], validation_state = 'Valid', codes = ['signingCredential.untrusted']) {
  return {
    active_manifest: 'urn:m1',
    manifests: { 'urn:m1': { claim_generator_info: [{ name: 'Image Maker', version: '2.0' }], assertions: [{ label: 'c2pa.actions.v2', data: { actions } }] } },
    validation_state,
    validation_status: codes.map((code) => ({ code })),
  };
}

test('actions: created, edited and AI-generated per digitalSourceType (IPTC)', () => {
  const iptc = 'http://cv.iptc.org/newscodes/digitalsourcetype/';
  const made = found(credentialsFromStore(store([{ action: 'c2pa.created', digitalSourceType: `${iptc}trainedAlgorithmicMedia` }])), 'made');
  assert.equal([made.created, made.edited, made.ai_generated], [true, false, true]);
  assert.is(made.claim_generator, 'Image Maker/2.0');
  const photo = found(credentialsFromStore(store([{ action: 'c2pa.created', digitalSourceType: `${iptc}digitalCapture` }, { action: 'c2pa.cropped' }])), 'photo');
  assert.equal([photo.created, photo.edited, photo.ai_generated], [true, true, false]);
  const composite = found(credentialsFromStore(store([{ action: 'c2pa.placed', digitalSourceType: `${iptc}compositeWithTrainedAlgorithmicMedia` }])), 'composite');
  assert.is(composite.ai_generated, true);
  for (const t of ['trainedAlgorithmicMedia', 'compositeWithTrainedAlgorithmicMedia', 'algorithmicMedia', 'compositeSynthetic']) assert.ok(isAiSourceType(iptc + t), t);
  for (const t of ['digitalCapture', 'humanEdits', 'algorithmicallyEnhanced', 'screenCapture', '']) assert.not.ok(isAiSourceType(iptc + t), t);
});

test('states: Trusted is valid; Valid without the untrusted code is valid; Invalid is invalid', () => {
  assert.is(found(credentialsFromStore(store([], 'Trusted', [])), 't').validation_state, 'valid');
  assert.is(found(credentialsFromStore(store([], 'Valid', [])), 'v').validation_state, 'valid');
  assert.is(found(credentialsFromStore(store([], 'Invalid', ['signingCredential.untrusted', 'assertion.dataHash.mismatch'])), 'i').validation_state, 'invalid');
  assert.equal(credentialsFromStore({ manifests: {} }), { present: false });
});

test('a hostile manifest\'s lists are bounded', () => {
  const many = Array.from({ length: 5000 }, (_, i) => ({ action: `c2pa.edited.${'x'.repeat(i % 500)}` }));
  const c = found(credentialsFromStore(store(many)), 'many');
  assert.is(c.actions.length, 50);
  assert.ok(c.actions.every((a) => a.action.length <= 200));
});

test('reader errors: remote URL, unknown algorithm, no JUMBF, anything else', () => {
  const remote = found(credentialsFromReaderError('C2pa(RemoteManifestUrl("https://example.com/m"))'), 'remote');
  assert.equal([remote.validation_state, remote.remote_url], ['remote', 'https://example.com/m']);
  assert.is(found(credentialsFromReaderError('C2pa(UnknownAlgorithm)'), 'alg').validation_state, 'unknown_algorithm');
  assert.equal(credentialsFromReaderError('C2pa(JumbfNotFound)'), { present: false });
  const other = found(credentialsFromReaderError(new Error('C2pa(JumbfParseError(InvalidBoxHeader))')), 'other');
  assert.equal([other.validation_state, other.validation_codes], ['invalid', ['general.error']]);
});

test('cross-check: credentials declaring AI generation conflict with records that say none', () => {
  const iptc = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';
  const ai = credentialsFromStore(store([{ action: 'c2pa.created', digitalSourceType: iptc }]));
  const records = [
    { file_hash: 'a'.repeat(64), ai_generation: 'None' },
    { file_hash: 'b'.repeat(64), ai_generation: 'Generated' },
    { file_hash: 'c'.repeat(64), ai_generation: null },
  ];
  const conflicts = aiGenerationConflicts(ai, records);
  assert.equal(conflicts.map((c) => [c.file_hash, c.ai_generation, c.content_credentials]), [['a'.repeat(64), 'None', iptc]]);
  assert.equal(aiGenerationConflicts(credentialsFromStore(store([{ action: 'c2pa.created' }])), records), []);
  assert.equal(aiGenerationConflicts({ present: false }, records), []);
});

test.run();
