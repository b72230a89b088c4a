// The transparency log on two nodes sharing one PostgreSQL (issue 27): each node a
// `provenant serve` process. Both append concurrently (sign and sign-batch loops on
// each), node A is killed (SIGKILL) in the middle: afterwards the log in the database
// (read with a client of the test's own) has the indexes 0..n-1 once each, exactly one
// record entry per stored record and none for a record that was not stored, in commit
// order (the records' seqs, handed out under the feed lock, rise with the index); either
// node then serves a checkpoint covering every entry whose root, recomputed here with
// node:crypto from the entries, is the checkpoint's.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { verifyCheckpoint } from '../../src/index.js';
import { clusterCellUser, nodeRequest, startTwoNodes, type NodeProcess } from '../helpers/cluster.js';
import { runWithPostgres, startPostgres, type TestPostgres } from '../helpers/postgres.js';

const test = suite('transparency log, two nodes');
const S = '/api/v1/sign-it';

let postgres: TestPostgres;
let secretsDir: string;
let env: Record<string, string>;
let a: NodeProcess;
let b: NodeProcess;
let db: pg.Pool;

const hex = (n = 32) => randomBytes(n).toString('hex');
const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
function mth(leaves: Uint8Array[], lo = 0, hi = leaves.length): Uint8Array {
  if (hi - lo === 0) return sha256();
  if (hi - lo === 1) return leaves[lo]!;
  let k = 1;
  while (k * 2 < hi - lo) k *= 2;
  return sha256(Uint8Array.of(1), mth(leaves, lo, lo + k), mth(leaves, lo + k, hi));
}

const call = nodeRequest;

const cellUser = () => clusterCellUser(env, 'premium_plus');

test.before(async () => {
  postgres = await startPostgres();
  secretsDir = mkdtempSync(join(tmpdir(), 'provenant-secrets-'));
  env = { PROVENANT_DATABASE_URL: postgres.url, PROVENANT_SECRETS_DIR: secretsDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_BASE_URL: 'http://log.example' };
  db = new pg.Pool({ connectionString: postgres.url, max: 2 });
  [a, b] = await startTwoNodes(env);
});

test.after(async () => {
  await Promise.allSettled([a?.remove(), b?.remove(), db?.end()]);
  await Promise.allSettled([postgres?.stop()]);
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
});

test('both nodes append at once, A killed mid-write: one log, every stored event once, commit order, no uncommitted entry', async () => {
  const [tokenA, tokenB] = await Promise.all([cellUser(), cellUser()]);
  let stop = false;
  let answeredA = 0;
  const loop = (node: NodeProcess, token: string, batch: boolean) => async () => {
    let n = 0;
    while (!stop) {
      n += 1;
      try {
        const body = batch ? { files: Array.from({ length: 10 }, () => ({ file_hash: hex() })) } : { file_hash: hex() };
        const r = await call(node, 'POST', `${S}/${batch ? 'sign-batch' : 'sign'}`, { token, body });
        if (r.status !== 200) throw new Error(`${node.name}: ${r.status} ${r.text}`);
        if (node === a) answeredA += 1;
        if (n % 5 === 0 && !batch) {
          // a revocation now and then, through the same node
          const hash = (JSON.parse(r.text) as { action_hash: string }).action_hash;
          await call(node, 'POST', `${S}/revoke`, { token, body: { action_hash: hash, reason: 'test' } });
        }
      } catch (err) {
        if (node === a) return; // the connection died with the node
        throw err;
      }
    }
  };
  const loops = [loop(a, tokenA, false), loop(a, tokenA, true), loop(b, tokenB, false), loop(b, tokenB, true)].map((f) => f());
  while (answeredA < 20) await new Promise((r) => setTimeout(r, 5));
  await a.kill();
  await new Promise((r) => setTimeout(r, 300)); // B goes on alone a little
  stop = true;
  await Promise.all(loops);

  const { rows: entries } = await db.query<{ idx: string; kind: string; action_hash: string; entry: string }>('SELECT idx, kind, action_hash, entry FROM log_entries ORDER BY idx');
  assert.ok(entries.length > 40, `entries: ${entries.length}`);
  entries.forEach((e, i) => assert.is(Number(e.idx), i, 'indexes 0..n-1, each once'));
  const { rows: records } = await db.query<{ action_hash: string; seq: string }>('SELECT action_hash, seq FROM signatures ORDER BY seq');
  const { rows: revocations } = await db.query<{ action_hash: string }>('SELECT action_hash FROM revocations');
  const recordEntries = entries.filter((e) => e.kind === 'record');
  assert.equal(recordEntries.map((e) => e.action_hash), records.map((r) => r.action_hash), 'one record entry per stored record, in seq (commit) order');
  assert.equal(entries.filter((e) => e.kind === 'revocation').map((e) => e.action_hash).sort(), revocations.map((r) => r.action_hash).sort(), 'one entry per stored revocation');
  // every record's revocation comes after the record
  const at = new Map(recordEntries.map((e) => [e.action_hash, Number(e.idx)]));
  for (const e of entries.filter((x) => x.kind === 'revocation')) assert.ok(at.get(e.action_hash)! < Number(e.idx));

  // B (and A once restarted) serve a checkpoint of every entry, with the root recomputed here
  await a.start();
  const leaves = entries.map((e) => sha256(Uint8Array.of(0), Buffer.from(e.entry, 'utf8')));
  const vkey = (await call(b, 'GET', '/log/key')).text.trim();
  assert.is((await call(a, 'GET', '/log/key')).text.trim(), vkey, 'the nodes share the log key');
  for (const node of [b, a]) {
    let size = -1;
    let cp = '';
    for (let i = 0; i < 100 && size < entries.length; i++) {
      cp = (await call(node, 'GET', '/log/checkpoint')).text;
      size = verifyCheckpoint(cp, { logKeys: [vkey] }).checkpoint.size;
      if (size < entries.length) await new Promise((r) => setTimeout(r, 100));
    }
    const { checkpoint } = verifyCheckpoint(cp, { logKeys: [vkey] });
    assert.is(checkpoint.size, entries.length, node.name);
    assert.equal(Buffer.from(checkpoint.rootHash), Buffer.from(mth(leaves)), node.name);
  }
});

runWithPostgres(() => test.run());
