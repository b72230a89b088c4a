// The worker pool: results equal the main thread's, buffers are transferred, and its
// boundaries hold: a hung task is stopped at the deadline, a crashing or runaway task
// fails alone, a full queue refuses at once. Runs the compiled workers of dist/
// (`npm test` compiles them first; alone: `npm run build:ts`).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { createFingerprintPool, PoolBusyError, PoolTaskError, PoolTimeoutError, type FingerprintPool } from '../../src/pool/index.js';

const FIX = new URL('../fixtures/media/', import.meta.url).pathname;
const read = (name: string) => new Uint8Array(readFileSync(FIX + name));

async function withPool(options: Parameters<typeof createFingerprintPool>[0], body: (pool: FingerprintPool) => Promise<void>) {
  const pool = createFingerprintPool(options);
  try {
    await body(pool);
  } finally {
    await pool.close();
  }
}

test('fingerprints in the pool equal the main thread, for an image and a video', () =>
  withPool({ workers: 2 }, async (pool) => {
    for (const name of ['fruits.jpg', 'cockatoo.mp4']) {
      const expected = await fingerprintFile(read(name));
      assert.ok(expected);
      assert.equal(await pool.fingerprint(read(name)), expected, name);
    }
    assert.is(await pool.fingerprint(new Uint8Array(100).fill(7)), null);
  }));

test("the caller's buffer is transferred (detached), a shared one copied", () =>
  withPool({ workers: 1 }, async (pool) => {
    const bytes = read('fruits.jpg');
    const whole = new Uint8Array(bytes.length);
    whole.set(bytes);
    const result = await pool.fingerprint(whole);
    assert.is(result?.hash_type, 'ImagePHash');
    assert.is(whole.buffer.byteLength, 0, 'detached');
    // A view over part of a larger buffer is copied, leaving the caller's memory alone.
    const big = new Uint8Array(bytes.length + 16);
    big.set(bytes, 16);
    assert.equal(await pool.fingerprint(big.subarray(16)), result);
    assert.is(big.buffer.byteLength, bytes.length + 16);
  }));

test('a task that hangs is stopped at the deadline with PoolTimeoutError; the pool serves the next', () =>
  withPool({ workers: 1, taskTimeoutMs: 2000 }, async (pool) => {
    try {
      await pool.run('diagnostic', { mode: 'sleep', ms: 20_000 });
      assert.unreachable('should time out');
    } catch (e) {
      assert.instance(e, PoolTimeoutError);
      assert.is((e as PoolTimeoutError).code, 'timeout');
    }
    assert.is(await pool.run('diagnostic', { mode: 'echo', value: 'next' }), 'next');
  }));

test('a crashing task and one that runs out of memory fail alone', () =>
  withPool({ workers: 1, taskTimeoutMs: 30_000, maxHeapMb: 32 }, async (pool) => {
    for (const mode of ['exit', 'throw', 'oom']) {
      try {
        await pool.run('diagnostic', { mode });
        assert.unreachable(`${mode} should fail`);
      } catch (e) {
        assert.instance(e, PoolTaskError, mode);
        assert.is((e as PoolTaskError).code, 'failed');
      }
      assert.is(await pool.run('diagnostic', { mode: 'echo', value: mode }), mode, `after ${mode}`);
    }
    assert.is((await pool.fingerprint(read('fruits.jpg')))?.hash_type, 'ImagePHash');
  }));

test('a full queue refuses at once with PoolBusyError', () =>
  withPool({ workers: 1, maxQueue: 1, taskTimeoutMs: 10_000 }, async (pool) => {
    const running = pool.run('diagnostic', { mode: 'sleep', ms: 400 });
    const queued = pool.run('diagnostic', { mode: 'sleep', ms: 10 });
    await new Promise((r) => setTimeout(r, 50));
    assert.is(pool.queueSize, 1);
    try {
      await pool.run('diagnostic', { mode: 'echo' });
      assert.unreachable('should be busy');
    } catch (e) {
      assert.instance(e, PoolBusyError);
      assert.is((e as PoolBusyError).code, 'busy');
    }
    assert.equal(await Promise.all([running, queued]), ['slept', 'slept']);
  }));

test('an unknown or malformed task name is refused with a clear error', () =>
  withPool({ workers: 1 }, async (pool) => {
    for (const name of ['no-such-task', '../evil']) {
      try {
        await pool.run(name, {});
        assert.unreachable();
      } catch (e) {
        assert.match(String(e), name === '../evil' ? /bad task name/ : /build:ts/);
      }
    }
  }));

test.run();
