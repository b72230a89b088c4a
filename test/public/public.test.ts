// GET /creator/:id (JSON and page), GET /content-rights, GET /badge and the page's own
// files: every rule of spec 2.6, 4.6, 4.14 and decisions.md 9, against answers worked
// out by hand from the records each test signs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { agentKeyFromPublicKey, didFromAgentKey, parseAgentKey, toBase64 } from 'provenant';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { newSigner, revoke, S, sign } from './support.js';

/** SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts). */
const engine = testEngine(import.meta.url);

const hex = () => randomBytes(32).toString('hex');
let srv: TestServer;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
});
test.after(async () => srv.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${srv.url}${path}`, { headers });

// ---------------------------------------------------------------- creator

test('creator: 400 invalid_id naming the field for anything but an agent key or a DID', async () => {
  for (const id of ['nope', 'uhCAkAAAA', 'did:key:zNotAKey', '12345']) {
    const r = await apiRequest(srv.url, 'GET', `${S}/creator/${encodeURIComponent(id)}`);
    assert.is(r.status, 400, id);
    assert.is(r.body.error, 'invalid_id');
    assert.is(r.body.field, 'id');
  }
});

test('creator: chains counted once by their latest, revocations, stats, member_since, contactable; same by agent key, base64 and DID', async () => {
  const a = await newSigner(srv, { displayName: 'Ana Hidden' });
  const [f1, f2, f3] = [hex(), hex(), hex()];
  const first = await sign(srv, a, { file_hash: f1, intent: 'Authorship', content_rights: { license: 'cc-by' } });
  await new Promise((r) => setTimeout(r, 5));
  const amended = await sign(srv, a, { file_hash: f1, intent: 'Approval', supersedes: first, content_rights: { license: 'cc-by-nc', contact_preference: 'allow_contact_requests' } });
  const other = await sign(srv, a, { file_hash: f2, intent: 'Witness', content_rights: { license: { custom: 'mine' } } });
  const gone = await sign(srv, a, { file_hash: f3, intent: 'Authorship' });
  await revoke(srv, a, gone, 'mistake');

  const r = await apiRequest(srv.url, 'GET', `${S}/creator/${a.agentKey}`);
  assert.is(r.status, 200);
  assert.is(r.headers.get('cache-control'), 'no-store');
  const firstRecord = (await srv.deps.store.signatures.get(first))!;
  assert.equal(r.body.creator, { agent_key: a.agentKey, did: didFromAgentKey(a.agentKey), member_since: firstRecord.record.signed_at, contactable: true });
  assert.equal(r.body.stats, { total: 3, active: 2, revoked: 1, by_intent: { Approval: 1, Witness: 1, Authorship: 1 }, by_license: { CCBYNC: 1, Custom: 1 } });
  const hashes = r.body.signatures.map((s: { action_hash: string }) => s.action_hash);
  assert.equal(hashes.sort(), [amended, other, gone].sort(), 'the amended version is counted by its latest only');
  const revoked = r.body.signatures.find((s: { action_hash: string }) => s.action_hash === gone);
  assert.equal([revoked.revoked, revoked.revocation_reason], [true, 'mistake']);
  assert.is(r.body.signatures[0].signer_display_name, null, 'no public_fields: no profile fields');

  const byDid = await apiRequest(srv.url, 'GET', `${S}/creator/${encodeURIComponent(didFromAgentKey(a.agentKey)!)}`);
  const byBase64 = await apiRequest(srv.url, 'GET', `${S}/creator/${encodeURIComponent(toBase64(parseAgentKey(a.agentKey)!))}`);
  assert.equal(byDid.body, r.body);
  assert.equal(byBase64.body, r.body);
});

test('creator: profile fields appear only where made public; a revoked contact opt-in is not contactable; an unknown key answers empty', async () => {
  const b = await newSigner(srv, { displayName: 'Bo Public', username: 'bo_public', publicFields: ['display_name'] });
  const file = hex();
  const action = await sign(srv, b, { file_hash: file, content_rights: { contact_preference: 'allow_contact_requests' } });
  let r = await apiRequest(srv.url, 'GET', `${S}/creator/${b.agentKey}`);
  assert.is(r.body.signatures[0].signer_display_name, 'Bo Public');
  assert.is(r.body.signatures[0].signer_username, null);
  assert.is(r.body.creator.contactable, true);
  await revoke(srv, b, action);
  r = await apiRequest(srv.url, 'GET', `${S}/creator/${b.agentKey}`);
  assert.is(r.body.creator.contactable, false);

  const stranger = agentKeyFromPublicKey(randomBytes(32));
  r = await apiRequest(srv.url, 'GET', `${S}/creator/${stranger}`);
  assert.is(r.status, 200);
  assert.equal(r.body.stats, { total: 0, active: 0, revoked: 0, by_intent: {}, by_license: {} });
  assert.equal(r.body.creator, { agent_key: stranger, did: didFromAgentKey(stranger), member_since: null, contactable: false });
  assert.equal(r.body.signatures, []);
});

test('creator page: Accept text/html and /c/:id; every value escaped; a strict CSP with no inline script', async () => {
  const evil = '<script>alert(1)</script>&"\'';
  const c = await newSigner(srv, { displayName: evil, publicFields: ['display_name'] });
  await sign(srv, c, { file_hash: hex(), comment: '<img src=x onerror=alert(2)>' });
  const pdq = { hash_type: 'PDQ', hash_value: hex(), quality: 87 };
  await sign(srv, c, { file_hash: hex(), pdq_hash: pdq });
  for (const res of [await get(`${S}/creator/${c.agentKey}`, { accept: 'text/html,application/xhtml+xml' }), await get(`/c/${c.agentKey}`)]) {
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
    assert.not.match(csp, /unsafe-inline/);
    const html = await res.text();
    assert.not.ok(html.includes('<script>alert'), 'the name is escaped');
    assert.not.ok(html.includes('<img src=x'), 'the comment is escaped');
    assert.ok(html.includes('&#60;script&#62;alert(1)&#60;/script&#62;&#38;&#34;&#39;'));
    assert.not.match(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
    assert.ok(html.includes(c.agentKey));
    assert.ok(html.includes(`<code class="wrap">${pdq.hash_value}</code> &middot; quality 87`), 'the signed PDQ is shown');
  }
  const json = await get(`${S}/creator/${c.agentKey}`, { accept: 'application/json' });
  assert.match(json.headers.get('content-type')!, /^application\/json/);
});

// ---------------------------------------------------------------- content rights

test('content-rights: the most restrictive value per field across signers; revoked and amended-away excluded; public, max-age=300', async () => {
  const [x, y, z] = [await newSigner(srv), await newSigner(srv), await newSigner(srv)];
  const file = hex();
  const old = await sign(srv, x, { file_hash: file, content_rights: { license: 'all-rights-reserved', ai_training: 'not_allowed' } });
  await new Promise((r) => setTimeout(r, 5));
  await sign(srv, x, { file_hash: file, supersedes: old, content_rights: { license: 'cc-by', ai_training: 'allowed', commercial_licensing: 'open_to_licensing' } });
  await sign(srv, y, { file_hash: file, content_rights: { license: 'cc-by-sa', ai_training: 'allowed_with_attribution', contact_preference: 'allow_contact_requests' } });
  const zAction = await sign(srv, z, { file_hash: file, content_rights: { license: 'cc-by-nc-nd', commercial_licensing: 'not_available' } });
  await revoke(srv, z, zAction);

  const res = await get(`${S}/content-rights?hash=${file.toUpperCase()}`);
  assert.is(res.status, 200);
  assert.is(res.headers.get('cache-control'), 'public, max-age=300');
  const body = await res.json();
  assert.equal(body.rights, { license: 'CCBYSA', commercial_licensing: 'OpenToLicensing', ai_training: 'AllowedWithAttribution', contact_preference: 'AllowContactRequests' });
  assert.is(body.file_hash, file);
  assert.is(body.signed, true);
  assert.is(body.signer_count, 2);
  assert.equal(body.signers.map((s: { signer: string }) => s.signer).sort(), [x.agentKey, y.agentKey].sort());
  assert.equal(Object.keys(body.signers[0]).sort(), ['ai_training', 'commercial_licensing', 'contact_preference', 'license', 'signed_at', 'signer']);

  const none = await (await get(`${S}/content-rights?hash=${hex()}`)).json();
  assert.equal({ ...none, file_hash: 'x' }, { file_hash: 'x', signed: false, signer_count: 0, rights: null, signers: [] });
  const custom = hex();
  await sign(srv, x, { file_hash: custom, content_rights: { license: { custom: 'ask me' } } });
  await sign(srv, y, { file_hash: custom, content_rights: { license: 'cc0' } });
  assert.equal((await (await get(`${S}/content-rights?hash=${custom}`)).json()).rights.license, { Custom: 'ask me' }, 'a custom license ranks with AllRightsReserved');
  for (const [q, code] of [['', 'missing_hash'], ['?hash=abc', 'invalid_hash']]) {
    const r = await apiRequest(srv.url, 'GET', `${S}/content-rights${q}`);
    assert.equal([r.status, r.body.error], [400, code]);
  }
});

test('content-rights: answers are cached (a write past the store is not seen), and dropped when a record of the file changes', async () => {
  const s = await newSigner(srv);
  const file = hex();
  const action = await sign(srv, s, { file_hash: file, content_rights: { license: 'cc0' } });
  // until the cache has read the sign's change it bypasses itself (read your writes)
  await srv.deps.contentRightsCache.caughtUp();
  const first = await (await get(`${S}/content-rights?hash=${file}`)).text();
  const db = await srv.sql();
  await db.run("UPDATE signatures SET file_hash = 'f' || substr(file_hash, 2) WHERE action_hash = ?", [action]);
  assert.is(await (await get(`${S}/content-rights?hash=${file}`)).text(), first, 'served from the cache');
  await db.run("UPDATE signatures SET file_hash = ? WHERE action_hash = ?", [file, action]);
  await revoke(srv, s, action);
  const after = await (await get(`${S}/content-rights?hash=${file}`)).json();
  assert.is(after.signed, false, 'the revocation dropped the cached answer');
});

// ---------------------------------------------------------------- badge

test('badge: SVG by default, both styles and themes, values escaped; JSON; bad options 400 naming the field', async () => {
  const evil = 'Zoë <b>&"\'\u0001';
  const s = await newSigner(srv, { displayName: evil, publicFields: ['display_name'] });
  const file = hex();
  await sign(srv, s, { file_hash: file, intent: 'Authorship', ai_generation: 'assisted' });
  const svgs = new Set<string>();
  for (const style of ['badge', 'minimal']) {
    for (const theme of ['light', 'dark']) {
      const res = await get(`${S}/badge?hash=${file}&style=${style}&theme=${theme}`);
      assert.is(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^image\/svg\+xml/);
      assert.is(res.headers.get('content-security-policy'), "default-src 'none'");
      const svg = await res.text();
      svgs.add(svg);
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.ok(svg.includes('Signed by Zoë &#60;b&#62;&#38;&#34;&#39;'), `${style} ${theme}: escaped`);
      assert.not.ok(svg.includes('<b>') || svg.includes('\u0001'), 'no raw markup, no character XML cannot hold');
    }
  }
  assert.is(svgs.size, 4, 'every style and theme differs');
  assert.match(await (await get(`${S}/badge?hash=${hex()}`)).text(), />Unsigned</);

  const json = await (await get(`${S}/badge?hash=${file}&format=json`)).json();
  assert.equal(json, {
    file_hash: file, signed: true, signer_count: 1,
    latest: { signer: s.agentKey, signer_did: didFromAgentKey(s.agentKey), signer_display_name: evil, signed_at: json.latest.signed_at, intent: 'Authorship', ai_generation: 'Assisted' },
  });
  for (const [field, value] of [['format', 'png'], ['style', 'round'], ['theme', 'blue']]) {
    const r = await apiRequest(srv.url, 'GET', `${S}/badge?hash=${file}&${field}=${value}`);
    assert.equal([r.status, r.body.error, r.body.field], [400, 'invalid_request', field]);
  }
});

// ---------------------------------------------------------------- the page's files

test('the page and its files: a strict CSP on the page, no inline script, the library modules and kernel served', async () => {
  const page = await get('/');
  if (page.status === 404) {
    console.log('  (dist/ not compiled: the page files are not served; run npm run build:ts)');
    return;
  }
  assert.is(page.status, 200);
  const csp = page.headers.get('content-security-policy')!;
  for (const directive of ["default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
    assert.ok(csp.includes(directive), directive);
  }
  const html = await page.text();
  assert.not.match(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
  assert.not.match(html, /\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
  for (const path of ['/assets/page.js', '/assets/page.css', '/badge.js', '/assets/provenant/lib/sha256.js', '/assets/provenant/core.simd.wasm']) {
    const res = await get(path);
    assert.is(res.status, 200, path);
    assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  }
  assert.is((await get('/assets/provenant/lib/../../package.json')).status, 404, 'only listed files');
});

test('per-IP limits of spec 8: creator 30/min, content-rights and badge 60/min, then 429 rate_limited', async () => {
  const limited = await startTestServer({}, { engine });
  try {
    const key = agentKeyFromPublicKey(randomBytes(32));
    for (const [path, max] of [[`${S}/creator/${key}`, 30], [`${S}/content-rights?hash=${hex()}`, 60], [`${S}/badge?hash=${hex()}`, 60]] as const) {
      const statuses = [];
      for (let i = 0; i <= max; i++) statuses.push((await fetch(`${limited.url}${path}`)).status);
      assert.equal(statuses.slice(0, max), new Array(max).fill(200), path);
      assert.is(statuses[max], 429, `${path}: request ${max + 1}`);
    }
  } finally {
    await limited.close();
  }
});

test.run();
