// The README's walkthrough, run as written: the shell block under "## Walkthrough" goes
// to bash line for line against `provenant serve` (the compiled CLI, as `npm start`
// runs it) in a fresh data directory. Only the address changes: the server listens on
// a free port instead of 8080. The last answer must be a perceptual match of the
// resized copy with the photo's signature, found by its fingerprint.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const test = suite('README walkthrough');
const root = fileURLToPath(new URL('..', import.meta.url));

/** The first ```sh block after the walkthrough's heading. */
function walkthroughScript(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf('\n## Walkthrough');
  assert.ok(at >= 0, 'README.md has a "## Walkthrough" section');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, 'the walkthrough has a sh code block');
  return block[1];
}

/** Starts the compiled server on a free port; resolves with its URL and a stop function. */
async function startServe(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_LOG_LEVEL: 'info', PROVENANT_WORKERS: '1' };
  const child = spawn(process.execPath, ['dist/src/cli/main.js', 'serve'], { cwd: root, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  for (let i = 0; i < 600; i++) {
    const line = out.split('\n').find((l) => l.includes('"listening"'));
    if (line) {
      const url = JSON.parse(line).url as string;
      return { url, stop: async () => void (child.kill('SIGTERM'), await exited) };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`provenant serve did not start: ${err}`);
}

test('the walkthrough signs the photo and finds its resized copy by verify-file', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-readme-'));
  const server = await startServe(dataDir);
  try {
    const script = walkthroughScript().replaceAll('http://localhost:8080', server.url).replaceAll('/tmp/fruits-small.jpg', join(dataDir, 'fruits-small.jpg'));
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      env: { ...process.env, PROVENANT_DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.is(run.status, 0, `the walkthrough failed: ${run.stderr}`);
    // Each curl prints one JSON answer; the lines before them are the admin command's.
    const answers = run.stdout.split(/\n|(?<=\})(?=\{)/).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const [signed, exact, perceptual] = answers.slice(-3);
    assert.type(signed.action_hash, 'string', `sign answered ${JSON.stringify(signed)}`);
    assert.ok(exact.signatures.some((s: { action_hash: string }) => s.action_hash === signed.action_hash), 'verify finds the signature');
    const match = perceptual.signatures.find((s: { file_hash: string }) => s.file_hash === exact.signatures[0].file_hash);
    assert.ok(match, `the resized copy matches the signed photo: verify-file answered ${JSON.stringify(perceptual)}`);
    assert.is(match.match_type, 'perceptual');
    assert.ok(match.similarity >= 60, `similarity ${match.similarity}`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
