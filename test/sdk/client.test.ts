// The SDK's ProvenantClient against a real test server on loopback: the public calls,
// publishing a record signed with the library's key functions, errors typed by the
// service's codes, and an unreachable service.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { agentKeyFromPublicKey, generateSigningKey, signBytes, toBase64 } from '../../src/lib/identity.js';
import { normalizeRecordContent, recordOf, signRecord } from '../../src/lib/records.js';
import { hmacSha256Hex } from '../../src/lib/hmac.js';
import { ProvenantClient, ProvenantError, verifyWebhookSignature } from '../../src/sdk/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { PHOTO } from '../helpers/vault.js';

const test = suite('sdk client');
let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

async function failure(promise: Promise<unknown>): Promise<ProvenantError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, ProvenantError);
    return err as ProvenantError;
  }
  throw new Error('the call did not fail');
}

test('a device identity logs in by challenge, publishes a signed record, and the public calls find it', async () => {
  const key = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(key.publicKey);
  const client = new ProvenantClient({ baseUrl: `${server.url}/` });
  const { challenge } = await client.vaultChallenge(agentKey);
  const session = await client.vaultToken({ challenge, agent_pub_key: agentKey, signature: toBase64(signBytes(key.privateKeyPkcs8, new TextEncoder().encode(challenge))) });
  assert.type(session.token, 'string');

  const bytes = readFileSync(PHOTO);
  const fileHash = createHash('sha256').update(bytes).digest('hex');
  const fp = (await client.verifyFile(bytes)).signatures; // nothing signed yet
  assert.equal(fp, []);
  const record = recordOf(normalizeRecordContent({ file_hash: fileHash, content_rights: { license: 'cc0' } }), agentKey, Date.now());
  const { signature, action_hash } = signRecord(record, key.privateKeyPkcs8);
  const published = await client.publish({ ...record, signature });
  assert.equal(published, { success: true, action_hash });

  const exact = await client.verify(fileHash);
  assert.is(exact.count, 1);
  assert.equal([exact.signatures[0].action_hash, exact.signatures[0].content_rights?.license], [action_hash, 'CC0']);
  const quota = await client.quotaByAgent(agentKey);
  assert.equal([quota.scope, quota.used], ['community', 1]);
  const mine = await new ProvenantClient({ baseUrl: server.url, token: session.token }).mySignatures();
  assert.is(mine.signatures[0].signature, signature);
  const own = await new ProvenantClient({ baseUrl: server.url, token: session.token }).quota();
  assert.is(own.used, 1);
});

test('verify-fuzzy with the 72 grey pixels answers the reduced shape', async () => {
  const answer = await new ProvenantClient({ baseUrl: server.url }).verifyFuzzy({ pixels: Array.from({ length: 72 }, (_, i) => i * 3) });
  assert.equal(answer, { signatures: [], count: 0 });
});

test('errors carry the service status and code; a token-less call and an unreachable service too', async () => {
  const client = new ProvenantClient({ baseUrl: server.url });
  const bad = await failure(client.verify('xyz'));
  assert.equal([bad.status, bad.code], [400, 'invalid_hash']);
  const unknown = await failure(client.quotaByAgent(agentKeyFromPublicKey(generateSigningKey().publicKey)));
  assert.equal([unknown.status, unknown.code], [404, 'agent_not_found']);
  const noToken = await failure(client.mySignatures());
  assert.is(noToken.code, 'invalid_token');
  const badToken = await failure(new ProvenantClient({ baseUrl: server.url, token: 'nope' }).quota());
  assert.equal([badToken.status, badToken.code], [401, 'invalid_token']);
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const away = await failure(new ProvenantClient({ baseUrl: `http://127.0.0.1:${port}` }).verify('a'.repeat(64)));
  assert.equal([away.status, away.code], [0, 'unreachable']);
});

test('device keys and sessions: list and unlink keys (the only key stays), sign out everywhere, change the password', async () => {
  const { user } = await server.register(undefined, { password: 'first passphrase' });
  let session = await new ProvenantClient({ baseUrl: server.url }).login(user.email!, 'first passphrase');
  let client = new ProvenantClient({ baseUrl: server.url, token: session.token });
  const keys = [generateSigningKey(), generateSigningKey()];
  for (const key of keys) {
    const agentKey = agentKeyFromPublicKey(key.publicKey);
    const { challenge } = await client.vaultChallenge(agentKey);
    await client.linkAgent({ challenge, agent_pub_key: agentKey, signature: toBase64(signBytes(key.privateKeyPkcs8, new TextEncoder().encode(challenge))) });
  }
  const [first, second] = keys.map((k) => agentKeyFromPublicKey(k.publicKey));
  assert.equal((await client.agents()).agents.map((a) => [a.agent_pub_key, a.primary]), [[first, true], [second, false]]);
  assert.equal((await client.unlinkAgent(first)).agents.map((a) => [a.agent_pub_key, a.primary]), [[second, true]]);
  const only = await failure(client.unlinkAgent(second));
  assert.equal([only.status, only.code], [409, 'agent_required']);

  const changed = await client.changePassword('first passphrase', 'second passphrase');
  assert.is((await failure(client.agents())).code, 'invalid_token', 'the old session ended');
  client = new ProvenantClient({ baseUrl: server.url, token: changed.token });
  assert.is((await client.agents()).agents.length, 1);
  const out = await client.signOutEverywhere();
  assert.is(out.success, true);
  assert.is((await failure(client.agents())).status, 401);
  session = await new ProvenantClient({ baseUrl: server.url }).login(user.email!, 'second passphrase');
  assert.is((await new ProvenantClient({ baseUrl: server.url, token: session.token }).agents()).agents[0].agent_pub_key, second);
});

test('verifyWebhookSignature is exported: true for the HMAC of the body, false for another', () => {
  const secret = 'c'.repeat(64);
  const body = '{"event":"sign.created"}';
  assert.ok(verifyWebhookSignature(secret, body, hmacSha256Hex(secret, body)));
  assert.not.ok(verifyWebhookSignature(secret, `${body} `, hmacSha256Hex(secret, body)));
});

test.run();
