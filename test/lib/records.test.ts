import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { agentKeyFromPublicKey, generateSigningKey, privateKeyFromSeed } from '../../src/lib/identity.js';
import {
  RECORD_FIELDS, RECORD_VALUE_LIMITS, RECORD_VALUE_MAX_DEPTH, RESTRICTIVENESS, InvalidFieldError, actionHash, canonicalRecordBytes, canonicalRevocationBytes,
  combineContentRights, contentRightsToRequest, contentRightsToResponse, enumToRequest, enumToResponse, isSignerKey,
  mostRestrictive, normalizeRecord, parseRecord, parseRevocation, recordValueProblem, signRecord, signRevocation, verifyRecord,
  verifyRevocation,
} from '../../src/lib/records.js';
import '../../src/lib/wasm.js'; // loads the kernels in Node (chromaprint below)
import { audioFingerprintFromSamples } from '../../src/lib/chromaprint.js';
import type { SignatureRecord } from '../../src/lib/records.js';

const text = (b: Uint8Array): string => new TextDecoder().decode(b);
/** A case's name: the fields it changes (its values may be too deep for JSON.stringify). */
const label = (change: object): string => Object.keys(change).join(' + ');
/** Arrays nested `depth` deep, built by JSON.parse (which, unlike JSON.stringify, takes any depth). */
const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
const sha256 = (s: string): string => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');

// W3C did:key seed 0: public key 3b6a27bc...; its agent key computed outside this library
// (Python hashlib.blake2b, see identity.test.ts).
const SEED0 = new Uint8Array(32);
const PUB0 = Buffer.from('3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29', 'hex');
const SIGNER0 = 'uhCAkO2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2inYYY8n';

const RECORD: SignatureRecord = {
  file_hash: 'ab'.repeat(32),
  signer: SIGNER0,
  signed_at: 1767225600123,
  intent: 'Authorship',
  ai_generation: 'Assisted',
  content_rights: {
    license: { Custom: 'Licence née «libre» €5' },
    commercial_licensing: 'ContactForTerms',
    ai_training: 'NotAllowed',
    contact_preference: null,
  },
  integrity_report: {
    checks_performed: ['PostEofData', 'EntropyAnalysis'],
    issues_found: [{ check: 'PostEofData', severity: 'Info', description: '2 bytes of padding', offset: 1024, length: 2 }],
    checked_at: 1767225600000,
  },
  perceptual_hash: {
    hash_type: 'ImagePHash',
    hash_value: [255, 0, 17, 34, 51, 68, 85, 102],
    bands: [[255], [0], [17], [34], [51], [68], [85], [102]],
  },
  comment: 'Photo of the café ☕ — "quoted" \\ back\nslash \u000f 😀',
  supersedes: '0123456789abcdef'.repeat(4),
  // RFC 8785 section 3.2.2 example: number serialization (ECMAScript Number.toString)
  expires_at: { numbers: [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], literals: [null, true, false] },
  // RFC 8785 section 3.2.3 example: property sorting by UTF-16 code units
  tags: {
    '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis',
  },
};

// Written by hand from RFC 8785: keys sorted by UTF-16 code units at every level, no
// whitespace, strings escaped as JSON.stringify does (only " \ and controls), numbers in
// their shortest ECMAScript form.
const CANONICAL_BEFORE_SIGNED_AT = '{"ai_generation":"Assisted",'
  + '"comment":"Photo of the café ☕ — \\"quoted\\" \\\\ back\\nslash \\u000f 😀",'
  + '"content_rights":{"ai_training":"NotAllowed","commercial_licensing":"ContactForTerms","contact_preference":null,"license":{"Custom":"Licence née «libre» €5"}},'
  + '"expires_at":{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]},'
  + '"file_hash":"abababababababababababababababababababababababababababababababab",'
  + '"integrity_report":{"checked_at":1767225600000,"checks_performed":["PostEofData","EntropyAnalysis"],"issues_found":[{"check":"PostEofData","description":"2 bytes of padding","length":2,"offset":1024,"severity":"Info"}]},'
  + '"intent":"Authorship",'
  + '"perceptual_hash":{"bands":[[255],[0],[17],[34],[51],[68],[85],[102]],"hash_type":"ImagePHash","hash_value":[255,0,17,34,51,68,85,102]}';
