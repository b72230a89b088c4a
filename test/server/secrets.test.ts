// The secrets directory (PROVENANT_SECRETS_DIR, default $PROVENANT_DATA_DIR/secrets): keys
// made on first start, 0600; a data directory from before the variable keeps working
// when the variable points elsewhere (its keys are copied there once, the originals
// stay); a secrets directory with keys of its own is never overwritten. log.key goes with
// the log: copied whenever the secrets directory has none, and a log signed by another
// key does not start.
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
    for (const name of ['jwt.key', 'cell.key', 'log.key']) {
      assert.equal(readFileSync(join(secretsDir, name)), readFileSync(join(dataDir, 'secrets', name)), `${name} copied as is`);
      assert.is(statSync(join(secretsDir, name)).mode & 0o777, 0o600);
    }
    assert.is((await verifySessionToken(after, token))?.userId, 'user-1');
  } finally {
    await after.parts.close();
  }
});

test('a secrets directory that holds keys keeps its own; a log signed by another log key then refuses to start', async () => {
  const dataDir = tempDir();
  await (await composeServer(configOf(dataDir))).parts.close();
  const secretsDir = tempDir();
  await (await composeServer(configOf(tempDir(), secretsDir))).parts.close(); // its own keys
  const own = ['jwt.key', 'log.key'].map((name) => readFileSync(join(secretsDir, name)));
  // the data directory's log has a checkpoint signed by its own log.key, not this one
  await composeServer(configOf(dataDir, secretsDir)).then(
    async (deps) => { await deps.parts.close(); assert.unreachable('started with another log key'); },
    (err: Error) => assert.match(err.message, /the log's stored checkpoint is not signed by this node's log key/),
  );
  assert.equal(['jwt.key', 'log.key'].map((name) => readFileSync(join(secretsDir, name))), own, 'not overwritten');
  assert.not.equal(own[0], readFileSync(join(dataDir, 'secrets', 'jwt.key')));
  assert.ok(existsSync(join(dataDir, 'secrets', 'jwt.key')), 'the originals stay');
});

test('a secrets directory with keys of its own but no log.key takes the data directory\'s (the log is signed by it)', async () => {
  const dataDir = tempDir();
  await (await composeServer(configOf(dataDir))).parts.close();
  const secretsDir = tempDir();
  await (await composeServer(configOf(tempDir(), secretsDir))).parts.close();
  rmSync(join(secretsDir, 'log.key'));
  const own = readFileSync(join(secretsDir, 'jwt.key'));
  const deps = await composeServer(configOf(dataDir, secretsDir));
  await deps.parts.close();
  assert.equal(readFileSync(join(secretsDir, 'log.key')), readFileSync(join(dataDir, 'secrets', 'log.key')));
  assert.is(statSync(join(secretsDir, 'log.key')).mode & 0o777, 0o600);
  assert.equal(readFileSync(join(secretsDir, 'jwt.key')), own, 'its own jwt.key kept');
});

test.run();
