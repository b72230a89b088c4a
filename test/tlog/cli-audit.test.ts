// `provenant log audit --server URL` (issue 27) as a command against a real server on
// loopback: a log of records, a revocation and a thumbnail checks; an entry changed in the
// database behind the server's back (the served bundle no longer matches its tile) is
// refused, exit 1; a fresh audit of a served log that is not the checkpoint's tree is too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiRequest, startTestServer, testEngine } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { cli as runCli } from '../helpers/vault.js';

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

test.run();
