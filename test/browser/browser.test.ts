// The browser entry in a real browser. page.ts is bundled with esbuild for the browser
// (a Node built-in anywhere in its graph fails the build), served from 127.0.0.1 with
// build/*.wasm, a 5 MB file and two images, and run in Debian's Chromium through
// playwright-core, once per WebAssembly build. What it computes there (SHA-256 and
// HMAC streamed over the file, dHash of the pixels the browser decoded, bands, Hamming,
// a MatchIndex query, Chromaprint, verifyRecord, the action hash) must equal what the
// Node entry computes from the same inputs (checks.ts runs in both).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import * as nodeEntry from '../../src/lib/index.js';
import { resampleTo11025 } from '../../src/lib/resample.js';
import { KERNEL_NAMES, packageRoot } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';
import * as tlog from '../../src/lib/tlog/index.js';
import { runChecks, type CheckInput, type Library } from './checks.js';
import type { PageInput, PageOutput } from './page.js';
import { CHROMIUM, testInChromium } from '../helpers/chromium.js';

const FIXTURES: Record<string, string> = {
  'fruits.jpg': join(packageRoot, 'test/fixtures/media/fruits.jpg'),
  'butterfly.png': join(packageRoot, 'test/fixtures/integrity/butterfly.png'),
};

/** esbuild's bundle of `entry` for a browser, minified; throws on anything it cannot resolve there (node:fs, ...). */
async function bundle(entry: string): Promise<{ text: string; inputs: string[] }> {
  const result = await build({
    entryPoints: [join(packageRoot, entry)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { text: result.outputFiles[0].text, inputs: Object.keys(result.metafile.inputs) };
}

test('the browser entry bundles for a browser with no Node built-in and no process global', async () => {
  const { text, inputs } = await bundle('src/browser.ts');
  // the globals, not methods of the same name (@noble/hashes has a process() method)
  assert.not.match(text, /(?<![.\w$])process\s*[.[]|(?<![.\w$])Buffer\s*[.(]|["'`]node:/);
  for (const nodeOnly of ['src/lib/wasm.ts', 'src/lib/identity.ts', 'src/lib/records.ts', 'src/lib/digest.ts']) {
    assert.not.ok(inputs.includes(nodeOnly), `${nodeOnly} is in the browser bundle`);
  }
});

test('the bundle check fails loudly on a Node built-in: the Node entry does not bundle for a browser', async () => {
  try {
    await bundle('src/lib/index.ts');
    assert.unreachable('the Node entry bundled for a browser');
  } catch (err) {
    assert.match((err as Error).message, /Could not resolve "node:/);
  }
});

test('package.json "exports": the browser condition gives the browser entry, Node the Node entry', async () => {
  if (!existsSync(join(packageRoot, 'dist/src/browser.js'))) {
    console.log('  (dist/src/browser.js not compiled: exports check skipped)');
    return;
  }
  const resolved: Record<string, string> = {};
  for (const platform of ['browser', 'node'] as const) {
    const probe: Plugin = {
      name: 'probe',
      setup(b) {
        b.onResolve({ filter: /^provenant$/ }, async (args) => {
          if (args.pluginData === 'probe') return undefined;
          const r = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'probe' });
          resolved[platform] = r.path;
          return { path: r.path, external: true };
        });
      },
    };
    // tsconfigRaw: as a consumer's bundler resolves it, without this repository's tsconfig (its paths map 'provenant' to the sources)
    await build({ stdin: { contents: "import 'provenant';", resolveDir: packageRoot }, bundle: true, platform, write: false, logLevel: 'silent', plugins: [probe], tsconfigRaw: {} });
  }
  assert.is(resolved.browser, join(packageRoot, 'dist/src/browser.js'));
  assert.is(resolved.node, join(packageRoot, 'dist/src/index.js'));
});

// ---------------------------------------------------------------- in Chromium

/** 5 MiB and 7 bytes, so the last block is a partial one. */
const large = randomBytes(rng(15), 5 * 1024 * 1024 + 7);

/** 6 s of a chord that changes every half second, at 44.1 kHz. */
function chordSamples(): Float32Array {
  const rate = 44100;
  const out = new Float32Array(rate * 6);
  const next = rng(7);
  let freqs = [220, 277, 330];
  for (let i = 0; i < out.length; i++) {
    if (i % (rate / 2) === 0) freqs = freqs.map(() => 110 + Math.floor(next() * 880));
    let s = 0;
    for (const f of freqs) s += Math.sin((2 * Math.PI * f * i) / rate);
    out[i] = s / 4 + (next() - 0.5) * 0.01;
  }
  return out;
}
const audio = chordSamples();

function serve(files: Map<string, { type: string; body: Uint8Array | string }>): Promise<Server> {
  const server = createServer((req, res) => {
    const file = files.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function pageFiles(): Promise<Map<string, { type: string; body: Uint8Array | string }>> {
  const files = new Map<string, { type: string; body: Uint8Array | string }>();
  files.set('/', { type: 'text/html', body: '<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>' });
  files.set('/page.js', { type: 'text/javascript', body: (await bundle('test/browser/page.ts')).text });
  for (const flavor of ['simd', 'scalar']) {
    for (const name of KERNEL_NAMES) {
      files.set(`/wasm/${name}.${flavor}.wasm`, { type: 'application/wasm', body: readFileSync(join(packageRoot, 'build', `${name}.${flavor}.wasm`)) });
    }
  }
  for (const [name, path] of Object.entries(FIXTURES)) files.set(`/fixtures/${name}`, { type: 'application/octet-stream', body: readFileSync(path) });
  files.set('/large.bin', { type: 'application/octet-stream', body: large });
  files.set('/audio.f32', { type: 'application/octet-stream', body: new Uint8Array(audio.buffer) });
  return files;
}

/** A record signed in Node, and the same record with one field changed after signing. */
function signedRecords(): { record: nodeEntry.SignedRecord; tampered: nodeEntry.SignedRecord; actionHash: string } {
  const key = nodeEntry.generateSigningKey();
  const record = nodeEntry.normalizeRecord({
    file_hash: createHash('sha256').update(large).digest('hex'),
    signer: nodeEntry.agentKeyFromPublicKey(key.publicKey),
    signed_at: 1_763_900_000_000,
    comment: 'café, 水, 🍓: signed in Node',
    content_rights: { license: 'cc-by', ai_training: 'not_allowed' },
    tags: ['browser', { nested: [1, 2.5, null] }],
  });
  const { signature, action_hash } = nodeEntry.signRecord(record, key.privateKeyPkcs8);
  const signed = { ...record, signature };
  return { record: signed, tampered: { ...signed, comment: 'cafe, 水, 🍓: signed in Node' }, actionHash: action_hash };
}

async function* chunks(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let off = 0; off < bytes.length; off += size) yield bytes.subarray(off, off + size);
}

const nodeLibrary: Library = { ...nodeEntry, resampleTo11025, verifyProofBundle: tlog.verifyProofBundle };

/** A log of 300 entries made in Node: entry 200's proof bundle, cosigned by two witnesses of three (quorum 2). */
async function proofBundle(): Promise<{ input: CheckInput['tlog']; entry: string }> {
  const builder = new tlog.TileBuilder();
  const entries = Array.from({ length: 300 }, (_, i) => `{"record":${i},"note":"café ✓"}`);
  for (const e of entries) builder.appendEntry(new TextEncoder().encode(e));
  const tiles = new Map(builder.takeTiles().map((t) => [`${t.level}/${t.index}`, t.data]));
  const seed = (n: number) => new Uint8Array(32).fill(n);
  const log = tlog.noteSigner('log.example/browser', tlog.SIG_ED25519, seed(1));
  const ws = [2, 3, 4].map((n) => ({ signer: tlog.noteSigner(`w${n}.example`, tlog.SIG_COSIGNATURE_V1, seed(n)), vkey: tlog.verifierOf(`w${n}.example`, tlog.SIG_COSIGNATURE_V1, seed(n)).vkey }));
  const checkpoint = tlog.signCheckpoint({ origin: 'log.example/browser', size: 300, rootHash: builder.root(), extensions: [] }, [log, ws[0].signer, ws[2].signer]);
  const reader = tlog.tileHashReader(300, { readTiles: (cs) => cs.map((c) => tiles.get(`${c.level}/${c.index}`)!) });
  const bundle = await tlog.buildProofBundle({ index: 200, checkpoint, reader });
  const policy = { logKeys: [tlog.verifierOf('log.example/browser', tlog.SIG_ED25519, seed(1)).vkey], witnesses: ws.map((w) => w.vkey), quorum: 2 };
  return { input: { bundle, tampered: bundle.replace('index 200', 'index 201'), entry: entries[200], policy }, entry: entries[200] };
}

async function inChromium(): Promise<void> {
  const server = await serve(await pageFiles());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const { record, tampered, actionHash } = signedRecords();
    const hmacKey = 'webhook secret, ✓';
    const proof = (await proofBundle()).input;
    for (const [flavor, load] of [['simd', 'url'], ['scalar', 'modules']] as const) {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => 'runPage' in globalThis);
      const input: PageInput = { flavor, load, images: Object.keys(FIXTURES), record, tampered, hmacKey, tlog: proof };
      const out = await page.evaluate((arg) => (globalThis as unknown as { runPage(i: PageInput): Promise<PageOutput> }).runPage(arg), input);
      await page.close();
      assert.equal(errors, [], `page errors (${flavor})`);

      const label = `${flavor} build, kernels by ${load}`;
      assert.match(out.beforeInit, /initWasm/, 'a kernel call before initWasm names it');
      assert.is(out.flavor, flavor);
      const r = out.results;
      // against independent references
      assert.is(r.fileBytes, large.length);
      assert.is(r.fileSha256, createHash('sha256').update(large).digest('hex'), `SHA-256 of 5 MB (${label})`);
      assert.is(r.fileHmac, createHmac('sha256', hmacKey).update(large).digest('hex'), `HMAC of 5 MB (${label})`);
      assert.is(r.verified, true, `a record signed in Node verifies (${label})`);
      assert.is(r.tamperedVerified, false, `a changed record does not (${label})`);
      assert.is(r.actionHash, actionHash);
      assert.equal(r.tlog, { index: 200, cosigners: ['w2.example', 'w4.example'], tamperedRefused: 'inclusion_failed' }, `a tlog proof made in Node verifies, a changed one does not (${label})`);

      // the PNG is lossless: the browser's pixels are sharp's pixels
      const pixels = out.pixels.map((b64) => new Uint8Array(Buffer.from(b64, 'base64')));
      const png = await sharp(FIXTURES['butterfly.png']).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      assert.ok(Buffer.from(pixels[1]).equals(png.data), `the PNG decodes to the same pixels in Chromium and sharp (${label})`);

      // everything else against the Node entry over the same inputs
      const images = await Promise.all(Object.entries(FIXTURES).map(async ([name, path], i) => {
        const { width = 0, height = 0 } = await sharp(path).metadata();
        return { name, bytes: new Uint8Array(readFileSync(path)), width, height, pixels: pixels[i] };
      }));
      const expected = await runChecks(nodeLibrary, { file: chunks(large, 1 << 20), images, audio: { samples: audio, rate: 44100 }, record, tampered, hmacKey, tlog: proof });
      assert.equal(r, JSON.parse(JSON.stringify(expected)), `browser and Node results (${label})`);
      assert.ok(expected.images.some((i) => i.features !== null && (i.selfInliers ?? 0) >= 16), 'a fixture has local features, and its set matches itself');
    }
  } finally {
    await browser.close();
    server.close();
  }
}

testInChromium(test, 'in Chromium the browser entry computes what the Node entry computes (both builds)', inChromium);

test.run();
