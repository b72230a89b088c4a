// The signatures store on a real SQLite file: immutable records, quota counted inside
// the insert transaction, revocations, thumbnails, the outbox, observers, and a
// writer killed in the middle of a batch transaction leaving all or nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import sqlite3 from 'sqlite3';
import { Db } from '../../server/src/store/db.js';
import { createSqliteStore, type Store } from '../../server/src/store/index.js';
import type { NewSignature, StoredSignature } from '../../server/src/store/signatures.js';
import { agentKeyFromPublicKey, generateSigningKey } from '../../src/lib/identity.js';
import { signRecord, type SignatureRecord } from '../../src/lib/records.js';
import { decideCharge, quotaPeriod, QuotaExceededError } from '../../server/src/signit/quota.js';

async function rejects(fn: () => Promise<unknown>, pattern?: RegExp): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (pattern) assert.match(String((err as Error).message), pattern);
    return;
  }
  assert.unreachable('expected a rejection');
}

const dir = mkdtempSync(join(tmpdir(), 'provenant-sigstore-'));
const file = join(dir, 'db.sqlite');
let db: Db;
let store: Store;

test.before(async () => {
  db = await Db.open(file);
  store = createSqliteStore(db);
});
test.after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function newUser(opts: { tier?: 'free' | 'premium'; publicFields?: ('display_name' | 'username')[] } = {}) {
  const key = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(key.publicKey);
  const user = await store.accounts.createAccount({
    user: { id: randomUUID(), displayName: 'Ada', username: `ada${randomBytes(4).toString('hex')}`, tier: opts.tier ?? 'free', createdAt: Date.now() },
    personalOrg: { id: randomUUID(), name: 'Personal' },
    agentKey,
  });
  if (opts.publicFields) await store.accounts.updateUser(user.id, { publicFields: opts.publicFields });
  return { user, key, agentKey };
}

function signed(u: Awaited<ReturnType<typeof newUser>>, over: Partial<SignatureRecord> = {}): NewSignature {
  const record: SignatureRecord = {
    file_hash: randomBytes(32).toString('hex'), signer: u.agentKey, signed_at: Date.now(), intent: 'Authorship',
    ai_generation: 'None', content_rights: null, integrity_report: null, perceptual_hash: null,
    comment: null, supersedes: null, expires_at: null, tags: null, ...over,
  };
  const { signature, action_hash } = signRecord(record, u.key.privateKeyPkcs8);
  return { record, signature, action_hash, userId: u.user.id, appId: null, source: 'vault' };
}

/** A record with a random (unverifiable) signature: the store does not verify, and bulk setup stays fast. */
function unsigned(u: Awaited<ReturnType<typeof newUser>>): NewSignature {
  const record: SignatureRecord = {
    file_hash: randomBytes(32).toString('hex'), signer: u.agentKey, signed_at: Date.now(), intent: 'Authorship',
    ai_generation: null, content_rights: null, integrity_report: null, perceptual_hash: null,
    comment: null, supersedes: null, expires_at: null, tags: null,
  };
  return { record, signature: randomBytes(64).toString('base64'), action_hash: randomBytes(32).toString('hex'), userId: u.user.id, appId: null, source: 'vault' };
}

const everything = (userId: string) => ({
  userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
  decide: (_u: unknown, n: number) => ({ pool: 'personal' as const, orgId: null, overage: new Array(n).fill(false) }),
});

test('a stored record comes back unchanged, its canonical JSON kept byte for byte', async () => {
  const u = await newUser({ publicFields: ['display_name'] });
  const s = signed(u, { tags: ['a', 1.5], expires_at: { at: 1 }, comment: 'é 😀', content_rights: { license: { Custom: 'mine' }, commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: null } });
  await store.signatures.insertSignatures([s], everything(u.user.id));
  const got = (await store.signatures.get(s.action_hash))!;
  assert.equal(got.record, s.record);
  assert.is(got.signature, s.signature);
  assert.is(got.revocation, null);
  assert.equal(got.profile?.public_fields, ['display_name']);
  assert.is(got.profile?.display_name, 'Ada');
  const row = await db.get<{ record: string }>('SELECT record FROM signatures WHERE action_hash = ?', [s.action_hash]);
  assert.is(row!.record, canonicalize(s.record));
  // action_hash = SHA-256 of canonical {record..., signature} (decisions.md 2), recomputed independently
  const expect = createHash('sha256').update(canonicalize({ ...s.record, signature: s.signature })!).digest('hex');
  assert.is(got.action_hash, expect);
  const byFile = await store.signatures.findByFileHash(s.record.file_hash);
  assert.equal(byFile.map((x) => x.action_hash), [s.action_hash]);
});

