import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadKernel, wasmFlavor, simdSupported } from '../../src/lib/wasm.js';

test('the build matching this engine is chosen, or the one PROVENANT_WASM forces', () => {
  const forced = process.env.PROVENANT_WASM;
  assert.is(wasmFlavor, forced === 'scalar' || forced === 'simd' ? forced : simdSupported ? 'simd' : 'scalar');
});

test('scratch reuses one block and only grows', () => {
  const core = loadKernel('core');
  const a = core.exports.scratch(100);
  const b = core.exports.scratch(1000);
  assert.is(a, b);
  const pagesBefore = core.exports.memory.buffer.byteLength;
  for (let i = 0; i < 100_000; i++) core.exports.scratch(i % 60_000);
  assert.is(core.exports.memory.buffer.byteLength, pagesBefore);
  const big = core.exports.scratch(5 << 20);
  assert.ok(core.exports.memory.buffer.byteLength >= 5 << 20);
  core.u8.fill(7, big, big + (5 << 20)); // the view follows the grown memory
  assert.is(core.u8[big + (5 << 20) - 1], 7);
});

test('alloc and release recycle memory', () => {
  const core = loadKernel('core');
  const size0 = core.exports.memory.buffer.byteLength;
  for (let i = 0; i < 10_000; i++) core.exports.release(core.exports.alloc(256 << 10));
  assert.ok(core.exports.memory.buffer.byteLength < size0 + (8 << 20));
});

test.run();
