// `provenant admin` end to end as a child process: one JSON object on stdout, a
// message on stderr and a non-zero exit on error; the server sees what it wrote.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
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
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'admin', ...args, '--data-dir', server.dataDir], {
      cwd: root,
      env: { ...process.env, PROVENANT_DATA_DIR: '' },
    });
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
  const missing = await admin('create-user', '--password', 'pw pw pw pw');
  assert.is.not(missing.code, 0);
  assert.match(missing.stderr, /--email/);
  const badTier = await admin('create-user', '--email', 'x@example.com', '--password', 'pw pw pw pw', '--tier', 'gold');
  assert.is.not(badTier.code, 0);
  assert.match(badTier.stderr, /--tier/);
  const unknown = await admin('frobnicate');
  assert.is.not(unknown.code, 0);
  assert.match(unknown.stderr, /unknown command/);
  const noOwner = await admin('create-org', '--name', 'N', '--owner', 'nobody@example.com', '--tier', 'pro');
  assert.is.not(noOwner.code, 0);
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
  assert.is.not(badScope.code, 0);
  assert.match(badScope.stderr, /--scopes/);

  const orgTier = await admin('set-tier', '--org', org.json.org_id, '--tier', 'pro');
  assert.is(orgTier.code, 0, orgTier.stderr);
  assert.is((await server.deps.store.accounts.getOrg(org.json.org_id))?.tier, 'pro');
  const userTier = await admin('set-tier', '--user', 'cli@example.com', '--tier', 'premium_plus');
  assert.is(userTier.code, 0, userTier.stderr);
  assert.is((await server.deps.store.accounts.findUserByEmail('cli@example.com'))?.tier, 'premium_plus');
  const both = await admin('set-tier', '--tier', 'pro');
  assert.is.not(both.code, 0);
  const wrongKind = await admin('set-tier', '--user', 'cli@example.com', '--tier', 'starter');
  assert.is.not(wrongKind.code, 0, 'starter is an org tier');

  const token = await admin('session-token', '--email', 'cli@example.com', '--app', app.json.client_id);
  assert.is(token.code, 0, token.stderr);
  assert.is(decodeJwt(token.json.token).app_id, app.json.client_id);
  const me = await fetch(`${server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token.json.token}` } });
  assert.is(me.status, 200, 'the server accepts a token minted by the CLI');
  const foreign = await admin('session-token', '--email', 'cell@example.com', '--app', app.json.client_id);
  assert.is.not(foreign.code, 0);
});

test.run();
