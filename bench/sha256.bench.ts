// SHA-256: ours (WebAssembly kernel, src/lib/sha256.ts) against hash-wasm, @noble/hashes
// and node:crypto at 64 B, 1 KiB, 1 MiB and 50 MiB, then ours against node:crypto
// across small sizes to find the crossover that src/lib/digest.ts uses.
// Every timed call checks one byte of its digest against the value computed before.
//   node --import tsx bench/sha256.bench.ts        (about a minute)
import { bestOf, clockName, fmtRate, fmtSize, input, versus } from './hash-bench.js';
import { createHash } from 'node:crypto';
import { createSHA256, sha256 as hashWasmSha256 } from 'hash-wasm';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { sha256 } from '../src/lib/sha256.js';
import { fileSha256 } from '../src/lib/digest.js';
import { wasmFlavor } from '../src/lib/wasm.js';

const hw = await createSHA256();

console.log(`SHA-256, ${wasmFlavor} build, node ${process.version}, timed on ${clockName}; each figure the best of two alternating runs; ratio = ours / peer (>1: ours faster)\n`);
console.log('| size | ours | hash-wasm | @noble/hashes | node:crypto | digest.ts | ours/hash-wasm | ours/noble | ours/node |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const size of [64, 1024, 1 << 20, 50 << 20]) {
  const data = input(size);
  const expected = createHash('sha256').update(data).digest();
  if (Buffer.from(await hashWasmSha256(data), 'hex').compare(expected) !== 0) throw new Error('hash-wasm disagrees');
  const byte = expected[size % 32];
  const at = size % 32;
  const check = (digest: Uint8Array): void => {
    if (digest[at] !== byte) throw new Error('wrong digest');
  };
  const [ours, hashWasm, noble, node, service] = bestOf([
    () => check(sha256(data)),
    () => {
      hw.init();
      hw.update(data);
      check(hw.digest('binary'));
    },
    () => check(nobleSha256(data)),
    () => check(createHash('sha256').update(data).digest()),
    () => check(fileSha256(data)),
  ], size >= 50 << 20 ? 1 : 0.5);
  console.log(
    `| ${fmtSize(size)} | ${fmtRate(ours, size)} | ${fmtRate(hashWasm, size)} | ${fmtRate(noble, size)} | ${fmtRate(node, size)} | ` +
      `${fmtRate(service, size)} | ${(ours / hashWasm).toFixed(2)} | ${(ours / noble).toFixed(2)} | ${(ours / node).toFixed(2)} |`,
  );
}

console.log('\nCrossover, ours vs node:crypto (one-shot digest of the whole input; best of two alternating runs each)\n');
console.log('| size | ours | node:crypto | ours/node |');
console.log('|---|---|---|---|');
for (const size of [128, 256, 512, 640, 768, 896, 1024, 2048]) {
  const data = input(size);
  const expected = createHash('sha256').update(data).digest();
  const byte = expected[0];
  const [ours, node] = versus(
    () => { if (sha256(data)[0] !== byte) throw new Error('wrong digest'); },
    () => { if (createHash('sha256').update(data).digest()[0] !== byte) throw new Error('wrong digest'); },
    0.3,
  );
  console.log(`| ${fmtSize(size)} | ${fmtRate(ours, size)} | ${fmtRate(node, size)} | ${(ours / node).toFixed(2)} |`);
}
