// initWasm() with no argument in a real browser (issue 25 item 9): a page bundled with
// esbuild for the browser (default-page.ts) calls `await initWasm()` and `sha256Hex`,
// served from 127.0.0.1 with the kernel files beside the bundle, as the library's
// `new URL('./<name>.<flavor>.wasm', import.meta.url)` expects; and served without
// them (404) or by a server that answers every path with its page: the error names
// the URL tried and the options to pass. In Debian's Chromium through playwright-core.
// Also: the package (npm pack's file list) ships the kernels beside the compiled loader.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { KERNEL_NAMES, packageRoot } from '../../src/lib/wasm.js';
import type { DefaultPageOutput } from './default-page.js';
import { CHROMIUM, testInChromium } from '../helpers/chromium.js';

const HTML = '<!doctype html><meta charset="utf-8"><script type="module" src="app.js"></script>';

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [join(packageRoot, 'test/browser/default-page.ts')],
    bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/**
 * /app/: the page, the bundle and every kernel file beside it; /bare/: the page and the
 * bundle alone (404 for the rest); /spa/: a server that answers any path with the page.
 */
function serve(app: string): Promise<Server> {
  const wasm = new Map<string, Buffer>();
  for (const name of KERNEL_NAMES) for (const flavor of ['simd', 'scalar']) wasm.set(`${name}.${flavor}.wasm`, readFileSync(join(packageRoot, 'build', `${name}.${flavor}.wasm`)));
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const [, dir, file = ''] = path.split('/');
    if (file === '' ) return void res.writeHead(200, { 'content-type': 'text/html' }).end(HTML);
    if (file === 'app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(app);
    if (dir === 'app' && wasm.has(file)) return void res.writeHead(200, { 'content-type': 'application/wasm' }).end(wasm.get(file));
    if (dir === 'spa') return void res.writeHead(200, { 'content-type': 'text/html' }).end(HTML);
    res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function inChromium(): Promise<void> {
  const server = await serve(await bundle());
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const run = async (dir: string): Promise<DefaultPageOutput> => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${origin}/${dir}/`);
    await page.waitForFunction(() => 'runDefault' in globalThis);
    const out = await page.evaluate(() => (globalThis as unknown as { runDefault(): Promise<DefaultPageOutput> }).runDefault());
    await page.close();
    assert.equal(errors, [], `page errors (${dir})`);
    return out;
  };
  try {
    const found = await run('app');
    assert.equal(found, { ok: true, flavor: 'simd', sha256: createHash('sha256').update('abc').digest('hex') }, 'the kernels beside the bundle, nothing passed');

    const missing = await run('bare');
    assert.is(missing.ok, false);
    const message = (missing as { message: string }).message;
    assert.ok(message.includes(`${origin}/bare/`) && /\/bare\/\w+\.simd\.wasm/.test(message), `names the URL tried: ${message}`);
    assert.match(message, /404/);
    assert.match(message, /initWasm\(\{ url: /, 'names the option to pass');

    const fallback = await run('spa');
    assert.is(fallback.ok, false);
    const why = (fallback as { message: string }).message;
    assert.match(why, new RegExp(`${origin.replace(/[.]/g, '\\.')}/spa/\\w+\\.simd\\.wasm is not a WebAssembly module`));
    assert.match(why, /initWasm\(\{ url: /);
  } finally {
    await browser.close();
    server.close();
  }
}

testInChromium(test, 'in Chromium, an esbuild bundle calling initWasm() with nothing finds the kernels beside it; a wrong place names the URL and the option', inChromium);

test('npm pack ships every kernel file in build/ and beside the compiled browser loader (dist/src/lib/)', () => {
  if (!existsSync(join(packageRoot, 'dist/src/lib/wasm-browser.js'))) {
    console.log('  (dist/ not compiled: the package check is skipped; npm run build:ts)');
    return;
  }
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageRoot, encoding: 'utf8' })) as { files: { path: string }[] }[];
  const files = new Set(packed.files.map((f) => f.path));
  for (const name of KERNEL_NAMES) {
    for (const flavor of ['simd', 'scalar']) {
      assert.ok(files.has(`build/${name}.${flavor}.wasm`), `build/${name}.${flavor}.wasm`);
      assert.ok(files.has(`dist/src/lib/${name}.${flavor}.wasm`), `dist/src/lib/${name}.${flavor}.wasm (npm run build:ts copies it)`);
    }
  }
  assert.ok(files.has('dist/src/lib/wasm-browser.js'));
});

test.run();
