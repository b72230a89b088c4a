// The library as a user gets it: `npm pack` of the root package, installed from the
// tarball into an empty project, runs the README's library example there (a real JPEG
// and a resized copy: fingerprints, similarity, the pool, MatchIndex, the integrity
// report, SHA-256, HMAC) and type-checks against the shipped declarations in strict
// mode, the client SDK from its own subpath (provenant/sdk). The tarball holds the prebuilt kernels, dist/ and types, nothing of the
// server, the tests or the sources; the install brings no server dependency and
// compiles nothing. Needs the npm registry (sharp, piscina, ffmpeg come from it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { KERNEL_NAMES, compiledFile, packageRoot } from '../../src/lib/wasm.js';

const test = suite('package');
const work = mkdtempSync(join(tmpdir(), 'provenant-pack-'));
const project = join(work, 'project');
const photo = join(packageRoot, 'test/fixtures/media/fruits.jpg');

/** The environment of a fresh shell: nothing of the npm run that started this test. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

function run(cmd: string, args: string[], cwd: string): { stdout: string; stderr: string; status: number | null } {
  const res = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (res.error) throw res.error;
  return res;
}

function mustRun(cmd: string, args: string[], cwd: string): string {
  const res = run(cmd, args, cwd);
  assert.is(res.status, 0, `${cmd} ${args.join(' ')} exited ${res.status}\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

/** Files and directories under `dir` (relative paths), symbolic links not followed. */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const rel = prefix + e.name;
    return e.isDirectory() ? [`${rel}/`, ...walk(join(dir, e.name), `${rel}/`)] : [rel];
  });
}

interface Packed { filename: string; size: number; unpackedSize: number; files: { path: string }[] }
let packed: Packed;