const CANONICAL_FROM_SIGNED_AT = ',"signed_at":1767225600123,'
  + '"signer":"uhCAkO2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2inYYY8n",'
  + '"supersedes":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",'
  + '"tags":{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}}';
const CANONICAL = CANONICAL_BEFORE_SIGNED_AT + CANONICAL_FROM_SIGNED_AT;

test('RECORD_FIELDS are the twelve fields of decisions.md 2', () => {
  assert.equal([...RECORD_FIELDS], ['file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights',
    'integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags']);
});

test('canonical bytes of a record with unicode, numbers and nested objects (RFC 8785)', () => {
  const bytes = canonicalRecordBytes(RECORD);
  assert.is(text(bytes), CANONICAL);
  assert.ok(Buffer.from(bytes).equals(Buffer.from(CANONICAL, 'utf8')));
  // insertion order does not matter; extra keys are left out; undefined is written as null
  const shuffled = Object.fromEntries(Object.entries(RECORD).reverse()) as unknown as SignatureRecord;
  const extra = { ...shuffled, signature: 'x', action_hash: 'y', revoked: false } as SignatureRecord;
  assert.is(text(canonicalRecordBytes(extra)), CANONICAL);
  const sparse = { ...RECORD, expires_at: undefined, tags: null } as SignatureRecord;
  const out = JSON.parse(text(canonicalRecordBytes(sparse)));
  assert.equal(Object.keys(out), [...RECORD_FIELDS].sort());
  assert.is(out.expires_at, null);
  assert.throws(() => canonicalRecordBytes({ ...RECORD, tags: Number.NaN }));
  assert.throws(() => canonicalRecordBytes({ ...RECORD, comment: '\ud800' }));
});

test('a record signed here verifies with node:crypto alone; the action hash is SHA-256 of record + signature', () => {
  const { signature, action_hash } = signRecord(RECORD, privateKeyFromSeed(SEED0));
  const sig = Buffer.from(signature, 'base64');
  assert.is(sig.length, 64);
  assert.is(sig.toString('base64'), signature); // standard base64 with padding
  // the public key taken by hand out of the agent key: bytes 3..35 of the base64url after 'u'
  const key = Buffer.from(SIGNER0.slice(1), 'base64url').subarray(3, 35);
  assert.ok(key.equals(PUB0));
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.toString('base64url') }, format: 'jwk' });
  assert.ok(nodeVerify(null, Buffer.from(CANONICAL, 'utf8'), publicKey, sig));
  // Ed25519 is deterministic: node:crypto with the same seed gives the same signature
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(SEED0).toString('base64url'), x: key.toString('base64url') }, format: 'jwk' });
  assert.is(nodeSign(null, Buffer.from(CANONICAL, 'utf8'), privateKey).toString('base64'), signature);
  // canonical JSON of the twelve fields plus "signature" (which sorts before "signed_at")
  const withSignature = CANONICAL_BEFORE_SIGNED_AT + `,"signature":"${signature}"` + CANONICAL_FROM_SIGNED_AT;
  assert.is(action_hash, sha256(withSignature));
  assert.match(action_hash, /^[0-9a-f]{64}$/);
  assert.is(actionHash(RECORD, signature), action_hash);
  assert.ok(verifyRecord({ ...RECORD, signature }));
  assert.ok(isSignerKey(RECORD, privateKeyFromSeed(SEED0)));
  assert.not.ok(isSignerKey(RECORD, generateSigningKey().privateKeyPkcs8));
});

