// The server sends its checkpoints to witnesses (PROVENANT_LOG_WITNESSES) and serves
// their cosignatures; a real witness (startWitness, over loopback HTTP) refuses a
// checkpoint whose history was rewritten (a tampered stored tile: the next consistency
// proof fails), and a witness that hangs delays the checkpoint by its deadline only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY_ROOT, noteSigner, signCheckpoint, SIG_ED25519, startWitness, TlogError, verifierOf, verifyCheckpoint, type RunningWitness } from 'provenant';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { Checkpointer } from '../../server/src/tlog/checkpointer.js';
import { WitnessClient } from '../../server/src/tlog/witnesses.js';

const S = '/api/v1/sign-it';
const engine = testEngine(import.meta.url);
const hex = (n = 32) => randomBytes(n).toString('hex');
const ORIGIN = 'log.example/log';

/** A secrets directory holding the log's key, and its verifier key. */
function logSecrets(): { dir: string; vkey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-log-secrets-'));
  const seed = randomBytes(32);
  writeFileSync(join(dir, 'log.key'), seed, { mode: 0o600 });
  return { dir, vkey: verifierOf(ORIGIN, SIG_ED25519, seed).vkey };
}

async function signOne(srv: TestServer, token: string): Promise<void> {
  const r = await apiRequest(srv.url, 'POST', `${S}/sign`, { token, body: { file_hash: hex() } });
  assert.is(r.status, 200, r.text);
}

test('checkpoints are cosigned and served with the cosignature; a rewritten history is refused by the witness', async () => {
  const secrets = logSecrets();
  const witnessDir = mkdtempSync(join(tmpdir(), 'provenant-witness-'));
  const witness: RunningWitness = await startWitness({ dir: witnessDir, name: 'witness.example/w1', logs: [secrets.vkey] });
  const srv = await startTestServer(
    { PROVENANT_RATE_LIMIT: 'off', PROVENANT_SECRETS_DIR: secrets.dir, PROVENANT_BASE_URL: 'http://log.example', PROVENANT_LOG_WITNESSES: `${witness.verifierKey} ${witness.url}` },
    { engine },
  );
  try {
    const log = srv.deps.transparencyLog;
    await log.checkpointer.close(); // rounds only when this test ticks
    const { token, user } = await srv.register();
    await createServerCell(srv.deps, user.id);
    await srv.deps.store.accounts.setUserTier(user.id, 'premium');
    for (let i = 0; i < 3; i++) await signOne(srv, token);
    await log.checkpointer.tick();
    // close() aborted the witness sends of that instance: a fresh one stands for the node's
    const node = new Checkpointer({ store: log.store, identity: log.identity, witnesses: srv.deps.config.logWitnesses, log: srv.deps.log });
    await node.tick(); // size unchanged: sends the stored checkpoint to the witness
    const served = await (await fetch(`${srv.url}/log/checkpoint`)).text();
    const policy = { logKeys: [secrets.vkey], witnesses: [witness.verifierKey], quorum: 1 };
    assert.is(verifyCheckpoint(served, policy).checkpoint.size, 3);
    assert.is(verifyCheckpoint(served, policy).cosignatures.length, 1);

    // it grows: the witness checks the consistency proof from 3 and cosigns again
    await signOne(srv, token);
    await node.tick();
    let now = await (await fetch(`${srv.url}/log/checkpoint`)).text();
    assert.is(verifyCheckpoint(now, policy).checkpoint.size, 4);

    // history rewritten: leaf 1 of the stored level-0 tile changed, as by an operator
    // who edits an entry and recomputes; a node that resumes from the store signs a
    // tree that does not extend the witnessed one
    const sql = await srv.sql();
    const row = await sql.get<{ data: Uint8Array }>('SELECT data FROM log_tiles WHERE level = 0 AND idx = 0');
    const data = Buffer.from(row!.data);
    data[32] ^= 1;
    await sql.run('UPDATE log_tiles SET data = ? WHERE level = 0 AND idx = 0', [data]);
    const rewritten = new Checkpointer({ store: log.store, identity: log.identity, witnesses: srv.deps.config.logWitnesses, log: srv.deps.log });
    rewritten.witnesses[0]!.lastSize = 4; // as the running node knows it
    await signOne(srv, token);
    await rewritten.tick();
    now = await (await fetch(`${srv.url}/log/checkpoint`)).text();
    assert.is(verifyCheckpoint(now, { logKeys: [secrets.vkey] }).checkpoint.size, 5);
    try {
      verifyCheckpoint(now, policy);
      assert.unreachable('the rewritten checkpoint has no cosignature');
    } catch (err) {
      assert.instance(err, TlogError);
      assert.is((err as TlogError).code, 'quorum_not_met');
    }
    assert.match(rewritten.witnesses[0]!.lastError ?? '', /answered 422/);
    assert.is(rewritten.health().witnesses_failing, 1);
    await node.close();
    await rewritten.close();

  } finally {
    await srv.close();
    await witness.close();
    rmSync(witnessDir, { recursive: true, force: true });
    rmSync(secrets.dir, { recursive: true, force: true });
  }
});

