// `provenant admin log-key` (issue 27): prints the log's origin and verifier key, the key
// made on first use in the secrets directory (log.key, 0600), the same on every call and
// the one the key's bytes give (checked with the library's verifierOf over the file).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIG_ED25519, verifierOf } from 'provenant';

const root = fileURLToPath(new URL('../..', import.meta.url));

function admin(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'admin', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end('correct horse battery staple\n');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

test('admin log-key prints the origin and the key of log.key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-log-key-'));
  const env = { PROVENANT_DATA_DIR: dir, PROVENANT_BASE_URL: 'https://provenant.example:8443' };
  try {
    assert.is((await admin(['create-user', '--email', 'a@example.com', '--password-stdin'], env)).code, 0);
    const first = await admin(['log-key'], env);
    assert.is(first.code, 0, first.err);
    const answer = JSON.parse(first.out) as { origin: string; verifier_key: string };
    assert.is(answer.origin, 'provenant.example:8443/log');
    const file = join(dir, 'secrets', 'log.key');
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.is(answer.verifier_key, verifierOf('provenant.example:8443/log', SIG_ED25519, new Uint8Array(readFileSync(file))).vkey);
    assert.equal(JSON.parse((await admin(['log-key'], env)).out), answer, 'the same key on every call');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('admin log-key with PROVENANT_SECRETS_DIR set elsewhere: the data directory\'s keys are adopted first, not new ones made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-log-key-'));
  const env = { PROVENANT_DATA_DIR: dir };
  try {
    // cell.key (a server cell), jwt.key (a session token), log.key: all made in the data directory
    assert.is((await admin(['create-user', '--email', 'a@example.com', '--password-stdin', '--tier', 'premium', '--server-cell'], env)).code, 0);
    assert.is((await admin(['session-token', '--email', 'a@example.com'], env)).code, 0);
    const before = JSON.parse((await admin(['log-key'], env)).out) as { verifier_key: string };
    const mounted = join(dir, 'mounted');
    const moved = await admin(['log-key'], { ...env, PROVENANT_SECRETS_DIR: mounted });
    assert.is(moved.code, 0, moved.err);
    assert.is((JSON.parse(moved.out) as { verifier_key: string }).verifier_key, before.verifier_key);
    for (const name of ['jwt.key', 'cell.key', 'log.key']) assert.equal(readFileSync(join(mounted, name)), readFileSync(join(dir, 'secrets', name)), name);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
