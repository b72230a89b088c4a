// `provenant admin` end to end as a child process: one JSON object on stdout, a
// message on stderr and a non-zero exit on error; the server sees what it wrote.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../helpers/server.js';

const test = suite('admin');
const root = fileURLToPath(new URL('../..', import.meta.url));
let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  return adminWithInput(null, ...args);
}

/** `provenant admin ...` with `input` written to its standard input (closed at once when null). */
function adminWithInput(input: string | null, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'admin', ...args, '--data-dir', server.dataDir], {
      cwd: root,
      env: { ...process.env, PROVENANT_DATA_DIR: '' },
    });
    child.stdin.end(input ?? undefined);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        /* not JSON */
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}

test('create-user prints {user_id, agent_pub_key, did}; the user can log in over HTTP', async () => {
  const r = await admin('create-user', '--email', 'cli@example.com', '--password', 'cli password', '--display-name', 'C L I', '--tier', 'premium');
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim().split('\n').length, 1, 'one JSON object on one line');
  assert.match(r.json.user_id, /^[0-9a-f-]{36}$/);
  assert.is(r.json.agent_pub_key, null);
  assert.is(r.json.did, null);
  const login = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email_or_username: 'cli@example.com', password: 'cli password' }),
  });
  const body = await login.json();
  assert.is(login.status, 200);
  assert.is(body.user.id, r.json.user_id);
  assert.is(body.user.tier, 'premium');
  assert.is(body.user.display_name, 'C L I');
});

async function logsIn(email: string, password: string): Promise<boolean> {
  const res = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email_or_username: email, password }),
  });
  await res.arrayBuffer();
  return res.status === 200;
}

test('create-user --password-stdin and --password-file: the password stays out of the process list; one trailing newline is dropped', async () => {
  const piped = await adminWithInput('piped password\n', 'create-user', '--email', 'stdin@example.com', '--password-stdin');
  assert.is(piped.code, 0, piped.stderr);
  assert.ok(await logsIn('stdin@example.com', 'piped password'));
  assert.not.ok(await logsIn('stdin@example.com', 'piped password\n'));

  const dir = mkdtempSync(join(tmpdir(), 'provenant-admin-pw-'));
  try {
    const file = join(dir, 'pw');
    writeFileSync(file, 'filed  password \r\n', { mode: 0o600 });
    const filed = await admin('create-user', '--email', 'file@example.com', '--password-file', file);
    assert.is(filed.code, 0, filed.stderr);
    assert.ok(await logsIn('file@example.com', 'filed  password '), 'inner and trailing spaces are kept');

    const missing = await admin('create-user', '--email', 'nofile@example.com', '--password-file', join(dir, 'none'));
    assert.is(missing.code, 1);
    assert.match(missing.stderr, `cannot read ${join(dir, 'none')}: no such file`);
    const directory = await admin('create-user', '--email', 'nofile@example.com', '--password-file', dir);
    assert.is(directory.code, 1);
    assert.match(directory.stderr, 'is a directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  for (const [input, args, says] of [
    [null, ['--password-stdin', '--password', 'long enough pw'], 'exactly one'],
    [null, ['--password-stdin', '--password-file', '/dev/null'], 'exactly one'],
    [null, [], 'exactly one'],
    ['short\n', ['--password-stdin'], '--password-stdin: must be at least 8 characters'],
    ['', ['--password-stdin'], '--password-stdin: must be at least 8 characters'],
  ] as const) {
    const r = await adminWithInput(input, 'create-user', '--email', 'bad-pw@example.com', ...args);
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, says);
  }
  assert.is(await server.deps.store.accounts.findUserByEmail('bad-pw@example.com'), null);
});

test('create-user --server-cell gives the user a cell with a uhCAk agent key', async () => {
  const r = await admin('create-user', '--email', 'cell@example.com', '--password', 'cell password', '--server-cell');
  assert.is(r.code, 0, r.stderr);
  assert.match(r.json.agent_pub_key, /^uhCAk/);
  assert.match(r.json.did, /^did:key:z6Mk/);
  const cell = await server.deps.store.accounts.getCell(r.json.user_id);
  assert.is(cell?.agentKey, r.json.agent_pub_key);
});

