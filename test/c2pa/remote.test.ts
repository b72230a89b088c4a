// A remote manifest is never fetched (issue 21: a server that followed a file's URL
// would make requests wherever a stranger's file points). cloud.jpg (the reference
// implementation's fixture) names its manifest's URL in its XMP (dcterms:provenance);
// here that URL is replaced, at the same length, by one on a loopback server of this
// test, which records every request. The reader as the reference configures it by
// default does request it (so the test can fail); ours, in-process and in the decoder
// sandbox, does not, and reports the URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WasmReader } from '@contentauth/c2pa-wasm';
import { readContentCredentials } from '../../src/media/c2pa.js';
import { DecoderSandbox } from '../../src/media/sandbox.js';
import type { CredentialsFound } from '../../src/lib/content-credentials.js';

const ADOBE_URL = 'https://cai-manifests.adobe.com/manifests/adobe-urn-uuid-5f37e182-3687-462e-a7fb-573462780391';
const cloud = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'c2pa', 'cloud.jpg'));

let server: Server;
const seen: string[] = [];
let file: Uint8Array;
let loopbackUrl: string;

test.before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const prefix = `http://127.0.0.1:${port}/manifest/`;
  loopbackUrl = prefix + 'x'.repeat(ADOBE_URL.length - prefix.length);
  const at = cloud.indexOf(ADOBE_URL);
  assert.ok(at > 0, 'cloud.jpg names its manifest URL');
  assert.is(cloud.indexOf(ADOBE_URL, at + 1), -1);
  const copy = Buffer.from(cloud);
  copy.write(loopbackUrl, at, 'latin1'); // same length: the XMP segment's length stays right
  file = new Uint8Array(copy);
});

test.after(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test('our reader reports the URL and requests nothing, in-process and in the sandbox', async () => {
  const c = (await readContentCredentials(file)) as CredentialsFound;
  assert.equal([c.present, c.validation_state, c.remote_url, c.message], [true, 'remote', loopbackUrl, 'remote manifest, not fetched']);
  const sandbox = new DecoderSandbox();
  try {
    assert.equal(await sandbox.contentCredentials(file), c);
  } finally {
    await sandbox.close();
  }
  assert.equal(seen, []);
});

test('control: the reader with its default settings does request that URL', async () => {
  await readContentCredentials(file); // instantiates the WebAssembly (once per process), fetching nothing
  await WasmReader.fromBytes('image/jpeg', file).then((r) => r.free(), () => {}); // a 404: the reader fails, after asking
  assert.equal(seen, [`GET ${new URL(loopbackUrl).pathname}`]);
});

test.run();
