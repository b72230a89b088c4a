// The signing domain without HTTP (issue 15 section 4), over a real SQLite store whose
// calls are counted: one validation pass per file, the user and the cell read once per
// request, one write carrying one charge and the outbox rows built once.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { normalizeRecordContent, verifyRecord } from 'provenant';
import { createOrg, createUserAccount } from '../../../server/src/domain/accounts.js';
import { createApp } from '../../../server/src/domain/apps.js';
import { createServerCell } from '../../../server/src/domain/cells.js';
import type { Caller, DomainDeps } from '../../../server/src/domain/deps.js';
import { revoke } from '../../../server/src/domain/revocation.js';
import { signBatch, signOne, type BatchFile, type SignRequest } from '../../../server/src/domain/signing.js';
import { DomainError } from '../../../server/src/errors.js';
import { parseBatch, parseSignRequest } from '../../../server/src/signit/schema.js';
import { openSqliteStore, type Charge, type OutboxEvent, type Store } from '../../../server/src/store/index.js';
import { Secrets } from '../../../server/src/secrets.js';
import { outbox } from '../../helpers/outbox.js';

const test = suite('domain: signing');

/** Counts every call the domain makes on the store's accounts and signatures, and keeps each write's arguments. */
function counted(store: Store) {
  const calls = new Map<string, number>();
  const inserts: { rows: number; charge: Charge; events: readonly OutboxEvent[]; decided: number }[] = [];
  const count = <T extends object>(part: string, target: T): T =>
    new Proxy(target, {
      get(t, name, receiver) {
        const value = Reflect.get(t, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const key = `${part}.${String(name)}`;
          calls.set(key, (calls.get(key) ?? 0) + 1);
          if (key === 'signatures.insertSignatures') {
            const [rows, charge, events] = args as [unknown[], Charge, OutboxEvent[] | undefined];
            const write = { rows: rows.length, charge, events: events ?? [], decided: 0 };
            inserts.push(write);
            const decide = charge.decide;
            args[1] = { ...charge, decide: (...a: Parameters<Charge['decide']>) => (write.decided++, decide(...a)) };
          }
          return value.apply(t, args);
        };
      },
    });
  return {
    store: { ...store, accounts: count('accounts', store.accounts), signatures: count('signatures', store.signatures) } as Store,
    calls,
    inserts,
    reset() {
      calls.clear();
      inserts.length = 0;
    },
  };
}

let dir: string;
let store: Store;
let spy: ReturnType<typeof counted>;
let deps: DomainDeps;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-domain-'));
  store = await openSqliteStore(join(dir, 'provenant.db'));
  spy = counted(store);
  deps = { store: spy.store, secrets: new Secrets(join(dir, 'secrets')) };
});
test.after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
test.before.each(() => spy.reset());

const hex = () => randomBytes(32).toString('hex');
let users = 0;

/** A premium user with a server-hosted cell, and an app of theirs on a paid org (so signs through it fire events). */
async function signer(): Promise<{ caller: Caller; viaApp: Caller; agentKey: string }> {
  const user = await createUserAccount({ store, secrets: deps.secrets }, { email: `signer${++users}@example.com`, tier: 'premium' });
  const { agentKey } = await createServerCell({ store, secrets: deps.secrets }, user.id);
  const org = await createOrg({ store, secrets: deps.secrets }, { name: 'Org', ownerId: user.id, tier: 'pro', customLimit: null });
  const app = await createApp({ store, secrets: deps.secrets }, user.id, { name: 'App', redirect_uris: [], scopes: ['sign'], org_id: org.id });
  spy.reset();
  return { caller: { userId: user.id, appId: null }, viaApp: { userId: user.id, appId: app.id }, agentKey };
}

function request(fields: Record<string, unknown>): SignRequest {
  return { content: normalizeRecordContent({ file_hash: hex(), ...fields }), intentProblem: null };
}

/** A body that counts how often each of its fields is read. */
function readCounting(body: Record<string, unknown>): { body: Record<string, unknown>; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const proxy = new Proxy(body, {
    get(t, name, receiver) {
      if (typeof name === 'string') reads.set(name, (reads.get(name) ?? 0) + 1);
      return Reflect.get(t, name, receiver);
    },
  });
  return { body: proxy, reads };
}

test('POST /sign is checked in one pass: each field of the body is read once, from parsing to the stored record', async () => {
  const { caller } = await signer();
  const fields = { file_hash: hex(), comment: 'once', tags: ['a'], content_rights: { license: 'cc-by' }, ai_generation: 'none' };
  const { body, reads } = readCounting(fields);
  const signed = await signOne(deps, caller, parseSignRequest(body));
  for (const field of Object.keys(fields)) assert.is(reads.get(field), 1, field);
  assert.equal([signed.record.comment, signed.record.tags, signed.record.content_rights?.license], ['once', ['a'], 'CCBY']);
  assert.ok(verifyRecord({ ...signed.record, signature: signed.signature }));
});

