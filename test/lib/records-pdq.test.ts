// A record's optional pdq_hash (issue 28): absent or null, the canonical bytes are the
// twelve fields' exactly (every existing record keeps its signature); present, it is
// signed with them (canonical JSON written by hand from RFC 8785, checked with
// node:crypto); its shape is checked field by field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { privateKeyFromSeed, publicKeyFromPrivateKey, agentKeyFromPublicKey } from '../../src/lib/identity.js';
import {
  InvalidFieldError, PDQ_MAX_FRAMES, PDQ_MAX_TIMESTAMP_SECONDS, actionHash, canonicalRecordBytes, normalizeRecord, parseRecord, pdqHashOrAbsent, signRecord, verifyRecord,
  type SignatureRecord,
} from '../../src/lib/records.js';
import { pdqExchangeLines, pdqFingerprint, pdqHash, vpdqFingerprint } from '../../src/lib/pdq.js';
import '../../src/lib/wasm.js';
import { rng, randomBytes } from '../helpers/random.js';

const SEED = new Uint8Array(32).fill(7);
const SIGNER = agentKeyFromPublicKey(publicKeyFromPrivateKey(privateKeyFromSeed(SEED)));
const HEX = '0f'.repeat(32);

const BASE: SignatureRecord = {
  file_hash: 'ab'.repeat(32), signer: SIGNER, signed_at: 1767225600123, intent: 'Authorship', ai_generation: null,
  content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
};

// by hand: keys sorted ("pdq_hash" sorts before "perceptual_hash": d < e)
const BEFORE = '{"ai_generation":null,"comment":null,"content_rights":null,"expires_at":null,'
  + `"file_hash":"${'ab'.repeat(32)}","integrity_report":null,"intent":"Authorship",`;
const AFTER = `"perceptual_hash":null,"signed_at":1767225600123,"signer":"${SIGNER}","supersedes":null,"tags":null}`;

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

function nodeVerifies(bytes: string, signature: string): boolean {
  const key = Buffer.from(SIGNER.slice(1), 'base64url').subarray(3, 35);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.toString('base64url') }, format: 'jwk' });
  return nodeVerify(null, Buffer.from(bytes, 'utf8'), publicKey, Buffer.from(signature, 'base64'));
}

test('without pdq_hash (absent or null) the bytes are the twelve fields\' exactly, and old signatures verify', () => {
  const twelve = BEFORE + AFTER;
  assert.is(text(canonicalRecordBytes(BASE)), twelve);
  assert.is(text(canonicalRecordBytes({ ...BASE, pdq_hash: undefined })), twelve);
  assert.is(text(canonicalRecordBytes({ ...BASE, pdq_hash: null } as unknown as SignatureRecord)), twelve);
  const { signature } = signRecord(BASE, privateKeyFromSeed(SEED));
  assert.ok(nodeVerifies(twelve, signature));
  // a record read back with pdq_hash null (a store's empty column) keeps its signature and action hash
  const stored = { ...BASE, pdq_hash: null } as unknown as SignatureRecord;
  assert.ok(verifyRecord({ ...stored, signature }));
  assert.is(actionHash(stored, signature), actionHash(BASE, signature));
});

test('a PDQ or vPDQ pdq_hash is signed with the record (RFC 8785 by hand, node:crypto)', () => {
  const pdq = { hash_type: 'PDQ' as const, hash_value: HEX, quality: 87 };
  const rec = { ...BASE, pdq_hash: pdq };
  const bytes = BEFORE + `"pdq_hash":{"hash_type":"PDQ","hash_value":"${HEX}","quality":87},` + AFTER;
  assert.is(text(canonicalRecordBytes(rec)), bytes);
  const { signature, action_hash } = signRecord(rec, privateKeyFromSeed(SEED));
  assert.ok(nodeVerifies(bytes, signature));
  assert.ok(verifyRecord({ ...rec, signature }));
  assert.is(action_hash, createHash('sha256').update(bytes.slice(0, -AFTER.length) + AFTER.replace('"signed_at"', `"signature":"${signature}","signed_at"`)).digest('hex'));
  // the signature covers it: changed, dropped or added, verification fails
  assert.not.ok(verifyRecord({ ...rec, pdq_hash: { ...pdq, quality: 86 }, signature }));
  assert.not.ok(verifyRecord({ ...BASE, signature }));
  const plain = signRecord(BASE, privateKeyFromSeed(SEED)).signature;
  assert.not.ok(verifyRecord({ ...rec, signature: plain }));
  const video = { ...BASE, pdq_hash: { hash_type: 'vPDQ' as const, frames: [{ timestamp: 0.5, hash_value: HEX, quality: 100 }, { timestamp: 1.5, hash_value: 'f0'.repeat(32), quality: 3 }] } };
  assert.is(text(canonicalRecordBytes(video)), BEFORE
    + `"pdq_hash":{"frames":[{"hash_value":"${HEX}","quality":100,"timestamp":0.5},{"hash_value":"${'f0'.repeat(32)}","quality":3,"timestamp":1.5}],"hash_type":"vPDQ"},` + AFTER);
  const v = signRecord(video, privateKeyFromSeed(SEED));
  assert.ok(verifyRecord({ ...video, signature: v.signature }));
});

