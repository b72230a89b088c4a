// Hostile records and request bodies over real HTTP on a real SQLite file (issue 14,
// items 2 and 6): the limits on what a record's free-form fields may hold, refused at
// every door (/sign, /sign-batch, /publish) with 400 invalid_request naming the field;
// stored rows beyond those limits (an older version's, or written past the door) never
// break an answer for anyone; and no JSON body reaches a 500 other than the spec's own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, sign as edSign } from 'node:crypto';
import canonicalize from 'canonicalize';
import { apiRequest, serverCellUser, startTestServer, testEngine, vaultDevice, type TestServer, type TestSql, type VaultDevice } from '../helpers/server.js';
import { MatchingService } from '../../server/src/matching/service.js';
import { RECORD_VALUE_LIMITS, RECORD_VALUE_MAX_DEPTH, type SignatureRecord } from '../../src/lib/records.js';
import type { NewSignature } from '../../server/src/store/index.js';

let srv: TestServer;
const S = '/api/v1/sign-it';

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
});

/** A request whose body is JSON text as given (deep values cannot go through JSON.stringify). */
const send = (method: string, path: string, opts: { token?: string; text?: string } = {}) => apiRequest(srv.url, method, path, opts);

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);

const hex = (n = 32) => randomBytes(n).toString('hex');

/** JSON text of arrays nested `depth` deep: `[[[]]]`. */
const deepText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** A JSON object's text with some values given as JSON text (sorted keys when `sorted`: RFC 8785 for flat keys). */
function objectText(entries: Record<string, string>, sorted = false): string {
  const keys = Object.keys(entries);
  if (sorted) keys.sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${entries[k]}`).join(',')}}`;
}

/** Every value of `o` as canonical JSON text, with `over` (JSON text) replacing some. */
function asTexts(o: Record<string, unknown>, over: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) out[k] = canonicalize(v)!;
  return { ...out, ...over };
}

// ---- identities

const cellUser = () => serverCellUser(srv, 'premium_plus');
/** A fresh vault identity: a key made here, logged in by challenge (its account is created then). */
const device = () => vaultDevice(srv.url);

const NULL_FIELDS = {
  intent: 'Authorship', ai_generation: 'None',
  content_rights: { license: 'CCBY', commercial_licensing: null, ai_training: null, contact_preference: null },
  integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
};

/**
 * The text of a publish body whose record is validly signed by `d`, with some fields
 * given as JSON text: the signature covers the canonical text exactly as sent.
 */
function vaultBodyText(d: VaultDevice, fileHash: string, over: Record<string, string>): string {
  const record = objectText(asTexts({ file_hash: fileHash, signer: d.agentKey, signed_at: Date.now(), ...NULL_FIELDS }, over), true);
  const signature = edSign(null, Buffer.from(record, 'utf8'), d.privateKey).toString('base64');
  return `${record.slice(0, -1)},"signature":${JSON.stringify(signature)}}`;
}

// ---- values beyond the limits, as JSON text

const IMAGE_HASH = { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] };
const TOO_DEEP = deepText(5000);
const JUST_TOO_DEEP = deepText(RECORD_VALUE_MAX_DEPTH + 1);
const TOO_MANY_ITEMS = JSON.stringify(Array.from({ length: RECORD_VALUE_LIMITS.tags.items + 1 }, () => 0));
const TOO_MANY_BYTES = JSON.stringify('x'.repeat(RECORD_VALUE_LIMITS.tags.bytes));

/** [what, field, field's value as JSON text]: each must be refused with 400 invalid_request naming `field`. */
const BEYOND: [string, string, string][] = [
  ['deep tags', 'tags', TOO_DEEP],
  ['tags one level too deep', 'tags', JUST_TOO_DEEP],
  ['deep expires_at', 'expires_at', `{"at":${TOO_DEEP}}`],
  ['deep perceptual_hash', 'perceptual_hash', `{"bands":${TOO_DEEP},"hash_type":"ImagePHash"}`],
  ['deep integrity_report', 'integrity_report', `{"issues_found":${TOO_DEEP}}`],
  ['deep objects in tags', 'tags', '{"a":'.repeat(3000) + '1' + '}'.repeat(3000)],
  ['too many items in tags', 'tags', TOO_MANY_ITEMS],
  ['too many keys in expires_at', 'expires_at', objectText(Object.fromEntries(Array.from({ length: RECORD_VALUE_LIMITS.expires_at.items + 1 }, (_, i) => [`k${String(i).padStart(5, '0')}`, '1'])), true)],
  ['too many bytes in tags', 'tags', TOO_MANY_BYTES],
  ['too many bytes in integrity_report', 'integrity_report', `{"notes":${JSON.stringify('y'.repeat(RECORD_VALUE_LIMITS.integrity_report.bytes))}}`],
  ['too many bytes in perceptual_hash', 'perceptual_hash', `{"hash_type":"AudioChromaprint","hash_value":${JSON.stringify(new Array(RECORD_VALUE_LIMITS.perceptual_hash.items).fill(255))}}`],
];

