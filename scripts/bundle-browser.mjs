// Bundles the library's browser entry (dist/src/browser.js, compiled by tsc) into one
// ES module, dist/src/browser.bundle.js, with its dependencies (@noble/curves,
// @scure/base) inside: what the verification page imports (a browser cannot resolve
// bare specifiers without an import map, which the page's CSP would have to allow
// inline). Part of `npm run build:ts`, after tsc. Fails on anything that does not
// bundle for a browser (a Node built-in).
import { build } from 'esbuild';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
await build({
  entryPoints: [join(root, 'dist/src/browser.js')],
  outfile: join(root, 'dist/src/browser.bundle.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
