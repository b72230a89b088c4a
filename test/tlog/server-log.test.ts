// The transparency log as the server serves it (issue 27), over real HTTP on loopback and
// a real store (SQLite; postgres/suites.test.ts-style reruns with ?engine=postgres): every
// stored event is an entry in commit order, served as c2sp.org/tlog-tiles; the checkpoint
// verifies with the served key; the leaf hashes and root are recomputed here with
// node:crypto alone; proofs verify; record entries re-verify with node:crypto Ed25519; bad
// tile paths are 404 with the usual body; the events stored before the log are appended
// first on upgrade; a witness cosigns, and refuses a rewritten history.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, randomBytes, verify as edVerify } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import {
  decodeEntryBundle, decodeLogEntry, parseProofBundle, SIG_ED25519, startWitness, verifierOf, verifyCheckpoint, verifyProofBundle, type RunningWitness,
} from 'provenant';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { agentKeyPublicBytes } from './agent-key.js';
import { Checkpointer } from '../../server/src/tlog/checkpointer.js';
import { unlimitedCharge } from '../helpers/charge.js';
import type { SignatureRecord } from '../../src/lib/records.js';

const S = '/api/v1/sign-it';
const engine = testEngine(import.meta.url);
const hex = (n = 32) => randomBytes(n).toString('hex');
const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
/** RFC 9162 2.1.1 MTH over leaf hashes, written out here with node:crypto (k: largest power of two below n). */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Uint8Array.of(1), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

async function getText(srv: TestServer, path: string): Promise<{ status: number; headers: Headers; bytes: Uint8Array; text: string }> {
  const res = await fetch(srv.url + path);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: Buffer.from(bytes).toString('utf8') };
}

async function cellUser(srv: TestServer) {
  const { token, user } = await srv.register();
  await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium');
  return { token, userId: user.id };
}

async function checkpointNow(srv: TestServer): Promise<void> {
  await srv.deps.transparencyLog.checkpointer.tick();
}

