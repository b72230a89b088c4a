// Small uploads (under 4 KiB, so that the server reads them into Buffers of Node's
// shared 8 KiB pool) are fingerprinted from exactly their own bytes: many clients
// uploading distinct tiny files at once to POST /fingerprint each get the library's
// fingerprint of their own file, never null for a valid one and never another's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { fingerprintFile } from '../../src/media/fingerprint.js';

const S = '/api/v1/sign-it';
let srv: TestServer;
let token: string;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_WORKERS: '2' });
  token = (await srv.register()).token;
});

test.after(async () => {
  await srv.close();
});

/** POST /fingerprint; a 503 busy (more uploads in flight than the gate admits) is sent again after its Retry-After. */
async function fingerprintOver(bytes: Uint8Array): Promise<unknown> {
  for (;;) {
    const res = await fetch(`${srv.url}${S}/fingerprint`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
    });
    const body = await res.json();
    if (res.status === 503) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    assert.is(res.status, 200, JSON.stringify(body));
    return (body as { fingerprint: unknown }).fingerprint;
  }
}

test('a 9x8 grey PNG gets its fingerprint', async () => {
  const png = new Uint8Array(await sharp({ create: { width: 9, height: 8, channels: 3, background: '#808080' } }).png().toBuffer());
  const expected = await fingerprintFile(png);
  assert.ok(expected);
  assert.equal(await fingerprintOver(png), expected);
});

test('20 clients uploading distinct small images and random bytes at once each get their own fingerprint', async () => {
  const files: Uint8Array[] = [];
  for (let i = 0; i < 20; i++) {
    const [w, h] = [8 + i, 8 + ((i * 7) % 17)];
    const image = sharp(randomBytes(w * h * 3), { raw: { width: w, height: h, channels: 3 } });
    files.push(new Uint8Array(await (i % 2 === 0 ? image.png() : image.jpeg()).toBuffer()));
    files.push(new Uint8Array(randomBytes(200))); // no supported type: null, whatever else is in flight
  }
  for (const f of files) assert.ok(f.length < 4096, `${f.length} bytes`);
  const expected = await Promise.all(files.map((f) => fingerprintFile(f)));
  assert.equal(expected.filter((fp) => fp === null).length, 20, 'the images have fingerprints, the random bytes none');
  const answers = await Promise.all(files.map(fingerprintOver));
  for (let i = 0; i < files.length; i++) assert.equal(answers[i], expected[i], `upload ${i}`);
});

test.run();
