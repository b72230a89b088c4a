// Server-hosted cells: sealed at rest, sign for their user only.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServerCell, serverCellAgentKey, signWithCell } from '../../server/src/domain/cells.js';
import { DomainError } from '../../server/src/errors.js';
import { startTestServer, testEngine, type TestServer } from '../helpers/server.js';

const test = suite('cells');
let server: TestServer;

test.before(async () => {
  server = await startTestServer({}, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await server.close();
});

function nodeVerify(rawPublicKey: Uint8Array, bytes: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(rawPublicKey).toString('base64url') }, format: 'jwk' });
  return verify(null, bytes, key, signature);
}

test('createServerCell links a primary agent key; signWithCell signs verifiably (node:crypto)', async () => {
  const { user, token } = await server.register();
  const cell = await createServerCell(server.deps, user.id);
  assert.match(cell.agentKey, /^uhCAk/);
  assert.match(cell.did, /^did:key:z6Mk/);
  assert.is(await serverCellAgentKey(server.deps, user.id), cell.agentKey);
  const me = await (await fetch(`${server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json();
  assert.is(me.user.server_cell, true);
  assert.is(me.user.agent_pub_key, cell.agentKey);

  const message = randomBytes(100);
  const signed = await signWithCell(server.deps, user.id, message);
  assert.is(signed.agentKey, cell.agentKey);
  assert.is(signed.signature.length, 64);
  // The agent key's bytes 3..35 are the public key (decisions.md 2).
  const fromAgentKey = Buffer.from(cell.agentKey.slice(1), 'base64url').subarray(3, 35);
  assert.equal(Buffer.from(signed.publicKey), fromAgentKey);
  assert.ok(nodeVerify(signed.publicKey, message, signed.signature));
  assert.not.ok(nodeVerify(signed.publicKey, randomBytes(100), signed.signature));
});

test('the private key is encrypted at rest under a 0600 key file', async () => {
  const { user } = await server.register();
  await createServerCell(server.deps, user.id);
  const stored = (await server.deps.store.accounts.getCell(user.id))!;
  assert.is(stored.nonce.length, 12);
  // A PKCS#8 Ed25519 key starts with 30 2e 02 01 00 30 05 06 03 2b 65 70; the sealed one must not.
  const pkcs8Header = Buffer.from('302e020100300506032b6570', 'hex');
  assert.not.ok(Buffer.from(stored.ciphertext).includes(pkcs8Header));
  assert.is(stored.ciphertext.length, 48 + 16, 'PKCS#8 (48 bytes) + GCM tag');
  assert.is(statSync(`${server.dataDir}/secrets/cell.key`).mode & 0o777, 0o600);
  assert.is(statSync(`${server.dataDir}/secrets/jwt.key`).mode & 0o777, 0o600);
});

test('a cell row moved onto another user does not decrypt (bound to user and key)', async () => {
  const a = await server.register();
  const b = await server.register();
  await createServerCell(server.deps, a.user.id);
  const row = (await server.deps.store.accounts.getCell(a.user.id))!;
  await createServerCell(server.deps, b.user.id);
  assert.ok(await signWithCell(server.deps, b.user.id, new Uint8Array([1])), "b's own cell signs");
  await (await server.sql()).run('UPDATE cells SET ciphertext = ?, nonce = ? WHERE user_id = ?', [row.ciphertext, row.nonce, b.user.id]);
  try {
    await signWithCell(server.deps, b.user.id, new Uint8Array([1]));
    assert.unreachable('should fail');
  } catch (err) {
    assert.instance(err, DomainError);
    assert.is((err as DomainError).code, 'signing_failed');
  }
});

test('signWithCell for a device-hosted identity is signing_failed; a second cell is refused', async () => {
  const { user } = await server.register();
  try {
    await signWithCell(server.deps, user.id, new Uint8Array([1, 2, 3]));
    assert.unreachable('should fail');
  } catch (err) {
    assert.instance(err, DomainError); // answered 500 by the table (signit.test.ts)
    assert.is((err as DomainError).code, 'signing_failed');
  }
  await createServerCell(server.deps, user.id);
  let refused = false;
  try {
    await createServerCell(server.deps, user.id);
  } catch {
    refused = true;
  }
  assert.ok(refused);
});

test.run();
