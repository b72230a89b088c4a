// fingerprintFile's answers (issue 15): null only for a file that is not a supported
// media type; a missing path, an unreadable one, a decoder's failure and a deadline
// passed are each a FingerprintError with its own code, exported by the package entry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FingerprintError, fingerprintFile, type FingerprintErrorCode } from '../../src/index.js';
import { DecoderSandbox } from '../../src/media/sandbox.js';

const FIX = new URL('../fixtures/', import.meta.url).pathname;
const read = (name: string) => new Uint8Array(readFileSync(FIX + name));

async function rejectsWith(pending: Promise<unknown>, code: FingerprintErrorCode, message: RegExp): Promise<void> {
  try {
    await pending;
    assert.unreachable(`should reject with ${code}`);
  } catch (e) {
    assert.instance(e, FingerprintError);
    assert.is((e as FingerprintError).code, code, (e as Error).message);
    assert.match((e as Error).message, message);
  }
}

test('a file of no supported type is null, as a path and as bytes', async () => {
  assert.is(await fingerprintFile(FIX + 'media/README.md'), null);
  assert.is(await fingerprintFile(new TextEncoder().encode('just some text that is long enough to be looked at\n')), null);
  assert.is(await fingerprintFile(new Uint8Array(0)), null);
});

test('a missing path is not_found; a directory is unreadable', async () => {
  await rejectsWith(fingerprintFile('/nonexistent/file.png'), 'not_found', /no such file: \/nonexistent\/file\.png/);
  await rejectsWith(fingerprintFile(FIX + 'media'), 'unreadable', /it is a directory/);
});

test('truncated and corrupt images, videos and audio are decode_failed, in process and in the sandbox', async () => {
  const jpeg = read('media/fruits.jpg');
  const png = new Uint8Array(await sharp(jpeg).png().toBuffer());
  const mp4 = read('media/cockatoo.mp4');
  const cases: [string, Uint8Array][] = [
    ['truncated jpeg', jpeg.subarray(0, jpeg.length >> 1)],
    ['truncated png', png.subarray(0, png.length >> 1)],
    ['png signature then garbage', new Uint8Array([...png.subarray(0, 8), ...new Uint8Array(200).fill(7)])],
    ['truncated mp4', mp4.subarray(0, 2000)],
    ['truncated wav', read('audio/machine-wars-6s.wav').subarray(0, 30)],
  ];
  const sandbox = new DecoderSandbox();
  const tmp = mkdtempSync(join(tmpdir(), 'provenant-errors-'));
  try {
    for (const [name, bytes] of cases) {
      await rejectsWith(fingerprintFile(bytes), 'decode_failed', /cannot decode this \w+ file: ./);
      await rejectsWith(fingerprintFile(bytes, { sandbox }), 'decode_failed', /cannot decode/);
      writeFileSync(join(tmp, 'file'), bytes);
      await rejectsWith(fingerprintFile(join(tmp, 'file')), 'decode_failed', new RegExp('cannot decode'));
      assert.ok(true, name);
    }
  } finally {
    await sandbox.close();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('decoding past the deadline is timeout: an image in the sandbox, a video in ffmpeg', async () => {
  const big = new Uint8Array(await sharp({ create: { width: 7000, height: 7000, channels: 3, background: '#406080' } }).png().toBuffer());
  const sandbox = new DecoderSandbox();
  try {
    await rejectsWith(fingerprintFile(big, { sandbox, deadline: Date.now() + 50 }), 'timeout', /deadline/);
    assert.ok(await fingerprintFile(read('media/fruits.jpg'), { sandbox }), 'the next file is fingerprinted');
  } finally {
    await sandbox.close();
  }
  await rejectsWith(fingerprintFile(FIX + 'media/vtest.avi', { deadline: Date.now() + 1 }), 'timeout', /deadline/);
});

test.run();
