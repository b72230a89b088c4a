// A record's optional pdq_hash over real HTTP (issue 28): POST /sign and a vault's
// POST /publish carry it, GET /verify and /my-signatures answer it, and the answer
// re-verifies with node:crypto and the canonicalize package alone (thirteen fields
// when it is there, the twelve when not: a record without it keeps its bytes).
// postgres/suites.test.ts runs this file again on PostgreSQL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, randomBytes, sign as edSign, verify as edVerify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { apiRequest, serverCellUser, startTestServer, testEngine, vaultDevice, type TestServer } from '../helpers/server.js';
import { perceptualHashes } from '../../src/media/examine.js';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { join } from 'node:path';

let srv: TestServer;
const S = '/api/v1/sign-it';

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
});

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);
const hex = (n = 32) => randomBytes(n).toString('hex');

const FIELDS = ['file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights', 'integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags'];

/** The signed fields of an answer: the twelve, and pdq_hash when the answer has it. */
function signedFields(sig: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const f of FIELDS) record[f] = sig[f];
  if ('pdq_hash' in sig) record.pdq_hash = sig.pdq_hash;
  return record;
}

function verifiesIndependently(sig: Record<string, unknown>, signature: string): boolean {
  const record = signedFields(sig);
  const bytes = Buffer.from(String(sig.signer).slice(1), 'base64url');
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), bytes.subarray(3, 35)]);
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const ok = edVerify(null, Buffer.from(canonicalize(record)!, 'utf8'), key, Buffer.from(signature, 'base64'));
  const action = createHash('sha256').update(canonicalize({ ...record, signature })!).digest('hex');
  return ok && action === sig.action_hash;
}

const cellUser = () => serverCellUser(srv, 'premium');

const PDQ = { hash_type: 'PDQ', hash_value: 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22', quality: 100 };

test('POST /sign with a PDQ: /verify and /my-signatures answer it, and it is signed', async () => {
  const u = await cellUser();
  const file = hex();
  const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, pdq_hash: { ...PDQ, hash_value: PDQ.hash_value.toUpperCase() } } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const v = await api('GET', `${S}/verify?hash=${file}`);
  const s = v.body.signatures[0];
  assert.equal(s.pdq_hash, PDQ); // hex lower-cased, as signed
  const mine = await api('GET', `${S}/my-signatures`, { token: u.token });
  const own = mine.body.signatures.find((x: any) => x.action_hash === r.body.action_hash);
  assert.equal(own.pdq_hash, PDQ);
  assert.ok(verifiesIndependently(s, own.signature));
  // without it the record would not verify: the signature covers the PDQ
  const { pdq_hash: _dropped, ...without } = s;
  assert.not.ok(verifiesIndependently(without, own.signature));
});

test('POST /sign without a PDQ: no pdq_hash key, and the twelve fields alone verify (the bytes as before)', async () => {
  const u = await cellUser();
  const file = hex();
  const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, pdq_hash: null } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const s = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.not.ok('pdq_hash' in s);
  const own = (await api('GET', `${S}/my-signatures`, { token: u.token })).body.signatures.find((x: any) => x.action_hash === r.body.action_hash);
  assert.not.ok('pdq_hash' in own);
  assert.ok(verifiesIndependently(s, own.signature));
});

test('a bad pdq_hash is 400 invalid_request naming the field', async () => {
  const u = await cellUser();
  for (const [pdq, field] of [
    [{ ...PDQ, quality: 101 }, 'pdq_hash.quality'],
    [{ ...PDQ, hash_value: 'xyz' }, 'pdq_hash.hash_value'],
    [{ hash_type: 'vPDQ', frames: [] }, 'pdq_hash.frames'],
    [{ hash_type: 'dHash', hash_value: PDQ.hash_value, quality: 1 }, 'pdq_hash.hash_type'],
  ] as const) {
    const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), pdq_hash: pdq } });
    assert.is(r.status, 400, JSON.stringify(r.body));
    assert.is(r.body.error, 'invalid_request');
    assert.match(JSON.stringify(r.body), field);
  }
});

// ---- a vault's record, signed with node:crypto over the thirteen fields
const device = () => vaultDevice(srv.url);

