// What only the SQLite engine does (the contract, test/store/contract.ts, covers the
// interfaces): the canonical record text kept byte for byte, reader connections that keep
// statements prepared, migrations over a database made by an older version (the reduced
// JSON SQLite wrote and the store writes now are the same bytes), and a writer killed
// inside a batch transaction leaving all or nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import sqlite3 from 'sqlite3';
import type { SignatureRecord } from 'provenant';
import { Db } from '../../../server/src/store/sqlite/db.js';
import { sqliteStore } from '../../../server/src/store/sqlite/index.js';
import { reducedJson, type Charge, type NewSignature, type Store } from '../../../server/src/store/index.js';

const test = suite('store/sqlite');
const dir = mkdtempSync(join(tmpdir(), 'provenant-sqlite-'));
const file = join(dir, 'provenant.db');
let db: Db;
let store: Store;

test.before(async () => {
  db = await Db.open(file);
  store = sqliteStore(db);
});
test.after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rejects(fn: () => Promise<unknown>, pattern?: RegExp): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (pattern) assert.match(String((err as Error).message), pattern);
    return;
  }
  assert.unreachable('expected a rejection');
}

const hex = () => randomBytes(32).toString('hex');
const FINGERPRINT = { hash_type: 'ImagePHash', hash_value: [1, 1, 2, 3, 5, 8, 13, 21], bands: [[1], [1], [2], [3], [5], [8], [13], [21]] };

async function newUser(on = store): Promise<string> {
  const id = randomUUID();
  await on.accounts.createAccount({ user: { id, createdAt: Date.now() }, personalOrg: { id: randomUUID(), name: 'Personal' } });
  return id;
}

function rowOf(userId: string, over: Partial<SignatureRecord> = {}): NewSignature {
  const record: SignatureRecord = {
    file_hash: hex(), signer: 'uhCAkSigner', signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
  return { record, signature: randomBytes(64).toString('base64'), action_hash: hex(), userId, appId: null, source: 'vault' };
}

const everything = (userId: string): Charge => ({
  userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
  decide: (_u, n) => ({ quota: 'personal', orgId: null, overage: new Array(n).fill(false) }),
});

const seqOf = async (actionHash: string, on = db) => (await on.get<{ seq: number }>('SELECT seq FROM signatures WHERE action_hash = ?', [actionHash]))!.seq;

/** Records whose reduced fields test JSON text: escapes, non-ASCII, numbers, keys out of canonical order. */
function trickyRows(userId: string): NewSignature[] {
  return [
    rowOf(userId, { perceptual_hash: FINGERPRINT }),
    rowOf(userId, {
      perceptual_hash: FINGERPRINT, intent: 'Witness', ai_generation: 'Assisted', signed_at: 1_700_000_000_123,
      content_rights: { license: { Custom: 'q"\\ é\n😀\u0001\u007f/\u2028' }, commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
    }),
    rowOf(userId, {
      perceptual_hash: FINGERPRINT,
      content_rights: { z: [1e21, -0, 1.5, 0.1, 2 ** 53, -1e-7], a: { y: true, b: null }, '€': 'x', 'é': 'y', '\u0000k': 1 } as unknown as SignatureRecord['content_rights'],
    }),
    rowOf(userId), // no fingerprint: no reduced row
  ];
}

test('a stored record is its canonical JSON (RFC 8785), byte for byte', async () => {
  const userId = await newUser();
  const row = rowOf(userId, { tags: ['a', 1.5], expires_at: { b: 1, a: 2 }, comment: 'é 😀' });
  await store.signatures.insertSignatures([row], everything(userId));
  const stored = await db.get<{ record: string }>('SELECT record FROM signatures WHERE action_hash = ?', [row.action_hash]);
  assert.is(stored!.record, canonicalize(row.record));
});

test('readers keep statements prepared: every read sees the commits before it; bad SQL is not kept; close finalizes', async () => {
  const userId = await newUser();
  const count = async (_: unknown, i: number) =>
    i % 2 === 0 ? (await db.all<{ n: number }>('SELECT count(*) AS n FROM signatures'))[0].n : (await db.get<{ n: number }>('SELECT count(*) AS n FROM signatures'))!.n;
  // the same statements (`all` and `get`) on every reader (round robin), before and after a commit
  const before = await Promise.all(Array.from({ length: 8 }, count));
  assert.ok(before.every((n) => n === before[0]), `readers disagree: ${before}`);
  await store.signatures.insertSignatures([rowOf(userId)], everything(userId));
  assert.equal(await Promise.all(Array.from({ length: 8 }, count)), new Array(8).fill(before[0] + 1));
  // the fetch of reduced records and the feed's read: what was stored after the same fetch ran is found
  const first = rowOf(userId, { perceptual_hash: FINGERPRINT });
  await store.signatures.insertSignatures([first], everything(userId));
  const s1 = await seqOf(first.action_hash);
  const latest = await store.feed.latest();
  for (let i = 0; i < 8; i++) assert.equal((await store.signatures.reducedBySeqs([s1, s1 + 1])).map((r) => r.seq), [s1]);
  for (let i = 0; i < 8; i++) assert.equal(await store.feed.since(latest, 10), []);
  const second = rowOf(userId, { perceptual_hash: FINGERPRINT });
  await store.signatures.insertSignatures([second], everything(userId));
  assert.is(await seqOf(second.action_hash), s1 + 1);
  for (let i = 0; i < 8; i++) assert.equal((await store.signatures.reducedBySeqs([s1, s1 + 1])).map((r) => r.seq).sort(), [s1, s1 + 1]);
  for (let i = 0; i < 8; i++) assert.is((await store.feed.since(latest, 10)).length, 1);
  // a statement that fails to prepare rejects every time (never kept, never left hanging)
  for (let i = 0; i < 2; i++) await rejects(() => db.all('SELECT nope FROM nowhere'), /no such table/);
  // more distinct statements than a reader keeps: the oldest are finalized, all answer
  const values = await Promise.all(Array.from({ length: 600 }, (_, i) => db.all<{ v: number }>(`SELECT ${i} AS v`)));
  assert.equal(values.map((r) => r[0].v), Array.from({ length: 600 }, (_, i) => i));
  // a database whose readers hold prepared statements closes
  const other = await Db.open(join(dir, 'other.sqlite'));
  for (let i = 0; i < 4; i++) await other.all('SELECT ? AS x', [i]);
  await rejects(() => other.all('SELECT nope FROM nowhere'));
  await other.close();
});

/** Runs SQL on its own connection to `path` (outside the store's transaction queue). */
function sqliteExec(path: string, sql: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const raw = new sqlite3.Database(path, (err) => {
      if (err) return reject(err);
      raw.exec(sql, (e) => raw.close(() => (e ? reject(e) : resolve())));
    });
  });
}