test('tampering with any field, the signer or the signature fails verifyRecord', () => {
  const { signature } = signRecord(RECORD, privateKeyFromSeed(SEED0));
  const other = agentKeyFromPublicKey(generateSigningKey().publicKey);
  const changes: Record<string, unknown> = {
    file_hash: 'cd'.repeat(32), signer: other, signed_at: RECORD.signed_at + 1, intent: 'Witness', ai_generation: null,
    content_rights: { ...RECORD.content_rights, contact_preference: 'NoContact' }, integrity_report: null,
    perceptual_hash: { ...(RECORD.perceptual_hash as object), hash_value: [255, 0, 17, 34, 51, 68, 85, 103] },
    comment: RECORD.comment + ' ', supersedes: null, expires_at: null, tags: { ...(RECORD.tags as object), extra: 1 },
  };
  for (const field of RECORD_FIELDS) {
    assert.ok(field in changes, field);
    assert.not.ok(verifyRecord({ ...RECORD, [field]: changes[field], signature }), field);
  }
  assert.not.ok(verifyRecord({ ...RECORD, file_hash: RECORD.file_hash.toUpperCase(), signature }));
  // the same key written as plain base64 is a different signed string
  assert.not.ok(verifyRecord({ ...RECORD, signer: PUB0.toString('base64'), signature }));
  const flipped = Buffer.from(signature, 'base64');
  flipped[5] ^= 0x20;
  assert.not.ok(verifyRecord({ ...RECORD, signature: flipped.toString('base64') }));
  const hexSig = Buffer.from(signature, 'base64').toString('hex');
  assert.not.ok(verifyRecord({ ...RECORD, signature: hexSig }));
  // malformed input: false, never a throw
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const malformed: unknown[] = [
    null, undefined, 42, 'record', {}, { ...RECORD }, { ...RECORD, signature: 7 }, { ...RECORD, signature, signer: 42 },
    { ...RECORD, signature, signer: 'uhCAk' }, { ...RECORD, signature, tags: cyclic }, { ...RECORD, signature, expires_at: Infinity },
    { ...RECORD, signature: signature.slice(0, -2) }, { ...RECORD, signature: '' },
  ];
  for (const input of malformed) assert.is(verifyRecord(input as never), false);
});

// decisions.md 11, written out: request token -> response value, least to most restrictive.
const TABLES: Record<string, [string, string][]> = {
  license: [['cc0', 'CC0'], ['public-domain', 'PublicDomain'], ['cc-by', 'CCBY'], ['cc-by-sa', 'CCBYSA'], ['cc-by-nd', 'CCBYND'],
    ['cc-by-nc', 'CCBYNC'], ['cc-by-nc-sa', 'CCBYNCSA'], ['cc-by-nc-nd', 'CCBYNCND'], ['all-rights-reserved', 'AllRightsReserved']],
  commercial_licensing: [['open_to_licensing', 'OpenToLicensing'], ['contact_for_terms', 'ContactForTerms'], ['not_available', 'NotAvailable']],
  ai_training: [['allowed', 'Allowed'], ['allowed_with_attribution', 'AllowedWithAttribution'], ['not_allowed', 'NotAllowed']],
  contact_preference: [['allow_contact_requests', 'AllowContactRequests'], ['no_contact', 'NoContact']],
  ai_generation: [['none', 'None'], ['assisted', 'Assisted'], ['generated', 'Generated']],
};