test('one witness key at two URLs: the served checkpoint holds its cosignature once, so readers accept it (issue 34)', async () => {
  const secrets = logSecrets();
  const dirA = mkdtempSync(join(tmpdir(), 'provenant-witness-'));
  const dirB = mkdtempSync(join(tmpdir(), 'provenant-witness-'));
  const a = await startWitness({ dir: dirA, name: 'witness.example/twice', logs: [secrets.vkey] });
  // the same key in another directory: a second instance of one witness
  copyFileSync(join(dirA, 'witness.key'), join(dirB, 'witness.key'));
  const b = await startWitness({ dir: dirB, name: 'witness.example/twice', logs: [secrets.vkey] });
  assert.is(b.verifierKey, a.verifierKey);
  const srv = await startTestServer(
    { PROVENANT_RATE_LIMIT: 'off', PROVENANT_SECRETS_DIR: secrets.dir, PROVENANT_BASE_URL: 'http://log.example', PROVENANT_LOG_WITNESSES: `${a.verifierKey} ${a.url},${b.verifierKey} ${b.url}` },
    { engine },
  );
  try {
    const log = srv.deps.transparencyLog;
    await log.checkpointer.close();
    const { token, user } = await srv.register();
    await createServerCell(srv.deps, user.id);
    await srv.deps.store.accounts.setUserTier(user.id, 'premium');
    await signOne(srv, token);
    const node = new Checkpointer({ store: log.store, identity: log.identity, witnesses: srv.deps.config.logWitnesses, log: srv.deps.log });
    await node.tick();
    assert.equal(node.witnesses.map((w) => w.lastError), [null, null]);
    const served = await (await fetch(`${srv.url}/log/checkpoint`)).text();
    assert.is(served.split('\u2014 witness.example/twice ').length - 1, 1, served);
    assert.is(verifyCheckpoint(served, { logKeys: [secrets.vkey], witnesses: [a.verifierKey], quorum: 1 }).cosignatures.length, 1);
    await node.close();
  } finally {
    await srv.close();
    await a.close();
    await b.close();
    for (const d of [dirA, dirB, secrets.dir]) rmSync(d, { recursive: true, force: true });
  }
});

test('a witness that hangs costs one deadline, and one that answers garbage is a failure, not a crash', async () => {
  const sockets = new Set<import('node:net').Socket>();
  const hang: Server = createServer(() => undefined); // never answers
  hang.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  const garbage: Server = createServer((_req, res) => res.end('x'.repeat(200_000)));
  await new Promise<void>((r) => garbage.listen(0, '127.0.0.1', r));
  try {
    const port = (s: Server) => (s.address() as import('node:net').AddressInfo).port;
    const wkey = verifierOf('w.example', 0x04, randomBytes(32)).vkey;
    const slow = new WitnessClient({ vkey: wkey, url: `http://127.0.0.1:${port(hang)}` }, 300);
    const note = signCheckpoint({ origin: ORIGIN, size: 0, rootHash: EMPTY_ROOT, extensions: [] }, noteSigner(ORIGIN, SIG_ED25519, randomBytes(32)));
    const outcome = await slow.addCheckpoint(note, 0, async () => []);
    assert.equal(outcome, { ok: false, error: 'no answer within 300 ms' });
    const big = new WitnessClient({ vkey: wkey, url: `http://127.0.0.1:${port(garbage)}` }, 2_000);
    const answered = await big.addCheckpoint(note, 0, async () => []);
    assert.is(answered.ok, false);
    assert.match((answered as { error: string }).error, /more than 65536 bytes/);
  } finally {
    for (const s of sockets) s.destroy();
    await Promise.all([new Promise((r) => hang.close(r)), new Promise((r) => garbage.close(r))]);
  }
});

test.run();
