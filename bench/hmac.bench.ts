// HMAC-SHA256 of 1 KiB messages: ours (src/lib/hmac.ts) against node:crypto createHmac
// and hash-wasm createHMAC, then ours against node:crypto across message sizes to find
// the crossover src/lib/digest.ts uses. Every timed call checks one byte of its MAC
// against the value computed before.
//   node --import tsx bench/hmac.bench.ts        (about half a minute)
import { createHmac } from 'node:crypto';
import { createHMAC, createSHA256 } from 'hash-wasm';
import { createHmacSha256, hmacSha256 } from '../src/lib/hmac.js';
import { hmacSha256ForService } from '../src/lib/digest.js';
import { wasmFlavor } from '../src/lib/wasm.js';
import { clockName, fmtRate, fmtSize, hz, input } from './hash-bench.js';

const key = input(32);
const otherKey = input(33).subarray(1);
const MSG = 1024;
const msg = input(MSG);
const mac = createHmac('sha256', key).update(msg).digest();
const otherMac = createHmac('sha256', otherKey).update(msg).digest();
const byte = mac[7];

const keyed = createHmacSha256(key);
const hashWasm = await createHMAC(createSHA256(), key);
hashWasm.init();
hashWasm.update(msg);
if (Buffer.from(hashWasm.digest('binary')).compare(mac) !== 0) throw new Error('hash-wasm disagrees');

const check = (m: Uint8Array, want = byte): void => {
  if (m[7] !== want) throw new Error('wrong MAC');
};

console.log(`HMAC-SHA256 of ${MSG}-byte messages, 32-byte key, ${wasmFlavor} build, node ${process.version}, timed on ${clockName}\n`);
const node = hz('node createHmac', () => check(createHmac('sha256', key).update(msg).digest()), 1);
const hw = hz('hash-wasm createHMAC (keyed once)', () => {
  hashWasm.init();
  hashWasm.update(msg);
  check(hashWasm.digest('binary'));
}, 1);
const rows: Array<[string, number]> = [
  ['ours hmacSha256(key, msg), same key each call', hz('ours one-shot', () => check(hmacSha256(key, msg)), 1)],
  ['ours hmacSha256(key, msg), two keys alternating', hz('ours one-shot, keys alternating', () => {
    check(hmacSha256(key, msg));
    check(hmacSha256(otherKey, msg), otherMac[7]);
  }, 1) * 2],
  ['ours createHmacSha256(key).mac(msg), keyed once', hz('ours keyed mac', () => check(keyed.mac(msg)), 1)],
  ['ours keyed .update(msg).digest()', hz('ours keyed stream', () => check(keyed.update(msg).digest()), 1)],
  ['digest.ts hmacSha256ForService(key, msg)', hz('service', () => check(hmacSha256ForService(key, msg)), 1)],
];
console.log('| implementation | ops/s | MB/s | ours/node | ours/hash-wasm |');
console.log('|---|---|---|---|---|');
console.log(`| node:crypto createHmac(...).update(msg).digest() | ${(node / 1e3).toFixed(0)} k | ${fmtRate(node, MSG)} | | |`);
console.log(`| hash-wasm createHMAC, init/update/digest | ${(hw / 1e3).toFixed(0)} k | ${fmtRate(hw, MSG)} | | |`);
for (const [name, ops] of rows) {
  console.log(`| ${name} | ${(ops / 1e3).toFixed(0)} k | ${fmtRate(ops, MSG)} | ${(ops / node).toFixed(2)} | ${(ops / hw).toFixed(2)} |`);
}

console.log('\nCrossover, ours hmacSha256 (same key) vs node:crypto createHmac, by message size\n');
console.log('| message | ours | node:crypto | ours/node |');
console.log('|---|---|---|---|');
for (const size of [64, 256, 1024, 2048, 3072, 4096, 8192]) {
  const data = input(size);
  const want = createHmac('sha256', key).update(data).digest()[7];
  const ours = hz('ours', () => check(hmacSha256(key, data), want), 0.5);
  const theirs = hz('node', () => check(createHmac('sha256', key).update(data).digest(), want), 0.5);
  console.log(`| ${fmtSize(size)} | ${fmtRate(ours, size)} | ${fmtRate(theirs, size)} | ${(ours / theirs).toFixed(2)} |`);
}