test('enumeration tables convert both ways; anything else is an InvalidFieldError', () => {
  for (const [field, pairs] of Object.entries(TABLES)) {
    for (const [token, value] of pairs) {
      assert.is(enumToResponse(field as never, token), value);
      assert.is(enumToRequest(field as never, value), token);
      // the response form is not a request token (decisions.md 11: anything else is 400)
      assert.throws(() => enumToResponse(field as never, value), (e: unknown) => e instanceof InvalidFieldError && e.field === field);
    }
    for (const bad of ['', 'CC-BY', 'cc_by', 'allowed ', null, 1, {}]) {
      assert.throws(() => enumToResponse(field as never, bad), (e: unknown) => e instanceof InvalidFieldError && e.field === field && e.code === 'invalid_request');
    }
    assert.is(enumToRequest(field as never, 'Nope'), null);
  }
  for (const intent of ['Authorship', 'Approval', 'Witness', 'Receipt', 'Agreement']) {
    assert.is(enumToResponse('intent', intent), intent);
    assert.is(enumToResponse('intent', intent.toLowerCase()), intent);
    for (const bad of [intent.toUpperCase(), intent.slice(0, 3) + intent.slice(3).toUpperCase()]) {
      assert.throws(() => enumToResponse('intent', bad), (e: unknown) => e instanceof InvalidFieldError && e.field === 'intent');
    }
  }
  assert.throws(() => enumToResponse('intent', 'Signature'), (e: unknown) => e instanceof InvalidFieldError);
  assert.throws(() => enumToResponse('license', 'toString'), (e: unknown) => e instanceof InvalidFieldError);
  assert.throws(() => enumToResponse('license', '__proto__'), (e: unknown) => e instanceof InvalidFieldError);
});

test('content_rights: tokens to values, {custom} to {Custom}, and back', () => {
  assert.equal(contentRightsToResponse({ license: 'cc-by-nc', commercial_licensing: 'not_available', ai_training: 'allowed_with_attribution', contact_preference: 'no_contact' }),
    { license: 'CCBYNC', commercial_licensing: 'NotAvailable', ai_training: 'AllowedWithAttribution', contact_preference: 'NoContact' });
  assert.equal(contentRightsToResponse({ license: { custom: 'Do what you like' } }),
    { license: { Custom: 'Do what you like' }, commercial_licensing: null, ai_training: null, contact_preference: null });
  const empty = { license: null, commercial_licensing: null, ai_training: null, contact_preference: null };
  assert.equal(contentRightsToResponse(undefined), empty);
  assert.equal(contentRightsToResponse(null), empty);
  assert.equal(contentRightsToResponse({ ai_training: null }), empty);
  assert.equal(contentRightsToRequest({ license: { Custom: 'x' }, commercial_licensing: 'OpenToLicensing', ai_training: null, contact_preference: 'AllowContactRequests' }),
    { license: { custom: 'x' }, commercial_licensing: 'open_to_licensing', contact_preference: 'allow_contact_requests' });
  const bad: [unknown, string][] = [
    [{ license: { Custom: 'x' } }, 'content_rights.license'], [{ license: { custom: '' } }, 'content_rights.license'],
    [{ license: { custom: 'x', extra: 1 } }, 'content_rights.license'], [{ license: 'CCBY' }, 'content_rights.license'],
    [{ ai_training: 'NotAllowed' }, 'content_rights.ai_training'], [{ contact_preference: 'yes' }, 'content_rights.contact_preference'],
    [{ commercial_licensing: 1 }, 'content_rights.commercial_licensing'], [{ licence: 'cc0' }, 'content_rights.licence'],
    ['cc0', 'content_rights'], [['cc0'], 'content_rights'],
  ];
  for (const [input, field] of bad) {
    assert.throws(() => contentRightsToResponse(input), (e: unknown) => e instanceof InvalidFieldError && e.field === field, JSON.stringify(input));
  }
});

