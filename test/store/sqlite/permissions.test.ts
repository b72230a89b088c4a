// The data directory holds e-mail addresses, password hashes and the secrets: a
// server that created it leaves nothing any other local user can read, whatever
// the process umask (SQLite's own default for new files is 0644).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../server/src/config.js';
import { startServer } from '../../../server/src/serve.js';
import { Db } from '../../../server/src/store/sqlite/db.js';

const test = suite('store/permissions');
let root: string;

test.before(() => {
  root = mkdtempSync(join(tmpdir(), 'provenant-perms-'));
});
test.after(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Every path under `dir` (itself included) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const out = new Map<string, number>([[dir, statSync(dir).mode & 0o777]]);
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    out.set(path, statSync(path).mode & 0o777);
  }
  return out;
}

const octal = (m: Map<string, number>) => Object.fromEntries([...m].map(([p, mode]) => [p.slice(root.length), mode.toString(8)]));

test('a server that starts and writes leaves files 0600 and the directories it made 0700, under umask 000', async () => {
  const dataDir = join(root, 'fresh', 'data');
  const umask = process.umask(0o000);
  let running;
  try {
    running = await startServer(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'silent' }),
    );
    const res = await fetch(`${running.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'perm@example.com', password: 'correct horse battery staple' }),
    });
    assert.is(res.status, 201);
    const seen = modes(dataDir);
    // while the server runs: the WAL and its index exist
    for (const name of ['provenant.db', 'provenant.db-wal', 'provenant.db-shm', 'secrets/jwt.key', 'secrets/cell.key']) {
      assert.ok(seen.has(join(dataDir, name)), `${name} exists: ${JSON.stringify(octal(seen))}`);
    }
    for (const [path, mode] of seen) {
      const want = statSync(path).isDirectory() ? 0o700 : 0o600;
      assert.is(mode, want, `${path.slice(root.length)} is ${mode.toString(8)}: ${JSON.stringify(octal(seen))}`);
    }
  } finally {
    await running?.close(2_000);
    process.umask(umask);
  }
  assert.is(statSync(join(root, 'fresh')).mode & 0o777, 0o700, 'every directory the server created is 0700');
});

test('opening a database made by an older version tightens it and its WAL files to 0600', async () => {
  const dir = mkdtempSync(join(root, 'old-'));
  const file = join(dir, 'provenant.db');
  let db = await Db.open(file);
  await db.close();
  for (const suffix of ['', '-wal', '-shm']) {
    writeFileSync(file + suffix, '', { flag: 'a' });
    chmodSync(file + suffix, 0o644);
  }
  db = await Db.open(file);
  try {
    for (const suffix of ['', '-wal', '-shm']) assert.is(statSync(file + suffix).mode & 0o777, 0o600, `provenant.db${suffix}`);
  } finally {
    await db.close();
  }
});

test.run();
