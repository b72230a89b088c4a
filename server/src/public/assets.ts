// The files the public pages are made of: the page's own HTML, CSS and scripts (in
// ./page/, beside this file in src/ and found from dist/ too), and the library's browser
// build (the compiled modules of provenant's browser entry the page imports, and the
// core WebAssembly kernel), served from the installed provenant package. Only the files
// listed here are served: no path from a request reaches the file system.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The first directory at or above `start` whose package.json is named `name`. */
function packageDir(start: string, name: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === name) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the package "${name}" above ${start}`);
  }
}

const SERVER_ROOT = packageDir(dirname(fileURLToPath(import.meta.url)), '@provenant/server');
const PAGE_DIR = join(SERVER_ROOT, 'src', 'public', 'page');
/** The library as the server resolves it (its compiled dist/ and build/*.wasm). */
const LIBRARY_ROOT = packageDir(dirname(fileURLToPath(import.meta.resolve('provenant'))), 'provenant');

/** The library modules the page imports (each imports only the others here). */
const LIBRARY_MODULES = ['wasm-browser', 'wasm-core', 'sha256', 'dhash', 'bands', 'types'];

const JS = 'text/javascript; charset=utf-8';

/** URL path -> file and type. */
export const ASSETS: ReadonlyMap<string, { file: string; type: string }> = new Map([
  ['/', { file: join(PAGE_DIR, 'index.html'), type: 'text/html; charset=utf-8' }],
  ['/assets/page.css', { file: join(PAGE_DIR, 'page.css'), type: 'text/css; charset=utf-8' }],
  ['/assets/page.js', { file: join(PAGE_DIR, 'page.js'), type: JS }],
  ['/badge.js', { file: join(PAGE_DIR, 'badge.js'), type: JS }],
  // the whole browser entry as one module (scripts/bundle-browser.mjs): hashing, matching and the log's verifiers
  ['/assets/provenant/browser.js', { file: join(LIBRARY_ROOT, 'dist', 'src', 'browser.bundle.js'), type: JS }],
  ...LIBRARY_MODULES.map((m) => [`/assets/provenant/lib/${m}.js`, { file: join(LIBRARY_ROOT, 'dist', 'src', 'lib', `${m}.js`), type: JS }] as const),
  // the kernels the page runs: hashing and ImagePHash (core), the ISCC Content-Code it asks the Soft Binding Resolution API by (iscc)
  ...(['core', 'iscc'] as const).flatMap((k) => (['simd', 'scalar'] as const).map((f) => [`/assets/provenant/${k}.${f}.wasm`, { file: join(LIBRARY_ROOT, 'build', `${k}.${f}.wasm`), type: 'application/wasm' }] as const)),
]);

const loaded = new Map<string, Promise<Buffer>>();

/** The bytes of a listed asset, read once; rejects (ENOENT) when the library is not compiled. */
export function assetBytes(path: string): Promise<Buffer> {
  const asset = ASSETS.get(path);
  if (asset === undefined) throw new Error(`not an asset: ${path}`);
  let bytes = loaded.get(path);
  if (bytes === undefined) {
    bytes = readFile(asset.file);
    loaded.set(path, bytes);
    bytes.catch(() => loaded.delete(path));
  }
  return bytes;
}
