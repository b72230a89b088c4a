// `provenant admin export-hashes --type pdq --out FILE` (issue 28): every live record's
// PDQ in Meta's exchange text with its action hash (images `hash,quality,action_hash`,
// videos `frame,quality,hash,timestamp,action_hash` per frame); revoked records and
// records without a PDQ are left out; the file is 0600.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiRequest, startTestServer, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const S = '/api/v1/sign-it';
let server: TestServer;
let dir: string;

test.before(async () => {
  server = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  dir = mkdtempSync(join(tmpdir(), 'export-hashes-'));
});
test.after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'admin', ...args, '--data-dir', server.dataDir], {
      cwd: root,
      env: { ...process.env, PROVENANT_DATA_DIR: '' },
    });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const hex = (n = 32) => randomBytes(n).toString('hex');
const FP = { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] };

test('export-hashes --type pdq writes every live record\'s PDQ with its action hash', async () => {
  const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(server.url, method, path, opts);
  const { token, user } = await server.register();
  await createServerCell(server.deps, user.id);
  await server.deps.store.accounts.setUserTier(user.id, 'premium');
  const sign = async (body: Record<string, unknown>) => {
    const r = await api('POST', `${S}/sign`, { token, body: { file_hash: hex(), perceptual_hash: FP, ...body } });
    assert.is(r.status, 200, JSON.stringify(r.body));
    return r.body.action_hash as string;
  };
  const image = { hash_type: 'PDQ', hash_value: hex(), quality: 87 };
  const video = { hash_type: 'vPDQ', frames: [{ timestamp: 0.5, hash_value: hex(), quality: 100 }, { timestamp: 1.5, hash_value: hex(), quality: 12 }] };
  const a = await sign({ pdq_hash: image });
  const b = await sign({ pdq_hash: video });
  await sign({}); // no PDQ
  const revoked = await sign({ pdq_hash: { hash_type: 'PDQ', hash_value: hex(), quality: 90 } });
  assert.is((await api('POST', `${S}/revoke`, { token, body: { action_hash: revoked } })).status, 200);

  const out = join(dir, 'pdq.csv');
  writeFileSync(out, 'old contents\n', { mode: 0o644 });
  const r = await admin('export-hashes', '--type', 'pdq', '--out', out);
  assert.is(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout), { file: out, records: 2, lines: 3, skipped: 0, skipped_records: [] });
  assert.is(statSync(out).mode & 0o777, 0o600);
  assert.equal(readFileSync(out, 'utf8').split('\n'), [
    `${image.hash_value},87,${a}`,
    `0,100,${video.frames[0].hash_value},0.500,${b}`,
    `1,12,${video.frames[1].hash_value},1.500,${b}`,
    '',
  ]);

  const bad = await admin('export-hashes', '--type', 'md5', '--out', out);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--type must be pdq/);
  assert.is((await admin('export-hashes', '--type', 'pdq')).code, 2);
});

test('issue 34: a stored vPDQ today\'s rule refuses (a timestamp of 1e300, frames out of order) is skipped and named; the rest is plain decimals', async () => {
  const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(server.url, method, path, opts);
  const { token, user } = await server.register();
  await createServerCell(server.deps, user.id);
  await server.deps.store.accounts.setUserTier(user.id, 'premium');
  const sign = async (pdq_hash: unknown) => {
    const r = await api('POST', `${S}/sign`, { token, body: { file_hash: hex(), perceptual_hash: FP, pdq_hash } });
    assert.is(r.status, 200, JSON.stringify(r.body));
    return r.body.action_hash as string;
  };
  const frames = [{ timestamp: 0.5, hash_value: hex(), quality: 100 }, { timestamp: 86_400, hash_value: hex(), quality: 80 }];
  const good = await sign({ hash_type: 'vPDQ', frames });
  // two records as stored before the bound: their pdq_hash column rewritten as an old /sign accepted it
  const huge = await sign({ hash_type: 'vPDQ', frames: [frames[0]] });
  const backwards = await sign({ hash_type: 'vPDQ', frames: [frames[0]] });
  const sql = await server.sql();
  await sql.run('UPDATE signatures SET pdq_hash = ? WHERE action_hash = ?', [JSON.stringify({ hash_type: 'vPDQ', frames: [{ ...frames[0], timestamp: 1e300 }] }), huge]);
  await sql.run('UPDATE signatures SET pdq_hash = ? WHERE action_hash = ?', [JSON.stringify({ hash_type: 'vPDQ', frames: [{ ...frames[0], timestamp: 9 }, frames[0]] }), backwards]);

  const out = join(dir, 'pdq-bad.csv');
  const r = await admin('export-hashes', '--type', 'pdq', '--out', out);
  assert.is(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.is(summary.skipped, 2);
  assert.equal(summary.skipped_records.map((s: { action_hash: string }) => s.action_hash), [huge, backwards]);
  assert.match(summary.skipped_records[0].reason, /pdq_hash\.frames\.0\.timestamp must be a number of seconds from 0 to 86400/);
  assert.match(summary.skipped_records[1].reason, /pdq_hash\.frames\.1\.timestamp must not be before/);
  const text = readFileSync(out, 'utf8');
  assert.not.match(text, /e\+/);
  assert.not.ok(text.includes(huge) || text.includes(backwards));
  assert.ok(text.includes(`0,100,${frames[0].hash_value},0.500,${good}\n1,80,${frames[1].hash_value},86400.000,${good}\n`));
  // the skipped records are still stored and answered as signed
  const v = await api('GET', `${S}/verify?hash=${(await server.deps.store.signatures.get(huge))!.record.file_hash}`);
  assert.is(v.body.count, 1);
});

test.run();