test('most restrictive wins, in the order of decisions.md 11', () => {
  for (const field of ['license', 'commercial_licensing', 'ai_training', 'contact_preference'] as const) {
    assert.equal([...RESTRICTIVENESS[field]], TABLES[field].map(([, v]) => v));
  }
  assert.is(mostRestrictive('license', ['CCBY', null, 'CC0', 'CCBYNCND', 'CCBYSA']), 'CCBYNCND');
  assert.is(mostRestrictive('ai_training', ['Allowed', 'NotAllowed', 'AllowedWithAttribution']), 'NotAllowed');
  assert.is(mostRestrictive('contact_preference', [null, null]), null);
  // a custom licence ranks with AllRightsReserved: above every CC licence, tie goes to the first
  assert.equal(mostRestrictive('license', ['CCBYNCND', { Custom: 'mine' }, 'CC0']), { Custom: 'mine' });
  assert.is(mostRestrictive('license', ['AllRightsReserved', { Custom: 'mine' }]), 'AllRightsReserved');
  assert.equal(combineContentRights([
    { license: 'CC0', commercial_licensing: 'OpenToLicensing', ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
    null,
    { license: 'CCBYSA', commercial_licensing: null, ai_training: 'Allowed', contact_preference: null },
  ]), { license: 'CCBYSA', commercial_licensing: 'OpenToLicensing', ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' });
  assert.is(combineContentRights([]), null);
  assert.is(combineContentRights([null, { license: null, commercial_licensing: null, ai_training: null, contact_preference: null }]), null);
});

test('normalizeRecord turns a request into the response form that gets signed', () => {
  const record = normalizeRecord({
    file_hash: 'AB'.repeat(32),
    signer: PUB0.toString('base64'),
    signed_at: 1767225600123,
    intent: 'approval',
    ai_generation: 'generated',
    content_rights: { license: 'cc-by', ai_training: 'not_allowed' },
    comment: 'hi',
    supersedes: 'ABCDEF'.padEnd(64, '0'),
    perceptual_hash: { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] },
    tags: ['a', 'b'],
    signature: 'ignored', client_id: 'ignored',
  } as never);
  assert.equal(record, {
    file_hash: 'ab'.repeat(32), signer: SIGNER0, signed_at: 1767225600123, intent: 'Approval', ai_generation: 'Generated',
    content_rights: { license: 'CCBY', commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: null },
    integrity_report: null,
    perceptual_hash: { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] },
    comment: 'hi', supersedes: 'abcdef'.padEnd(64, '0'), expires_at: null, tags: ['a', 'b'],
  });
  assert.equal(Object.keys(record), [...RECORD_FIELDS]);
  const minimal = normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER0, signed_at: 0 });
  assert.is(minimal.intent, 'Authorship'); // spec 4.7 default
  assert.is(minimal.ai_generation, null); // not declared: not signed as "None"
  assert.equal(minimal.content_rights, { license: null, commercial_licensing: null, ai_training: null, contact_preference: null });
  for (const field of ['integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags'] as const) assert.is(minimal[field], null);
  // a normalized record passes parseRecord unchanged and signs/verifies
  assert.equal(parseRecord({ ...record, signature: 'x', client_id: 'y' }), record);
  const key = generateSigningKey();
  const mine = normalizeRecord({ file_hash: 'ef'.repeat(32), signer: agentKeyFromPublicKey(key.publicKey), signed_at: Date.now(), comment: '😀'.repeat(280) });
  assert.ok(verifyRecord({ ...mine, signature: signRecord(mine, key.privateKeyPkcs8).signature }));
});

