// The secrets directory (PROVENANT_SECRETS_DIR, default $PROVENANT_DATA_DIR/secrets): keys
// made on first start, 0600; a data directory from before the variable keeps working
// when the variable points elsewhere (its keys are copied there once, the originals
// stay); a secrets directory with keys of its own is never overwritten.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/src/config.js';
import { composeServer } from '../../server/src/root.js';
import { issueSessionToken, verifySessionToken } from '../../server/src/domain/tokens.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  dirs.push(dir);
  return dir;
};
const configOf = (dataDir: string, secretsDir?: string) =>
  loadConfig({
    PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WORKERS: '1',
    ...(secretsDir === undefined ? {} : { PROVENANT_SECRETS_DIR: secretsDir }),
  });

test.after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('default: $PROVENANT_DATA_DIR/secrets, made at start, owner-only', async () => {
  const dataDir = tempDir();
  const config = configOf(dataDir);
  assert.is(config.secretsDir, join(dataDir, 'secrets'));
  const deps = await composeServer(config);
  await deps.parts.close();
  for (const name of ['jwt.key', 'cell.key']) {
    assert.is(statSync(join(dataDir, 'secrets', name)).mode & 0o777, 0o600);
    assert.is(readFileSync(join(dataDir, 'secrets', name)).length, 32);
  }
});

test('an older data directory with PROVENANT_SECRETS_DIR set elsewhere: its keys are copied there, and its tokens stay valid', async () => {
  const dataDir = tempDir();
  const before = await composeServer(configOf(dataDir));
  const token = await issueSessionToken(before, 'user-1');
  await before.parts.close();

  const secretsDir = join(tempDir(), 'mounted');
  const after = await composeServer(configOf(dataDir, secretsDir));
  try {
    for (const name of ['jwt.key', 'cell.key']) {
      assert.equal(readFileSync(join(secretsDir, name)), readFileSync(join(dataDir, 'secrets', name)), `${name} copied as is`);
      assert.is(statSync(join(secretsDir, name)).mode & 0o777, 0o600);
    }
    assert.is((await verifySessionToken(after, token))?.userId, 'user-1');
  } finally {
    await after.parts.close();
  }
});

test('a secrets directory that holds keys keeps its own', async () => {
  const dataDir = tempDir();
  await (await composeServer(configOf(dataDir))).parts.close();
  const secretsDir = tempDir();
  await (await composeServer(configOf(tempDir(), secretsDir))).parts.close(); // its own keys
  const own = readFileSync(join(secretsDir, 'jwt.key'));
  await (await composeServer(configOf(dataDir, secretsDir))).parts.close();
  assert.equal(readFileSync(join(secretsDir, 'jwt.key')), own);
  assert.not.equal(own, readFileSync(join(dataDir, 'secrets', 'jwt.key')));
  assert.ok(existsSync(join(dataDir, 'secrets', 'jwt.key')), 'the originals stay');
});

test.run();