test('sign-batch files are checked in one pass each: every field of every file is read once', async () => {
  const { caller } = await signer();
  const files = [{ file_hash: hex(), tags: [1] }, { file_hash: hex(), tags: [2] }].map(readCounting);
  const outcomes = await signBatch(deps, caller, parseBatch({ files: files.map((f) => f.body), shared_metadata: { comment: 'shared' } }));
  assert.equal(outcomes.map((o) => o.error), [null, null]);
  for (const { reads } of files) assert.equal([reads.get('file_hash'), reads.get('tags')], [1, 1]);
});

test('signOne reads the user and the cell once, writes once with one charge and one sign.created (with intent)', async () => {
  const { viaApp, agentKey } = await signer();
  const signed = await signOne(deps, viaApp, request({ intent: 'witness' }));
  assert.equal([spy.calls.get('accounts.getUser'), spy.calls.get('accounts.getCell')], [1, 1]);
  assert.is(spy.calls.get('signatures.insertSignatures'), 1);
  const [write] = spy.inserts;
  assert.equal([write.rows, write.decided], [1, 1]);
  assert.equal(write.events, [{
    appId: viaApp.appId,
    type: 'sign.created',
    payload: { file_hash: signed.record.file_hash, action_hash: signed.action_hash, signer: agentKey, signed_at: signed.record.signed_at, intent: 'Witness' },
  }]);
});

test('signBatch: one read of user and cell, one write of every valid file with one charge; sign.created per record, without intent', async () => {
  const { viaApp } = await signer();
  const same = request({});
  const files: BatchFile[] = [
    { fileHash: null, request: request({}) },
    { fileHash: 'zz', error: 'invalid_hash' },
    { fileHash: same.content.file_hash, request: same },
    { fileHash: same.content.file_hash, request: same }, // the same record again
    { fileHash: null, request: { ...request({}), intentProblem: 'intent must be one of ...' } },
  ];
  const outcomes = await signBatch(deps, viaApp, files);
  assert.equal(outcomes.map((o) => o.error), [null, 'invalid_hash', null, 'duplicate', 'signing_failed']);
  assert.equal([spy.calls.get('accounts.getUser'), spy.calls.get('accounts.getCell'), spy.calls.get('signatures.insertSignatures')], [1, 1, 1]);
  const [write] = spy.inserts;
  assert.equal([write.rows, write.decided, write.events.length], [2, 1, 2]);
  assert.equal(write.events.map((e) => e.payload.action_hash), [outcomes[0].actionHash, outcomes[2].actionHash]);
  for (const e of write.events) assert.equal(Object.keys(e.payload), ['file_hash', 'action_hash', 'signer', 'signed_at']);
});

test('without an app no outbox rows; over quota the batch is refused whole (remaining, requested) and nothing is stored', async () => {
  const user = await createUserAccount({ store, secrets: deps.secrets }, { email: `free${++users}@example.com` });
  await createServerCell({ store, secrets: deps.secrets }, user.id);
  const caller = { userId: user.id, appId: null };
  await signOne(deps, caller, request({}));
  assert.equal(spy.inserts.at(-1)!.events, []);
  try {
    await signBatch(deps, caller, [request({}), request({})].map((r) => ({ fileHash: null, request: r })));
    assert.unreachable('over quota');
  } catch (err) {
    assert.instance(err, DomainError);
    assert.is((err as DomainError).code, 'quota_exceeded');
    assert.equal([(err as DomainError).extra.remaining, (err as DomainError).extra.requested], [1, 2]);
  }
  assert.is((await store.signatures.findForUser(user.id)).length, 1);
});

test('a device-hosted identity (no cell) is signing_failed before anything is signed or written', async () => {
  const user = await createUserAccount({ store, secrets: deps.secrets }, { email: `device${++users}@example.com` });
  spy.reset();
  for (const attempt of [() => signOne(deps, { userId: user.id, appId: null }, request({})), () => signBatch(deps, { userId: user.id, appId: null }, [])]) {
    try {
      await attempt();
      assert.unreachable();
    } catch (err) {
      assert.is((err as DomainError).code, 'signing_failed');
    }
  }
  assert.is(spy.calls.get('signatures.insertSignatures'), undefined);
});

test('revoke reads the cell once, signs the revocation with it, and writes sign.revoked through an app', async () => {
  const { viaApp, agentKey } = await signer();
  const signed = await signOne(deps, viaApp, request({}));
  spy.reset();
  await revoke(deps, viaApp, { actionHash: signed.action_hash.toUpperCase(), reason: 'wrong file' }, 1_700_000_000_000);
  assert.is(spy.calls.get('accounts.getCell'), 1);
  const stored = await store.signatures.get(signed.action_hash);
  assert.equal([stored?.revocation?.reason, stored?.revocation?.revoked_at, stored?.revocation?.signer], ['wrong file', 1_700_000_000_000, agentKey]);
  const events = await outbox(store);
  assert.equal(events.filter((e) => e.type === 'sign.revoked' && e.payload.action_hash === signed.action_hash).map((e) => e.payload), [
    { action_hash: signed.action_hash, revoker: agentKey, reason: 'wrong file' },
  ]);
  try {
    await revoke(deps, viaApp, { actionHash: signed.action_hash, reason: null });
    assert.unreachable();
  } catch (err) {
    assert.equal([(err as DomainError).code, (err as DomainError).message], ['revocation_failed', 'Revocation failed: the signature is already revoked.']);
  }
});

test.run();