test('every stored event is an entry, in commit order; tiles, checkpoint and proofs check with node:crypto', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  try {
    const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);
    // checkpoints from here on only when this test says (tick): its background rounds stop
    await srv.deps.transparencyLog.checkpointer.close();
    // an empty log has a checkpoint from the start
    let cp = await getText(srv, '/log/checkpoint');
    assert.is(cp.status, 200);
    const vkey = (await getText(srv, '/log/key')).text.trim();
    assert.match(vkey, /^localhost\/log\+[0-9a-f]{8}\+/);
    assert.is(verifyCheckpoint(cp.text, { logKeys: [vkey] }).checkpoint.size, 0);

    const u = await cellUser(srv);
    const signed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), comment: `n${i} é` } });
      assert.is(r.status, 200, r.text);
      signed.push(r.body.action_hash);
    }
    const batch = await api('POST', `${S}/sign-batch`, { token: u.token, body: { files: [{ file_hash: hex() }, { file_hash: hex() }] } });
    assert.is(batch.status, 200, batch.text);
    const batchHashes = (batch.body.results as { action_hash: string }[]).map((r) => r.action_hash);
    assert.is((await api('POST', `${S}/revoke`, { token: u.token, body: { action_hash: signed[1], reason: 'typo' } })).status, 200);
    assert.is((await api('POST', `${S}/set-thumbnail`, { token: u.token, body: { action_hash: signed[0], thumbnail: 'data:image/png;base64,AAAA' } })).status, 200);

    // before the next checkpoint, the proof waits (log_pending), never a 500
    const pending = await api('GET', `${S}/proof?action_hash=${signed[2]}`);
    assert.equal([pending.status, pending.body.error], [404, 'log_pending']);

    await checkpointNow(srv);
    cp = await getText(srv, '/log/checkpoint');
    assert.is(cp.headers.get('cache-control'), 'public, max-age=1');
    const opened = verifyCheckpoint(cp.text, { logKeys: [vkey] });
    assert.is(opened.checkpoint.size, 7);

    // entries: the bundle of level-0 tile 0 at width 7, in commit order
    const bundle = await getText(srv, '/log/tile/entries/000.p/7');
    assert.is(bundle.status, 200);
    assert.is(bundle.headers.get('cache-control'), 'no-cache');
    const entries = decodeEntryBundle(bundle.bytes, 7);
    const decoded = entries.map((e) => JSON.parse(Buffer.from(e).toString('utf8')) as Record<string, any>);
    assert.equal(decoded.map((e) => e.kind), ['record', 'record', 'record', 'record', 'record', 'revocation', 'thumbnail']);
    assert.equal(decoded.map((e) => e.action_hash), [...signed, ...batchHashes, signed[1], signed[0]]);
    for (const [i, e] of decoded.entries()) {
      // RFC 8785 as the canonicalize package writes it, byte for byte
      assert.is(Buffer.from(entries[i]!).toString('utf8'), canonicalize(e));
      decodeLogEntry(entries[i]!);
    }
    // the signer's Ed25519 signature re-verified with node:crypto from the entry alone
    for (const e of decoded.filter((x) => x.kind === 'record')) {
      const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), agentKeyPublicBytes(e.record.signer)]), format: 'der', type: 'spki' });
      assert.ok(edVerify(null, Buffer.from(canonicalize(e.record)!, 'utf8'), key, Buffer.from(e.signature, 'base64')), 'record signature');
    }
    const revocation = decoded[5]!;
    const revKey = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), agentKeyPublicBytes(revocation.signer)]), format: 'der', type: 'spki' });
    const revBytes = canonicalize({ action_hash: revocation.action_hash, reason: revocation.reason, revoked_at: revocation.revoked_at, signer: revocation.signer })!;
    assert.ok(edVerify(null, Buffer.from(revBytes, 'utf8'), revKey, Buffer.from(revocation.signature, 'base64')), 'revocation signature');
    assert.is(decoded[6]!.sha256, createHash('sha256').update('data:image/png;base64,AAAA').digest('hex'));

    // the level-0 tile holds SHA-256(0x00 || entry); the root is the checkpoint's
    const leaves = entries.map((e) => sha256(Uint8Array.of(0), e));
    const tile = await getText(srv, '/log/tile/0/000.p/7');
    assert.is(tile.status, 200);
    assert.equal(Buffer.from(tile.bytes), Buffer.concat(leaves));
    assert.equal(Buffer.from(mth(leaves)), Buffer.from(opened.checkpoint.rootHash));
    // a narrower partial tile is the prefix of today's
    assert.equal(Buffer.from((await getText(srv, '/log/tile/0/000.p/3')).bytes), Buffer.concat(leaves.slice(0, 3)));

    // the proof bundle of each record verifies against its entry
    for (const [n, hash] of [...signed, ...batchHashes].entries()) {
      const p = await getText(srv, `${S}/proof?action_hash=${hash}`);
      assert.is(p.status, 200, p.text);
      const v = verifyProofBundle(p.text, { entry: entries[n]! }, { logKeys: [vkey] });
      assert.is(v.index, n);
    }
    const unknown = await api('GET', `${S}/proof?action_hash=${hex()}`);
    assert.equal([unknown.status, unknown.body.error], [404, 'not_found']);
    const bad = await api('GET', `${S}/proof?action_hash=xyz`);
    assert.equal([bad.status, bad.body.error], [400, 'invalid_hash']);
  } finally {
    await srv.close();
  }
});

