// Two nodes on loopback sharing one PostgreSQL, one Redis and one secrets directory
// (issue 16): each node a `provenant serve` process of its own. A signature made on
// node A is found on node B by verify, verify-fuzzy and verify-file within 1 s (B's
// caches warmed with the answers from before); a revocation on B reaches A's verify
// cache within 1 s; 50 concurrent signs over both nodes for a user with 10 left: exactly
// 10 succeed; the 31st verify from one address is 429 on either node; node A killed
// (SIGKILL) in the middle of sign-batch loops leaves no partial batch (rows counted in
// the database with a client of the test's own), B keeps answering, and A restarted
// catches up. Users are made with the admin CLI against the same database.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import sharp from 'sharp';
import { fingerprintFile } from '../../src/index.js';
import { clusterCellUser, nodeRequest, startTwoNodes, type NodeProcess } from '../helpers/cluster.js';
import { runWithRedis, startRedis, type TestRedis } from '../helpers/redis.js';
import { runWithPostgres, startPostgres, type TestPostgres } from '../helpers/postgres.js';

const test = suite('two nodes');
const root = fileURLToPath(new URL('../..', import.meta.url));
const S = '/api/v1/sign-it';
const PHOTO = join(root, 'test/fixtures/media/fruits.jpg');
/** The bound on how long a write on one node may take to show on the other. */
const PROPAGATION_MS = 1_000;

let postgres: TestPostgres;
let redis: TestRedis;
let secretsDir: string;
let env: Record<string, string>;
let a: NodeProcess;
let b: NodeProcess;
let db: pg.Pool;

const hex = (n = 32) => randomBytes(n).toString('hex');
let ipCounter = 0;
/** A client address per request (PROVENANT_TRUST_PROXY=1), so polling never meets the per-IP limit; or a given one. */
const freshIp = () => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;

interface Answer {
  status: number;
  body: any;
}

/** One request on a connection of its own (nodeRequest), from a fresh address unless `ip` names one; the JSON answer parsed. */
async function call(node: NodeProcess, method: string, path: string, opts: { token?: string; body?: unknown; bytes?: Buffer; ip?: string } = {}): Promise<Answer> {
  const { status, text } = await nodeRequest(node, method, path, { ...opts, headers: { 'x-forwarded-for': opts.ip ?? freshIp() } });
  return { status, body: text ? JSON.parse(text) : null };
}

/** A user with a server-hosted cell on `tier`, and a session token. */
const cellUser = (tier: 'premium' | 'premium_plus') => clusterCellUser(env, tier);

/**
 * Polls `probe` from `since` until it says found or PROPAGATION_MS have passed; a probe
 * that started in time counts. The time after `since` at which it was found, or null.
 */
