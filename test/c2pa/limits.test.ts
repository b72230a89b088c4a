// Bounds on reading Content Credentials (issue 25 item 15): the reader's work grows
// with the square of the assertions, so a manifest store past C2PA_LIMITS is measured
// by a walk of its JUMBF boxes and not given to the reader (present null, the limit
// named); and pool.examine's credentials read has a deadline of its own, past which the
// fingerprint still answers and content_credentials says why it stopped. The stores are
// validly signed by our own writer (src/media/c2pa-write.ts) with thousands of
// assertions, in each container the writer takes (JPEG spreads them over APP11
// segments, GIF over sub-blocks); depth, manifests, ingredients and bytes are tested on
// boxes made here. The pool runs the compiled workers of dist/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readContentCredentials } from '../../src/media/c2pa.js';
import { writeContentCredentials } from '../../src/media/c2pa-write.js';
import { C2PA_LIMITS, measureManifestStores } from '../../src/media/c2pa-limits.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { createFingerprintPool } from '../../src/pool/index.js';
import { generateSigningKey } from '../../src/lib/identity.js';
import { detectType } from '../../src/lib/detect.js';
import type { CredentialsFound } from '../../src/lib/content-credentials.js';

const test = suite('c2pa/limits');
const FIX = join(import.meta.dirname, '..', 'fixtures');
const fixture = (dir: string, name: string) => new Uint8Array(readFileSync(join(FIX, dir, name)));
const key = generateSigningKey();

/** `file` with credentials whose manifest has `extra` assertions besides c2pa.actions.v2 (and the writer's c2pa.hash.data). */
function signed(file: Uint8Array, extra: number): Promise<Uint8Array> {
  const assertions = Array.from({ length: extra }, (_, i) => ({ label: `org.example.a${i}`, data: { i } }));
  return writeContentCredentials(file, {
    title: 'x', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture', assertions, generator: { name: 'limits-test', version: '1' },
  }, { privateKeyPkcs8: key.privateKeyPkcs8, commonName: 'limits test' });
}

const measure = (bytes: Uint8Array) => measureManifestStores(bytes, detectType(bytes)!.format);

test('the limits are the stated ones', () => {
  assert.equal(C2PA_LIMITS, { maxAssertions: 1000, maxIngredients: 100, maxManifests: 100, maxDepth: 8, maxBytes: 32 << 20 });
});

test('a JPEG with 3,000 assertions (over six APP11 segments) is not read: present null, the limit named', async () => {
  const big = await signed(fixture('media', 'fruits.jpg'), 3000);
  assert.ok(big.length > 6 * 65_535, 'the store spans many segments');
  const m = measure(big);
  assert.is(m.over, 'it has over 1000 assertions');
  assert.is(m.size.assertions, 1001, 'the walk stops at the limit');
  const c = await readContentCredentials(big);
  assert.equal(c, { present: null, message: "not read: the manifest store is past the reader's limits (it has over 1000 assertions; docs/c2pa.md)" });
});

test('under the limit, spread over APP11 segments, the store is measured exactly and read', async () => {
  const jpeg = await signed(fixture('media', 'fruits.jpg'), 900);
  assert.ok(jpeg.length > 2 * 65_535, 'the store spans segments');
  // 900 + c2pa.actions.v2 + c2pa.hash.data; store, manifest, assertion store, assertion
  assert.equal(measure(jpeg), { size: { stores: 1, bytes: measure(jpeg).size.bytes, manifests: 1, assertions: 902, ingredients: 0, depth: 4 }, over: null });
  const c = (await readContentCredentials(jpeg)) as CredentialsFound;
  assert.is(c.present, true);
  assert.is(c.validation_state, 'untrusted_signer');
  assert.is(c.claim_generator, 'limits-test/1');
});

test('every container the writer takes: over the limit refused, at it read', async () => {
  const files: [string, Uint8Array][] = [
    ['png', fixture('integrity', 'butterfly.png')], ['gif', fixture('media', 'cat.gif')],
    ['mp4', fixture('media', 'cockatoo.mp4')], ['wav', fixture('audio', 'machine-wars-6s.wav')], ['mp3', fixture('audio', 'frontiers-25s.mp3')],
  ];
  for (const [name, file] of files) {
    const over = await signed(file, 1100);
    assert.is(measure(over).over, 'it has over 1000 assertions', name);
    const c = await readContentCredentials(over);
    assert.is(c.present, null, name);
    assert.match((c as { message: string }).message, /over 1000 assertions/, name);
    const at = await signed(file, 998); // 1000 with the two the writer adds
    assert.is(measure(at).size.assertions, 1000, name);
    assert.is(measure(at).over, null, name);
    assert.is((await readContentCredentials(at)).present, true, name);
  }
});

