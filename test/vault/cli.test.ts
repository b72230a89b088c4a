// `provenant vault ...` and `provenant verify` as child processes against a real test
// server on loopback: the key file, linking, signing with approval, quota checked
// before signing, revocation, the verify table and JSON, and every failure's message
// and exit code.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import { didFromAgentKey } from '../../src/lib/identity.js';
import { verifyRecord } from '../../src/browser.js'; // @noble/curves: a second Ed25519 implementation
import { verifyRecord as verifyRecordLib } from '../../src/lib/records.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, PHOTO, vaultEnv } from '../helpers/vault.js';
import { tempDir } from '../helpers/temp.js';

const test = suite('vault CLI');
let server: TestServer;
const PASSWORD = 'correct horse battery staple';
const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

/** A vault with an account: registered by e-mail, then `vault link`. */
async function linkedVault(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const env = vaultEnv(server.url, extra);
  const email = `ana-${Math.random().toString(36).slice(2)}@example.org`;
  await server.register(email, { password: PASSWORD });
  assert.is((await cli(['vault', 'init'], env)).status, 0);
  const linked = await cli(['vault', 'link', '--email', email, '--password-stdin'], env, `${PASSWORD}\n`);
  assert.is(linked.status, 0, linked.stderr);
  return env;
}

test('init writes a 0600 key file in a 0700 folder and prints the agent key and DID', async () => {
  const env = vaultEnv(server.url);
  const r = await cli(['vault', 'init', '--json'], env);
  assert.is(r.status, 0, r.stderr);
  const { agent_pub_key, did } = JSON.parse(r.stdout);
  assert.match(agent_pub_key, /^uhCAk/);
  assert.is(did, didFromAgentKey(agent_pub_key));
  assert.is(statSync(env.PROVENANT_VAULT_KEY).mode & 0o777, 0o600);
  assert.is(statSync(dirname(env.PROVENANT_VAULT_KEY)).mode & 0o777, 0o700);
  const again = await cli(['vault', 'init'], env);
  assert.is(again.status, 1);
  assert.match(again.stderr, /never overwrites/);
  const who = JSON.parse((await cli(['vault', 'whoami', '--json'], env)).stdout);
  assert.equal([who.agent_pub_key, who.did, who.encrypted, who.account], [agent_pub_key, did, false, null]);
});

test('every failure is a clear message and exit 1: no key file, wrong passphrase, unreachable server, no account', async () => {
  const env = vaultEnv(server.url);
  const none = await cli(['vault', 'sign', PHOTO, '--yes'], env);
  assert.is(none.status, 1);
  assert.match(none.stderr, /no key file at .*vault init/);

  assert.is((await cli(['vault', 'init'], { ...env, PROVENANT_VAULT_PASSPHRASE: 'right one' })).status, 0);
  const wrong = await cli(['vault', 'sign', PHOTO, '--yes'], { ...env, PROVENANT_VAULT_PASSPHRASE: 'wrong one' });
  assert.is(wrong.status, 1);
  assert.match(wrong.stderr, /wrong passphrase/);

  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const away = await cli(['vault', 'sign', PHOTO, '--yes', '--server', `http://127.0.0.1:${closed}`], { ...env, PROVENANT_VAULT_PASSPHRASE: 'right one' });
  assert.is(away.status, 1);
  assert.match(away.stderr, /cannot reach the server/);

  const unlinked = await cli(['vault', 'sign', PHOTO, '--yes'], { ...env, PROVENANT_VAULT_PASSPHRASE: 'right one' });
  assert.is(unlinked.status, 1);
  assert.match(unlinked.stderr, /no account .*vault link/);

  const badFlag = await cli(['vault', 'sign', PHOTO, '--license', 'mine'], { ...env, PROVENANT_VAULT_PASSPHRASE: 'right one' });
  assert.is(badFlag.status, 2);
  assert.match(badFlag.stderr, /--license: content_rights.license must be one of cc0/);
});

test('an encrypted key opens with the passphrase typed on stdin', async () => {
  const env = await linkedVault({ PROVENANT_VAULT_PASSPHRASE: 'sesame' });
  const key = readFileSync(env.PROVENANT_VAULT_KEY, 'utf8');
  assert.ok(key.includes('encrypted_private_key') && !key.includes('"private_key"'));
  const { PROVENANT_VAULT_PASSPHRASE: _, ...noEnv } = env;
  const r = await cli(['vault', 'quota', '--json'], noEnv, 'sesame\n');
  assert.is(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).used, 0);
});

