// A record's optional pdq_hash over real HTTP (issue 28): POST /sign and a vault's
// POST /publish carry it, GET /verify and /my-signatures answer it, and the answer
// re-verifies with node:crypto and the canonicalize package alone (thirteen fields
// when it is there, the twelve when not: a record without it keeps its bytes).
// postgres/suites.test.ts runs this file again on PostgreSQL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';

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

async function cellUser() {
  const { token, user } = await srv.register();
  const cell = await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium');
  return { token, agentKey: cell.agentKey };
}

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
interface Device { privateKey: KeyObject; agentKey: string; token: string }

async function device(): Promise<Device> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const agentKey = agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(jwk.x), 'base64url')));
  const ch = await api('POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: agentKey } });
  const signature = edSign(null, Buffer.from(ch.body.challenge, 'utf8'), privateKey).toString('base64');
  const login = await api('POST', '/api/v1/auth/vault/token', { body: { challenge: ch.body.challenge, agent_pub_key: agentKey, signature } });
  assert.ok(login.status === 200 || login.status === 201, JSON.stringify(login.body));
  return { privateKey, agentKey, token: login.body.token };
}

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

test.run();