test('bad and absent tile paths: 404 with the usual error body, never a 500', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  try {
    const u = await cellUser(srv);
    assert.is((await apiRequest(srv.url, 'POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).status, 200);
    await checkpointNow(srv);
    for (const path of [
      '/log/tile/0/000', // full tile: not there at size 1
      '/log/tile/0/000.p/2', // wider than the checkpoint's
      '/log/tile/0/0', '/log/tile/0/0000', '/log/tile/0/x000/001', '/log/tile/0/000.p/0', '/log/tile/0/000.p/256', '/log/tile/0/000.p/01',
      '/log/tile/1/000.p/1', '/log/tile/64/000', '/log/tile/-1/000', '/log/tile/0/abc', '/log/tile/entries/000.p/2', '/log/tile/entries/001',
      '/log/tile/entries', '/log/tile/', '/log/tile/0/%00', '/log/tile/0/000.p/1/extra', '/log/tile/99999999999999999999/000',
    ]) {
      const r = await apiRequest(srv.url, 'GET', path);
      assert.is(r.status, 404, path);
      assert.is(r.body.error, 'not_found', path);
    }
    assert.is((await getText(srv, '/log/tile/0/000.p/1')).status, 200);
  } finally {
    await srv.close();
  }
});

test('full tiles are immutable and served as such; the signer keeps up across 600 entries', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  try {
    for (let i = 0; i < 6; i++) {
      const u = await cellUser(srv); // 100 signs each: a premium user's month
      const r = await apiRequest(srv.url, 'POST', `${S}/sign-batch`, { token: u.token, body: { files: Array.from({ length: 100 }, () => ({ file_hash: hex() })) } });
      assert.is(r.status, 200, r.text);
      if (i % 2 === 0) await checkpointNow(srv); // checkpoints at 100, 300, 500 and 600
    }
    await checkpointNow(srv);
    const vkey = (await getText(srv, '/log/key')).text.trim();
    const { checkpoint } = verifyCheckpoint((await getText(srv, '/log/checkpoint')).text, { logKeys: [vkey] });
    assert.is(checkpoint.size, 600);
    const t0 = await getText(srv, '/log/tile/0/000');
    assert.is(t0.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const e0 = await getText(srv, '/log/tile/entries/000');
    assert.is(e0.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const e1 = await getText(srv, '/log/tile/entries/001');
    const e2 = await getText(srv, '/log/tile/entries/002.p/88');
    const entries = [...decodeEntryBundle(e0.bytes, 256), ...decodeEntryBundle(e1.bytes, 256), ...decodeEntryBundle(e2.bytes, 88)];
    const leaves = entries.map((e) => sha256(Uint8Array.of(0), e));
    assert.equal(Buffer.from(t0.bytes), Buffer.concat(leaves.slice(0, 256)));
    assert.equal(Buffer.from(mth(leaves)), Buffer.from(checkpoint.rootHash));
    // level 1 at size 600: two full level-0 tiles' roots
    const t1 = await getText(srv, '/log/tile/1/000.p/2');
    assert.equal(Buffer.from(t1.bytes), Buffer.concat([mth(leaves.slice(0, 256)), mth(leaves.slice(256, 512))]));
    // served again (from memory) byte for byte
    assert.equal(Buffer.from((await getText(srv, '/log/tile/0/000')).bytes), Buffer.from(t0.bytes));
  } finally {
    await srv.close();
  }
});

test('GET /verify: each signature\'s log_index, null until a checkpoint covers it, then the proof bundle\'s index (never a cached null)', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  try {
    const u = await cellUser(srv);
    const verifyIndexes = async (fileHash: string): Promise<(number | null)[]> => {
      const r = await apiRequest(srv.url, 'GET', `${S}/verify?hash=${fileHash}`);
      assert.is(r.status, 200, r.text);
      return (r.body.signatures as { log_index: number | null }[]).map((x) => x.log_index);
    };
    const proofIndex = async (actionHash: string): Promise<number> => {
      const p = await getText(srv, `${S}/proof?action_hash=${actionHash}`);
      assert.is(p.status, 200, p.text);
      return parseProofBundle(p.text).index;
    };

    // the background signer (one round a second): null or the index at once, the index soon
    const fileHash = hex();
    const signed = await apiRequest(srv.url, 'POST', `${S}/sign`, { token: u.token, body: { file_hash: fileHash } });
    assert.is(signed.status, 200, signed.text);
    const first = await verifyIndexes(fileHash);
    assert.is(first.length, 1);
    assert.ok(first[0] === null || Number.isInteger(first[0]), String(first[0]));
    let index: number | null = first[0]!;
    for (let i = 0; index === null && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      [index] = await verifyIndexes(fileHash);
    }
    assert.ok(index !== null, 'log_index appears once the entry is in a checkpoint');
    assert.is(index, await proofIndex(signed.body.action_hash));
    assert.equal(await verifyIndexes(fileHash), [index], 'the same from the cache');

    // without the background signer: a pending answer read with the cache caught up is
    // served, not kept; after the next checkpoint the answer has the index
    await srv.deps.transparencyLog.checkpointer.close();
    const other = hex();
    const actions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await apiRequest(srv.url, 'POST', `${S}/sign`, { token: u.token, body: { file_hash: other, comment: `v${i}` } });
      assert.is(r.status, 200, r.text);
      actions.push(r.body.action_hash);
    }
    await srv.deps.verifyCache.caughtUp();
    assert.equal(await verifyIndexes(other), [null, null]);
    assert.equal(await verifyIndexes(other), [null, null]);
    const node = new Checkpointer({ store: srv.deps.transparencyLog.store, identity: srv.deps.transparencyLog.identity, witnesses: [], log: srv.deps.log });
    await node.tick();
    await node.close();
    const byAction = new Map<string, number>();
    const r = await apiRequest(srv.url, 'GET', `${S}/verify?hash=${other}`);
    for (const s of r.body.signatures as { action_hash: string; log_index: number }[]) byAction.set(s.action_hash, s.log_index);
    for (const a of actions) assert.is(byAction.get(a), await proofIndex(a));
    assert.is(new Set(byAction.values()).size, 2);
  } finally {
    await srv.close();
  }
});

test('upgrade: records, revocations and thumbnails stored before the log are appended first, in stored order', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  const batch: string[] = [];
  const hashes: string[] = [];
  try {
    const u = await cellUser(srv);
    for (let i = 0; i < 3; i++) hashes.push((await apiRequest(srv.url, 'POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).body.action_hash);
    assert.is((await apiRequest(srv.url, 'POST', `${S}/revoke`, { token: u.token, body: { action_hash: hashes[0] } })).status, 200);
    assert.is((await apiRequest(srv.url, 'POST', `${S}/set-thumbnail`, { token: u.token, body: { action_hash: hashes[2], thumbnail: 'data:image/png;base64,BBBB' } })).status, 200);
    // then 2,500 records in one batch (the backfill reads its events a thousand at a time)
    await new Promise((resolve) => setTimeout(resolve, 5));
    const rows = Array.from({ length: 2_500 }, (_, i) => ({
      record: {
        file_hash: hex(), signer: `uhCAk${randomBytes(36).toString('base64url')}`, signed_at: 1_767_225_600_000 + i, intent: 'Authorship', ai_generation: null, content_rights: null,
        integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
      } satisfies SignatureRecord,
      signature: randomBytes(64).toString('base64'), action_hash: hex(), userId: u.userId, appId: null, source: 'vault' as const,
    }));
    await srv.deps.store.signatures.insertSignatures(rows, unlimitedCharge(u.userId));
    batch.push(...rows.map((r) => r.action_hash));
    // the database as it was before migration 012 / 008: no log tables, the migration not applied
    const sql = await srv.sql();
    await sql.run('DROP TABLE log_entries');
    await sql.run('DROP TABLE log_tiles');
    await sql.run('DROP TABLE log_state');
    await sql.run('DELETE FROM schema_migrations WHERE version = ?', [engine === 'sqlite' ? 12 : 8]);
    await sql.close();
  } finally {
    await new Promise((resolve) => srv.http.close(resolve));
    await srv.deps.parts.close().catch(() => undefined);
  }
  // a new server on the same database runs the migration and the backfill at start
  const databaseUrl = srv.deps.config.databaseUrl;
  const again = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DATA_DIR: srv.dataDir, ...(databaseUrl === null ? {} : { PROVENANT_DATABASE_URL: databaseUrl }) }, { engine });
  try {
    const vkey = (await getText(again, '/log/key')).text.trim();
    const { checkpoint } = verifyCheckpoint((await getText(again, '/log/checkpoint')).text, { logKeys: [vkey] });
    assert.is(checkpoint.size, 2_505);
    const decoded = decodeEntryBundle((await getText(again, '/log/tile/entries/000')).bytes, 256).map((e) => JSON.parse(Buffer.from(e).toString('utf8')) as { kind: string; action_hash: string });
    assert.equal(decoded.slice(0, 5).map((e) => e.kind), ['record', 'record', 'record', 'revocation', 'thumbnail']);
    assert.equal(decoded.slice(0, 5).map((e) => e.action_hash), [...hashes, hashes[0], hashes[2]]);
    // the batch after them, in its order, across the backfill's thousands and the tiles
    const all = await again.deps.transparencyLog.store.entries(0, 2_505);
    assert.equal(all.slice(5).map((e) => (JSON.parse(Buffer.from(e).toString('utf8')) as { action_hash: string }).action_hash), batch);
  } finally {
    await again.close();
  }
});

test('a node whose log key or origin differs from the one that signed the stored checkpoint does not start; PROVENANT_LOG_ORIGIN keeps the origin across an address change', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  const databaseUrl = srv.deps.config.databaseUrl;
  const keyFile = join(srv.deps.config.secretsDir, 'log.key');
  let original: Buffer;
  try {
    const u = await cellUser(srv);
    assert.is((await apiRequest(srv.url, 'POST', `${S}/sign`, { token: u.token, body: { file_hash: hex() } })).status, 200);
    await srv.deps.transparencyLog.checkpointer.tick();
    original = readFileSync(keyFile);
  } finally {
    await new Promise((resolve) => srv.http.close(resolve));
    await srv.deps.parts.close().catch(() => undefined);
  }
  const env = (extra: Record<string, string> = {}) => ({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DATA_DIR: srv.dataDir, ...(databaseUrl === null ? {} : { PROVENANT_DATABASE_URL: databaseUrl }), ...extra });
  try {
    // another log.key (jwt.key and cell.key the same: the secrets fingerprint does not see it)
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    await startTestServer(env(), { engine }).then(
      async (s) => { await s.close(); assert.unreachable('a node with another log key started'); },
      (err: Error) => assert.match(err.message, /the log's stored checkpoint is not signed by this node's log key localhost\/log\+[0-9a-f]{8}\+/),
    );
    // the same key under another origin (PROVENANT_BASE_URL)
    writeFileSync(keyFile, original, { mode: 0o600 });
    await startTestServer(env({ PROVENANT_BASE_URL: 'https://other.example' }), { engine }).then(
      async (s) => { await s.close(); assert.unreachable('a node with another origin started'); },
      (err: Error) => assert.match(err.message, /not signed by this node's log key other\.example\/log\+/),
    );
    // the key as it was, the new address with the log's origin kept (PROVENANT_LOG_ORIGIN):
    // it starts, and serves the stored checkpoint
    const again = await startTestServer(env({ PROVENANT_BASE_URL: 'https://other.example', PROVENANT_LOG_ORIGIN: 'localhost/log' }), { engine });
    try {
      const vkey = (await getText(again, '/log/key')).text.trim();
      assert.match(vkey, /^localhost\/log\+/);
      assert.is(verifyCheckpoint((await getText(again, '/log/checkpoint')).text, { logKeys: [vkey] }).checkpoint.size, 1);
    } finally {
      await again.close();
    }
  } finally {
    rmSync(srv.dataDir, { recursive: true, force: true });
  }
});

test.run();