test('normalizeRecord and parseRecord carry pdq_hash; a computed PDQ is accepted as it comes', () => {
  const next = rng(28);
  const pixels = randomBytes(next, 64 * 48 * 3);
  const fp = pdqFingerprint(pdqHash(pixels, 64, 48, 3));
  const rec = normalizeRecord({ file_hash: 'AB'.repeat(32), signer: SIGNER, signed_at: 5, pdq_hash: fp });
  assert.equal(rec.pdq_hash, fp);
  // request form lower-cases the hex; the signed form requires it lower-case
  const upper = normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER, signed_at: 5, pdq_hash: { ...fp, hash_value: fp.hash_value.toUpperCase() } });
  assert.is(upper.pdq_hash?.hash_type === 'PDQ' && upper.pdq_hash.hash_value, fp.hash_value);
  assert.equal(parseRecord(rec), rec);
  assert.throws(() => parseRecord({ ...rec, pdq_hash: { ...fp, hash_value: 'AB'.repeat(32) } }), (e: unknown) => e instanceof InvalidFieldError && e.field === 'pdq_hash.hash_value');
  const none = normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER, signed_at: 5, pdq_hash: null });
  assert.not.ok('pdq_hash' in none);
  assert.not.ok('pdq_hash' in parseRecord({ ...none, pdq_hash: null }));
  const vfp = vpdqFingerprint([{ timestamp: 0.5, pdq: pdqHash(pixels, 64, 48, 3) }, { timestamp: 1.5, pdq: pdqHash(pixels.reverse(), 64, 48, 3) }]);
  assert.equal(normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER, signed_at: 5, pdq_hash: vfp }).pdq_hash, vfp);
});

test('a malformed pdq_hash is refused naming the field', () => {
  const frame = { timestamp: 0.5, hash_value: HEX, quality: 50 };
  const cases: [unknown, string][] = [
    ['x', 'pdq_hash'],
    [[], 'pdq_hash'],
    [{ hash_type: 'ImagePHash', hash_value: HEX, quality: 50 }, 'pdq_hash.hash_type'],
    [{ hash_type: 'PDQ', hash_value: HEX.slice(1), quality: 50 }, 'pdq_hash.hash_value'],
    [{ hash_type: 'PDQ', hash_value: `${HEX.slice(1)}g`, quality: 50 }, 'pdq_hash.hash_value'],
    [{ hash_type: 'PDQ', hash_value: HEX, quality: 101 }, 'pdq_hash.quality'],
    [{ hash_type: 'PDQ', hash_value: HEX, quality: 49.5 }, 'pdq_hash.quality'],
    [{ hash_type: 'PDQ', hash_value: HEX }, 'pdq_hash.quality'],
    [{ hash_type: 'PDQ', hash_value: HEX, quality: 50, extra: 1 }, 'pdq_hash.extra'],
    [{ hash_type: 'vPDQ', frames: [] }, 'pdq_hash.frames'],
    [{ hash_type: 'vPDQ', frames: Array.from({ length: PDQ_MAX_FRAMES + 1 }, () => frame) }, 'pdq_hash.frames'],
    // past the field's value limits: refused before any walk of its frames
    [{ hash_type: 'vPDQ', frames: Array.from({ length: 100_000 }, () => frame) }, 'pdq_hash'],
    [{ hash_type: 'vPDQ', frames: [{ ...frame, timestamp: -1 }] }, 'pdq_hash.frames.0.timestamp'],
    [{ hash_type: 'vPDQ', frames: [frame, { ...frame, timestamp: '1' }] }, 'pdq_hash.frames.1.timestamp'],
    [{ hash_type: 'vPDQ', frames: [{ ...frame, x: 1 }] }, 'pdq_hash.frames.0.x'],
    [{ hash_type: 'vPDQ', frames: [frame], hash_value: HEX }, 'pdq_hash.hash_value'],
  ];
  for (const [value, field] of cases) {
    assert.throws(() => pdqHashOrAbsent(value), (e: unknown) => e instanceof InvalidFieldError && e.field === field && e.code === 'invalid_request', JSON.stringify(value).slice(0, 80));
    assert.throws(() => normalizeRecord({ file_hash: 'ab'.repeat(32), signer: SIGNER, signed_at: 5, pdq_hash: value }), (e: unknown) => e instanceof InvalidFieldError);
  }
  // the most a video can carry fits
  assert.is(pdqHashOrAbsent({ hash_type: 'vPDQ', frames: Array.from({ length: PDQ_MAX_FRAMES }, (_, i) => ({ timestamp: i + 0.5, hash_value: HEX, quality: 100 })) })?.hash_type, 'vPDQ');
});