test('the same action hash cannot be stored twice', async () => {
  const u = await newUser();
  const s = signed(u);
  await store.signatures.insertSignatures([s], everything(u.user.id));
  await rejects(() => store.signatures.insertSignatures([s], everything(u.user.id)), /UNIQUE/);
});

test('decide sees the period usage; a refusal writes nothing, outbox included', async () => {
  const u = await newUser();
  const seen: number[] = [];
  const charge = {
    ...everything(u.user.id),
    decide: (usage: { personalUsed: number }, n: number) => {
      seen.push(usage.personalUsed);
      return { pool: 'personal' as const, orgId: null, overage: new Array(n).fill(false) };
    },
  };
  await store.signatures.insertSignatures([signed(u), signed(u)], charge);
  await store.signatures.insertSignatures([signed(u)], charge);
  assert.equal(seen, [0, 2]);
  const before = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM event_outbox'))!.n;
  await rejects(() =>
    store.signatures.insertSignatures([signed(u)], { ...charge, decide: () => { throw new Error('no'); } }, [
      { appId: 'x', type: 'sign.created', payload: {} },
    ]),
  );
  assert.is((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM event_outbox'))!.n, before);
  const usage = await store.signatures.countUsage(u.user.id, null, 0, Number.MAX_SAFE_INTEGER);
  assert.is(usage.personalUsed, 3);
  // a period that excludes now counts nothing
  const past = await store.signatures.countUsage(u.user.id, null, 0, 1000);
  assert.is(past.personalUsed, 0);
});

test('ten concurrent signs with one left in a free quota: exactly one is stored', async () => {
  const u = await newUser();
  const period = quotaPeriod(Date.now());
  const plan = { userId: u.user.id, personalTier: 'free' as const, org: null, appWithoutOrg: false };
  const charge = () => ({ userId: u.user.id, orgId: null, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period) });
  await store.signatures.insertSignatures([signed(u)], charge());
  const results = await Promise.allSettled(Array.from({ length: 10 }, () => store.signatures.insertSignatures([signed(u)], charge())));
  assert.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of results) if (r.status === 'rejected') assert.instance(r.reason, QuotaExceededError);
  assert.is((await store.signatures.countUsage(u.user.id, null, period.start, period.end)).personalUsed, 2);
});

test('org pool: charged to the org, overage flagged past the included signs', async () => {
  const u = await newUser();
  const org = await store.accounts.createOrg({ id: randomUUID(), name: 'Acme', ownerId: u.user.id, tier: 'starter', customLimit: null });
  const period = quotaPeriod(Date.now());
  // pretend 2,499 of the 2,500 included signs are used: count from stored rows only, so insert them
  const filler: NewSignature[] = Array.from({ length: 2499 }, () => unsigned(u));
  await store.signatures.insertSignatures(filler, {
    userId: u.user.id, orgId: org.id, periodStart: period.start, periodEnd: period.end,
    decide: (_x, n) => ({ pool: 'org', orgId: org.id, overage: new Array(n).fill(false) }),
  });
  const plan = { userId: u.user.id, personalTier: 'free' as const, org: { orgId: org.id, tier: 'starter' as const, customLimit: null, appName: 'A' }, appWithoutOrg: false };
  const d = await store.signatures.insertSignatures([signed(u), signed(u), signed(u)], {
    userId: u.user.id, orgId: org.id, periodStart: period.start, periodEnd: period.end, decide: decideCharge(plan, period),
  });
  assert.equal(d, { pool: 'org', orgId: org.id, overage: [false, true, true] });
  const usage = await store.signatures.countUsage(u.user.id, org.id, period.start, period.end);
  assert.equal(usage, { personalUsed: 0, orgUsed: 2502, orgOverage: 2 });
});