test('errors: non-zero exit, message on stderr, nothing on stdout', async () => {
  const dup = await admin('create-user', '--email', 'CLI@example.com', '--password', 'cli password');
  assert.is.not(dup.code, 0);
  assert.is(dup.stdout, '');
  assert.match(dup.stderr, /exists/);
  assert.is(dup.code, 1);
  const dupName = await admin('create-user', '--email', 'other@example.com', '--password', 'cli password', '--username', 'dupname');
  assert.is(dupName.code, 0, dupName.stderr);
  const dupName2 = await admin('create-user', '--email', 'other2@example.com', '--password', 'cli password', '--username', 'DupName');
  assert.is(dupName2.code, 1);
  assert.match(dupName2.stderr, 'An account with this username exists.');
  // usage errors: 2, the flag named, the subcommand's usage shown
  const missing = await admin('create-user', '--password', 'pw pw pw pw');
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /--email/);
  assert.match(missing.stderr, 'usage: provenant admin create-user');
  const badTier = await admin('create-user', '--email', 'x@example.com', '--password', 'pw pw pw pw', '--tier', 'gold');
  assert.is(badTier.code, 2);
  assert.match(badTier.stderr, /--tier/);
  const unknown = await admin('frobnicate');
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command/);
  const noOwner = await admin('create-org', '--name', 'N', '--owner', 'nobody@example.com', '--tier', 'pro');
  assert.is(noOwner.code, 1);
  assert.match(noOwner.stderr, /nobody@example.com/);
});

test('create-org, create-app, set-tier and session-token', async () => {
  const org = await admin('create-org', '--name', 'Acme', '--owner', 'cli@example.com', '--tier', 'enterprise', '--limit', '5000');
  assert.is(org.code, 0, org.stderr);
  const stored = await server.deps.store.accounts.getOrg(org.json.org_id);
  assert.is(stored?.name, 'Acme');
  assert.is(stored?.tier, 'enterprise');
  assert.is(stored?.customLimit, 5000);

  const app = await admin(
    'create-app', '--owner', 'cli@example.com', '--org', org.json.org_id, '--name', 'Acme App',
    '--redirect-uri', 'https://acme.example.com/cb', '--redirect-uri', 'http://localhost:8000/cb', '--scopes', 'openid sign verify',
  );
  assert.is(app.code, 0, app.stderr);
  const storedApp = await server.deps.store.accounts.getApp(app.json.client_id);
  assert.is(storedApp?.orgId, org.json.org_id);
  assert.equal(storedApp?.redirectUris, ['https://acme.example.com/cb', 'http://localhost:8000/cb']);
  assert.equal(storedApp?.scopes, ['openid', 'sign', 'verify']);
  const badScope = await admin('create-app', '--owner', 'cli@example.com', '--name', 'x', '--scopes', 'openid root');
  assert.is(badScope.code, 2);
  assert.match(badScope.stderr, /--scopes/);

  const orgTier = await admin('set-tier', '--org', org.json.org_id, '--tier', 'pro');
  assert.is(orgTier.code, 0, orgTier.stderr);
  assert.is((await server.deps.store.accounts.getOrg(org.json.org_id))?.tier, 'pro');
  const userTier = await admin('set-tier', '--user', 'cli@example.com', '--tier', 'premium_plus');
  assert.is(userTier.code, 0, userTier.stderr);
  assert.is((await server.deps.store.accounts.findUserByEmail('cli@example.com'))?.tier, 'premium_plus');
  const both = await admin('set-tier', '--tier', 'pro');
  assert.is(both.code, 2);
  const wrongKind = await admin('set-tier', '--user', 'cli@example.com', '--tier', 'starter');
  assert.is(wrongKind.code, 2, 'starter is an org tier');

  const token = await admin('session-token', '--email', 'cli@example.com', '--app', app.json.client_id);
  assert.is(token.code, 0, token.stderr);
  assert.is(decodeJwt(token.json.token).app_id, app.json.client_id);
  const me = await fetch(`${server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token.json.token}` } });
  assert.is(me.status, 200, 'the server accepts a token minted by the CLI');
  const foreign = await admin('session-token', '--email', 'cell@example.com', '--app', app.json.client_id);
  assert.is(foreign.code, 1);
});

test.run();