test('POST /publish of a vault record with a vPDQ: stored as signed, answered, re-verified', async () => {
  const d = await device();
  const file = hex();
  const record: Record<string, unknown> = {
    file_hash: file, signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
    pdq_hash: { hash_type: 'vPDQ', frames: [{ timestamp: 0.5, hash_value: PDQ.hash_value, quality: 90 }, { timestamp: 1.5, hash_value: hex(), quality: 12 }] },
  };
  const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
  const r = await api('POST', `${S}/publish`, { token: d.token, body: { ...record, signature } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const s = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.equal(s.pdq_hash, record.pdq_hash);
  assert.ok(verifiesIndependently(s, signature));
  // the same record signed without its vPDQ does not pass for the one with it
  const { pdq_hash: _p, ...twelve } = record;
  const other = edSign(null, Buffer.from(canonicalize(twelve)!, 'utf8'), d.privateKey).toString('base64');
  const refused = await api('POST', `${S}/publish`, { token: d.token, body: { ...record, signature: other } });
  assert.is(refused.status, 400, JSON.stringify(refused.body));
  assert.match(JSON.stringify(refused.body), /signature/i);
  assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.count, 1);
});

test('issue 34: a vPDQ timestamp of 1e300, past a day or before the previous frame is 400 invalid_request naming it, on /sign and /publish', async () => {
  const u = await cellUser();
  const d = await device();
  const frame = (timestamp: number) => ({ timestamp, hash_value: PDQ.hash_value, quality: 90 });
  for (const [frames, field] of [
    [[frame(1e300)], 'pdq_hash.frames.0.timestamp'],
    [[frame(0.5), frame(86_400.5)], 'pdq_hash.frames.1.timestamp'],
    [[frame(0.5), frame(2.5), frame(1.5)], 'pdq_hash.frames.2.timestamp'],
  ] as const) {
    const pdq_hash = { hash_type: 'vPDQ', frames };
    const file = hex();
    const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, pdq_hash } });
    assert.is(r.status, 400, JSON.stringify(r.body));
    assert.is(r.body.error, 'invalid_request');
    assert.ok(JSON.stringify(r.body).includes(field), JSON.stringify(r.body));
    const record: Record<string, unknown> = {
      file_hash: file, signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
      integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, pdq_hash,
    };
    const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
    const p = await api('POST', `${S}/publish`, { token: d.token, body: { ...record, signature } });
    assert.is(p.status, 400, JSON.stringify(p.body));
    assert.is(p.body.error, 'invalid_request');
    assert.ok(JSON.stringify(p.body).includes(field), JSON.stringify(p.body));
    assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.count, 0);
  }
});

// ---- matching by PDQ (POST /verify-fuzzy {pdq}); the index is fed by the change feed

/** `hex` with bits 0..d-1 of the 256 flipped. */
function flipped(hexText: string, d: number): string {
  const b = Buffer.from(hexText, 'hex');
  for (let i = 0; i < d; i++) b[(i * 7) % 32] ^= 1 << ((i * 3) % 8 === 0 ? i % 8 : (i * 3) % 8);
  return b.toString('hex');
}

function bitsBetween(a: string, b: string): number {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  let d = 0;
  for (let i = 0; i < 32; i++) for (let v = x[i] ^ y[i]; v; v &= v - 1) d++;
  return d;
}

const IMAGE_FP = { hash_type: 'ImagePHash', hash_value: [9, 8, 7, 6, 5, 4, 3, 2], bands: [[9], [8], [7], [6], [5], [4], [3], [2]] };