/** The text of `n` nested arrays: deeper than SQLite's JSON parser goes (1,000 levels). */
const deepText = (n: number) => '['.repeat(n) + ']'.repeat(n);

test('a database made before version 003: reopening backfills the reduced JSON as the store writes it, then drops the trigger', async () => {
  const userId = await newUser();
  const rows = trickyRows(userId);
  const unreadable = rowOf(userId, { perceptual_hash: FINGERPRINT, tags: 'DEEP' });
  await store.signatures.insertSignatures([...rows, unreadable], everything(userId));
  const seqs = await Promise.all([...rows, unreadable].map((r) => seqOf(r.action_hash)));
  // written by the store (reducedJson), the fingerprinted ones only
  const written = await store.signatures.reducedBySeqs(seqs);
  assert.equal(written.map((r) => r.seq).sort((a, b) => a - b), [seqs[0], seqs[1], seqs[2], seqs[4]]);

  // A copy at version 2, as made by a version before the reduced table and the feed (the
  // later areas' tables, from 006 on, stay as they are: they depend on none of these); one
  // stored record nested deeper than SQLite reads (an older version could store one).
  const upgradeFile = join(dir, 'upgrade.sqlite');
  await sqliteExec(file, `VACUUM INTO '${upgradeFile}'`);
  await sqliteExec(upgradeFile, `DROP TABLE signature_reduced; DROP TABLE changes; DELETE FROM schema_migrations WHERE version BETWEEN 3 AND 5;
    UPDATE signatures SET record = replace(record, '"DEEP"', '${deepText(2000)}') WHERE seq = ${seqs[4]};`);
  const told: string[] = [];
  const upgraded = await Db.open(upgradeFile, (m) => told.push(`${m.version} ${m.name} ${m.ms === undefined ? 'start' : 'done'}`));
  try {
    assert.equal(told, [
      '3 signature_reduced start', '3 signature_reduced done', '4 changes start', '4 changes done', '5 reduced_by_store start', '5 reduced_by_store done',
    ]);
    // what the migrations wrote is in the database file: the WAL was cut back to nothing
    assert.is(statSync(`${upgradeFile}-wal`).size, 0);
    const again = sqliteStore(upgraded);
    // SQLite's json_object (migration 003) and reducedJson agree byte for byte; the unreadable record has no row
    const backfilled = await again.signatures.reducedBySeqs(seqs);
    const bySeq = (list: typeof written) => [...list].sort((a, b) => a.seq - b.seq);
    assert.equal(bySeq(backfilled), bySeq(written).filter((r) => r.seq !== seqs[4]));
    for (const r of backfilled) assert.is(r.json, reducedJson(rows[seqs.indexOf(r.seq)].record));
    // the unreadable record stays out of the index's load instead of failing it
    assert.equal((await again.signatures.listPerceptualHashes(seqs[0] - 1, seqs[4])).map((h) => [h.seq, h.perceptual_hash_json === null]), [
      [seqs[0], false], [seqs[1], false], [seqs[2], false], [seqs[4], true],
    ]);
    // the trigger and its view are gone; the store writes the reduced row of a new record
    assert.equal(await upgraded.all("SELECT name FROM sqlite_schema WHERE name LIKE 'signature_reduced%' ORDER BY name"), [{ name: 'signature_reduced' }]);
    const later = rowOf(userId, { perceptual_hash: FINGERPRINT, intent: 'Witness', comment: 'later' });
    await again.signatures.insertSignatures([later], everything(userId));
    assert.equal((await again.signatures.reducedBySeqs([await seqOf(later.action_hash, upgraded)])).map((r) => r.json), [reducedJson(later.record)]);
    // the feed starts empty on an upgraded database and numbers what comes after
    assert.equal((await again.feed.since(0, 10)).map((c) => [c.kind, (c as { action_hash: string }).action_hash]), [['stored', later.action_hash]]);
    // derived rows never block deleting a record by hand (foreign keys are on): they go with it
    await upgraded.run('DELETE FROM signatures WHERE seq = ?', [seqs[2]]);
    assert.equal((await again.signatures.reducedBySeqs(seqs)).map((r) => r.seq).sort((a, b) => a - b), [seqs[0], seqs[1]]);
  } finally {
    await upgraded.close();
  }
});

