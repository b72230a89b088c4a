// Vault publishing and the quota reads without HTTP (decisions.md 2, 6), on a real
// SQLite store and an injected clock.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { agentKeyFromPublicKey, generateSigningKey, recordOf, normalizeRecordContent, signRecord, signRevocation, type SignatureRecord } from 'provenant';
import { createOrg, createUserAccount, updateProfile } from '../../../server/src/domain/accounts.js';
import { createApp } from '../../../server/src/domain/apps.js';
import type { DomainDeps } from '../../../server/src/domain/deps.js';
import { publish, publishRevocation, PUBLISH_WINDOW_MS } from '../../../server/src/domain/publishing.js';
import { agentQuota } from '../../../server/src/domain/quota-plans.js';
import { DomainError } from '../../../server/src/errors.js';
import { openSqliteStore, type Store } from '../../../server/src/store/index.js';
import { Secrets } from '../../../server/src/secrets.js';

const test = suite('domain: publishing');
// the store stamps records with its own clock, which the quota period is counted on: the tests' clock is near it
const NOW = Date.now();

let dir: string;
let store: Store;
let deps: DomainDeps;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-domain-'));
  store = await openSqliteStore(join(dir, 'provenant.db'));
  deps = { store, secrets: new Secrets(join(dir, 'secrets')) };
});
test.after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    assert.instance(err, DomainError, String(err));
    return (err as DomainError).code;
  }
  assert.unreachable('expected a DomainError');
  return '';
}

/** A vault identity with its device-hosted account. */
async function vault() {
  const key = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(key.publicKey);
  const user = await createUserAccount(deps, { agentKey });
  const sign = (over: Partial<SignatureRecord> = {}) => {
    const record = { ...recordOf(normalizeRecordContent({ file_hash: randomBytes(32).toString('hex') }), agentKey, NOW), ...over };
    return { record, signature: signRecord(record, key.privateKeyPkcs8).signature };
  };
  return { key, agentKey, user, sign };
}

test('publish: the signature, the 10-minute window on the injected clock, the signer account; again answers the hash and charges nothing', async () => {
  const v = await vault();
  const signed = v.sign();
  const hash = await publish(deps, { ...signed, clientId: null }, NOW + PUBLISH_WINDOW_MS);
  assert.is(await publish(deps, { ...signed, clientId: null }, NOW), hash);
  assert.is((await agentQuota(deps, v.agentKey, null)).used, 1);
  assert.is(await codeOf(publish(deps, { ...signed, signature: v.sign().signature, clientId: null }, NOW)), 'invalid_signature');
  assert.is(await codeOf(publish(deps, { ...v.sign(), clientId: null }, NOW + PUBLISH_WINDOW_MS + 1)), 'invalid_request');
  const stranger = generateSigningKey();
  const foreign = { ...signed.record, signer: agentKeyFromPublicKey(stranger.publicKey) };
  assert.is(await codeOf(publish(deps, { record: foreign, signature: signRecord(foreign, stranger.privateKeyPkcs8).signature, clientId: null }, NOW)), 'agent_not_found');
  await publish(deps, { ...v.sign(), clientId: null }, NOW);
  // the free personal quota (2) is used up: refused, the route answers it with 403
  const refused = publish(deps, { ...v.sign(), clientId: null }, NOW);
  assert.is(await codeOf(refused), 'quota_exceeded');
});

test('publish with a sponsoring client_id draws on its org quota; the quota by agent shows the sponsor', async () => {
  const v = await vault();
  const owner = await createUserAccount(deps, { email: `owner${Date.now()}@example.com` });
  const org = await createOrg(deps, { name: 'Sponsor', ownerId: owner.id, tier: 'free', customLimit: null });
  const app = await createApp(deps, owner.id, { name: 'Partner', redirect_uris: [], scopes: [], org_id: org.id });
  await publish(deps, { ...v.sign(), clientId: app.id }, NOW);
  const quota = await agentQuota(deps, v.agentKey, app.id);
  assert.equal([quota.scope, quota.used, quota.sponsor], ['org', 1, { app_name: 'Partner', exhausted: false }]);
  assert.is((await agentQuota(deps, v.agentKey, null)).used, 0);
});

test('publishRevocation: only the signer, once, within the window; no quota drawn', async () => {
  const v = await vault();
  const other = await vault();
  const signed = v.sign();
  const hash = await publish(deps, { ...signed, clientId: null }, NOW);
  const entry = (who: typeof v, over = {}) => {
    const e = { action_hash: hash, reason: 'superseded', revoked_at: NOW, signer: who.agentKey, ...over };
    return { entry: e, signature: signRevocation(e, who.key.privateKeyPkcs8) };
  };
  assert.is(await codeOf(publishRevocation(deps, entry(other), NOW)), 'forbidden');
  assert.is(await codeOf(publishRevocation(deps, entry(v, { action_hash: 'ab'.repeat(32) }), NOW)), 'not_found');
  assert.is(await codeOf(publishRevocation(deps, entry(v), NOW + PUBLISH_WINDOW_MS + 1)), 'invalid_request');
  await publishRevocation(deps, entry(v), NOW);
  assert.is((await store.signatures.get(hash))?.revocation?.reason, 'superseded');
  assert.is(await codeOf(publishRevocation(deps, entry(v), NOW)), 'invalid_request');
  assert.is((await agentQuota(deps, v.agentKey, null)).used, 1);
});

test('accounts: a taken e-mail or username is a DomainError naming the field; a profile change says what changed', async () => {
  const user = await createUserAccount(deps, { email: 'taken@example.com', username: 'taken_name' });
  for (const [input, code] of [[{ email: 'TAKEN@example.com' }, 'email_taken'], [{ email: 'x@example.com', username: 'taken_name' }, 'username_taken']] as const) {
    try {
      await createUserAccount(deps, input);
      assert.unreachable();
    } catch (err) {
      assert.equal([(err as DomainError).code, (err as DomainError).extra.field], [code, code.replace('_taken', '')]);
    }
  }
  const { account, changed } = await updateProfile(deps, user.id, { display_name: 'Ada', contact_opt_in: true });
  assert.equal(changed, ['display_name']);
  assert.equal([account.user.displayName, account.user.contactOptIn, account.hasServerCell, account.personalOrgId !== null], ['Ada', true, false, true]);
});

test.run();