test('normalizeRecord names the bad field and the spec 7 code', () => {
  const base = { file_hash: 'ab'.repeat(32), signer: SIGNER0, signed_at: 1 };
  const cases: [Record<string, unknown>, string, string][] = [
    [{ file_hash: undefined }, 'file_hash', 'missing_fields'],
    [{ file_hash: 'ab'.repeat(31) }, 'file_hash', 'invalid_hash'],
    [{ file_hash: 'xy'.repeat(32) }, 'file_hash', 'invalid_hash'],
    [{ file_hash: 123 }, 'file_hash', 'invalid_hash'],
    [{ signer: 'uhCAknope' }, 'signer', 'invalid_request'],
    [{ signer: undefined }, 'signer', 'invalid_request'],
    [{ signed_at: 1.5 }, 'signed_at', 'invalid_request'],
    [{ signed_at: '1' }, 'signed_at', 'invalid_request'],
    [{ signed_at: -1 }, 'signed_at', 'invalid_request'],
    [{ intent: 'Signing' }, 'intent', 'invalid_request'],
    [{ ai_generation: 'None' }, 'ai_generation', 'invalid_request'],
    [{ content_rights: { license: 'mit' } }, 'content_rights.license', 'invalid_request'],
    [{ comment: 'x'.repeat(281) }, 'comment', 'invalid_comment'],
    [{ comment: '😀'.repeat(281) }, 'comment', 'invalid_comment'],
    [{ comment: 5 }, 'comment', 'invalid_comment'],
    [{ comment: 'a\ud800b' }, 'comment', 'invalid_comment'],
    [{ supersedes: 'abc' }, 'supersedes', 'invalid_supersedes'],
    [{ supersedes: 1 }, 'supersedes', 'invalid_supersedes'],
    [{ integrity_report: 'yes' }, 'integrity_report', 'invalid_request'],
    [{ perceptual_hash: [1, 2] }, 'perceptual_hash', 'invalid_request'],
    [{ tags: [Number.NaN] }, 'tags', 'invalid_request'],
    [{ expires_at: '\udc00' }, 'expires_at', 'invalid_request'],
    [{ tags: nested(5000) }, 'tags', 'invalid_request'],
    [{ expires_at: { at: nested(RECORD_VALUE_MAX_DEPTH) } }, 'expires_at', 'invalid_request'],
    [{ perceptual_hash: { bands: nested(100_000) } }, 'perceptual_hash', 'invalid_request'],
    [{ integrity_report: { notes: 'n'.repeat(RECORD_VALUE_LIMITS.integrity_report.bytes) } }, 'integrity_report', 'invalid_request'],
    [{ content_rights: { license: { custom: 'c'.repeat(RECORD_VALUE_LIMITS.content_rights.bytes) } } }, 'content_rights', 'invalid_request'],
    [{ comment: 'x'.repeat(281), tags: nested(5000) }, 'comment', 'invalid_comment'], // spec 4.7 codes first
    [{ supersedes: 'abc', perceptual_hash: { bands: nested(5000) } }, 'supersedes', 'invalid_supersedes'],
  ];
  for (const [change, field, code] of cases) {
    try {
      normalizeRecord({ ...base, ...change } as never);
      assert.unreachable(label(change));
    } catch (err) {
      assert.ok(err instanceof InvalidFieldError, String(err));
      const e = err as InvalidFieldError;
      assert.is(e.field, field, label(change));
      assert.is(e.code, code, label(change));
      assert.ok(e.message.includes(field.split('.')[0]), e.message);
    }
  }
  assert.throws(() => normalizeRecord(null as never), (e: unknown) => e instanceof InvalidFieldError);
});