test("SQLite's constraint failures reach callers as the store's typed errors, never as SQLite's text", async () => {
  const userId = await newUser();
  const row = rowOf(userId);
  await store.signatures.insertSignatures([row], everything(userId));
  for (const work of [
    () => store.signatures.insertSignatures([row], everything(userId)),
    () => store.accounts.createOrg({ id: randomUUID(), name: 'X', ownerId: randomUUID(), tier: 'free', customLimit: null }),
  ]) {
    try {
      await work();
      assert.unreachable('refused');
    } catch (err) {
      assert.not.match(String((err as Error).message), /SQLITE|constraint/i);
    }
  }
});

function runChild(count: number, userId: string, killAfterMs: number): Promise<{ signer: string; committed: boolean; signal: string | null; began: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'batch-writer.child.ts'), file, String(count), userId], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let began = false;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!began && out.includes('in-transaction')) {
        began = true;
        setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      const signer = /signer (\S+)/.exec(out)?.[1] ?? '';
      resolve({ signer, committed: out.includes('committed'), signal, began });
    });
  });
}

test('a writer killed (SIGKILL) inside a 10,000-record batch transaction leaves none of it, feed included', async () => {
  const userId = await newUser();
  for (const delay of [30, 150]) {
    const latest = await store.feed.latest();
    const r = await runChild(10_000, userId, delay);
    assert.ok(r.began, 'the child reached the transaction');
    assert.is(r.signal, 'SIGKILL');
    const n = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM signatures WHERE signer = ?', [r.signer]))!.n;
    // all or nothing; when the kill came before COMMIT, nothing
    assert.ok(n === 0 || n === 10_000, `found ${n}`);
    if (!r.committed) assert.is(n, 0);
    assert.is((await store.feed.since(latest, 20_000)).length, n, 'a change per stored record, none for a lost batch');
  }
  // the database is intact and writable afterwards
  const row = rowOf(userId);
  await store.signatures.insertSignatures([row], everything(userId));
  assert.ok(await store.signatures.get(row.action_hash));
});

test.run();