// ---------------------------------------------------------------- the doors

test('POST /publish: a validly signed record beyond the limits is 400 invalid_request naming the field; nothing stored', async () => {
  const d = await device();
  for (const [what, field, value] of BEYOND) {
    const file = hex();
    const r = await send('POST', `${S}/publish`, { text: vaultBodyText(d, file, { [field]: value }) });
    assert.is(r.status, 400, `${what}: ${r.text.slice(0, 200)}`);
    assert.equal([r.body.error, r.body.field], ['invalid_request', field], what);
    assert.match(r.body.message, field);
    const v = await api('GET', `${S}/verify?hash=${file}`);
    assert.equal([v.status, v.body.count], [200, 0], what);
  }
  // at the limits a record is taken: 32 levels, and every limit of tags at once but one byte
  const file = hex();
  const ok = await send('POST', `${S}/publish`, { text: vaultBodyText(d, file, { tags: deepText(RECORD_VALUE_MAX_DEPTH), expires_at: JSON.stringify('z'.repeat(RECORD_VALUE_LIMITS.expires_at.bytes - 2)) }) });
  assert.is(ok.status, 200, ok.text);
  assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.count, 1);
});

test('POST /sign and /sign-batch: the same limits, 400 invalid_request naming the field (after the spec 4.7 codes)', async () => {
  const u = await cellUser();
  for (const [what, field, value] of BEYOND) {
    const file = hex();
    const r = await send('POST', `${S}/sign`, { token: u.token, text: objectText({ file_hash: JSON.stringify(file), [field]: value }) });
    assert.is(r.status, 400, `${what}: ${r.text.slice(0, 200)}`);
    assert.equal([r.body.error, r.body.field], ['invalid_request', field], what);
    assert.is((await api('GET', `${S}/verify?hash=${file}`)).body.count, 0, what);
  }
  // spec 4.7 order: the codes of the spec come first
  let r = await send('POST', `${S}/sign`, { token: u.token, text: objectText({ file_hash: '"nothex"', tags: TOO_DEEP }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_hash']);
  r = await send('POST', `${S}/sign`, { token: u.token, text: objectText({ file_hash: JSON.stringify(hex()), comment: JSON.stringify('x'.repeat(281)), tags: TOO_DEEP }) });
  assert.equal([r.status, r.body.error], [400, 'invalid_comment']);
  // a batch: that file fails alone
  const good = hex();
  const b = await send('POST', `${S}/sign-batch`, {
    token: u.token,
    text: `{"files":[{"file_hash":"${good}"},{"file_hash":"${hex()}","perceptual_hash":{"bands":${TOO_DEEP}}}]}`,
  });
  assert.is(b.status, 200, b.text);
  assert.equal([b.body.signed, b.body.failed, b.body.results[1].error], [1, 1, 'invalid_request']);
  // shared metadata beyond the limits fails every file
  const shared = await send('POST', `${S}/sign-batch`, { token: u.token, text: `{"files":[{"file_hash":"${hex()}"}],"shared_metadata":{"tags":${TOO_MANY_BYTES}}}` });
  assert.equal([shared.status, shared.body.signed, shared.body.results[0].error], [200, 0, 'invalid_request']);
});

// ---------------------------------------------------------------- stored rows beyond the limits

/**
 * Where a stored record holds DEEP: arrays nested 20,000 deep, past what JSON.stringify
 * and canonicalize can recurse, and past SQLite's 1,000 levels. Swapped into the stored
 * text in SQL after the insert, as no code of this version writes such a record.
 */
const DEEP = '@@deep@@';
const STORED_DEEP = deepText(20_000);

const charged = (userId: string) => ({
  userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
  decide: (_u: unknown, k: number) => ({ quota: 'personal' as const, orgId: null, overage: new Array(k).fill(false) }),
});

/** Stores records past every door (DEEP swapped in), charged to nobody's limit. */
async function storeDirectly(userId: string, records: SignatureRecord[], store = srv.deps.store, db?: TestSql): Promise<NewSignature[]> {
  const rows: NewSignature[] = records.map((record) => ({
    record, signature: randomBytes(64).toString('base64'), action_hash: hex(), userId, appId: null, source: 'vault',
  }));
  await store.signatures.insertSignatures(rows, charged(userId));
  db ??= await srv.sql();
  for (const row of rows) await db.run('UPDATE signatures SET record = replace(record, ?, ?) WHERE action_hash = ?', [`"${DEEP}"`, STORED_DEEP, row.action_hash]);
  return rows;
}

function recordOf(signer: string, fileHash: string, over: Partial<SignatureRecord>): SignatureRecord {
  return {
    file_hash: fileHash, signer, signed_at: Date.now(), intent: 'Authorship', ai_generation: null,
    content_rights: { license: null, commercial_licensing: null, ai_training: null, contact_preference: 'AllowContactRequests' },
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
}

test('stored rows beyond the limits: /verify and /my-signatures answer 200, the field answered as null, other rows intact', async () => {
  const hostile = await device();
  const honest = await cellUser();
  const file = hex();
  const [honestRow] = await storeDirectly(honest.userId, [recordOf(honest.agentKey, file, { tags: ['kept'], expires_at: 1893456000000 })]);
  const hostileRows = await storeDirectly(hostile.userId, [
    recordOf(hostile.agentKey, file, { tags: DEEP }),
    recordOf(hostile.agentKey, file, { expires_at: { at: DEEP }, comment: 'still here' }),
    recordOf(hostile.agentKey, file, { integrity_report: { issues_found: DEEP } }),
    recordOf(hostile.agentKey, file, { perceptual_hash: { hash_type: 'AudioChromaprint', bands: DEEP } }),
    recordOf(hostile.agentKey, file, { tags: JSON.parse(TOO_MANY_BYTES) as string }),
    recordOf(hostile.agentKey, file, { tags: JSON.parse(deepText(RECORD_VALUE_MAX_DEPTH + 1)) as unknown }),
  ]);

  const v = await api('GET', `${S}/verify?hash=${file}`);
  assert.is(v.status, 200, v.text.slice(0, 200));
  assert.is(v.body.count, 7);
  const byHash = new Map<string, any>(v.body.signatures.map((s: any) => [s.action_hash, s]));
  assert.equal([byHash.get(honestRow.action_hash).tags, byHash.get(honestRow.action_hash).expires_at], [['kept'], 1893456000000]);
  const [tags, expires, report, fingerprint, big, deeper] = hostileRows.map((r) => byHash.get(r.action_hash));
  assert.equal([tags.tags, expires.expires_at, report.integrity_report, fingerprint.perceptual_hash, big.tags, deeper.tags], [null, null, null, null, null, null]);
  assert.equal([expires.comment, expires.signer, expires.contactable], ['still here', hostile.agentKey, true]);

  const mine = await api('GET', `${S}/my-signatures`, { token: hostile.token });
  assert.is(mine.status, 200, mine.text.slice(0, 200));
  assert.is(mine.body.signatures.length, 6);
  assert.ok(mine.body.signatures.every((s: any) => s.tags === null && s.expires_at === null && s.integrity_report === null && s.perceptual_hash === null));
  const theirs = await api('GET', `${S}/my-signatures`, { token: honest.token });
  assert.equal([theirs.status, theirs.body.signatures.map((s: any) => s.tags)], [200, [['kept']]]);
});

test('a stored fingerprinted row SQLite cannot parse: the match index still loads, verify-fuzzy answers 200', async () => {
  const hostile = await device();
  const honest = await cellUser();
  const [honestRow] = await storeDirectly(honest.userId, [recordOf(honest.agentKey, hex(), { perceptual_hash: IMAGE_HASH })]);
  const [bad] = await storeDirectly(hostile.userId, [recordOf(hostile.agentKey, hex(), { perceptual_hash: IMAGE_HASH, tags: DEEP })]);
  // an index loaded from SQLite, as at the next start (the server's own indexed the
  // row from the feed, before the tampering)
  const loaded = new MatchingService(srv.deps);
  try {
    const answer = await loaded.answer({ bands: IMAGE_HASH.bands, hash_value: IMAGE_HASH.hash_value }, ['ImagePHash'], 70);
    const files = (JSON.parse(answer.toString()) as { signatures: { file_hash: string }[] }).signatures.map((s) => s.file_hash);
    assert.ok(files.includes(honestRow.record.file_hash), answer.toString().slice(0, 300));
    // SQLite cannot read its fingerprint: not indexed. PostgreSQL reads the hash from the
    // column its insert wrote, not from the record: the row stays indexed.
    if (srv.engine === 'sqlite') assert.not.ok(files.includes(bad.record.file_hash));
  } finally {
    await loaded.close();
  }
  const r = await api('POST', `${S}/verify-fuzzy`, { body: { bands: IMAGE_HASH.bands, hash_value: IMAGE_HASH.hash_value } });
  assert.is(r.status, 200, r.text.slice(0, 200));
  const v = await api('GET', `${S}/verify?hash=${bad.record.file_hash}`);
  assert.equal([v.status, v.body.count, v.body.signatures[0].tags], [200, 1, null]);
});

// ---------------------------------------------------------------- no hostile body reaches a 500

/** Values that are not what an endpoint expects, as JSON text. */
const HOSTILE_VALUES: string[] = [
  '{"toString":1}', '{"toString":1,"valueOf":1,"toJSON":1}', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}',
  '[]', '["x"]', '[{"toString":1}]', '{}', '1', '-1', '0.5', '-0', '1e308', '1e400', '-1e400', '123456789012345678901234567890',
  'true', 'false', 'null', '""', '"\\ud800"', '"a\\udc00b"', '"\\u0000"', JSON.stringify('x'.repeat(300_000)), JSON.stringify('😀'.repeat(1000)),
  deepText(5000), '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
];
/** Whole bodies that are not the object an endpoint expects. */
const HOSTILE_BODIES: string[] = ['[]', '1', '"x"', 'null', 'true', '{"__proto__":{"polluted":1}}', deepText(5000), '[{"file_hash":1}]'];

interface Endpoint {
  method: string;
  path: string;
  /** A plausible body (each hostile value replaces one field of it in turn). */
  base: Record<string, unknown>;
  /** Nested fields to try too, as paths into `base`. */
  nested?: string[][];
  auth?: boolean;
}

function withValueAt(base: Record<string, unknown>, path: string[], text: string): string {
  const [head, ...rest] = path;
  const texts = asTexts(base);
  if (rest.length === 0) return objectText({ ...texts, [head]: text });
  const inner = base[head];
  if (Array.isArray(inner)) {
    const i = Number(rest[0]);
    const items = inner.map((x) => JSON.stringify(x));
    items[i] = rest.length === 1 ? text : withValueAt(inner[i] as Record<string, unknown>, rest.slice(1), text);
    return objectText({ ...texts, [head]: `[${items.join(',')}]` });
  }
  return objectText({ ...texts, [head]: withValueAt((inner ?? {}) as Record<string, unknown>, rest, text) });
}

test('no JSON body reaches a 500 other than signing_failed / revocation_failed, and every error is JSON with `error`', async () => {
  const u = await cellUser();
  const d = await device();
  const app = await api('POST', '/api/v1/developer/apps', { token: u.token, body: { name: 'Hostile test app' } });
  assert.is(app.status, 201, app.text);
  const signed = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } });
  const record = JSON.parse(vaultBodyText(d, hex(), {}));
  const ENDPOINTS: Endpoint[] = [
    { method: 'POST', path: '/api/v1/auth/register', base: { email: 'x@example.com', password: 'correct horse battery', display_name: 'X', username: 'xxx' } },
    { method: 'POST', path: '/api/v1/auth/login', base: { email_or_username: 'x@example.com', password: 'correct horse battery' } },
    { method: 'PATCH', path: '/api/v1/auth/me', auth: true, base: { display_name: 'Y', username: null, profile_picture: null, public_fields: ['username'], contact_opt_in: true } },
    { method: 'POST', path: '/api/v1/auth/vault/challenge', base: { agent_pub_key: d.agentKey } },
    { method: 'POST', path: '/api/v1/auth/vault/token', base: { challenge: 'c', agent_pub_key: d.agentKey, signature: 'AAAA' } },
    { method: 'POST', path: '/api/v1/auth/agents', auth: true, base: { challenge: 'c', agent_pub_key: d.agentKey, signature: 'AAAA' } },
    { method: 'POST', path: '/api/v1/developer/apps', auth: true, base: { name: 'n', redirect_uris: ['https://example.com/cb'], scopes: ['openid'], org_id: null } },
    { method: 'POST', path: `/api/v1/developer/apps/${app.body.id ?? app.body.app?.id}/token`, auth: true, base: { x: 1 } },
    {
      method: 'POST', path: `${S}/sign`, auth: true,
      base: { file_hash: hex(), intent: 'Authorship', ai_generation: 'none', content_rights: { license: 'cc-by', ai_training: 'not_allowed' }, comment: 'c', supersedes: null, perceptual_hash: IMAGE_HASH, integrity_report: null, expires_at: null, tags: ['t'] },
      nested: [['content_rights', 'license'], ['content_rights', 'ai_training'], ['perceptual_hash', 'bands'], ['perceptual_hash', 'hash_value']],
    },
    {
      method: 'POST', path: `${S}/sign-batch`, auth: true,
      base: { files: [{ file_hash: hex(), comment: 'c', content_rights: { license: 'cc-by' } }], shared_metadata: { comment: 's', intent: 'Witness' } },
      nested: [['files', '0'], ['files', '0', 'file_hash'], ['files', '0', 'comment'], ['files', '0', 'content_rights'], ['shared_metadata', 'comment'], ['shared_metadata', 'file_hash'], ['shared_metadata', 'content_rights']],
    },
    { method: 'POST', path: `${S}/revoke`, auth: true, base: { action_hash: signed.body.action_hash, reason: 'r' } },
    { method: 'POST', path: `${S}/set-thumbnail`, auth: true, base: { action_hash: signed.body.action_hash, thumbnail: 'data:image/png;base64,AAAA' } },
    { method: 'POST', path: `${S}/quota/sync-by-agent`, base: { agent_pub_key: d.agentKey, count: 1, timestamp: Date.now(), signature: 'ab'.repeat(64), client_id: null } },
    { method: 'POST', path: `${S}/publish`, base: record, nested: [['content_rights', 'license'], ['content_rights', 'commercial_licensing']] },
    { method: 'POST', path: `${S}/publish-revocation`, base: { action_hash: hex(), reason: 'r', revoked_at: Date.now(), signer: d.agentKey, signature: 'AAAA' } },
    { method: 'POST', path: `${S}/verify-fuzzy`, base: { bands: IMAGE_HASH.bands, hash_value: IMAGE_HASH.hash_value, pixels: null }, nested: [['bands', '0']] },
  ];
  const failures: string[] = [];
  let requests = 0;
  const check = async (e: Endpoint, what: string, text: string) => {
    requests += 1;
    const r = await send(e.method, e.path, { token: e.auth ? u.token : undefined, text });
    const spec500 = r.status === 500 && (r.body?.error === 'signing_failed' || r.body?.error === 'revocation_failed');
    if ((r.status === 500 && !spec500) || r.status > 500) failures.push(`${e.method} ${e.path} ${what}: ${r.status} ${r.text.slice(0, 160)}`);
    else if (r.status >= 400 && typeof r.body?.error !== 'string') failures.push(`${e.method} ${e.path} ${what}: ${r.status} without a JSON error: ${r.text.slice(0, 160)}`);
  };
  for (const e of ENDPOINTS) {
    for (const body of HOSTILE_BODIES) await check(e, `body ${body.slice(0, 30)}`, body);
    const paths = [...Object.keys(e.base).map((k) => [k]), ...(e.nested ?? [])];
    for (const path of paths) {
      for (const value of HOSTILE_VALUES) await check(e, `${path.join('.')} = ${value.slice(0, 40)}`, withValueAt(e.base, path, value));
    }
  }
  assert.ok(requests > 2000, String(requests));
  assert.equal(failures, [], `${failures.length} of ${requests}:\n${failures.slice(0, 40).join('\n')}`);
});

test.run();
