// A record's optional iscc (issue 33) and features (issue 32) over real HTTP: a vault's
// POST /publish carries them signed, GET /verify and /my-signatures answer them, the
// answer re-verifies with node:crypto and the canonicalize package alone, and a record
// without them keeps its twelve fields' bytes. postgres/suites.test.ts runs this file
// again on PostgreSQL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, randomBytes, sign as edSign, verify as edVerify } from 'node:crypto';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { apiRequest, startTestServer, testEngine, vaultDevice, type TestServer } from '../helpers/server.js';
import { isccOfFile } from '../../src/media/iscc.js';

let srv: TestServer;
const S = '/api/v1/sign-it';
const FRUITS = join(import.meta.dirname, '../fixtures/media/fruits.jpg');

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
});

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);
const hex = (n = 32) => randomBytes(n).toString('hex');
const FIELDS = ['file_hash', 'signer', 'signed_at', 'intent', 'ai_generation', 'content_rights', 'integrity_report', 'perceptual_hash', 'comment', 'supersedes', 'expires_at', 'tags'];

/** The signed fields of an answer: the twelve, and each optional field it has. */
function signedFields(sig: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const f of FIELDS) record[f] = sig[f];
  for (const f of ['pdq_hash', 'iscc', 'features']) if (f in sig) record[f] = sig[f];
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

function twelve(signer: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    file_hash: hex(), signer, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
}

const signed = (record: Record<string, unknown>, key: Parameters<typeof edSign>[2]) => edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), key).toString('base64');

test('POST /publish with the file\'s ISCC-CODE: stored as signed, answered by /verify and /my-signatures, re-verified', async () => {
  const d = await vaultDevice(srv.url);
  const { iscc } = await isccOfFile(FRUITS);
  const record = twelve(d.agentKey, { iscc });
  const signature = signed(record, d.privateKey);
  const r = await api('POST', `${S}/publish`, { body: { ...record, signature } });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const s = (await api('GET', `${S}/verify?hash=${record.file_hash}`)).body.signatures[0];
  assert.is(s.iscc, iscc);
  assert.is(s.has_features, false);
  assert.ok(verifiesIndependently(s, signature));
  const own = (await api('GET', `${S}/my-signatures`, { token: d.token })).body.signatures.find((x: any) => x.action_hash === r.body.action_hash);
  assert.is(own.iscc, iscc);
  // the signature covers it: the twelve fields alone do not verify
  const { iscc: _dropped, ...without } = s;
  assert.not.ok(verifiesIndependently(without, signature));
});

test('an iscc that is not a canonical ISCC-CODE is 400 invalid_request naming it; nothing is stored', async () => {
  const d = await vaultDevice(srv.url);
  const { iscc, units } = await isccOfFile(FRUITS);
  for (const bad of [iscc.toLowerCase(), iscc.replace('ISCC:', ''), `${iscc.slice(0, 9)}-${iscc.slice(9)}`, units[0], 'ISCC:AAAA', 42, 'x'.repeat(201)]) {
    const record = twelve(d.agentKey, { iscc: bad });
    const r = await api('POST', `${S}/publish`, { body: { ...record, signature: signed(record, d.privateKey) } });
    assert.is(r.status, 400, `${String(bad)}: ${JSON.stringify(r.body)}`);
    assert.is(r.body.error, 'invalid_request');
    assert.match(JSON.stringify(r.body), 'iscc');
    assert.is((await api('GET', `${S}/verify?hash=${record.file_hash}`)).body.count, 0);
  }
});

test('a record without iscc or features answers neither key, and its twelve fields alone verify (the bytes as before)', async () => {
  const d = await vaultDevice(srv.url);
  const record = twelve(d.agentKey);
  const signature = signed(record, d.privateKey);
  assert.is((await api('POST', `${S}/publish`, { body: { ...record, iscc: null, signature } })).status, 200);
  const s = (await api('GET', `${S}/verify?hash=${record.file_hash}`)).body.signatures[0];
  assert.not.ok('iscc' in s);
  assert.not.ok('features' in s);
  assert.is(s.has_features, false);
  assert.ok(verifiesIndependently(s, signature));
});

test.run();
