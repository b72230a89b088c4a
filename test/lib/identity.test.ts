import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createPrivateKey, createPublicKey, randomBytes, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { blake2b as blake2bWasm } from 'hash-wasm';
import { blake2b } from '@noble/hashes/blake2.js';
import {
  agentKeyFromPublicKey, agentKeyLocation, parseAgentKey, normalizeAgentKey, didFromPublicKey, didFromAgentKey,
  parseDid, parseIdentity, generateSigningKey, privateKeyFromSeed, publicKeyFromPrivateKey, signBytes, verifyBytes,
  parseSignatureBase64, parseSignatureHex, authChallenge, isAuthChallenge, quotaSyncMessage,
} from '../../src/lib/identity.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const bytes = (...parts: ArrayLike<number>[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => Array.from(p)));

// Base58 (Bitcoin alphabet) written out here with BigInt, independent of @scure/base.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58Decode(text: string): Uint8Array {
  let n = 0n;
  for (const c of text) n = n * 58n + BigInt(ALPHABET.indexOf(c));
  const out: number[] = [];
  while (n > 0n) {
    out.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of text) {
    if (c !== '1') break;
    out.unshift(0);
  }
  return Uint8Array.from(out);
}
function base58Encode(data: Uint8Array): string {
  let n = BigInt('0x' + (hex(data) || '0'));
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of data) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

// The agent key assembled by hand: 84 20 24 + key + BLAKE2b-256 (hash-wasm) folded by XOR.
async function handAgentKeyBytes(key: Uint8Array): Promise<Uint8Array> {
  const h = fromHex(await blake2bWasm(key, 256));
  const loc = [0, 1, 2, 3].map((i) => h[i] ^ h[i + 4] ^ h[i + 8] ^ h[i + 12] ^ h[i + 16] ^ h[i + 20] ^ h[i + 24] ^ h[i + 28]);
  return bytes([0x84, 0x20, 0x24], key, loc);
}

test('BLAKE2b-256 (@noble) matches published vectors and hash-wasm', async () => {
  // Published BLAKE2b-256 known answers (e.g. stellar-core's crypto tests; Python hashlib agrees).
  const vectors: [string, string][] = [
    ['', '0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8'],
    ['a', '8928aae63c84d87ea098564d1e03ad813f107add474e56aedd286349c0c03ea4'],
    ['abc', 'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319'],
    ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '5f7a93da9c5621583f22e49e8e91a40cbba37536622235a380f434b9f68e49c4'],
  ];
  for (const [text, expected] of vectors) assert.is(hex(blake2b(new TextEncoder().encode(text), { dkLen: 32 })), expected, text);
  for (let i = 0; i < 50; i++) {
    const data = randomBytes(i * 7);
    assert.is(hex(blake2b(data, { dkLen: 32 })), await blake2bWasm(data, 256));
  }
});

// W3C CCG did:key test vectors (w3c-ccg/did-method-key test-vectors/ed25519-x25519.json):
// the Ed25519 key of seed 00..0N and its did:key.
const W3C = [
  ['0000000000000000000000000000000000000000000000000000000000000000', '4zvwRjXUKGfvwnParsHAS3HuSVzV5cA4McphgmoCtajS', 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp'],
  ['0000000000000000000000000000000000000000000000000000000000000001', '6ASf5EcmmEHTgDJ4X4ZT5vT6iHVJBXPg5AN5YoTCpGWt', 'did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG'],
  ['0000000000000000000000000000000000000000000000000000000000000002', '8pM1DN3RiT8vbom5u1sNryaNT1nyL8CTTW3b5PwWXRBH', 'did:key:z6MknGc3ocHs3zdPiJbnaaqDi58NGb4pk1Sp9WxWufuXSdxf'],
  ['0000000000000000000000000000000000000000000000000000000000000003', 'HPYVwAQmskwT1qEEeRzhoomyfyupJGASQQtCXSNG8XS2', 'did:key:z6MkvqoYXQfDDJRv8L4wKzxYeuKyVZBfi9Qo6Ro8MiLH3kDQ'],
  ['0000000000000000000000000000000000000000000000000000000000000004', 'J3qYF7YJMKCqQke47UQwiHizgFUXapHxRxKmxbkar89x', 'did:key:z6MkwW6aqMnjgrhJXFUko3NnZPGzVpkNzhYK7yEhnsibmLwL'],
] as const;

test('did:key of the W3C vectors: seed -> public key -> DID, and back', () => {
  for (const [seed, publicKeyBase58, did] of W3C) {
    const pub = base58Decode(publicKeyBase58);
    assert.is(pub.length, 32);
    assert.is(hex(publicKeyFromPrivateKey(privateKeyFromSeed(fromHex(seed)))), hex(pub), seed);
    assert.is(didFromPublicKey(pub), did);
    assert.is(hex(parseDid(did)!), hex(pub));
    // and by hand: multicodec ed25519-pub (0xed 0x01) + key, base58btc with 'z'
    assert.is('did:key:z' + base58Encode(bytes([0xed, 0x01], pub)), did);
  }
});

test('the private key from a seed signs like node:crypto given the same seed as a JWK', () => {
  const seed = fromHex(W3C[2][0]);
  const pub = base58Decode(W3C[2][1]);
  const jwk = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: Buffer.from(pub).toString('base64url') },
    format: 'jwk',
  });
  const msg = new TextEncoder().encode('provenant');
  assert.is(hex(signBytes(privateKeyFromSeed(seed), msg)), hex(nodeSign(null, msg, jwk)));
});