test('POST /verify-fuzzy {pdq}: finds images within 31 bits (quality >= 50) with matched_by and pdq_distance; nothing beyond', async () => {
  const u = await cellUser();
  const base = hex();
  const good = hex();
  const weak = hex();
  for (const [file, pdq] of [[good, { hash_type: 'PDQ', hash_value: base, quality: 80 }], [weak, { hash_type: 'PDQ', hash_value: flipped(base, 3), quality: 40 }]] as const) {
    const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, perceptual_hash: IMAGE_FP, pdq_hash: pdq } });
    assert.is(r.status, 200, JSON.stringify(r.body));
  }
  for (const d of [0, 12, 31]) {
    const q = flipped(base, d);
    const dist = bitsBetween(q, base);
    const r = await api('POST', `${S}/verify-fuzzy`, { body: { pdq: q.toUpperCase() } });
    assert.is(r.status, 200, JSON.stringify(r.body));
    const mine = r.body.signatures.filter((s: any) => s.file_hash === good || s.file_hash === weak);
    assert.is(mine.length, dist <= 31 ? 1 : 0, `distance ${dist}`);
    if (dist <= 31) {
      assert.is(mine[0].file_hash, good); // the quality-40 record is never matched
      assert.is(mine[0].matched_by, 'PDQ');
      assert.is(mine[0].pdq_distance, dist);
      assert.is(mine[0].similarity, Math.round((100 * (256 - dist)) / 256));
      assert.is(mine[0].match_type, 'perceptual');
    }
  }
  let far = base;
  let k = 32;
  while (bitsBetween(far, base) < 32) far = flipped(base, k++);
  const r = await api('POST', `${S}/verify-fuzzy`, { body: { pdq: far } });
  assert.not.ok(r.body.signatures.some((s: any) => s.file_hash === good), `distance ${bitsBetween(far, base)}`);
  for (const bad of ['xyz', 12, 'ab'.repeat(31), { hash: base }]) {
    const e = await api('POST', `${S}/verify-fuzzy`, { body: { pdq: bad } });
    assert.is(e.status, 400);
    assert.is(e.body.error, 'invalid_request');
  }
});

test('POST /verify-file of an image: found by ImagePHash or by PDQ, each answer saying matched_by (and pdq_distance for PDQ)', async () => {
  const u = await cellUser();
  const photo = new Uint8Array(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg')));
  const own = await perceptualHashes(photo);
  const fp = own.fingerprint as { hash_type: string; hash_value: number[]; bands: number[][] };
  const pdq = own.pdq_hash as { hash_type: 'PDQ'; hash_value: string; quality: number };
  assert.is(pdq.hash_type, 'PDQ');
  assert.ok(pdq.quality >= 50, `quality ${pdq.quality}`);
  const inverted = fp.hash_value.map((b) => 255 - b);
  const otherFp = { hash_type: 'ImagePHash', hash_value: inverted, bands: inverted.map((b) => [b]) };
  const otherPdq = { ...pdq, hash_value: Buffer.from(Buffer.from(pdq.hash_value, 'hex').map((b) => 255 - b)).toString('hex') };
  const files = { pdqOnly: hex(), hashOnly: hex(), both: hex(), neither: hex() };
  for (const [file, body] of [
    [files.pdqOnly, { perceptual_hash: otherFp, pdq_hash: pdq }],
    [files.hashOnly, { perceptual_hash: fp }],
    [files.both, { perceptual_hash: fp, pdq_hash: pdq }],
    [files.neither, { perceptual_hash: otherFp, pdq_hash: otherPdq }],
  ] as const) {
    const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, ...body } });
    assert.is(r.status, 200, JSON.stringify(r.body));
  }
  const res = await fetch(`${srv.url}${S}/verify-file`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: photo });
  const answer = (await res.json()) as { signatures: Record<string, unknown>[] };
  assert.is(res.status, 200, JSON.stringify(answer));
  const of = (file: string) => answer.signatures.find((s) => s.file_hash === file);
  assert.is(of(files.pdqOnly)?.matched_by, 'PDQ');
  assert.is(of(files.pdqOnly)?.pdq_distance, 0);
  assert.is(of(files.pdqOnly)?.similarity, 100);
  assert.is(of(files.hashOnly)?.matched_by, 'ImagePHash');
  assert.not.ok('pdq_distance' in of(files.hashOnly)!);
  assert.is(of(files.both)?.matched_by, 'ImagePHash');
  assert.is(of(files.both)?.pdq_distance, 0);
  assert.is(of(files.neither), undefined);
  assert.is(answer.signatures.filter((s) => Object.values(files).includes(s.file_hash as string)).length, 3);
});

