// Copies the kernel files (build/*.wasm) beside the compiled browser loader
// (dist/src/lib/wasm-browser.js), where its `new URL('./<name>.<flavor>.wasm',
// import.meta.url)` defaults point: a bundler that follows that pattern finds them in
// the installed package, and so does a page that loads dist/ unbundled. Part of
// `npm run build:ts` (after tsc, which leaves other files in dist/ alone).
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const from = join(root, 'build');
const to = join(root, 'dist/src/lib');
const files = existsSync(from) ? readdirSync(from).filter((f) => f.endsWith('.wasm')) : [];
if (files.length === 0) {
  console.error('copy-browser-wasm: no build/*.wasm: run "npm run build:wasm" first');
  process.exit(1);
}
mkdirSync(to, { recursive: true });
for (const f of files) copyFileSync(join(from, f), join(to, f));
