// HMAC-SHA256 of 1 KiB messages: ours (src/lib/hmac.ts) against node:crypto createHmac
// and hash-wasm createHMAC, then ours against node:crypto across message sizes to find
// the crossover src/lib/digest.ts uses. Every timed call checks one byte of its MAC
// against the value computed before.
//   node --import tsx bench/hmac.bench.ts        (about half a minute)
import { bestOf, clockName, fmtRate, fmtSize, input, versus } from './hash-bench.js';
import { createHmac } from 'node:crypto';
import { createHMAC, createSHA256 } from 'hash-wasm';
import { createHmacSha256, hmacSha256 } from '../src/lib/hmac.js';
import { hmacSha256ForService } from '../src/lib/digest.js';
import { wasmFlavor } from '../src/lib/wasm.js';

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

console.log(`HMAC-SHA256 of ${MSG}-byte messages, 32-byte key, ${wasmFlavor} build, node ${process.version}, timed on ${clockName}; each figure the best of two alternating runs\n`);
const candidates: Array<[string, () => void]> = [
  ['node:crypto createHmac(...).update(msg).digest()', () => check(createHmac('sha256', key).update(msg).digest())],
  ['hash-wasm createHMAC (keyed once), init/update/digest', () => {
    hashWasm.init();
    hashWasm.update(msg);
    check(hashWasm.digest('binary'));
  }],
  ['ours hmacSha256(key, msg), same key each call', () => check(hmacSha256(key, msg))],
  ['ours hmacSha256(key, msg), two keys alternating', () => {
    check(hmacSha256(key, msg));
    check(hmacSha256(otherKey, msg), otherMac[7]);
  }],
  ['ours createHmacSha256(key).mac(msg), keyed once', () => check(keyed.mac(msg))],
  ['ours keyed .update(msg).digest()', () => check(keyed.update(msg).digest())],
  ['digest.ts hmacSha256ForService(key, msg)', () => check(hmacSha256ForService(key, msg))],
];
// best of two rounds over all candidates ('alternating' does two MACs per call)
const best = bestOf(candidates.map(([, fn]) => fn), 0.7).map((ops, i) => ops * (candidates[i][0].includes('alternating') ? 2 : 1));
const [node, hw] = best;
console.log('| implementation | ops/s | MB/s | ours/node | ours/hash-wasm |');
console.log('|---|---|---|---|---|');
candidates.forEach(([name], i) => {
  const ops = best[i];
  const ratios = i < 2 ? '| | |' : `| ${(ops / node).toFixed(2)} | ${(ops / hw).toFixed(2)} |`;
  console.log(`| ${name} | ${(ops / 1e3).toFixed(0)} k | ${fmtRate(ops, MSG)} ${ratios}`);
});

console.log('\nCrossover, ours hmacSha256 (same key) vs node:crypto createHmac, by message size (best of two alternating runs each)\n');
console.log('| message | ours | node:crypto | ours/node |');
console.log('|---|---|---|---|');
for (const size of [64, 256, 512, 768, 1024, 1280, 1536, 2048, 4096, 8192]) {
  const data = input(size);
  const want = createHmac('sha256', key).update(data).digest()[7];
  const [ours, theirs] = versus(
    () => check(hmacSha256(key, data), want),
    () => check(createHmac('sha256', key).update(data).digest(), want),
    0.3,
  );
  console.log(`| ${fmtSize(size)} | ${fmtRate(ours, size)} | ${fmtRate(theirs, size)} | ${(ours / theirs).toFixed(2)} |`);
}
