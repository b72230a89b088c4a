import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../src/lib/wasm.js';

// Our package.json promises a Node range (engines.node), and the server's the same
// one; every package that runs with us (the runtime dependencies of the library and
// of the server, and theirs, as installed) must admit that whole range, or an install
// on the oldest Node we promise breaks. A dependency bump that narrows its engines is
// caught here.

interface SemverComparator { semver: { version: string; prerelease: readonly unknown[] } }
interface Semver {
  Range: new (range: string) => { set: readonly (readonly SemverComparator[])[] };
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
  inc(version: string, release: 'patch'): string | null;
}
// semver is installed with npm's own tree (not one of our dependencies), so it is
// loaded, not imported, and typed by the four functions used.
const semver = createRequire(import.meta.url)(join(packageRoot, 'node_modules', 'semver')) as Semver;

interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const readManifest = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8')) as Manifest;

/**
 * Whether every release version in `ours` satisfies `theirs`. semver.subset
 * cannot tell when `theirs` is a union covering `ours` only together
 * ('^20 || >=21'), so this tests the versions where a gap could begin: the
 * lowest of `ours`, and each bound of `theirs` and the release just above it.
 */
export function admits(theirs: string, ours: string): boolean {
  const lowest = semver.minVersion(ours);
  const candidates = lowest ? [lowest.version] : [];
  for (const set of new semver.Range(theirs).set) {
    for (const { semver: bound } of set) {
      if (bound.version === '0.0.0') continue; // the '*' comparator
      candidates.push(bound.version);
      const next = semver.inc(bound.version, 'patch');
      if (next) candidates.push(next);
    }
  }
  return candidates.every((v) => !semver.satisfies(v, ours) || semver.satisfies(v, theirs));
}

/** The installed manifest of `name` as Node would resolve it from `from`. */
function resolveManifest(name: string, from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return file;
    if (dirname(dir) === dir) return null;
  }
}

const root = readManifest(join(packageRoot, 'package.json'));
const server = readManifest(join(packageRoot, 'server', 'package.json'));
const ours = root.engines?.node ?? '';

test('the check itself: unions, gaps, and narrower ranges', () => {
  assert.ok(admits('>=18', '>=20.9'));
  assert.ok(admits('^18 || ^20 || >= 21', '>=20.9'));
  assert.ok(admits('^20.17.0 || >=22.9.0', '^20.19.0 || >=22.9.0'));
  assert.not.ok(admits('^20.17.0 || >=22.9.0', '>=20.19')); // 21.x and 22.0-22.8
  assert.not.ok(admits('>=20.17.0', '>=20.9'));
  assert.not.ok(admits('>=22', '>=20.9'));
  assert.not.ok(admits('^20 || >=22', '>=20.9'));
  assert.not.ok(admits('>=20.9 <24', '>=20.9'));
});

test('every runtime dependency, direct and transitive, admits our engines.node', () => {
  assert.ok(semver.minVersion(ours), `package.json engines.node is a range: ${ours}`);
  assert.is(server.engines?.node, ours, 'server/package.json promises the same engines.node');
  const refused: string[] = [];
  const seen = new Set<string>();
  const walk = (names: Iterable<string>, from: string, optional: boolean): void => {
    for (const name of names) {
      const file = resolveManifest(name, from);
      if (!file) {
        assert.ok(optional, `${name} is installed`);
        continue;
      }
      if (seen.has(file)) continue;
      seen.add(file);
      const pkg = readManifest(file);
      const theirs = pkg.engines?.node;
      if (theirs && !admits(theirs, ours)) refused.push(`${pkg.name}@${pkg.version} wants node ${theirs}`);
      walk(Object.keys(pkg.dependencies ?? {}), dirname(file), false);
      walk(Object.keys(pkg.optionalDependencies ?? {}), dirname(file), true);
    }
  };
  walk(Object.keys(root.dependencies ?? {}), packageRoot, false);
  walk(Object.keys(server.dependencies ?? {}), join(packageRoot, 'server'), false);
  assert.ok(seen.size > Object.keys(root.dependencies ?? {}).length, 'the walk reached transitive dependencies');
  assert.equal(refused, [], `we promise node ${ours}`);
});

test.run();
