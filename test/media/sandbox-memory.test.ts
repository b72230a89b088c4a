// The decoder sandbox's memory (src/media/sandbox.ts): its process runs under a memory
// limit the kernel enforces (RLIMIT_DATA); a decode that needs more fails that file only
// and the next is served. BMP, read by our own code, is decoded there too, not in the
// caller's process. After a large decode the process ends, giving its memory back.
// Runs the compiled child of dist/.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { decodeImageForHash } from '../../src/media/image.js';
import { DecoderSandbox, SANDBOX_DEFAULT_MEMORY_MB } from '../../src/media/sandbox.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { createFingerprintPool } from '../../src/pool/index.js';
import { ended } from '../helpers/processes.js';
import { bmp1, decodeFailed } from '../helpers/media.js';

const jpeg = new Uint8Array(readFileSync(new URL('../fixtures/media/fruits.jpg', import.meta.url)));

/** The "Max data size" soft limit of a process, in bytes (null: unlimited). */
function dataLimit(pid: number): number | null {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max data size'))!;
  const soft = line.split(/\s{2,}/)[1];
  return soft === 'unlimited' ? null : Number(soft);
}

test('the sandbox process runs under its memory limit (RLIMIT_DATA), the default or the one given', async () => {
  for (const [options, mb] of [[{}, SANDBOX_DEFAULT_MEMORY_MB], [{ memoryLimitMb: 300 }, 300]] as const) {
    const sandbox = new DecoderSandbox(options);
    try {
      await sandbox.imageHash(jpeg, 'jpeg');
      assert.is(dataLimit(sandbox.pid!), mb * 1024 * 1024);
    } finally {
      await sandbox.close();
    }
  }
});

test('a decode past the limit fails that file only, a PNG and a BMP (decoded in the sandbox too); the next is served', async () => {
  // 36 and 49 megapixels: about 300 and 400 MB to decode and hash, from 4.5 MB and 0.7 MB
  const bmp = bmp1(6000, 6000);
  const png = new Uint8Array(await sharp({ create: { width: 7000, height: 7000, channels: 3, background: '#406080' } }).png().toBuffer());
  const small = new DecoderSandbox({ memoryLimitMb: 200 });
  try {
    await decodeFailed(fingerprintFile(bmp, { sandbox: small }), 'bmp');
    assert.equal(await small.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'), 'after the bmp');
    await decodeFailed(fingerprintFile(png, { sandbox: small }), 'png');
    assert.equal(await small.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'), 'after the png');
  } finally {
    await small.close();
  }
  // within the default limit the same files are fingerprinted, as in process
  const roomy = new DecoderSandbox();
  try {
    assert.equal(await fingerprintFile(bmp, { sandbox: roomy }), await fingerprintFile(bmp), 'bmp');
    assert.equal(await fingerprintFile(png, { sandbox: roomy }), await fingerprintFile(png), 'png');
  } finally {
    await roomy.close();
  }
});

test('after a large decode the sandbox process ends (its memory returned); the next request gets a new one', async () => {
  const sandbox = new DecoderSandbox();
  try {
    await sandbox.imageHash(jpeg, 'jpeg');
    const first = sandbox.pid!;
    await sandbox.imageHash(jpeg, 'jpeg');
    assert.is(sandbox.pid, first, 'a small decode keeps the process');
    await sandbox.imageHash(bmp1(6000, 6000), 'bmp');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(ended(first), 'the process that decoded 36 megapixels ended');
    assert.equal(await sandbox.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'));
    assert.ok(sandbox.pid !== first, 'a new process');
  } finally {
    await sandbox.close();
  }
});

test("the pool's workers decode BMP in their sandbox, under the pool's decoderMemoryMb", async () => {
  const pool = createFingerprintPool({ workers: 1, decoderMemoryMb: 200 });
  try {
    await decodeFailed(pool.fingerprint(bmp1(6000, 6000)), 'bmp');
    assert.equal(await pool.fingerprint(jpeg.slice()), await fingerprintFile(jpeg), 'the next file (a copy: the pool detaches it)');
  } finally {
    await pool.close();
  }
});

test.run();