test('parseRecord takes a publish body as signed, converting nothing', () => {
  const body = { ...RECORD, signature: 'sig', client_id: 'app' };
  const parsed = parseRecord(body);
  assert.equal(parsed, RECORD);
  assert.is(text(canonicalRecordBytes(parsed)), CANONICAL);
  assert.equal(parseRecord({ ...RECORD, content_rights: null, ai_generation: null }).content_rights, null);
  const cases: [Record<string, unknown>, string][] = [
    [{ file_hash: 'AB'.repeat(32) }, 'file_hash'], [{ signer: PUB0.toString('base64') }, 'signer'],
    [{ intent: 'authorship' }, 'intent'], [{ ai_generation: 'assisted' }, 'ai_generation'],
    [{ content_rights: { license: 'cc-by', commercial_licensing: null, ai_training: null, contact_preference: null } }, 'content_rights.license'],
    [{ content_rights: { license: { custom: 'x' }, commercial_licensing: null, ai_training: null, contact_preference: null } }, 'content_rights.license'],
    [{ content_rights: { license: 'CCBY' } }, 'content_rights.commercial_licensing'],
    [{ supersedes: 'AB'.repeat(32) }, 'supersedes'], [{ comment: 'x'.repeat(281) }, 'comment'], [{ signed_at: null }, 'signed_at'],
    [{ supersedes: 'AB'.repeat(32), comment: 'x'.repeat(281) }, 'comment'], // spec 4.7: invalid_comment before invalid_supersedes
    [{ tags: nested(5000) }, 'tags'], [{ expires_at: nested(5000) }, 'expires_at'], [{ perceptual_hash: { bands: nested(5000) } }, 'perceptual_hash'],
    [{ integrity_report: { issues_found: nested(5000) } }, 'integrity_report'],
    [{ content_rights: { license: { Custom: 'c'.repeat(RECORD_VALUE_LIMITS.content_rights.bytes) }, commercial_licensing: null, ai_training: null, contact_preference: null } }, 'content_rights'],
  ];
  for (const [change, field] of cases) {
    assert.throws(() => parseRecord({ ...body, ...change }), (e: unknown) => e instanceof InvalidFieldError && e.field === field, label(change));
  }
  for (const field of RECORD_FIELDS) {
    const missing: Record<string, unknown> = { ...body };
    delete missing[field];
    assert.throws(() => parseRecord(missing), (e: unknown) => e instanceof InvalidFieldError && e.field === field, field);
  }
});

test('recordValueProblem: depth, keys + items and JSON bytes of a free-form field, each at its limit and one past it', () => {
  const limit = RECORD_VALUE_LIMITS.tags;
  assert.is(recordValueProblem('tags', nested(RECORD_VALUE_MAX_DEPTH)), null);
  assert.match(recordValueProblem('tags', nested(RECORD_VALUE_MAX_DEPTH + 1))!, `tags nests arrays and objects more than ${RECORD_VALUE_MAX_DEPTH} levels deep`);
  let deepObject: unknown = 1;
  for (let i = 0; i < RECORD_VALUE_MAX_DEPTH + 1; i++) deepObject = { k: deepObject };
  assert.match(recordValueProblem('expires_at', deepObject)!, 'expires_at nests');
  // any depth is checked without recursion (JSON.parse builds 1,000,000 levels; JSON.stringify could not write them)
  assert.match(recordValueProblem('perceptual_hash', JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)))!, 'levels deep');
  assert.is(recordValueProblem('tags', new Array(limit.items).fill(0)), null);
  assert.match(recordValueProblem('tags', new Array(limit.items + 1).fill(0))!, `tags holds more than ${limit.items} keys and array items`);
  assert.match(recordValueProblem('tags', [Object.fromEntries(Array.from({ length: limit.items }, (_, i) => [`k${i}`, 0]))])!, 'keys and array items');
  assert.match(recordValueProblem('tags', new Array(2 ** 31))!, 'keys and array items'); // a sparse length is not walked
  // bytes as JSON.stringify writes them: escapes, multi-byte UTF-8, lone surrogates escaped, numbers, keys
  const shapes: unknown[] = [
    'plain', { 'k"\\\n': ['é', '\u0001', '\t', '😀', '\ud800', 1.5, -0, 1e21, 5e-7, null, true, false, {}, []] }, [['€'], { a: { b: 'ü' } }],
  ];
  for (const shape of shapes) {
    const base = JSON.stringify({ s: shape, pad: '' });
    const fits = { s: shape, pad: 'p'.repeat(limit.bytes - Buffer.byteLength(base)) };
    assert.is(Buffer.byteLength(JSON.stringify(fits)), limit.bytes);
    assert.is(recordValueProblem('tags', fits), null, JSON.stringify(shape));
    assert.match(recordValueProblem('tags', { ...fits, pad: `${fits.pad}p` })!, `tags is larger than ${limit.bytes} bytes of JSON`);
  }
  assert.match(recordValueProblem('tags', 'x'.repeat(10_000_000))!, 'bytes of JSON');
  assert.is(recordValueProblem('tags', null), null);
  assert.is(recordValueProblem('content_rights', { license: { Custom: 'mine' }, commercial_licensing: null, ai_training: null, contact_preference: null }), null);
});

