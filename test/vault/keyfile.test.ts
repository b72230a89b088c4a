// The vault's key file: what is on disk (modes, no plain private key when encrypted),
// the encryption opened independently with node:crypto from the stored parameters,
// and every way an open is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDecipheriv, createPrivateKey, createPublicKey, scryptSync } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentKeyFromPublicKey, generateSigningKey } from '../../src/lib/identity.js';
import { VaultCommandError } from '../../src/vault/errors.js';
import { createKeyFile, openKeyFile } from '../../src/vault/keyfile.js';
import { tempDir } from '../helpers/temp.js';

const fresh = (): string => join(tempDir('provenant-key-'), 'vault', 'key.json');

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.instance(err, VaultCommandError);
    return (err as VaultCommandError).code;
  }
  throw new Error('not refused');
}

test('an encrypted key file opens with node:crypto from its stored scrypt and AES-256-GCM parameters', () => {
  const path = fresh();
  const key = generateSigningKey();
  createKeyFile(path, 'löwe 🦁', key);
  assert.is(statSync(path).mode & 0o777, 0o600);
  const text = readFileSync(path, 'utf8');
  assert.not.ok(text.includes(Buffer.from(key.privateKeyPkcs8).toString('base64')), 'no plain private key on disk');
  const file = JSON.parse(text);
  const e = file.encrypted_private_key;
  const k = scryptSync('löwe 🦁'.normalize('NFC'), Buffer.from(e.salt, 'base64'), 32, { N: e.N, r: e.r, p: e.p, maxmem: 64 << 20 });
  const d = createDecipheriv('aes-256-gcm', k, Buffer.from(e.iv, 'base64'));
  d.setAAD(Buffer.from(file.agent_pub_key));
  d.setAuthTag(Buffer.from(e.tag, 'base64'));
  const pkcs8 = Buffer.concat([d.update(Buffer.from(e.ciphertext, 'base64')), d.final()]);
  assert.equal(new Uint8Array(pkcs8), key.privateKeyPkcs8);
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  assert.is(agentKeyFromPublicKey(Buffer.from(String(jwk.x), 'base64url')), file.agent_pub_key);
  assert.equal(openKeyFile(path).unlock('löwe 🦁'), key.privateKeyPkcs8);
});

test('refused: wrong or missing passphrase, a swapped identity, a readable file, a missing or foreign file, overwriting', () => {
  const path = fresh();
  createKeyFile(path, 'right');
  assert.is(refusal(() => openKeyFile(path).unlock('wrong')), 'wrong_passphrase');
  assert.is(refusal(() => openKeyFile(path).unlock()), 'passphrase_needed');
  assert.is(refusal(() => createKeyFile(path, null)), 'key_file_exists');

  const swapped = JSON.parse(readFileSync(path, 'utf8'));
  swapped.agent_pub_key = agentKeyFromPublicKey(generateSigningKey().publicKey);
  writeFileSync(path, JSON.stringify(swapped));
  assert.is(refusal(() => openKeyFile(path).unlock('right')), 'wrong_passphrase'); // the agent key is the GCM additional data

  const plain = fresh();
  createKeyFile(plain, null);
  const other = JSON.parse(readFileSync(plain, 'utf8'));
  other.agent_pub_key = agentKeyFromPublicKey(generateSigningKey().publicKey);
  writeFileSync(plain, JSON.stringify(other));
  assert.is(refusal(() => openKeyFile(plain).unlock()), 'key_file_invalid');

  chmodSync(plain, 0o644);
  assert.is(refusal(() => openKeyFile(plain)), 'key_file_exposed');
  assert.is(refusal(() => openKeyFile(fresh())), 'no_key_file');
  const foreign = fresh();
  createKeyFile(foreign, null);
  writeFileSync(foreign, '{"hello": 1}');
  assert.is(refusal(() => openKeyFile(foreign)), 'key_file_invalid');
});

test.run();
