// BLAKE3: ours (WebAssembly kernel, src/lib/blake3.ts; the ISCC Instance-Code's hash)
// against the npm BLAKE3s that install here: blake3-jit (JS with WebAssembly SIMD made at
// run time), blake3-wasm (Rust compiled to WebAssembly), hash-wasm (C compiled to
// WebAssembly) and @noble/hashes (JS) at 64 B, 1 KiB, 1 MiB and 50 MiB, one-shot. Every timed call checks one byte of its digest against
// the value computed before.
//   node --import tsx bench/blake3.bench.ts         (about two minutes)
//   PROVENANT_WASM=scalar node --import tsx bench/blake3.bench.ts
import { bestOf, clockName, fmtRate, fmtSize, input } from './hash-bench.js';
import { createBLAKE3 } from 'hash-wasm';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { hash as jitHash, warmupSimd } from 'blake3-jit';
import { hash as wasmBlake3 } from 'blake3-wasm';
import { blake3 } from '../src/lib/blake3.js';
import { wasmFlavor } from '../src/lib/wasm.js';

await (warmupSimd as () => unknown)?.();
const hw = await createBLAKE3();
const peers = ['blake3-jit', 'blake3-wasm', 'hash-wasm', '@noble/hashes'];

console.log(`BLAKE3, ${wasmFlavor} build, node ${process.version}, timed on ${clockName}; each figure the best of two alternating runs; ratio = ours / peer (>1: ours faster)\n`);
console.log(`| size | ours | ${peers.join(' | ')} | ${peers.map((p) => `ours/${p.split(' ')[0]}`).join(' | ')} |`);
console.log(`|---|---|${peers.map(() => '---|').join('')}${peers.map(() => '---|').join('')}`);
for (const size of [64, 1024, 1 << 20, 50 << 20]) {
  const data = input(size);
  const expected = nobleBlake3(data);
  const at = size % 32;
  const byte = expected[at];
  const check = (digest: Uint8Array): void => {
    if (digest[at] !== byte) throw new Error('wrong digest');
  };
  for (const d of [blake3(data), jitHash(data), wasmBlake3(data) as Uint8Array]) {
    if (Buffer.compare(Buffer.from(d), Buffer.from(expected)) !== 0) throw new Error('a peer disagrees with @noble/hashes');
  }
  const big = size >= 50 << 20;
  const fns = [
    () => check(blake3(data)),
    () => check(jitHash(data)),
    () => check(wasmBlake3(data) as Uint8Array),
    () => {
      hw.init();
      hw.update(data);
      check(hw.digest('binary'));
    },
    () => check(nobleBlake3(data)),
  ];
  // @noble/hashes at 50 MiB takes a second a call: one round of it is enough
  const rates = bestOf(fns, big ? 1 : 0.5);
  const [ours, ...rest] = rates;
  console.log(`| ${fmtSize(size)} | ${fmtRate(ours, size)} | ${rest.map((r) => fmtRate(r, size)).join(' | ')} | ${rest.map((r) => (ours / r).toFixed(2)).join(' | ')} |`);
}