test('sign: shown, approved on stdin, published; the action hash is the one GET /verify answers, the record re-verifies', async () => {
  const env = await linkedVault();
  const declined = await cli(['vault', 'sign', PHOTO, '--license', 'cc-by'], env, 'n\n');
  assert.is(declined.status, 1);
  assert.match(declined.stderr, /sha256 +[0-9a-f]{64}/);
  assert.match(declined.stderr, /nothing signed: not approved/);

  const r = await cli(['vault', 'sign', PHOTO, '--license', 'cc-by', '--ai-generation', 'none', '--comment', 'Market day', '--json'], env, 'y\n');
  assert.is(r.status, 0, r.stderr);
  const { results } = JSON.parse(r.stdout);
  assert.is(results.length, 1);
  assert.equal(Object.keys(results[0]).sort(), ['action_hash', 'file', 'file_hash']);
  assert.is(results[0].file_hash, sha256(PHOTO));
  const answer = (await (await fetch(`${server.url}/api/v1/sign-it/verify?hash=${results[0].file_hash}`)).json()) as { signatures: { action_hash: string; comment: string; content_rights: { license: string }; perceptual_hash: unknown }[] };
  const stored = answer.signatures.find((s) => s.action_hash === results[0].action_hash)!;
  assert.ok(stored, 'the published record is found by its hash');
  assert.equal([stored.comment, stored.content_rights.license], ['Market day', 'CCBY']);
  assert.ok(stored.perceptual_hash, 'the fingerprint computed locally is in the record');
  // issue 28: and its PDQ, signed with it
  assert.is((stored as { pdq_hash?: { hash_type: string } }).pdq_hash?.hash_type, 'PDQ');
  assert.match(r.stderr, /pdq +[0-9a-f]{64}, quality \d+/);
  const log = readFileSync(join(dirname(env.PROVENANT_VAULT_KEY), 'records.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(verifyRecordLib(log[0].record) && verifyRecord(log[0].record));
});

test('over quota is said before anything is signed: three files on a free account (2 a month) publish none', async () => {
  const env = await linkedVault();
  const dir = tempDir('provenant-files-');
  const files = [1, 2, 3].map((i) => {
    const f = join(dir, `copy${i}.jpg`);
    copyFileSync(PHOTO, f);
    return f;
  });
  const r = await cli(['vault', 'sign', ...files, '--yes'], env);
  assert.is(r.status, 1);
  assert.match(r.stderr, /over quota: 3 files need 3 signs; community quota \(tier free\) has used 0 of 2/);
  assert.not.match(r.stderr, /To sign as/); // nothing computed, nothing shown for approval
  const list = JSON.parse((await cli(['vault', 'list', '--json'], env)).stdout);
  assert.equal(list.records, []);
});

test('amend, revoke and verify: the chain, the revocation, offline re-verification and --json shapes', async () => {
  const env = await linkedVault();
  const first = JSON.parse((await cli(['vault', 'sign', PHOTO, '--comment', 'first', '--yes', '--json'], env)).stdout).results[0].action_hash;
  const amended = await cli(['vault', 'sign', PHOTO, '--comment', 'second', '--supersedes', first, '--yes', '--json'], env);
  assert.is(amended.status, 0, amended.stderr);
  const second = JSON.parse(amended.stdout).results[0].action_hash;
  const before = JSON.parse((await cli(['verify', PHOTO, '--json'], env)).stdout).exact.signatures;
  assert.is(before.find((s: { action_hash: string }) => s.action_hash === first).superseded_by, second);
  const revoked = await cli(['vault', 'revoke', second, '--reason', 'by mistake', '--yes'], env);
  assert.is(revoked.status, 0, revoked.stderr);

  const json = await cli(['verify', PHOTO, '--json'], env);
  assert.is(json.status, 0, json.stderr);
  const { exact, perceptual } = JSON.parse(json.stdout);
  const byHash = new Map(exact.signatures.map((s: { action_hash: string }) => [s.action_hash, s]));
  const a = byHash.get(first) as { superseded_by: string; revoked: boolean };
  const b = byHash.get(second) as { supersedes: string; revoked: boolean; revocation_reason: string };
  // a revoked amendment supersedes nothing: the first record is the current one again
  assert.equal([a.superseded_by, a.revoked, b.supersedes, b.revoked, b.revocation_reason], [null, false, first, true, 'by mistake']);
  assert.ok(perceptual.signatures.some((s: { file_hash: string; match_type: string }) => s.file_hash === sha256(PHOTO) && s.match_type === 'perceptual'));

  const table = await cli(['verify', PHOTO], env);
  assert.is(table.status, 0, table.stderr);
  assert.match(table.stdout, /REVOKED .*\(by mistake\)/);
  assert.match(table.stdout, new RegExp(`amends ${first.slice(0, 12)}`));
  assert.match(table.stdout, /signature +re-verified offline/);
  const list = await cli(['vault', 'list'], env);
  assert.match(list.stdout, new RegExp(`${second} .*published, revoked, amends ${first.slice(0, 12)}`));
  const quota = JSON.parse((await cli(['vault', 'quota', '--json'], env)).stdout);
  assert.equal([quota.used, quota.limit, quota.allowed], [2, 2, false]);
});

test('verify refuses a record the server altered: its signature no longer matches', async () => {
  const env = await linkedVault();
  const hash = JSON.parse((await cli(['vault', 'sign', PHOTO, '--comment', 'mine', '--yes', '--json'], env)).stdout).results[0].action_hash;
  const db = await server.sql();
  const row = (await db.get('SELECT record FROM signatures WHERE action_hash = ?', [hash])) as { record: string };
  await db.run('UPDATE signatures SET record = ? WHERE action_hash = ?', [row.record.replace('"mine"', '"not mine"'), hash]);
  const r = await cli(['verify', PHOTO], env);
  assert.is(r.status, 1);
  assert.match(r.stderr, new RegExp(`refused: the server's record ${hash} does not match`));
});

test.run();
