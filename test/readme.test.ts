// The README's walkthrough, run as written against real processes on loopback: the
// shell block under "## Walkthrough" goes to bash line for line against
// `provenant serve` (the compiled CLI, as `npm start` runs it) in a fresh data
// directory; then the web-app example (the walkthrough's js block) runs in Node against
// `provenant vault serve` on its default port, the test answering the vault's prompt on
// its stdin. Only addresses change: the server listens on a free port instead of 8080,
// and /tmp paths move into the test's directory.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyRecord } from '../src/lib/records.js';
import { waitFor } from './helpers/vault.js';

const test = suite('README walkthrough');
const root = fileURLToPath(new URL('..', import.meta.url));
const PHOTO = join(root, 'test/fixtures/media/fruits.jpg');

/** The walkthrough section's code blocks of one language, in order. */
function walkthroughBlocks(lang: 'sh' | 'js'): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('\n## Walkthrough');
  assert.ok(at >= 0, 'README.md has a "## Walkthrough" section');
  const section = readme.slice(at, readme.indexOf('\n## ', at + 1));
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

/** A child of the compiled CLI; resolves with its URL once it prints `pattern`'s first group. */
async function startCompiled(args: string[], env: NodeJS.ProcessEnv, pattern: RegExp) {
  const child = spawn(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: root, env });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const seen = await waitFor(child.stdout, pattern, 60_000).catch((e: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${args.join(' ')} did not start: ${e.message} ${err}`);
  });
  return { child, match: pattern.exec(seen)!, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

/** The environment of a fresh shell: nothing that names another vault or server. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PROVENANT_')));
  return { ...env, ...extra };
}

test('the walkthrough: account, vault, sign, verify a resized copy, amend, revoke, verify; then a web app asks the vault', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-readme-'));
  const dataDir = join(dir, 'data');
  const server = await startCompiled(['serve'], cleanEnv({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'info', PROVENANT_WORKERS: '1' }), /"listening".*"url":"([^"]+)"/);
  const url = server.match[1];
  let vault: Awaited<ReturnType<typeof startCompiled>> | undefined;
  try {
    const [shell] = walkthroughBlocks('sh');
    const script = shell.replaceAll('http://localhost:8080', url).replaceAll('/tmp/', `${dir}/`);
    // a fresh user's config folder: `provenant verify` remembers each log's checkpoints there, and
    // another run's server (a new log key under the same origin) would be a fork
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: root, env: cleanEnv({ XDG_CONFIG_HOME: join(dir, 'config') }), encoding: 'utf8', timeout: 180_000 });
    assert.is(run.status, 0, `the walkthrough failed: ${run.stderr}`);
    const agentKey = /agent key +(uhCAk\S+)/.exec(run.stdout)?.[1];
    assert.ok(agentKey, `vault init printed the agent key: ${run.stdout}`);
    // the resized copy: a perceptual match with Ana's signature
    assert.match(run.stdout, new RegExp(`fruits-small\\.jpg: 0 exact, 1 perceptual match[\\s\\S]*Perceptual, similarity \\d+[\\s\\S]*signer +${agentKey}`));
    // issue 33: the resized copy lost its Content Credentials; verify-file and the Soft Binding Resolution API recover them
    assert.match(run.stdout, /Recovered Content Credentials[\s\S]*urn:c2pa:[0-9a-f-]+ +for record [0-9a-f]{64}/);
    assert.match(run.stdout, /fruits-small\.jpg: recovered urn:c2pa:[0-9a-f-]+ from http:\/\/\S+\/c2pa\/v1 \((byBinding|byContent)/);
    assert.match(run.stdout, /record +[0-9a-f]{64} on \S+: re-verified offline/);
    // the chain and the revocation, read from the server itself
    const hash = createHash('sha256').update(readFileSync(PHOTO)).digest('hex');
    const { signatures } = (await (await fetch(`${url}/api/v1/sign-it/verify?hash=${hash}`)).json()) as { signatures: Record<string, unknown>[] };
    const first = signatures.find((s) => s.comment === 'Market day')!;
    const second = signatures.find((s) => s.comment === 'Market day, Lisbon')!;
    assert.equal([signatures.length, second.supersedes, second.revoked, second.revocation_reason], [2, first.action_hash, true, 'wrong city']);
    assert.equal([first.revoked, first.superseded_by, first.signer], [false, null, agentKey]);
    assert.match(run.stdout, /REVOKED .*\(wrong city\)[\s\S]*signature +re-verified offline/);

    // The web-app example in Node, against the vault service on its default port.
    const keyFile = join(dir, 'ana-vault/key.json');
    vault = await startCompiled(['vault', 'serve'], cleanEnv({ PROVENANT_VAULT_KEY: keyFile, PROVENANT_SERVER: url }), /on (http:\/\/127\.0\.0\.1:7733)/);
    mkdirSync(join(dir, 'app/node_modules'), { recursive: true });
    symlinkSync(root, join(dir, 'app/node_modules/provenant')); // `import 'provenant'` as an installed app sees it
    const [example] = walkthroughBlocks('js');
    const app = join(dir, 'app/example.mjs');
    writeFileSync(app, `${example}\nimport { readFileSync } from 'node:fs';\nconst record = await signInVault(new Blob([readFileSync(${JSON.stringify(PHOTO)})]));\nconsole.log(JSON.stringify(record));\n`);
    const prompt = waitFor(vault.child.stdout, /\[y\/N\]/, 60_000);
    const appRun = new Promise<{ status: number | null; out: string; err: string }>((resolve) => {
      const c = spawn(process.execPath, [app], { cwd: join(dir, 'app') });
      let out = '';
      let err = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (err += d));
      c.on('close', (status) => resolve({ status, out, err }));
    });
    assert.match(await prompt, /Request 1 from a local app[\s\S]*comment +"Drawn in the app"/);
    vault.child.stdin.write('y\n');
    const result = await appRun;
    assert.is(result.status, 0, result.err);
    const record = JSON.parse(result.out);
    assert.equal([record.file_hash, record.signer, record.comment], [hash, agentKey, 'Drawn in the app']);
    assert.ok(verifyRecord(record), 'the record re-verifies');
    const after = (await (await fetch(`${url}/api/v1/sign-it/verify?hash=${hash}`)).json()) as { count: number };
    assert.is(after.count, 2, 'the web app got it unpublished');
  } finally {
    await vault?.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
