// The decoder sandbox (src/media/sandbox.ts): image hashes and integrity reports made
// in its process equal the in-process ones; a decoder that aborts, is killed or never
// answers fails its request only, with a clear error, and the next request gets a new
// process; an idle process ends itself without losing a request. Runs the compiled child
// of dist/ (`npm test` compiles it first; alone: `npm run build:ts`).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import { decodeImageForHash, ImageDecodeError } from '../../src/media/image.js';
import { DecoderSandbox, SandboxError } from '../../src/media/sandbox.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { FingerprintError } from '../../src/media/errors.js';
import { integrityReport } from '../../src/media/integrity.js';
import { busyFor, ended } from '../helpers/processes.js';

const FIX = new URL('../fixtures/media/', import.meta.url).pathname;
const jpeg = new Uint8Array(readFileSync(FIX + 'fruits.jpg'));

async function withSandbox(body: (sandbox: DecoderSandbox) => Promise<void>) {
  const sandbox = new DecoderSandbox();
  try {
    await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

test('image hashes from the sandbox process equal the in-process decode (JPEG, PNG, GIF, TIFF, WebP)', () =>
  withSandbox(async (sandbox) => {
    const cases: [string, Uint8Array, 'jpeg' | 'png' | 'gif' | 'tiff' | 'webp'][] = [
      ['jpeg', jpeg, 'jpeg'],
      ['gif', new Uint8Array(readFileSync(FIX + 'cat.gif')), 'gif'],
      ['png', new Uint8Array(await sharp(jpeg).png().toBuffer()), 'png'],
      ['tiff', new Uint8Array(await sharp(jpeg).tiff().toBuffer()), 'tiff'],
      ['webp', new Uint8Array(await sharp(jpeg).webp({ quality: 60 }).toBuffer()), 'webp'],
    ];
    for (const [name, bytes, format] of cases) {
      assert.equal(await sandbox.imageHash(bytes, format), await decodeImageForHash(bytes, format), name);
    }
    assert.equal(await fingerprintFile(jpeg, { sandbox }), await fingerprintFile(jpeg), 'fingerprintFile');
  }));

test('integrity reports from the sandbox process equal the in-process report (LSB statistics decoded there)', () =>
  withSandbox(async (sandbox) => {
    const png = new Uint8Array(readFileSync(new URL('../fixtures/integrity/plant-crop.png', import.meta.url)));
    // checked_at is the time of each report
    const findings = ({ checked_at: _, ...rest }: Awaited<ReturnType<typeof integrityReport>>) => rest;
    const local = await integrityReport(png);
    assert.ok(local.checks_performed.includes('LsbAnalysis'));
    assert.equal(findings(await sandbox.integrityReport(png)), findings(local));
    const withSteg = new Uint8Array([...png, ...new TextEncoder().encode('PK\x03\x04 appended')]);
    assert.equal(findings(await sandbox.integrityReport(withSteg)), findings(await integrityReport(withSteg)));
    assert.equal(findings(await sandbox.integrityReport(jpeg)), findings(await integrityReport(jpeg)));
  }));

test('a file the decoder refuses rejects with ImageDecodeError; the same process answers the next', () =>
  withSandbox(async (sandbox) => {
    await sandbox.imageHash(jpeg, 'jpeg');
    const pid = sandbox.pid;
    try {
      await sandbox.imageHash(jpeg.subarray(0, 600), 'jpeg');
      assert.unreachable('a truncated JPEG was decoded');
    } catch (e) {
      assert.instance(e, ImageDecodeError);
    }
    assert.equal(await sandbox.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'));
    assert.is(sandbox.pid, pid, 'same process');
    // over the pixel cap: refused from the header, as in process
    await sandbox.imageHash(jpeg, 'jpeg', { maxPixels: 1000 }).then(
      () => assert.unreachable('the pixel cap was not applied'),
      (e) => assert.match((e as Error).message, /pixel/i),
    );
  }));

test('a decoder that crashes (abort) fails its request only; the next gets a new process', () =>
  withSandbox(async (sandbox) => {
    await sandbox.imageHash(jpeg, 'jpeg');
    const first = sandbox.pid!;
    try {
      await sandbox.diagnostic('abort');
      assert.unreachable('no crash');
    } catch (e) {
      assert.instance(e, SandboxError);
      assert.is((e as SandboxError).code, 'crashed');
      assert.match((e as Error).message, /SIGABRT/);
    }
    assert.ok(ended(first), 'the crashed process is gone');
    assert.equal(await sandbox.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'));
    assert.ok(sandbox.pid !== null && sandbox.pid !== first, 'a new process');
  }));

test('a process killed by a signal mid-decode (SIGSEGV) fails that request; fingerprintFile rejects with decode_failed, then works', () =>
  withSandbox(async (sandbox) => {
    await sandbox.imageHash(jpeg, 'jpeg');
    const pid = sandbox.pid!;
    const big = new Uint8Array(await sharp({ create: { width: 9000, height: 9000, channels: 3, background: '#406080' } }).png().toBuffer());
    const pending = fingerprintFile(big, { sandbox });
    await busyFor(pid, 60); // decoding it: 81 MP from 1 MB of PNG take a second
    process.kill(pid, 'SIGSEGV');
    try {
      await pending;
      assert.unreachable('should fail');
    } catch (e) {
      assert.instance(e, FingerprintError);
      assert.is((e as FingerprintError).code, 'decode_failed');
      assert.match((e as Error).message, /SIGSEGV/);
    }
    assert.equal(await fingerprintFile(jpeg, { sandbox }), await fingerprintFile(jpeg));
  }));

test('a decoder that never answers is stopped at the deadline with a timeout; the next request works', () =>
  withSandbox(async (sandbox) => {
    await sandbox.imageHash(jpeg, 'jpeg');
    const first = sandbox.pid!;
    const started = Date.now();
    try {
      await sandbox.diagnostic('hang', started + 300);
      assert.unreachable('no timeout');
    } catch (e) {
      assert.instance(e, SandboxError);
      assert.is((e as SandboxError).code, 'timeout');
      assert.match((e as Error).message, /past its deadline/);
    }
    assert.ok(Date.now() - started >= 290);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(ended(first), 'the stuck process was killed');
    assert.equal(await sandbox.imageHash(jpeg, 'jpeg'), await decodeImageForHash(jpeg, 'jpeg'));
  }));

test('an idle process exits by itself; requests crossing its exit go to a new process and all succeed', async () => {
  const sandbox = new DecoderSandbox({ idleMs: 20 });
  try {
    const expected = await decodeImageForHash(jpeg, 'jpeg');
    await sandbox.imageHash(jpeg, 'jpeg');
    const first = sandbox.pid!;
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(ended(first), 'the idle process ended');
    assert.is(sandbox.pid, null);
    // pauses around the idle time, so that some requests are sent as the process exits
    const pids = new Set<number>();
    for (let i = 0; i < 40; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10 + (i % 7) * 3));
      assert.equal(await sandbox.imageHash(jpeg, 'jpeg'), expected, `request ${i}`);
      pids.add(sandbox.pid ?? 0);
    }
    assert.ok(pids.size > 1, 'processes came and went');
  } finally {
    await sandbox.close();
  }
});

test('a closed sandbox refuses requests; close resolves once its process is reaped', async () => {
  const sandbox = new DecoderSandbox();
  await sandbox.imageHash(jpeg, 'jpeg');
  const pid = sandbox.pid!;
  await sandbox.close();
  assert.not.ok(existsSync(`/proc/${pid}`), 'ended and reaped when close resolves');
  await sandbox.imageHash(jpeg, 'jpeg').then(
    () => assert.unreachable('a closed sandbox answered'),
    (e) => assert.match((e as Error).message, /closed/),
  );
});

test.run();