test('Ed25519 signatures of RFC 8032 section 7.1 TEST 1 and TEST 2', () => {
  const cases = [
    ['9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', '',
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'],
    ['4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c', '72',
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00'],
  ];
  for (const [secret, pub, msg, sig] of cases) {
    const key = privateKeyFromSeed(fromHex(secret));
    assert.is(hex(publicKeyFromPrivateKey(key)), pub);
    assert.is(hex(signBytes(key, fromHex(msg))), sig);
    assert.ok(verifyBytes(fromHex(pub), fromHex(msg), fromHex(sig)));
    const bad = fromHex(sig);
    bad[10] ^= 1;
    assert.not.ok(verifyBytes(fromHex(pub), fromHex(msg), bad));
    assert.not.ok(verifyBytes(fromHex(pub), bytes(fromHex(msg), [0]), fromHex(sig)));
  }
});

test('agent key of known keys: hand-checked strings (Python hashlib.blake2b + base64)', () => {
  // Computed outside this library: Python hashlib.blake2b(key, digest_size=32), folded, base64.
  const key0 = fromHex('3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29'); // W3C seed 0
  assert.is(hex(agentKeyLocation(key0)), 'd8618f27');
  assert.is(agentKeyFromPublicKey(key0), 'uhCAkO2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2inYYY8n');
  const key1 = fromHex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'); // RFC 8032 TEST 1
  assert.is(agentKeyFromPublicKey(key1), 'uhCAk11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURr4yR7Z');
  assert.is(hex(parseAgentKey('hCAk11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURr4yR7Z')!), hex(key1));
  assert.is(hex(parseAgentKey('11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=')!), hex(key1));
});

test('agent keys of random keys equal the hand-assembled 39 bytes', async () => {
  for (let i = 0; i < 100; i++) {
    const key = new Uint8Array(randomBytes(32));
    const raw = await handAgentKeyBytes(key);
    const agentKey = agentKeyFromPublicKey(key);
    assert.is(agentKey, 'u' + Buffer.from(raw).toString('base64url'));
    assert.ok(agentKey.startsWith('uhCAk'));
    assert.is(agentKey.length, 53);
    // every accepted form parses back to the key and normalizes to the uhCAk form
    for (const form of [agentKey, Buffer.from(raw).toString('base64'), Buffer.from(key).toString('base64')]) {
      assert.is(hex(parseAgentKey(form)!), hex(key), form);
      assert.is(normalizeAgentKey(form), agentKey);
    }
  }
});

test('parseAgentKey rejects wrong prefixes, bad location bytes, wrong lengths and garbage', async () => {
  const key = new Uint8Array(randomBytes(32));
  const raw = await handAgentKeyBytes(key);
  const u = (b: Uint8Array): string => 'u' + Buffer.from(b).toString('base64url');
  const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
  // other HoloHash types (entry 84 21 24, action 84 29 24) and a broken prefix byte each
  for (const prefix of [[0x84, 0x21, 0x24], [0x84, 0x29, 0x24], [0x85, 0x20, 0x24], [0x84, 0x20, 0x25]]) {
    const other = bytes(prefix, raw.subarray(3));
    assert.is(parseAgentKey(u(other)), null, u(other));
    assert.is(parseAgentKey(b64(other)), null);
  }
  for (let i = 35; i < 39; i++) {
    for (const bit of [1, 0x80]) {
      const bad = raw.slice();
      bad[i] ^= bit;
      assert.is(parseAgentKey(u(bad)), null);
      assert.is(parseAgentKey(b64(bad)), null);
    }
  }
  const keyBits = raw.slice();
  keyBits[20] ^= 4; // key changed, location not: the location no longer matches
  assert.is(parseAgentKey(u(keyBits)), null);
  const lengths = [bytes(raw, [0, 0, 0]), raw.subarray(0, 36), bytes(raw, [0]), randomBytes(31), randomBytes(33), randomBytes(0)];
  for (const b of lengths) {
    assert.is(parseAgentKey(u(new Uint8Array(b))), null);
    assert.is(parseAgentKey(b64(new Uint8Array(b))), null);
  }
  const good = u(raw);
  const garbage = [
    '', 'u', 'uhCAk', 'hello', ' ' + good, good + ' ', good + '=', good.slice(0, -1), good.toUpperCase(),
    'U' + good.slice(1), 'm' + b64(raw), // multibase base64 is not a form we accept
    b64(raw) + '==',
    b64(key).replace('=', ''), Buffer.from(key).toString('base64url'), // key without padding, or base64url
    hex(key), hex(raw), 'did:key:' + good,
  ];
  for (const text of garbage) assert.is(parseAgentKey(text), null, JSON.stringify(text));
  // the standard alphabet after 'u', and base64url without the 'u' (only differ from the
  // accepted forms when the text holds + / or - _; this key is chosen so that both do)
  const mixed = fromHex('fbff' + 'ab'.repeat(30));
  const mixedRaw = await handAgentKeyBytes(mixed);
  assert.match(b64(mixedRaw), /[+/]/);
  assert.match(Buffer.from(mixedRaw).toString('base64url'), /[-_]/);
  assert.is(parseAgentKey('u' + b64(mixedRaw)), null);
  assert.is(parseAgentKey(Buffer.from(mixedRaw).toString('base64url')), null);
  assert.is(hex(parseAgentKey(u(mixedRaw))!), hex(mixed));
  // the same 32 bytes spelled with non-zero padding bits: one spelling per key only
  const spelled = b64(key);
  const last = spelled[42];
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const sloppy = spelled.slice(0, 42) + alphabet[alphabet.indexOf(last) ^ 1] + '=';
  assert.is(parseAgentKey(sloppy), null);
  for (const value of [null, undefined, 42, {}, raw] as unknown[]) assert.is(parseAgentKey(value as string), null);
  assert.is(normalizeAgentKey('nope'), null);
});

test('parseDid accepts did:<method>:<z6Mk... | agent key> and nothing else', () => {
  const { publicKey } = generateSigningKey();
  const agentKey = agentKeyFromPublicKey(publicKey);
  const did = didFromPublicKey(publicKey);
  assert.ok(did.startsWith('did:key:z6Mk'));
  for (const input of [did, 'did:web:' + did.slice(8), 'did:holo:' + agentKey, 'did:key:' + agentKey, 'did:x1:' + Buffer.from(publicKey).toString('base64')]) {
    assert.is(hex(parseDid(input)!), hex(publicKey), input);
    assert.is(hex(parseIdentity(input)!), hex(publicKey));
  }
  assert.is(hex(parseIdentity(agentKey)!), hex(publicKey));
  assert.is(didFromAgentKey(agentKey), did);
  assert.is(didFromAgentKey('garbage'), null);
  const rejected = [
    '', 'did:', 'did:key:', 'did:key', 'DID:key:' + did.slice(8), 'did:Key:' + did.slice(8), 'did::' + did.slice(8),
    did + '#' + did.slice(8), did + '?x=1', did + '/path', did.slice(8), 'did:key:' + did.slice(9), // no multibase 'z'
    // W3C did-key-test-suite: too short and too long for an Ed25519 key
    'did:key:zTjsVPtY',
    'did:key:z6MkA9MEcFWsoUVqj2zX6LACFaikLQ28i9WAsJnURDS3HLGKSkUbwUbiLH22ohgZ2BwgpQ6qC3VBTNV3pLhYDTVgR',
    'did:key:z6LShs9GGnqk85isEBzzshkuVWrVKsRp24GnDuHk8QWkARMW', // X25519 key agreement key (0xec)
    'did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme', // secp256k1
    'did:key:z' + base58Encode(bytes([0xed, 0x01], publicKey, [0])), // 33-byte key
    'did:key:z' + base58Encode(bytes([0xee, 0x01], publicKey)), // other multicodec, same length
    'did:key:z6Mk0OIl', // characters outside base58
    'did:holo:' + agentKey.slice(0, -1) + (agentKey.endsWith('A') ? 'B' : 'A'), // bad location
  ];
  for (const input of rejected) {
    assert.is(parseDid(input), null, input);
    assert.is(parseIdentity(input), null, input);
  }
  for (const value of [null, 7, {}] as unknown[]) assert.is(parseDid(value as string), null);
});

test('generated keys sign, and verifyBytes agrees with node:crypto and never throws', () => {
  const { publicKey, privateKeyPkcs8 } = generateSigningKey();
  assert.is(publicKey.length, 32);
  assert.is(hex(publicKeyFromPrivateKey(privateKeyPkcs8)), hex(publicKey));
  const msg = new Uint8Array(randomBytes(100));
  const sig = signBytes(privateKeyPkcs8, msg);
  assert.is(sig.length, 64);
  const jwkKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
  assert.ok(nodeVerify(null, msg, jwkKey, sig));
  assert.ok(verifyBytes(publicKey, msg, sig));
  const other = generateSigningKey();
  assert.not.ok(verifyBytes(other.publicKey, msg, sig));
  const badCalls: unknown[][] = [
    [publicKey, msg, sig.subarray(0, 63)], [publicKey.subarray(0, 31), msg, sig], [null, msg, sig],
    [publicKey, 'text', sig], [publicKey, msg, 'sig'], [new Uint8Array(32), msg, sig], [publicKey, msg, new Uint8Array(64)],
  ];
  for (const args of badCalls) assert.is((verifyBytes as (...a: unknown[]) => boolean)(...args), false);
  assert.throws(() => signBytes(new Uint8Array(10), msg));
  assert.throws(() => agentKeyFromPublicKey(new Uint8Array(31)));
  assert.throws(() => didFromPublicKey(new Uint8Array(33)));
});

test('verifyBytes keeps recent keys: answers agree with node:crypto across many keys, evictions, and a key reused from a view', () => {
  const msg = new Uint8Array(randomBytes(64));
  const keys = Array.from({ length: 1_200 }, (_, i) => {
    const privateKeyPkcs8 = privateKeyFromSeed(new Uint8Array(32).fill(0).map((_, j) => (i * 31 + j) & 0xff));
    return { publicKey: publicKeyFromPrivateKey(privateKeyPkcs8), sig: signBytes(privateKeyPkcs8, msg) };
  });
  // twice over, more keys than are kept: each key verifies its own signature only
  for (let round = 0; round < 2; round++) {
    keys.forEach((k, i) => {
      assert.ok(verifyBytes(k.publicKey, msg, k.sig), `key ${i}`);
      assert.not.ok(verifyBytes(keys[(i + 1) % keys.length]!.publicKey, msg, k.sig), `key ${i + 1} with ${i}'s signature`);
    });
  }
  // the same key's bytes inside a larger buffer (a view at an offset) is the same key
  const pool = new Uint8Array(100);
  pool.set(keys[5]!.publicKey, 17);
  assert.ok(verifyBytes(pool.subarray(17, 49), msg, keys[5]!.sig));
  pool[20] ^= 1;
  assert.not.ok(verifyBytes(pool.subarray(17, 49), msg, keys[5]!.sig), 'a changed byte is another key');
});

test('signature text forms: 88-character base64 and 128-character hex', () => {
  const sig = new Uint8Array(randomBytes(64));
  const b64 = Buffer.from(sig).toString('base64');
  assert.is(hex(parseSignatureBase64(b64)!), hex(sig));
  assert.is(hex(parseSignatureHex(hex(sig))!), hex(sig));
  assert.is(hex(parseSignatureHex(hex(sig).toUpperCase())!), hex(sig));
  for (const bad of [b64.slice(0, -2), b64 + '=', Buffer.from(sig).toString('base64url'), ' ' + b64, hex(sig), Buffer.from(sig.subarray(1)).toString('base64')]) {
    assert.is(parseSignatureBase64(bad), null, bad);
  }
  for (const bad of [hex(sig).slice(1), hex(sig) + '00', b64, 'zz' + hex(sig).slice(2)]) assert.is(parseSignatureHex(bad), null);
});

test('vault login challenges and the quota-sync message', () => {
  const a = authChallenge();
  const b = authChallenge();
  assert.match(a, /^provenant-auth-challenge:v1:[A-Za-z0-9_-]{43}$/);
  assert.is.not(a, b);
  assert.ok(isAuthChallenge(a));
  for (const bad of ['provenant-auth-challenge:v1:', 'provenant-auth-challenge:v2:' + a.slice(28), a + 'x', 42]) assert.not.ok(isAuthChallenge(bad));
  assert.is(quotaSyncMessage('uhCAkXYZ', 1767225600000, 3), 'provenant-quota-sync:uhCAkXYZ:1767225600000:3');
  assert.is(quotaSyncMessage('uhCAkXYZ', 1767225600000, 3, '0f5a4d1e-7c3b-4c1a-9d2e-5b6a7c8d9e0f'),
    'provenant-quota-sync:uhCAkXYZ:1767225600000:3:0f5a4d1e-7c3b-4c1a-9d2e-5b6a7c8d9e0f');
  assert.is(quotaSyncMessage('hCAk+/==', 0, 0, null), 'provenant-quota-sync:hCAk+/==:0:0');
  assert.throws(() => quotaSyncMessage('k', 1.5, 1), RangeError);
  assert.throws(() => quotaSyncMessage('k', 1, Number.NaN), RangeError);
});

test.run();