test('the fixtures (real manifests, ingredient chains) are within the limits', () => {
  for (const name of ['CA.jpg', 'CACA.jpg', 'E-sig-CA.jpg', 'XCA.jpg', 'adobe-20220124-E-clm-CAICAI.jpg', 'no_alg.jpg', 'video1.mp4']) {
    const m = measure(fixture('c2pa', name));
    assert.is(m.over, null, name);
    assert.ok(m.size.stores === 1 && m.size.manifests >= 1 && m.size.assertions >= 2 && m.size.depth === 4, `${name}: ${JSON.stringify(m)}`);
  }
  assert.is(measure(fixture('c2pa', 'adobe-20220124-E-clm-CAICAI.jpg')).size.ingredients, 4);
});

// ---- boxes made here: a PNG whose caBX chunk holds them ----

function box(type: string, ...children: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(children);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

/** A JUMBF superbox of C2PA type `kind` (c2pa, c2ma, c2as, ...) labelled `label`. */
function superbox(kind: string, label: string, ...children: Uint8Array[]): Uint8Array {
  const uuid = Buffer.concat([Buffer.from(kind, 'latin1'), Buffer.from('00110010800000aa00389b71', 'hex')]);
  const jumd = box('jumd', uuid, Buffer.from([0x03]), Buffer.from(`${label}\0`));
  return box('jumb', jumd, ...children);
}

function pngWith(jumbf: Uint8Array): Uint8Array {
  const png = fixture('integrity', 'butterfly.png');
  const chunk = Buffer.alloc(12 + jumbf.length);
  chunk.writeUInt32BE(jumbf.length);
  chunk.write('caBX', 4, 'latin1');
  Buffer.from(jumbf).copy(chunk, 8);
  return Buffer.concat([png.subarray(0, 33), chunk, png.subarray(33)]); // after IHDR (8 + 25 bytes)
}

/** A JSON assertion (its superbox's type is the `json` UUID). */
const assertion = (label: string) => superbox('json', label, box('json', Buffer.from('{}')));

test('manifests, ingredients, depth and bytes past their limits are refused before the reader', async () => {
  const manifest = (assertions: Uint8Array[]) => superbox('c2ma', 'urn:c2pa:x', superbox('c2as', 'c2pa.assertions', ...assertions));
  const cases: [string, Uint8Array, string][] = [
    ['101 manifests', superbox('c2pa', 'c2pa', ...Array.from({ length: 101 }, () => manifest([assertion('c2pa.actions')]))), 'it has over 100 manifests'],
    ['101 ingredients', superbox('c2pa', 'c2pa', manifest(Array.from({ length: 101 }, (_, i) => assertion(`c2pa.ingredient.v3__${i}`)))), 'it has over 100 ingredients'],
    ['boxes 10 deep', superbox('c2pa', 'c2pa', manifest([Array.from({ length: 6 }).reduce<Uint8Array>((inner) => superbox('c2xx', 'nest', inner), assertion('deep'))])), 'its boxes nest over 8 deep'],
    ['33 MB of JUMBF', superbox('c2pa', 'c2pa', manifest([superbox('bidb', 'c2pa.thumbnail.claim.jpeg', box('bidb', new Uint8Array(33 << 20)))])), `its JUMBF is over ${32 << 20} bytes`],
  ];
  for (const [name, jumbf, says] of cases) {
    const png = pngWith(jumbf);
    assert.is(measure(png).over, says, name);
    assert.equal(await readContentCredentials(png), { present: null, message: `not read: the manifest store is past the reader's limits (${says}; docs/c2pa.md)` }, name);
  }
  // within every limit the same boxes go to the reader (which finds no valid claim in them)
  const small = pngWith(superbox('c2pa', 'c2pa', manifest([assertion('c2pa.actions'), assertion('c2pa.ingredient.v3')])));
  assert.equal(measure(small), { size: { stores: 1, bytes: measure(small).size.bytes, manifests: 1, assertions: 2, ingredients: 1, depth: 4 }, over: null });
  assert.not.match(JSON.stringify(await readContentCredentials(small)), /limits/);
});

test("pool.examine: the credentials read stops at its own deadline, says so, and the fingerprint (decoded behind it in the same sandbox) still answers", async () => {
  const jpeg = await signed(fixture('media', 'fruits.jpg'), 10);
  const expected = await fingerprintFile(jpeg);
  const hurried = createFingerprintPool({ workers: 1, credentialsTimeoutMs: 1 });
  const roomy = createFingerprintPool({ workers: 1 });
  try {
    const r = await hurried.examine(jpeg.slice()); // a copy: the pool takes (detaches) what it is given
    assert.equal(r.fingerprint, expected);
    assert.equal(r.content_credentials, { present: null, message: 'not read: reading Content Credentials ran past its deadline (1 ms; docs/c2pa.md)' });
    // the default deadline (10 s) reads it
    const full = await roomy.examine(jpeg.slice());
    assert.equal(full.fingerprint, expected);
    assert.is((full.content_credentials as CredentialsFound).validation_state, 'untrusted_signer');
  } finally {
    await Promise.all([hurried.close(), roomy.close()]);
  }
});

test.run();