test('POST /verify-file finds a rotated and a mirrored copy of a signed photo by PDQ (the query\'s dihedral hashes)', async () => {
  const u = await cellUser();
  const photo = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg'));
  const own = await perceptualHashes(new Uint8Array(photo));
  const file = hex();
  const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, perceptual_hash: own.fingerprint, pdq_hash: own.pdq_hash } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  for (const [edit, copy] of [
    ['rotated 90', await sharp(photo).rotate(90).jpeg({ quality: 85 }).toBuffer()],
    ['mirrored', await sharp(photo).flop().jpeg({ quality: 85 }).toBuffer()],
    ['rotated 180', await sharp(photo).rotate(180).jpeg({ quality: 85 }).toBuffer()],
  ] as const) {
    const res = await fetch(`${srv.url}${S}/verify-file`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: copy });
    const answer = (await res.json()) as { signatures: Record<string, unknown>[] };
    assert.is(res.status, 200, JSON.stringify(answer));
    const found = answer.signatures.find((s) => s.file_hash === file);
    assert.ok(found !== undefined, `${edit}: not found`);
    assert.is(found!.matched_by, 'PDQ', edit); // ImagePHash alone misses these
    assert.ok(typeof found!.pdq_distance === 'number' && (found!.pdq_distance as number) <= 31, `${edit}: ${found!.pdq_distance}`);
  }
});

test('POST /verify-file of a video: found by VideoPHash or by vPDQ (80 % of the query frames with a partner), with matched_by', async () => {
  const u = await cellUser();
  const clip = new Uint8Array(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'cockatoo.mp4')));
  const own = await perceptualHashes(clip);
  const fp = own.fingerprint as { hash_type: string; hash_value: number[]; bands: number[][] };
  const vpdq = own.pdq_hash as { hash_type: 'vPDQ'; frames: { timestamp: number; hash_value: string; quality: number }[] };
  assert.is(fp.hash_type, 'VideoPHash');
  assert.is(vpdq.hash_type, 'vPDQ');
  const good = vpdq.frames.filter((f) => f.quality >= 50).length;
  assert.ok(good >= 2, `${good} frames of quality >= 50`);
  const invert = (b: number) => 255 - b;
  const otherFp = { hash_type: 'VideoPHash', hash_value: fp.hash_value.map(invert), bands: fp.bands.map((band) => band.map(invert)) };
  const invertHex = (h: string) => Buffer.from(Buffer.from(h, 'hex').map(invert)).toString('hex');
  const otherVpdq = { hash_type: 'vPDQ', frames: vpdq.frames.map((f) => ({ ...f, hash_value: invertHex(f.hash_value) })) };
  // a record holding the clip's frames for fewer than 80 % of the query's: one good frame among inverted ones
  const firstGood = vpdq.frames.findIndex((f) => f.quality >= 50);
  const partial = { hash_type: 'vPDQ', frames: vpdq.frames.map((f, i) => (i === firstGood ? f : { ...f, hash_value: invertHex(f.hash_value) })) };
  const files = { vpdqOnly: hex(), hashOnly: hex(), neither: hex(), partial: hex() };
  for (const [file, body] of [
    [files.vpdqOnly, { perceptual_hash: otherFp, pdq_hash: vpdq }],
    [files.hashOnly, { perceptual_hash: fp }],
    [files.neither, { perceptual_hash: otherFp, pdq_hash: otherVpdq }],
    [files.partial, { perceptual_hash: otherFp, pdq_hash: partial }],
  ] as const) {
    const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: file, ...body } });
    assert.is(r.status, 200, JSON.stringify(r.body));
  }
  const res = await fetch(`${srv.url}${S}/verify-file`, { method: 'POST', headers: { 'content-type': 'video/mp4' }, body: clip });
  const answer = (await res.json()) as { signatures: Record<string, unknown>[] };
  assert.is(res.status, 200, JSON.stringify(answer));
  const of = (file: string) => answer.signatures.find((s) => s.file_hash === file);
  assert.is(of(files.vpdqOnly)?.matched_by, 'vPDQ');
  assert.is(of(files.vpdqOnly)?.similarity, 100);
  assert.is(of(files.hashOnly)?.matched_by, 'VideoPHash');
  assert.is(of(files.neither), undefined);
  // one frame of `good` partners: a match only if that were 80 % of them
  assert.is(of(files.partial) !== undefined, 100 * 1 >= 80 * good, `partial with ${good} query frames`);
});

test.run();
