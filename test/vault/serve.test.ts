// `provenant vault serve` as a child process, asked through the SDK's
// requestVaultSignature (and raw fetch for what a browser would send): approval in the
// terminal (the test writes the answer to the child's stdin), the typed failures of
// spec 7 (absent, locked, blocked, another identity, declined, no answer in time), the
// unpublished answer that draws no quota, and publishing for a linked desktop app.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import { verifyRecord } from '../../src/browser.js'; // @noble/curves, another Ed25519 than the vault's node:crypto
import { requestVaultSignature, VaultError, type VaultFailureCode } from '../../src/sdk/vault.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, startCli, vaultEnv, waitFor } from '../helpers/vault.js';

const test = suite('vault serve');
const PASSWORD = 'correct horse battery staple';
const HASH = 'ab'.repeat(32);
let server: TestServer;
const children: ChildProcessWithoutNullStreams[] = [];

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  for (const c of children) c.kill('SIGTERM');
  await server.close();
});

async function linkedEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const env = vaultEnv(server.url, extra);
  const email = `sam-${Math.random().toString(36).slice(2)}@example.org`;
  await server.register(email, { password: PASSWORD });
  assert.is((await cli(['vault', 'init'], env)).status, 0);
  assert.is((await cli(['vault', 'link', '--email', email, '--password-stdin'], env, `${PASSWORD}\n`)).status, 0);
  return env;
}

async function agentKeyOf(env: Record<string, string>): Promise<string> {
  return JSON.parse((await cli(['vault', 'whoami', '--json'], env)).stdout).agent_pub_key;
}

/** Starts `vault serve --port 0 ...args`; resolves with its URL once it listens. */
async function serve(env: Record<string, string>, ...args: string[]): Promise<{ url: string; child: ChildProcessWithoutNullStreams }> {
  const child = startCli(['vault', 'serve', '--port', '0', ...args], env);
  children.push(child);
  const seen = await waitFor(child.stdout, /on (http:\/\/127\.0\.0\.1:\d+)/);
  return { url: /on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen)![1], child };
}

async function failure(promise: Promise<unknown>): Promise<VaultFailureCode> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, VaultError);
    return (err as VaultError).code;
  }
  throw new Error('the request did not fail');
}

async function quotaUsed(agentKey: string): Promise<number> {
  return ((await (await fetch(`${server.url}/api/v1/sign-it/quota/by-agent?agent_pub_key=${agentKey}`)).json()) as { used: number }).used;
}

test('approved in the terminal: the signed record comes back unpublished (action_hash null, no quota drawn)', async () => {
  const env = await linkedEnv();
  const agentKey = await agentKeyOf(env);
  const { url, child } = await serve(env);
  const prompt = waitFor(child.stdout, /\[y\/N\]/);
  const answer = requestVaultSignature({ file_hash: HASH, content_rights: { license: 'cc-by' }, comment: 'from an app', signer: agentKey }, { vaultUrl: url });
  assert.match(await prompt, /Request 1 from a local app \(no web origin\)[\s\S]*rights +license CCBY[\s\S]*publish +no/);
  child.stdin.write('y\n');
  const { record, action_hash } = await answer;
  assert.is(action_hash, null);
  assert.equal([record.file_hash, record.signer, record.comment, record.content_rights?.license], [HASH, agentKey, 'from an app', 'CCBY']);
  assert.ok(verifyRecord(record));
  assert.is(await quotaUsed(agentKey), 0);
  const verify = (await (await fetch(`${server.url}/api/v1/sign-it/verify?hash=${HASH}`)).json()) as { count: number };
  assert.is(verify.count, 0, 'nothing was published');
});

test('declined, and no answer in time: nothing signed', async () => {
  const env = await linkedEnv();
  const { url, child } = await serve(env, '--approval-timeout', '1');
  const prompt = waitFor(child.stdout, /\[y\/N\]/);
  const declined = failure(requestVaultSignature({ file_hash: HASH }, { vaultUrl: url }));
  await prompt;
  child.stdin.write('n\n');
  assert.is(await declined, 'declined');
  assert.is(await failure(requestVaultSignature({ file_hash: HASH }, { vaultUrl: url })), 'timeout');
  const list = JSON.parse((await cli(['vault', 'list', '--json'], env)).stdout);
  assert.equal(list.records, []);
});