async function foundWithin(since: number, probe: () => Promise<boolean>): Promise<number | null> {
  for (;;) {
    const started = performance.now();
    if (started - since > PROPAGATION_MS) return null;
    if (await probe()) return performance.now() - since;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Rows stored for these file hashes, counted in PostgreSQL. */
async function storedRows(fileHashes: readonly string[]): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM signatures WHERE file_hash = ANY($1::text[])', [fileHashes]);
  return rows[0].n;
}

/** An image fingerprint of 8 random band bytes (hash_value = its bands, as ImagePHash). */
function randomImageFingerprint(): { hash_type: string; hash_value: number[]; bands: number[][] } {
  const bytes = [...randomBytes(8)];
  return { hash_type: 'ImagePHash', hash_value: bytes, bands: bytes.map((x) => [x]) };
}

test.before(async () => {
  postgres = await startPostgres();
  redis = await startRedis();
  secretsDir = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  env = {
    PROVENANT_DATABASE_URL: postgres.url,
    PROVENANT_REDIS_URL: redis.url,
    PROVENANT_SECRETS_DIR: secretsDir,
    PROVENANT_TRUST_PROXY: '1',
  };
  db = new pg.Pool({ connectionString: postgres.url, max: 2 });
  [a, b] = await startTwoNodes(env);
});

test.after(async () => {
  // each closed even when another fails
  await Promise.allSettled([a?.remove(), b?.remove(), db?.end()]);
  await Promise.allSettled([redis?.stop(), postgres?.stop()]);
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
});

test('a signature made on A is found on B by verify, verify-fuzzy and verify-file within 1 s', async () => {
  const token = await cellUser('premium');
  const photo = readFileSync(PHOTO);
  const fileHash = createHash('sha256').update(photo).digest('hex');
  const fingerprint = await fingerprintFile(PHOTO);
  assert.ok(fingerprint, 'the fixture has a fingerprint');
  const copy = await sharp(photo).resize(160).jpeg({ quality: 70 }).toBuffer();

  const verify = () => call(b, 'GET', `${S}/verify?hash=${fileHash}`);
  const fuzzy = () => call(b, 'POST', `${S}/verify-fuzzy`, { body: { bands: fingerprint!.bands, hash_value: fingerprint!.hash_value } });
  const file = () => call(b, 'POST', `${S}/verify-file`, { bytes: copy });
  // B answers (and caches) "nothing" first; its worker pool is warm afterwards
  for (const ask of [verify, verify, fuzzy, fuzzy, file]) {
    const r = await ask();
    assert.is(r.status, 200);
    assert.is(r.body.count, 0);
  }

  const signed = await call(a, 'POST', `${S}/sign`, { token, body: { file_hash: fileHash, perceptual_hash: fingerprint, ai_generation: 'none', content_rights: { license: 'cc-by' } } });
  assert.is(signed.status, 200, JSON.stringify(signed.body));
  const since = performance.now();
  // the perceptual answers are in the reduced shape (spec 2.3): no action_hash, the file hash and signer say which
  const has = (r: Answer) => r.status === 200 && r.body.signatures.some((s: any) => s.file_hash === fileHash && s.signer === signed.body.agent_pub_key);
  const [byHash, byBands, byFile] = await Promise.all([
    foundWithin(since, async () => has(await verify())),
    foundWithin(since, async () => has(await fuzzy())),
    foundWithin(since, async () => {
      const r = await file();
      return has(r) && r.body.signatures.every((s: any) => s.match_type === 'perceptual');
    }),
  ]);
  assert.ok(byHash !== null, 'verify on B found the signature within 1 s');
  assert.ok(byBands !== null, 'verify-fuzzy on B found it within 1 s');
  assert.ok(byFile !== null, 'verify-file on B found the resized copy within 1 s');
});

test('a revocation on B is seen by A (its verify cache held the answer) within 1 s', async () => {
  const token = await cellUser('premium');
  const fileHash = hex();
  const signed = await call(b, 'POST', `${S}/sign`, { token, body: { file_hash: fileHash } });
  assert.is(signed.status, 200);
  const onA = () => call(a, 'GET', `${S}/verify?hash=${fileHash}`);
  // A caches the answer (once B's write has reached it)
  assert.ok((await foundWithin(performance.now(), async () => (await onA()).body.count === 1)) !== null);
  assert.is((await onA()).body.signatures[0].revoked, false);

  const revoked = await call(b, 'POST', `${S}/revoke`, { token, body: { action_hash: signed.body.action_hash, reason: 'sold the rights' } });
  assert.is(revoked.status, 200, JSON.stringify(revoked.body));
  const since = performance.now();
  const seen = await foundWithin(since, async () => (await onA()).body.signatures[0]?.revoked === true);
  assert.ok(seen !== null, 'A answered revoked within 1 s');
  assert.is((await onA()).body.signatures[0].revocation_reason, 'sold the rights');
});

test('50 concurrent signs over both nodes for a user with 10 signs left: exactly 10 succeed', async () => {
  const token = await cellUser('premium'); // 100 a month
  const first = Array.from({ length: 90 }, () => hex());
  const batch = await call(a, 'POST', `${S}/sign-batch`, { token, body: { files: first.map((file_hash) => ({ file_hash })) } });
  assert.is(batch.status, 200, JSON.stringify(batch.body));
  assert.is(batch.body.signed, 90);

  const files = Array.from({ length: 50 }, () => hex());
  const answers = await Promise.all(files.map((file_hash, i) => call(i % 2 ? b : a, 'POST', `${S}/sign`, { token, body: { file_hash } })));
  const statuses = answers.map((r) => r.status);
  assert.is(statuses.filter((s) => s === 200).length, 10, `statuses: ${statuses.join(',')}`);
  assert.is(statuses.filter((s) => s === 402).length, 40);
  for (const r of answers.filter((x) => x.status === 402)) assert.is(r.body.error, 'quota_exceeded');
  // both nodes and the database agree: 100 used, 100 stored
  for (const node of [a, b]) assert.is((await call(node, 'GET', `${S}/quota`, { token })).body.used, 100);
  assert.is(await storedRows([...first, ...files]), 100);
});

test('the 31st verify from one address within a minute is 429 whichever node it reaches', async () => {
  const ip = '192.0.2.31';
  const path = `${S}/verify?hash=${hex()}`;
  for (let i = 0; i < 30; i++) {
    const r = await call(i % 2 ? b : a, 'GET', path, { ip });
    assert.is(r.status, 200, `request ${i + 1}`);
  }
  for (const node of [a, b, a]) {
    const r = await call(node, 'GET', path, { ip });
    assert.is(r.status, 429);
    assert.is(r.body.error, 'rate_limited');
  }
  // another address is not affected
  assert.is((await call(b, 'GET', path)).status, 200);
});

test('A killed (SIGKILL) during sign-batch loops: no partial batch, B keeps answering, A restarted catches up', async () => {
  const token = await cellUser('premium_plus'); // 1,000 a month
  const SIZE = 25;
  const batches: { files: string[]; status: number | 'cut' }[] = [];
  let done = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      const files = Array.from({ length: SIZE }, () => hex());
      const entry: { files: string[]; status: number | 'cut' } = { files, status: 'cut' };
      batches.push(entry);
      try {
        const r = await call(a, 'POST', `${S}/sign-batch`, { token, body: { files: files.map((file_hash) => ({ file_hash, perceptual_hash: randomImageFingerprint() })) } });
        entry.status = r.status;
        done += 1;
      } catch {
        return; // the connection died with the node
      }
    }
  };
  const loops = Array.from({ length: 4 }, loop);
  while (done < 6) await new Promise((r) => setTimeout(r, 5));
  await a.kill();
  stop = true;
  await Promise.all(loops);

  const cut = batches.filter((x) => x.status === 'cut');
  assert.ok(cut.length >= 1, 'some batch was in flight when A died');
  assert.ok(batches.filter((x) => x.status === 200).length >= 6);
  for (const batch of batches) {
    const n = await storedRows(batch.files);
    if (batch.status === 200) assert.is(n, SIZE, 'an answered batch is stored whole');
    else assert.ok(n === 0 || n === SIZE, `a batch cut by the kill is stored whole or not at all (found ${n} of ${SIZE})`);
  }

  // B answers, and signs, while A is down
  const whileDown = randomImageFingerprint();
  const fileHash = hex();
  const signed = await call(b, 'POST', `${S}/sign`, { token, body: { file_hash: fileHash, perceptual_hash: whileDown } });
  assert.is(signed.status, 200);
  assert.is((await call(b, 'GET', `${S}/verify?hash=${fileHash}`)).body.count, 1);

  // A restarted: its index loads the snapshot and follows; it finds what B signed meanwhile
  await a.start();
  const fuzzy = await call(a, 'POST', `${S}/verify-fuzzy`, { body: { bands: whileDown.bands, hash_value: whileDown.hash_value } });
  assert.ok(fuzzy.body.signatures.some((s: any) => s.file_hash === fileHash), 'A found B\'s signature from while it was down');
  const [healthA, healthB] = await Promise.all([call(a, 'GET', '/healthz'), call(b, 'GET', '/healthz')]);
  assert.is(healthA.body.parts.match_index.fingerprints, healthB.body.parts.match_index.fingerprints);
  const { rows } = await db.query('SELECT count(*)::int AS n FROM signatures WHERE has_fingerprint');
  assert.is(healthA.body.parts.match_index.fingerprints, rows[0].n, 'every stored fingerprint is in A\'s index');

  // and it follows again: a signature made on B now is found on A within 1 s
  const after = randomImageFingerprint();
  const againHash = hex();
  const again = await call(b, 'POST', `${S}/sign`, { token, body: { file_hash: againHash, perceptual_hash: after } });
  assert.is(again.status, 200);
  const since = performance.now();
  const followed = await foundWithin(since, async () => {
    const r = await call(a, 'POST', `${S}/verify-fuzzy`, { body: { bands: after.bands, hash_value: after.hash_value } });
    return r.body.signatures.some((s: any) => s.file_hash === againHash);
  });
  assert.ok(followed !== null, 'A, restarted, follows B\'s writes within 1 s');
});

runWithPostgres(() => runWithRedis(test));
