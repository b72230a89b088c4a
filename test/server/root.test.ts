// The composition root (server/src/root.ts): one list of parts, built in order and
// closed in reverse, by a shutdown and by a start that failed; and the caches and the
// match index follow the store's change feed, so a write that reaches the store by
// any way (here: the store itself, no route) changes every answer at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/src/config.js';
import { createLogger, type Logger } from '../../server/src/log.js';
import { composeServer } from '../../server/src/root.js';
import { startServer } from '../../server/src/serve.js';
import { agentKeyFromPublicKey } from '../../src/lib/identity.js';
import { sha256Hex } from '../../src/lib/sha256.js';
import type { SignatureRecord } from '../../src/lib/records.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { startTestServer } from '../helpers/server.js';
import { unlimitedCharge } from '../helpers/charge.js';

/** The parts composeServer builds, in build order. */
const PARTS = ['store', 'pool', 'match_index', 'verify_cache', 'content_rights_cache', 'feed_window', 'rate_limits', 'uploads', 'token_verifiers', 'mail', 'contact_relay', 'verification_mail', 'webhooks', 'transparency_log'];
const S = '/api/v1/sign-it';

/** A debug logger whose lines are kept, parsed. */
function capturingLog(): { log: Logger; entries: Record<string, any>[] } {
  const entries: Record<string, any>[] = [];
  const sink = { write: (line: string) => entries.push(JSON.parse(line)) };
  return { log: createLogger('debug', sink, sink), entries };
}

const partsLogged = (entries: Record<string, any>[], msg: string) => entries.filter((e) => e.msg === msg).map((e) => e.part as string);

function configIn(dataDir: string, port = '0') {
  return loadConfig({ PORT: port, HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WORKERS: '1' });
}

test('every part is built in order on one list; close() closes them in reverse, a part added last first, each once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-root-'));
  try {
    const { log, entries } = capturingLog();
    const deps = await composeServer(configIn(dataDir), { log });
    const closedBeforeStore: string[] = [];
    deps.parts.add({ name: 'test_part', health: () => ({ status: 'ok' }), close: () => void closedBeforeStore.push(...partsLogged(entries, 'part closed')) });
    assert.equal(partsLogged(entries, 'part started'), [...PARTS, 'test_part']);
    await Promise.all([deps.parts.close(), deps.parts.close()]);
    await deps.parts.close();
    assert.equal(closedBeforeStore, [], 'the part added last closes first');
    assert.equal(partsLogged(entries, 'part closed'), ['test_part', ...[...PARTS].reverse()]);
    // closed for real: the store's engine is gone
    let pinged = true;
    await deps.store.ping().catch(() => (pinged = false));
    assert.not.ok(pinged, 'the store is closed');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a start that fails after the parts are built (busy port) closes every one of them, in reverse', async () => {
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-root-'));
  try {
    const { log, entries } = capturingLog();
    const port = String((holder.address() as AddressInfo).port);
    let failure: Error | undefined;
    await startServer(configIn(dataDir, port), { log }).catch((err: Error) => (failure = err));
    assert.match(failure?.message ?? 'started', /EADDRINUSE/);
    assert.equal(partsLogged(entries, 'part started'), PARTS);
    assert.equal(partsLogged(entries, 'part closed'), [...PARTS].reverse());
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a write through the store alone (no route) changes /verify, verify-fuzzy and verify-file at once: the caches follow the feed', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  try {
    const get = async (path: string, init?: RequestInit) => {
      const res = await fetch(srv.url + S + path, init);
      assert.is(res.status, 200, path);
      return (await res.json()) as { count: number; signatures: Record<string, any>[] };
    };
    const file = new Uint8Array(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg')));
    const fp = (await fingerprintFile(file))!;
    const fileHash = sha256Hex(file);
    const fuzzy = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bands: fp.bands, hash_value: fp.hash_value }) };
    const upload = { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: file };
    const answers = async () => ({
      verify: await get(`/verify?hash=${fileHash}`),
      fuzzy: await get('/verify-fuzzy', fuzzy),
      file: await get('/verify-file', upload),
    });
    // the answers before the write, asked twice: the second time from the caches
    for (let i = 0; i < 2; i++) {
      const before = await answers();
      assert.equal([before.verify.count, before.fuzzy.count, before.file.count], [0, 0, 0]);
    }
    assert.is(srv.deps.verifyCache.size, 1);
    assert.ok(srv.deps.matching.answers.size >= 1);

    const { user } = await srv.register();
    const signer = agentKeyFromPublicKey(new Uint8Array(randomBytes(32)));
    const record: SignatureRecord = {
      file_hash: fileHash, signer, signed_at: Date.now(), intent: 'Authorship', ai_generation: null,
      content_rights: { license: null, commercial_licensing: null, ai_training: null, contact_preference: 'AllowContactRequests' },
      integrity_report: null, perceptual_hash: fp, comment: null, supersedes: null, expires_at: null, tags: null,
    };
    const actionHash = randomBytes(32).toString('hex');
    await srv.deps.store.signatures.insertSignatures(
      [{ record, signature: randomBytes(64).toString('base64'), action_hash: actionHash, userId: user.id, appId: null, source: 'vault' }],
      unlimitedCharge(user.id),
    );
    const after = await answers();
    assert.equal([after.verify.count, after.fuzzy.count, after.file.count], [1, 1, 1]);
    assert.equal([after.verify.signatures[0].action_hash, after.fuzzy.signatures[0].file_hash, after.file.signatures[0].file_hash], [actionHash, fileHash, fileHash]);
    assert.is(after.verify.signatures[0].revoked, false);

    // a revocation and a profile grant, through the store too, each over a cached answer
    /** Asks until the answer is cached (the cache is bypassed until the feed is read past the last write). */
    const cachedVerify = async () => {
      const latest = await srv.deps.store.feed.latest();
      for (let i = 0; srv.deps.verifyCache.seq < latest; i++) {
        assert.ok(i < 200, 'the verify cache did not read the feed within 200 polls');
        await new Promise((r) => setTimeout(r, 10));
      }
      // an answer is cached once its log_index is known (the first checkpoint after the write)
      for (let i = 0; srv.deps.verifyCache.size < 1; i++) {
        assert.ok(i < 1000, 'the verify answer was not cached within 1,000 asks');
        await get(`/verify?hash=${fileHash}`);
        if (srv.deps.verifyCache.size < 1) await new Promise((r) => setTimeout(r, 20));
      }
      assert.is(srv.deps.verifyCache.size, 1);
    };
    await cachedVerify();
    await srv.deps.store.signatures.insertRevocation({ action_hash: actionHash, reason: 'test', revoked_at: Date.now(), signer, signature: 'x', source: 'vault', appId: null });
    assert.is((await get(`/verify?hash=${fileHash}`)).signatures[0].revoked, true);
    await cachedVerify();
    await srv.deps.store.accounts.updateUser(user.id, { displayName: 'Feed Follower', publicFields: ['display_name'] });
    assert.is((await get(`/verify?hash=${fileHash}`)).signatures[0].signer_display_name, 'Feed Follower');

    const health = (await (await fetch(`${srv.url}/healthz`)).json()) as { parts: Record<string, any> };
    assert.is(health.parts.match_index.fingerprints, 1);
    assert.ok(health.parts.verify_cache.seq >= 3, 'stored, revoked, profile');
    assert.is(health.parts.match_index.seq, health.parts.verify_cache.seq);
  } finally {
    await srv.close();
  }
});

test.run();
