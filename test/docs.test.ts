// The README and docs/ name files of this repository (links and `paths` in backticks):
// every one of them must exist, so that a reader who follows one never lands nowhere.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The top-level folders whose paths a document may name in backticks (build outputs excluded). */
const TRACKED_ROOTS = ['assembly/', 'src/', 'server/', 'workers/', 'bench/', 'test/', 'scripts/', 'docs/', '.ci/'];

/** `a/{b,c}.ts` -> a/b.ts, a/c.ts (one level of braces, as the docs write them). */
function expandBraces(path: string): string[] {
  const m = /^(.*?)\{([^{}]*)\}(.*)$/.exec(path);
  if (!m) return [path];
  return m[2].split(',').flatMap((part) => expandBraces(`${m[1]}${part.trim()}${m[3]}`));
}

/** Every repository path a Markdown text names: relative links, and backticked paths under a tracked root. */
export function namedPaths(markdown: string, docPath: string): string[] {
  const found = new Set<string>();
  const docDir = dirname(docPath);
  for (const m of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1].split('#')[0];
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // absolute URLs, mailto:
    found.add(normalize(join(docDir, decodeURIComponent(target))));
  }
  for (const m of markdown.matchAll(/`([^`\s]+)`/g)) {
    let candidate = m[1].replace(/[:#]\d+(-\d+)?$/, '').replace(/[.,;:)]+$/, '');
    if (candidate.startsWith('./')) candidate = candidate.slice(2);
    if (!TRACKED_ROOTS.some((r) => candidate.startsWith(r))) continue;
    if (/[<>*$]|\.\.\./.test(candidate)) continue; // a pattern or a placeholder, not a path
    for (const p of expandBraces(candidate)) found.add(normalize(p));
  }
  return [...found];
}

test('namedPaths finds links and backticked paths, expands braces and skips patterns', () => {
  const md = 'See [the server](server.md#x), [web](https://example.com), `src/lib/{a,b}.ts`, `test/x.test.ts:12`, `server/src/<feature>/routes.ts`, `dist/src/index.js`.';
  assert.equal(namedPaths(md, 'docs/readme.md').sort(), ['docs/server.md', 'src/lib/a.ts', 'src/lib/b.ts', 'test/x.test.ts'].sort());
});

for (const doc of documents) {
  test(`${doc}: every path it names exists`, () => {
    const text = readFileSync(join(root, doc), 'utf8');
    const missing = namedPaths(text, doc).filter((p) => !existsSync(join(root, p)));
    assert.equal(missing, [], `${doc} names paths that do not exist: ${missing.map((p) => relative('.', p)).join(', ')}`);
  });
}

test.run();