test('revocation: once, linked by action hash, observers told after commit', async () => {
  const u = await newUser();
  const s = signed(u);
  const told: string[] = [];
  const off = store.signatures.subscribe({
    stored: (list: readonly StoredSignature[]) => told.push(...list.map((x) => `stored:${x.action_hash}:${x.seq > 0}`)),
    revoked: (hash, fileHash) => told.push(`revoked:${hash}:${fileHash}`),
  });
  await store.signatures.insertSignatures([s], everything(u.user.id));
  const rev = { action_hash: s.action_hash, reason: 'oops', revoked_at: Date.now(), signer: u.agentKey, signature: 'sig', source: 'vault' as const, appId: null };
  assert.is(await store.signatures.insertRevocation(rev, [{ appId: 'app-1', type: 'sign.revoked', payload: { action_hash: s.action_hash } }]), 'revoked');
  assert.is(await store.signatures.insertRevocation(rev), 'already_revoked');
  assert.is(await store.signatures.insertRevocation({ ...rev, action_hash: 'f'.repeat(64) }), 'unknown');
  off();
  assert.equal(told, [`stored:${s.action_hash}:true`, `revoked:${s.action_hash}:${s.record.file_hash}`]);
  const got = (await store.signatures.get(s.action_hash))!;
  assert.equal(got.revocation, { reason: 'oops', revoked_at: rev.revoked_at, signer: u.agentKey, signature: 'sig' });
  assert.equal(got.record, s.record); // the record itself is untouched
  const pending = await store.signatures.pendingEvents(1000);
  const mine = pending.filter((e) => e.app_id === 'app-1');
  assert.is(mine.length, 1);
  assert.equal(mine[0].payload, { action_hash: s.action_hash });
  await store.signatures.markEventDispatched(mine[0].id, Date.now());
  assert.is((await store.signatures.pendingEvents(1000)).some((e) => e.id === mine[0].id), false);
});

test('thumbnails are set and replaced; unknown records refused', async () => {
  const u = await newUser();
  const s = signed(u);
  await store.signatures.insertSignatures([s], everything(u.user.id));
  assert.ok(await store.signatures.setThumbnail(s.action_hash, 'data:image/png;base64,AAAA', 1));
  assert.ok(await store.signatures.setThumbnail(s.action_hash, 'data:image/png;base64,BBBB', 2));
  assert.is((await store.signatures.get(s.action_hash))!.thumbnail, 'data:image/png;base64,BBBB');
  assert.not.ok(await store.signatures.setThumbnail('0'.repeat(64), 'data:image/png;base64,AAAA', 3));
});

test('findForUser includes linked agents; listFingerprinted pages by seq', async () => {
  const u = await newUser();
  const other = generateSigningKey();
  const otherKey = agentKeyFromPublicKey(other.publicKey);
  await store.accounts.linkAgent(u.user.id, otherKey);
  const a = signed(u);
  const bRecord: SignatureRecord = { ...a.record, file_hash: randomBytes(32).toString('hex'), signer: otherKey, perceptual_hash: { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] } };
  const bs = signRecord(bRecord, other.privateKeyPkcs8);
  // stored under another (device) account id, before the link: still the user's by agent key
  const stranger = await newUser();
  await store.signatures.insertSignatures([a], everything(u.user.id));
  await store.signatures.insertSignatures([{ record: bRecord, ...bs, userId: stranger.user.id, appId: null, source: 'vault' }], everything(stranger.user.id));
  const mine = await store.signatures.findForUser(u.user.id);
  assert.equal(new Set(mine.map((x) => x.action_hash)), new Set([a.action_hash, bs.action_hash]));
  const fp = await store.signatures.listFingerprinted(0, 10_000);
  const hit = fp.find((x) => x.action_hash === bs.action_hash);
  assert.ok(hit);
  assert.equal(hit!.record.perceptual_hash, bRecord.perceptual_hash);
  assert.is(fp.some((x) => x.action_hash === a.action_hash), false);
  assert.equal(await store.signatures.listFingerprinted(hit!.seq, 10), fp.filter((x) => x.seq > hit!.seq).slice(0, 10));
});