test('the limits hold what real clients send: a 120 s audio fingerprint, a full integrity report', () => {
  const samples = new Float32Array(11025 * 120);
  let x = 1;
  for (let i = 0; i < samples.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    samples[i] = (x / 2 ** 32 - 0.5) * Math.sin(i / 300);
  }
  const audio = audioFingerprintFromSamples(samples);
  assert.ok(audio.hash_value.length > 3000, String(audio.hash_value.length));
  assert.is(recordValueProblem('perceptual_hash', audio), null);
  // every byte written as 255 (the longest JSON), as many as 120 s could give
  assert.is(recordValueProblem('perceptual_hash', { ...audio, hash_value: new Array(audio.hash_value.length).fill(255) }), null);
  const report = {
    checks_performed: ['PostEofData', 'LsbAnalysis', 'MetadataInspection', 'EntropyAnalysis', 'AppendedFileDetection', 'UnicodeSteg'],
    issues_found: Array.from({ length: 100 }, (_, i) => ({ check: 'MetadataInspection', severity: 'Info', description: `finding ${i}: ${'d'.repeat(150)}`, offset: i * 1000, length: 16 })),
    checked_at: 1767225600000,
  };
  assert.is(recordValueProblem('integrity_report', report), null);
  assert.equal(normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER0, signed_at: 1, perceptual_hash: audio, integrity_report: report }).perceptual_hash, audio);
});

test('revocation entries: canonical bytes of the four fields, signed and verified', () => {
  const entry = { action_hash: 'ab'.repeat(32), reason: 'posted by mistake — sorry', revoked_at: 1767225600999, signer: SIGNER0 };
  const expected = `{"action_hash":"${'ab'.repeat(32)}","reason":"posted by mistake — sorry","revoked_at":1767225600999,"signer":"${SIGNER0}"}`;
  assert.is(text(canonicalRevocationBytes({ ...entry, signature: 'left out' } as never)), expected);
  assert.is(text(canonicalRevocationBytes({ ...entry, reason: null })), expected.replace('"posted by mistake — sorry"', 'null'));
  const signature = signRevocation(entry, privateKeyFromSeed(SEED0));
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: PUB0.toString('base64url') }, format: 'jwk' });
  assert.ok(nodeVerify(null, Buffer.from(expected, 'utf8'), publicKey, Buffer.from(signature, 'base64')));
  assert.ok(verifyRevocation({ ...entry, signature }));
  for (const change of [{ reason: null }, { revoked_at: 1 }, { action_hash: 'cd'.repeat(32) }, { signer: agentKeyFromPublicKey(generateSigningKey().publicKey) }, { signature: 'x' }]) {
    assert.not.ok(verifyRevocation({ ...entry, signature, ...change } as never));
  }
  assert.is(verifyRevocation(null as never), false);
  assert.equal(parseRevocation({ ...entry, signature }), entry);
  assert.equal(parseRevocation({ ...entry, reason: undefined }), { ...entry, reason: null });
  const cases: [Record<string, unknown>, string, string][] = [
    [{ action_hash: undefined }, 'action_hash', 'missing_fields'], [{ action_hash: 'AB'.repeat(32) }, 'action_hash', 'invalid_request'],
    [{ reason: 'x'.repeat(281) }, 'reason', 'invalid_request'], [{ revoked_at: 'now' }, 'revoked_at', 'invalid_request'],
    [{ signer: 'nope' }, 'signer', 'invalid_request'],
  ];
  for (const [change, field, code] of cases) {
    assert.throws(() => parseRevocation({ ...entry, ...change }), (e: unknown) => e instanceof InvalidFieldError && e.field === field && e.code === code, field);
  }
});

test.run();
