// `provenant verify FILE` and the transparency log (issue 27), as a command against real
// servers on loopback: it shows each record's place in the log; it remembers the
// checkpoint, and when a server with the same log key shows another tree (a fork: two
// databases, one key) it says so and exits 3.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { cli as runCli } from '../helpers/vault.js';

const engine = testEngine(import.meta.url);

/** `provenant ...args` (test/helpers/vault.ts) with `env` over this process's environment. */
async function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const r = await runCli(args, { ...process.env, ...env } as Record<string, string>);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function signFile(srv: TestServer, token: string, fileHash: string): Promise<string> {
  const r = await apiRequest(srv.url, 'POST', '/api/v1/sign-it/sign', { token, body: { file_hash: fileHash } });
  assert.is(r.status, 200, r.text);
  return r.body.action_hash;
}

test('verify shows the record in the log; a server with the same key and another tree is a fork (exit 3)', async () => {
  const secrets = mkdtempSync(join(tmpdir(), 'provenant-log-secrets-'));
  writeFileSync(join(secrets, 'log.key'), randomBytes(32), { mode: 0o600 });
  const env = { PROVENANT_RATE_LIMIT: 'off', PROVENANT_SECRETS_DIR: secrets, PROVENANT_BASE_URL: 'http://log.example' };
  const work = mkdtempSync(join(tmpdir(), 'provenant-cli-log-'));
  const file = join(work, 'file.txt');
  writeFileSync(file, `a file ${randomBytes(8).toString('hex')}\n`);
  const fileHash = createHash('sha256').update(await import('node:fs').then((fs) => fs.readFileSync(file))).digest('hex');
  const cliEnv = { XDG_CONFIG_HOME: join(work, 'config'), PROVENANT_VAULT_KEY: join(work, 'no-key.json') };
  const a = await startTestServer(env, { engine });
  const b = await startTestServer(env, { engine });
  try {
    for (const srv of [a, b]) await srv.deps.transparencyLog.checkpointer.close();
    const ua = await a.register();
    await createServerCell(a.deps, ua.user.id);
    await a.deps.store.accounts.setUserTier(ua.user.id, 'premium');
    const actionA = await signFile(a, ua.token, fileHash);
    await a.deps.transparencyLog.checkpointer.tick();

    const first = await cli(['verify', file, '--server', a.url], cliEnv);
    assert.is(first.code, 0, first.err);
    assert.match(first.out, actionA);
    assert.match(first.out, /log {9}in the log at index 0, checkpoint 1 signed by log\.example\/log/);
    // --json: each record's proof status, with the checkpoint it was proven under
    const json = await cli(['verify', file, '--server', a.url, '--json'], cliEnv);
    assert.is(json.code, 0, json.err);
    const proof = JSON.parse(json.out).log.proofs[actionA];
    assert.equal(proof, { status: 'verified', index: 0, checkpoint: { origin: 'log.example/log', size: 1, cosignatures: { verified: null, of: 0, other_signatures: 0 } } });
    const logs = join(work, 'config', 'provenant', 'logs');
    const [remembered] = readdirSync(logs);
    assert.is(statSync(join(logs, remembered!)).mode & 0o777, 0o600);

    // A grows: the next call proves the new tree extends the remembered one
    await signFile(a, ua.token, randomBytes(32).toString('hex'));
    await a.deps.transparencyLog.checkpointer.tick();
    const second = await cli(['verify', file, '--server', a.url], cliEnv);
    assert.is(second.code, 0, second.err);
    assert.match(second.out, /in the log at index 0, checkpoint 2 signed by log\.example\/log/);

    // B: same log key, another history (other entries first)
    const ub = await b.register();
    await createServerCell(b.deps, ub.user.id);
    await b.deps.store.accounts.setUserTier(ub.user.id, 'premium');
    for (let i = 0; i < 2; i++) await signFile(b, ub.token, randomBytes(32).toString('hex'));
    await signFile(b, ub.token, fileHash);
    await b.deps.transparencyLog.checkpointer.tick();
    const fork = await cli(['verify', file, '--server', b.url], cliEnv);
    assert.is(fork.code, 3, fork.out + fork.err);
    assert.match(fork.err, /FORK: the log log\.example\/log at size 3 does not extend the tree of size 2 seen before/);

    // a second signature of the same file on A, not under a checkpoint yet: not_logged
    const later = await signFile(a, ua.token, fileHash);
    const pending = await cli(['verify', file, '--server', a.url, '--json'], cliEnv);
    assert.is(pending.code, 0, pending.err);
    const proofs = JSON.parse(pending.out).log.proofs;
    assert.is(proofs[later].status, 'not_logged');
    assert.is(proofs[later].checkpoint.size, 2);
    assert.is(proofs[actionA].status, 'verified');
  } finally {
    await a.close();
    await b.close();
    rmSync(work, { recursive: true, force: true });
    rmSync(secrets, { recursive: true, force: true });
  }
});

test.run();