test('the match index reads: perceptual hashes by seq range, the last seq, reduced fields as JSON', async () => {
  const u = await newUser();
  const ph = { hash_type: 'ImagePHash', hash_value: [9, 8, 7, 6, 5, 4, 3, 2], bands: [[9], [8], [7], [6], [5], [4], [3], [2]] };
  const withFp = [0, 1, 2].map((i) => signed(u, { perceptual_hash: ph, signed_at: 1_700_000_000_000 + i, comment: 'not in the reduced shape' }));
  const tricky = signed(u, { perceptual_hash: ph, ai_generation: null, content_rights: { license: { Custom: 'q"\\ é\n😀' }, commercial_licensing: null, ai_training: 'NotAllowed', contact_preference: null } });
  const plain = signed(u);
  await store.signatures.insertSignatures([...withFp, plain, tricky], everything(u.user.id));
  const seqOf = async (a: string) => (await db.get<{ seq: number }>('SELECT seq FROM signatures WHERE action_hash = ?', [a]))!.seq;
  const seqs = await Promise.all([...withFp, plain, tricky].map((x) => seqOf(x.action_hash)));
  assert.is(await store.signatures.lastSeq(), Math.max(...seqs));
  // ranges are (after, upTo]: only fingerprinted records, in seq order
  const range = await store.signatures.listPerceptualHashes(seqs[0] - 1, seqs[4]);
  assert.equal(range.map((r) => r.seq), [seqs[0], seqs[1], seqs[2], seqs[4]]);
  assert.equal(JSON.parse(range[0].perceptual_hash_json!), ph);
  assert.is(range[1].signed_at, withFp[1].record.signed_at);
  assert.equal((await store.signatures.listPerceptualHashes(seqs[1], seqs[2])).map((r) => r.seq), [seqs[2]]);
  // SQLite's JSON of the six reduced fields parses to exactly those fields of the record
  // seqs[3] is the record without a fingerprint: never a match, so never asked for, and skipped
  const reduced = await store.signatures.reducedBySeqs([seqs[4], seqs[0], seqs[3], 999_999_999]);
  assert.equal(reduced.map((r) => r.seq).sort((a, b) => a - b), [seqs[0], seqs[4]]);
  for (const r of reduced) {
    const rec = (r.seq === seqs[4] ? tricky : withFp[0]).record;
    const fields = { file_hash: rec.file_hash, signer: rec.signer, signed_at: rec.signed_at, intent: rec.intent, ai_generation: rec.ai_generation, content_rights: rec.content_rights };
    assert.equal(JSON.parse(r.json), fields);
    assert.equal(Object.keys(JSON.parse(r.json)), Object.keys(fields)); // in this order
    assert.is(r.signed_at, rec.signed_at);
  }
  assert.equal(await store.signatures.reducedBySeqs([999_999_999]), []);
  assert.equal(await store.signatures.reducedBySeqs([]), []);
});

test('readers keep statements prepared: every read sees the commits before it; bad SQL is not kept; close finalizes', async () => {
  const u = await newUser();
  const count = async (_: unknown, i: number) =>
    i % 2 === 0 ? (await db.all<{ n: number }>('SELECT count(*) AS n FROM signatures'))[0].n : (await db.get<{ n: number }>('SELECT count(*) AS n FROM signatures'))!.n;
  // the same statements (`all` and `get`) on every reader (round robin), before and after a commit
  const before = await Promise.all(Array.from({ length: 8 }, count));
  assert.ok(before.every((n) => n === before[0]), `readers disagree: ${before}`);
  await store.signatures.insertSignatures([unsigned(u)], everything(u.user.id));
  assert.equal(await Promise.all(Array.from({ length: 8 }, count)), new Array(8).fill(before[0] + 1));
  // the fetch of reduced records: a record stored after the same fetch ran is found
  const ph = { hash_type: 'ImagePHash', hash_value: [1, 2, 3, 4, 5, 6, 7, 8], bands: [[1], [2], [3], [4], [5], [6], [7], [8]] };
  const first = signed(u, { perceptual_hash: ph });
  await store.signatures.insertSignatures([first], everything(u.user.id));
  const seqOf = async (a: string) => (await db.get<{ seq: number }>('SELECT seq FROM signatures WHERE action_hash = ?', [a]))!.seq;
  const s1 = await seqOf(first.action_hash);
  for (let i = 0; i < 8; i++) assert.equal((await store.signatures.reducedBySeqs([s1, s1 + 1])).map((r) => r.seq), [s1]);
  const second = signed(u, { perceptual_hash: ph });
  await store.signatures.insertSignatures([second], everything(u.user.id));
  assert.is(await seqOf(second.action_hash), s1 + 1);
  for (let i = 0; i < 8; i++) assert.equal((await store.signatures.reducedBySeqs([s1, s1 + 1])).map((r) => r.seq).sort(), [s1, s1 + 1]);
  // a statement that fails to prepare rejects every time (never kept, never left hanging)
  for (let i = 0; i < 2; i++) await rejects(() => db.all('SELECT nope FROM nowhere'), /no such table/);
  // more distinct statements than a reader keeps: the oldest are finalized, all answer
  const values = await Promise.all(Array.from({ length: 600 }, (_, i) => db.all<{ v: number }>(`SELECT ${i} AS v`)));
  assert.equal(values.map((r) => r[0].v), Array.from({ length: 600 }, (_, i) => i));
  // a database whose readers hold prepared statements closes
  const other = await Db.open(join(dir, 'other.sqlite'));
  for (let i = 0; i < 8; i++) await other.all('SELECT ? AS x', [i]);
  await rejects(() => other.all('SELECT nope FROM nowhere'));
  await other.close();
});