test('only allowed origins: CORS preflight for them, 403 without CORS headers for others; a foreign Host is refused', async () => {
  const env = await linkedEnv();
  assert.is((await cli(['vault', 'allow', 'https://app.example'], env)).status, 0);
  const { url, child } = await serve(env);
  const pre = await fetch(`${url}/v1/sign`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  assert.is(pre.status, 204);
  assert.is(pre.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(String(pre.headers.get('access-control-allow-headers')), /content-type/);
  const evil = await fetch(`${url}/v1/sign`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: JSON.stringify({ file_hash: HASH }) });
  assert.is(evil.status, 403);
  assert.is(evil.headers.get('access-control-allow-origin'), null);
  assert.is(((await evil.json()) as { error: string }).error, 'blocked');
  // fetch sets Host itself: a rebound page's request, by node:http
  const rebound = await new Promise<number>((resolve, reject) => {
    http.get(`${url}/v1/identity`, { headers: { host: 'attacker.example' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on('error', reject);
  });
  assert.is(rebound, 403);
  assert.is((await fetch(`${url}/v1/identity`)).status, 200);
  // the allowed origin is named in the prompt
  const prompt = waitFor(child.stdout, /\[y\/N\]/);
  const ok = fetch(`${url}/v1/sign`, { method: 'POST', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, body: JSON.stringify({ file_hash: HASH }) });
  assert.match(await prompt, /Request \d+ from https:\/\/app\.example/);
  child.stdin.write('yes\n');
  const res = await ok;
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), 'https://app.example');
});

test('typed failures: another identity, vault absent, invalid field, a web page asking to publish', async () => {
  const env = await linkedEnv();
  const { url } = await serve(env);
  const other = JSON.parse((await cli(['vault', 'init', '--json'], vaultEnv(server.url))).stdout).agent_pub_key;
  assert.is(await failure(requestVaultSignature({ file_hash: HASH, signer: other }, { vaultUrl: url })), 'other_identity');
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  assert.is(await failure(requestVaultSignature({ file_hash: HASH }, { vaultUrl: `http://127.0.0.1:${port}` })), 'vault_absent');
  try {
    await requestVaultSignature({ file_hash: HASH, comment: 'x'.repeat(281) }, { vaultUrl: url });
    assert.unreachable();
  } catch (err) {
    assert.is((err as VaultError).code, 'invalid_request');
    assert.match((err as VaultError).message, /comment/);
  }
  assert.is((await cli(['vault', 'allow', 'http://localhost:5173'], env)).status, 0);
  const page = await fetch(`${url}/v1/sign`, { method: 'POST', headers: { origin: 'http://localhost:5173', 'content-type': 'application/json' }, body: JSON.stringify({ file_hash: HASH, publish: true }) });
  assert.is(page.status, 403);
});

test('locked: an encrypted key without its passphrase answers vault_locked until the passphrase is typed', async () => {
  const env = await linkedEnv({ PROVENANT_VAULT_PASSPHRASE: 'open sesame' });
  const { PROVENANT_VAULT_PASSPHRASE: _, ...locked } = env;
  const { url, child } = await serve(locked);
  assert.is(await failure(requestVaultSignature({ file_hash: HASH }, { vaultUrl: url })), 'vault_locked');
  const wrong = waitFor(child.stdout, /wrong passphrase/);
  child.stdin.write('not it\n');
  await wrong;
  assert.is(await failure(requestVaultSignature({ file_hash: HASH }, { vaultUrl: url })), 'vault_locked');
  const unlocked = waitFor(child.stdout, /vault unlocked/);
  child.stdin.write('open sesame\n');
  await unlocked;
  const prompt = waitFor(child.stdout, /\[y\/N\]/);
  const answer = requestVaultSignature({ file_hash: HASH }, { vaultUrl: url });
  await prompt;
  child.stdin.write('y\n');
  assert.is((await answer).action_hash, null);
});

test('a desktop app linked to the identity has the vault publish; over quota is refused before the prompt', async () => {
  const env = await linkedEnv();
  const agentKey = await agentKeyOf(env);
  const { url, child } = await serve(env);
  for (const n of [1, 2]) {
    const prompt = waitFor(child.stdout, /publish +yes[\s\S]*\[y\/N\]/);
    const answer = requestVaultSignature({ file_hash: String(n).repeat(64), signer: agentKey, publish: true }, { vaultUrl: url });
    await prompt;
    child.stdin.write('y\n');
    const { action_hash } = await answer;
    assert.type(action_hash, 'string');
    const found = (await (await fetch(`${server.url}/api/v1/sign-it/verify?hash=${String(n).repeat(64)}`)).json()) as { signatures: { action_hash: string }[] };
    assert.is(found.signatures[0].action_hash, action_hash);
  }
  let printed = '';
  child.stdout.on('data', (d) => (printed += d));
  const over = await failure(requestVaultSignature({ file_hash: '3'.repeat(64), signer: agentKey, publish: true }, { vaultUrl: url }));
  assert.is(over, 'quota_exceeded');
  assert.not.match(printed, /\[y\/N\]/, 'no prompt for a request over quota');
  assert.is(await quotaUsed(agentKey), 2);
});

test.run();