test.before(() => {
  // the package as built: the kernels and the compiled library must exist
  compiledFile('src/index.js');
  compiledFile('src/index.d.ts');
  packed = (JSON.parse(mustRun('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], packageRoot)) as Packed[])[0];
  console.log(`tarball ${packed.filename}: ${(packed.size / 1024).toFixed(0)} kB packed, ${(packed.unpackedSize / 1024).toFixed(0)} kB unpacked, ${packed.files.length} files`);
});

test.after(() => {
  rmSync(work, { recursive: true, force: true });
});

test('the tarball ships the kernels, the compiled library and its types, and nothing else', () => {
  const files = packed.files.map((f) => f.path);
  for (const name of KERNEL_NAMES) {
    for (const flavor of ['simd', 'scalar']) assert.ok(files.includes(`build/${name}.${flavor}.wasm`), `build/${name}.${flavor}.wasm is in it`);
  }
  for (const f of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/browser.js', 'dist/src/cli/main.js', 'dist/src/cli/vault.js', 'dist/src/sdk/index.js', 'dist/src/vault/serve.js', 'dist/src/media/sandbox-child.js', 'dist/workers/fingerprint.js', 'dist/workers/match-index.js']) {
    assert.ok(files.includes(f), `${f} is in it`);
  }
  // the kernels also beside the browser loader, where initWasm() with no argument looks (scripts/copy-browser-wasm.mjs)
  for (const name of KERNEL_NAMES) {
    for (const flavor of ['simd', 'scalar']) assert.ok(files.includes(`dist/src/lib/${name}.${flavor}.wasm`), `dist/src/lib/${name}.${flavor}.wasm is in it`);
  }
  const stray = files.filter((f) => !/^(package\.json|README\.md|(build|dist\/src\/lib)\/[\w.]+\.wasm|dist\/(src|workers)\/[\w/.-]+\.(js|d\.ts))$/.test(f));
  assert.equal(stray, [], 'only package.json, README.md, the kernels (build/*.wasm, dist/src/lib/*.wasm) and compiled .js/.d.ts');
  const server = files.filter((f) => /^dist\/src\/(server|store)\/|^dist\/src\/cli\/(serve|admin)\./.test(f));
  assert.equal(server, [], 'nothing of the server');
});

test('installed into an empty project: no server dependency, nothing compiled, the README example runs', async () => {
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const t0 = performance.now();
  mustRun('npm', ['install', join(work, packed.filename), '--prefer-offline', '--no-audit', '--no-fund'], project);
  const seconds = (performance.now() - t0) / 1000;
  const modules = join(project, 'node_modules');
  const kb = Number(mustRun('du', ['-sk', modules], project).split('\t')[0]);
  console.log(`npm install of the tarball: ${seconds.toFixed(1)} s, node_modules ${(kb / 1024).toFixed(1)} MB`);

  for (const name of ['koa', '@koa/router', 'koa-ratelimit', 'sqlite3', 'nodemailer', 'node-cache', 'jose', 'ipaddr.js', '@provenant/server']) {
    assert.not.ok(existsSync(join(modules, name)), `${name} is not installed`);
  }
  const built = walk(modules).filter((f) => /(^|\/)(build\/(Release|Debug)\/|build\/config\.gypi$|\.node-gyp\/)/.test(f));
  assert.equal(built, [], 'no native build output (node-gyp) anywhere');
  assert.ok(existsSync(join(modules, 'provenant/build/core.simd.wasm')), 'the kernels are installed');

  // the README's library example: the photo and a copy at half its width
  copyFileSync(photo, join(project, 'photo.jpg'));
  const { width } = await sharp(photo).metadata();
  await sharp(photo).resize(Math.round(width! / 2)).jpeg({ quality: 80 }).toFile(join(project, 'photo-small.jpg'));
  writeFileSync(join(project, 'example.mjs'), `${EXAMPLE}\n${REPORT}`);
  const out = JSON.parse(mustRun(process.execPath, ['example.mjs'], project)) as Record<string, any>;

  assert.is(out.a.hash_type, 'ImagePHash');
  assert.is(out.a.hash_value.length, 8);
  assert.ok(out.score >= 90, `similarity of the photo and its resized copy is ${out.score}`);
  assert.equal(out.fp, out.a, 'the pool gives fingerprintFile\'s fingerprint');
  assert.equal(out.matches.map((m: { id: number }) => m.id), [1], 'MatchIndex finds the photo by the copy');
  assert.ok(Array.isArray(out.issues), 'integrityReport has issues_found');
  assert.is(out.sha, createHash('sha256').update('abc').digest('hex'));
  assert.is(out.mac, createHmac('sha256', 'key').update('The quick brown fox jumps over the lazy dog').digest('hex'));
});

test('the client SDK is its own subpath, provenant/sdk, and not in the library\'s entries', () => {
  const probe = `const lib = await import('provenant');
const browser = await import('provenant/browser');
const sdk = await import('provenant/sdk');
console.log(JSON.stringify({
  sdk: Object.keys(sdk).sort(),
  inLib: Object.keys(lib).filter((k) => k !== 'verifyWebhookSignature' && k in sdk),
  inBrowser: Object.keys(browser).filter((k) => k !== 'verifyWebhookSignature' && k in sdk),
}));
`;
  writeFileSync(join(project, 'sdk-probe.mjs'), probe);
  const out = JSON.parse(mustRun(process.execPath, ['sdk-probe.mjs'], project)) as { sdk: string[]; inLib: string[]; inBrowser: string[] };
  for (const name of ['ProvenantClient', 'ProvenantError', 'requestVaultSignature', 'VaultError', 'createPkce', 'exchangeCode', 'verifyWebhookSignature']) {
    assert.ok(out.sdk.includes(name), `provenant/sdk exports ${name}`);
  }
  assert.equal(out.inLib, [], 'provenant re-exports nothing of the SDK (verifyWebhookSignature is the library\'s own)');
  assert.equal(out.inBrowser, [], 'provenant/browser re-exports nothing of the SDK');
});

test('the installed bin: file commands run, serve says how to get the server', () => {
  const bin = join(project, 'node_modules/.bin/provenant');
  const sha = JSON.parse(mustRun(bin, ['sha256', 'photo.jpg', '--json'], project)) as { sha256: string };
  assert.is(sha.sha256, createHash('sha256').update(readFileSync(photo)).digest('hex'));
  const serve = run(bin, ['serve'], project);
  assert.is(serve.status, 1);
  assert.is(serve.stderr, 'provenant serve needs @provenant/server: npm install @provenant/server\n');
});

test('the shipped declarations type-check a strict consumer (tsc --noEmit)', () => {
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], strict: true,
      noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(packageRoot, 'node_modules/@types')],
    },
    files: ['example.ts'],
  }));
  writeFileSync(join(project, 'example.ts'), TYPED);
  mustRun(process.execPath, [join(packageRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.json'], project);
  // and a misuse is an error: the check is not vacuous
  writeFileSync(join(project, 'example.ts'), `${TYPED}\nconst wrong: string = sha256Hex(new Uint8Array(1)).length;\nvoid wrong;\n`);
  const res = run(process.execPath, [join(packageRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.json'], project);
  assert.is.not(res.status, 0);
  assert.match(res.stdout, /TS2322/);
});

/** The README's library example, as written there: its first js block after "## The library". */
const EXAMPLE = (() => {
  const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('\n## The library')));
  if (block === null) throw new Error('README.md has no js example under "## The library"');
  return block[1];
})();

/** What the test reads back from the example's run. */
const REPORT = 'console.log(JSON.stringify({ a, b, score, fp, matches, issues: issues_found, sha, mac }));\n';

/** The same calls with the types a strict TypeScript user writes. */
const TYPED = `import { readFile } from 'node:fs/promises';
import {
  fingerprintFile, similarity, createFingerprintPool, integrityReport, MatchIndex, sha256Hex, hmacSha256Hex,
  FingerprintError, PoolTimeoutError, type Fingerprint, type FingerprintPool, type Match, type IntegrityReport,
} from 'provenant';
import { ProvenantClient, requestVaultSignature, VaultError, type VaultSignature } from 'provenant/sdk';

async function main(): Promise<void> {
  const a: Fingerprint | null = await fingerprintFile('photo.jpg');
  const b: Fingerprint | null = await fingerprintFile(new Uint8Array(await readFile('photo-small.jpg')));
  if (a === null || b === null) return;
  const score: number | null = similarity(a, b);
  const pool: FingerprintPool = createFingerprintPool({ workers: 2, taskTimeoutMs: 10_000 });
  try {
    const fp: Fingerprint | null = await pool.fingerprint(new Uint8Array(await readFile('photo.jpg')));
    void fp;
  } catch (err) {
    if (err instanceof PoolTimeoutError || err instanceof FingerprintError) throw err;
  } finally {
    await pool.close();
  }
  const index = new MatchIndex();
  index.add(1, a, Date.now());
  const matches: Match[] = index.query(b, { threshold: 70, limit: 100 });
  const report: IntegrityReport = await integrityReport('photo.jpg');
  const hex: string = sha256Hex('abc') + hmacSha256Hex('key', new Uint8Array([1, 2, 3]));
  console.log(score, matches.length, report.issues_found.length, hex);
  const client = new ProvenantClient({ baseUrl: 'https://provenant.example' });
  const signed: VaultSignature | null = await requestVaultSignature({ file_hash: hex.slice(0, 64) }).catch((e: unknown) => {
    if (e instanceof VaultError) return null;
    throw e;
  });
  void client;
  void signed;
}

await main();
`;

test.run();