test('migration 003 fills the reduced table from records stored before it', async () => {
  const u = await newUser();
  const ph = { hash_type: 'ImagePHash', hash_value: [1, 1, 2, 3, 5, 8, 13, 21], bands: [[1], [1], [2], [3], [5], [8], [13], [21]] };
  const before = [signed(u, { perceptual_hash: ph }), signed(u), signed(u, { perceptual_hash: ph, intent: 'Witness' })];
  await store.signatures.insertSignatures(before, everything(u.user.id));
  const seqs = await Promise.all(before.map(async (x) => (await db.get<{ seq: number }>('SELECT seq FROM signatures WHERE action_hash = ?', [x.action_hash]))!.seq));
  const fromTrigger = await store.signatures.reducedBySeqs(seqs);
  // A copy of the file with migration 003 rolled back, as in a database made before it, opened again.
  const upgradeFile = join(dir, 'upgrade.sqlite');
  await sqliteExec(file, `VACUUM INTO '${upgradeFile}'`);
  await sqliteExec(upgradeFile, `DROP TRIGGER signature_reduced_insert; DROP TABLE signature_reduced;
    DROP VIEW signature_reduced_source; DELETE FROM schema_migrations WHERE version = 3;`);
  const told: { version: number; name: string; done: boolean }[] = [];
  const upgraded = await Db.open(upgradeFile, (m) => told.push({ version: m.version, name: m.name, done: m.ms !== undefined }));
  try {
    // only 003 ran, announced before and after
    assert.equal(told, [{ version: 3, name: 'signature_reduced', done: false }, { version: 3, name: 'signature_reduced', done: true }]);
    // what the migration wrote is in the database file: the WAL was cut back to nothing
    assert.is(statSync(`${upgradeFile}-wal`).size, 0);
    const backfilled = await createSqliteStore(upgraded).signatures.reducedBySeqs(seqs);
    const bySeq = (rows: typeof backfilled) => [...rows].sort((a, b) => a.seq - b.seq);
    assert.equal(bySeq(backfilled), bySeq(fromTrigger));
    assert.equal(backfilled.map((r) => r.seq).sort((a, b) => a - b), [seqs[0], seqs[2]]);
    assert.is(JSON.parse(bySeq(backfilled)[1].json).intent, 'Witness');
    // derived rows never block deleting a record by hand (foreign keys are on): they go with it
    await upgraded.run('DELETE FROM signatures WHERE seq = ?', [seqs[2]]);
    assert.equal((await createSqliteStore(upgraded).signatures.reducedBySeqs(seqs)).map((r) => r.seq), [seqs[0]]);
  } finally {
    await upgraded.close();
  }
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

test('a writer killed (SIGKILL) inside a 10,000-record batch transaction leaves none of it', async () => {
  const u = await newUser();
  for (const delay of [30, 150]) {
    const r = await runChild(10_000, u.user.id, delay);
    assert.ok(r.began, 'the child reached the transaction');
    assert.is(r.signal, 'SIGKILL');
    const n = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM signatures WHERE signer = ?', [r.signer]))!.n;
    // all or nothing; when the kill came before COMMIT, nothing
    assert.ok(n === 0 || n === 10_000, `found ${n}`);
    if (!r.committed) assert.is(n, 0);
  }
  // the database is intact and writable afterwards
  const s = signed(u);
  await store.signatures.insertSignatures([s], everything(u.user.id));
  assert.ok(await store.signatures.get(s.action_hash));
});

test.run();
