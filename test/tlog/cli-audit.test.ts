// `provenant log audit --server URL` (issue 27) as a command against a real server on
// loopback: a log of records, a revocation and a thumbnail checks; an entry changed in the
// database behind the server's back (the served bundle no longer matches its tile) is
// refused, exit 1; a fresh audit of a served log that is not the checkpoint's tree is too.
// A log past 64 tiles: a second audit resumes where the first saved its progress and
// counts on from there; a record logged with a signature that does not verify (checked
// in the audit's worker threads) is refused with its index.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiRequest, startTestServer, testEngine } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { cli as runCli } from '../helpers/vault.js';
import { unlimitedCharge } from '../helpers/charge.js';
import { agentKeyFromPublicKey, privateKeyFromSeed, publicKeyFromPrivateKey } from '../../src/lib/identity.js';
import { signRecord, type SignatureRecord } from '../../src/lib/records.js';

const engine = testEngine(import.meta.url);

/** `provenant ...args` (test/helpers/vault.ts) with `env` over this process's environment. */
async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const r = await runCli(args, { ...process.env, ...env } as Record<string, string>);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('log audit: a sound log checks; a tampered entry is refused', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  const work = mkdtempSync(join(tmpdir(), 'provenant-audit-'));
  const env = { XDG_CONFIG_HOME: join(work, 'config') };
  try {
    await srv.deps.transparencyLog.checkpointer.close();
    const { token, user } = await srv.register();
    await createServerCell(srv.deps, user.id);
    await srv.deps.store.accounts.setUserTier(user.id, 'premium');
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await apiRequest(srv.url, 'POST', '/api/v1/sign-it/sign', { token, body: { file_hash: randomBytes(32).toString('hex') } });
      hashes.push(r.body.action_hash);
    }
    assert.is((await apiRequest(srv.url, 'POST', '/api/v1/sign-it/revoke', { token, body: { action_hash: hashes[0], reason: 'x' } })).status, 200);
    assert.is((await apiRequest(srv.url, 'POST', '/api/v1/sign-it/set-thumbnail', { token, body: { action_hash: hashes[1], thumbnail: 'data:image/png;base64,AAAA' } })).status, 200);
    await srv.deps.transparencyLog.checkpointer.tick();

    const ok = await cli(['log', 'audit', '--server', srv.url], env);
    assert.is(ok.code, 0, ok.err);
    assert.match(ok.out, /localhost\/log: 7 entries, root matches the checkpoint/);
    assert.match(ok.out, /6 signatures re-verified, 1 thumbnail entries/);
    assert.match(ok.out, /5 sampled files: the 5 records \/verify answers are all in the log/);

    // an entry rewritten in the database: the served bundle is not its tile's hashes
    const sql = await srv.sql();
    await sql.run(`UPDATE log_entries SET entry = replace(entry, '"reason":"x"', '"reason":"y"') WHERE kind = 'revocation'`);
    const bad = await cli(['log', 'audit', '--server', srv.url, '--restart'], env);
    assert.is(bad.code, 1, bad.out);
    assert.match(bad.err, /the log does not check: the level-0 tile 0 is not the hashes of its entries/);
  } finally {
    await srv.close();
    rmSync(work, { recursive: true, force: true });
  }
});

test('log audit: a second run resumes where the first saved; a record whose signature does not verify is refused', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
  const work = mkdtempSync(join(tmpdir(), 'provenant-audit-'));
  const env = { XDG_CONFIG_HOME: join(work, 'config') };
  try {
    await srv.deps.transparencyLog.checkpointer.close();
    const { user } = await srv.register();
    const key = privateKeyFromSeed(new Uint8Array(32).fill(9));
    const signer = agentKeyFromPublicKey(publicKeyFromPrivateKey(key));
    let made = 0;
    const store = async (n: number, forge = false) => {
      const rows = Array.from({ length: n }, () => {
        const record: SignatureRecord = {
          file_hash: randomBytes(32).toString('hex'), signer, signed_at: 1_767_225_600_000 + made++, intent: 'Authorship', ai_generation: null,
          content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null,
        };
        const signed = signRecord(record, key);
        // forged: a signature of another record (a valid signature, not of these bytes)
        const signature = forge ? signRecord({ ...record, comment: 'not this' }, key).signature : signed.signature;
        return { record, signature, action_hash: signed.action_hash, userId: user.id, appId: null, source: 'vault' as const };
      });
      await srv.deps.store.signatures.insertSignatures(rows, unlimitedCharge(user.id));
      await srv.deps.transparencyLog.checkpointer.tick();
    };
    // 64 full tiles and then some: progress is saved after tile 63
    for (let i = 0; i < 8; i++) await store(2_050);
    const first = await cli(['log', 'audit', '--server', srv.url], env);
    assert.is(first.code, 0, first.err);
    assert.match(first.out, /16400 entries, root matches the checkpoint/);
    assert.match(first.out, /16400 entries read now; 16400 signatures re-verified/);

    await store(100);
    const second = await cli(['log', 'audit', '--server', srv.url], env);
    assert.is(second.code, 0, second.err);
    assert.match(second.out, /16500 entries, root matches the checkpoint/);
    assert.match(second.out, /116 entries read now \(resumed at 16384\); 16500 signatures re-verified/);

    await store(1, true);
    const forged = await cli(['log', 'audit', '--server', srv.url], env);
    assert.is(forged.code, 1, forged.out);
    assert.match(forged.err, /the log does not check: entry 16500: its record's signature does not verify/);
    const again = await cli(['log', 'audit', '--server', srv.url, '--restart'], env);
    assert.is(again.code, 1, again.out);
    assert.match(again.err, /entry 16500: its record's signature does not verify/);
  } finally {
    await srv.close();
    rmSync(work, { recursive: true, force: true });
  }
});

test.run();
