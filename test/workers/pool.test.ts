// The worker pool: results equal the main thread's, buffers are transferred, and its
// boundaries hold: a hung task is stopped at the deadline, a crashing or runaway task
// fails alone, a full queue refuses at once. Runs the compiled workers of dist/
// (`npm test` compiles them first; alone: `npm run build:ts`).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { FingerprintError } from '../../src/media/errors.js';
import { busyFor, ended } from '../helpers/processes.js';
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

test('a fingerprint past the deadline rejects with PoolTimeoutError (the worker stops its decoder first); the pool serves the next', () =>
  withPool({ workers: 1, taskTimeoutMs: 600 }, async (pool) => {
    // 100 MP (the cap): 300 MB of pixels to inflate, which no machine does in the 0.1 s the
    // worker's own stop leaves the decoder (49 MP against 0.5 s was decoded in time on an
    // idle machine, as in test/server/fingerprint-errors.test.ts: a test of the machine)
    const big = await sharp({ create: { width: 10000, height: 10000, channels: 3, background: '#406080' } }).png().toBuffer();
    try {
      await pool.fingerprint(new Uint8Array(big));
      assert.unreachable('should time out');
    } catch (e) {
      assert.instance(e, PoolTimeoutError);
      assert.is((e as PoolTimeoutError).code, 'timeout');
    }
    // (a fingerprint would start a new sandbox, which may not fit in this short deadline)
    assert.is(await pool.run('diagnostic', { mode: 'echo', value: 'next' }), 'next');
  }));

test('a file the decoder refuses rejects with FingerprintError decode_failed, its code carried across the thread', () =>
  withPool({ workers: 1 }, async (pool) => {
    const jpeg = read('fruits.jpg');
    try {
      await pool.fingerprint(jpeg.subarray(0, jpeg.length >> 1));
      assert.unreachable('should fail');
    } catch (e) {
      assert.instance(e, FingerprintError);
      assert.is((e as FingerprintError).code, 'decode_failed');
      assert.match((e as Error).message, /cannot decode this jpeg file/);
    }
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

/** The decoder sandbox processes (src/media/sandbox.ts) this process's workers started. */
function sandboxPids(): Set<number> {
  const out = new Set<number>();
  for (const line of execFileSync('ps', ['-eo', 'pid=,ppid=,args=']).toString().split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (m && Number(m[2]) === process.pid && m[3].includes('sandbox-child.js')) out.add(Number(m[1]));
  }
  return out;
}

test('images are decoded in a process of their own: a decoder killed mid-file (SIGSEGV) fails that file only', () =>
  withPool({ workers: 1 }, async (pool) => {
    const before = sandboxPids();
    const expected = await fingerprintFile(read('fruits.jpg'));
    assert.equal(await pool.fingerprint(read('fruits.jpg')), expected);
    const started = [...sandboxPids()].filter((pid) => !before.has(pid));
    assert.is(started.length, 1, 'the worker started one sandbox process');
    const big = await sharp({ create: { width: 9000, height: 9000, channels: 3, background: '#406080' } }).png().toBuffer();
    const pending = pool.fingerprint(new Uint8Array(big));
    await busyFor(started[0], 60); // decoding it: 81 MP from 1 MB of PNG take a second
    process.kill(started[0], 'SIGSEGV');
    try {
      await pending;
      assert.unreachable('that file should fail');
    } catch (e) {
      assert.instance(e, FingerprintError, 'its code crossed the thread boundary');
      assert.is((e as FingerprintError).code, 'decode_failed');
      assert.match((e as Error).message, /SIGSEGV/);
    }
    assert.equal(await pool.fingerprint(read('fruits.jpg')), expected, 'the next file');
  }));

test("an idle worker's decoder sandbox ends and is reaped (not left a zombie)", () =>
  withPool({ workers: 1, decoderIdleMs: 300 }, async (pool) => {
    const before = sandboxPids();
    assert.is((await pool.fingerprint(read('fruits.jpg')))?.hash_type, 'ImagePHash');
    const started = [...sandboxPids()].filter((pid) => !before.has(pid));
    assert.is(started.length, 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.not.ok(existsSync(`/proc/${started[0]}`), 'reaped, not a zombie');
    assert.is((await pool.fingerprint(read('fruits.jpg')))?.hash_type, 'ImagePHash', 'a new sandbox for the next image');
  }));

test('closing the pool ends and reaps its decoder sandboxes', async () => {
  const pool = createFingerprintPool({ workers: 2 });
  const before = sandboxPids();
  await Promise.all([pool.fingerprint(read('fruits.jpg')), pool.fingerprint(read('fruits.jpg'))]);
  const started = [...sandboxPids()].filter((pid) => !before.has(pid));
  assert.ok(started.length >= 1);
  await pool.close();
  for (const pid of started) assert.not.ok(existsSync(`/proc/${pid}`), `sandbox ${pid} reaped`);
});

test('a decoder sandbox whose worker is stopped at the deadline ends itself', () =>
  withPool({ workers: 1, taskTimeoutMs: 1500 }, async (pool) => {
    await pool.run('diagnostic', { mode: 'echo' });
    const before = sandboxPids();
    // the sandbox's deadline a little after the pool's, so that the pool stops the
    // worker first (at the same instant the worker's own timer could win the race)
    const hung = pool.run('diagnostic', { mode: 'decoder-hang', deadline: Date.now() + 1700 });
    hung.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 800));
    const started = [...sandboxPids()].filter((pid) => !before.has(pid));
    assert.is(started.length, 1, 'the task started a sandbox process');
    try {
      await hung;
      assert.unreachable('no timeout');
    } catch (e) {
      assert.instance(e, PoolTimeoutError);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.ok(ended(started[0]), 'the sandbox process ended at its deadline');
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