test('issue 34: vPDQ timestamps are finite seconds from 0 to PDQ_MAX_TIMESTAMP_SECONDS, in time order', () => {
  const frame = (timestamp: unknown) => ({ timestamp, hash_value: HEX, quality: 50 });
  const refused: [unknown[], string, RegExp][] = [
    [[frame(1e300)], 'pdq_hash.frames.0.timestamp', /from 0 to 86400/],
    [[frame(Infinity)], 'pdq_hash.frames.0.timestamp', /from 0 to 86400/],
    [[frame(NaN)], 'pdq_hash.frames.0.timestamp', /from 0 to 86400/],
    [[frame(0.5), frame(PDQ_MAX_TIMESTAMP_SECONDS + 0.001)], 'pdq_hash.frames.1.timestamp', /from 0 to 86400/],
    [[frame(0.5), frame(2.5), frame(1.5)], 'pdq_hash.frames.2.timestamp', /before the previous frame's \(2\.5\)/],
  ];
  for (const [frames, field, message] of refused) {
    assert.throws(() => pdqHashOrAbsent({ hash_type: 'vPDQ', frames }), (e: unknown) => e instanceof InvalidFieldError && e.field === field && e.code === 'invalid_request' && message.test(e.message), field);
  }
  // the bounds themselves, and two frames at one time, are fine: a day-long video sampled sparsely
  const ok = pdqHashOrAbsent({ hash_type: 'vPDQ', frames: [frame(0), frame(0), frame(3600.25), frame(PDQ_MAX_TIMESTAMP_SECONDS)] });
  assert.equal(ok?.hash_type === 'vPDQ' && ok.frames.map((f) => f.timestamp), [0, 0, 3600.25, 86400]);
  // Meta's text: plain decimals within the bound; one that has no plain decimal form is never written
  assert.equal(pdqExchangeLines(ok!).map((l) => l.split(',')[3]), ['0.000', '0.000', '3600.250', '86400.000']);
  assert.throws(() => pdqExchangeLines({ hash_type: 'vPDQ', frames: [{ timestamp: 1e300, hash_value: HEX, quality: 50 }] }), RangeError);
  // read back as stored (the match index), a record from before the bound keeps its frames and matches
  const stored = pdqHashOrAbsent({ hash_type: 'vPDQ', frames: [frame(1e300), frame(2.5), frame(1.5)] }, false, 'as stored');
  assert.equal(stored?.hash_type === 'vPDQ' && stored.frames.map((f) => f.timestamp), [1e300, 2.5, 1.5]);
  assert.throws(() => pdqHashOrAbsent({ hash_type: 'vPDQ', frames: [frame(-1)] }, false, 'as stored'), (e: unknown) => e instanceof InvalidFieldError);
});

test.run();
