// The `provenant` command as a child process for the vault and verify suites: run from
// the sources through tsx, asynchronously (the test server answers in this process).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { tempDir } from './temp.js';
import type { TestServer } from './server.js';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const PHOTO = join(ROOT, 'test/fixtures/media/fruits.jpg');

export interface CliRun { status: number | null; stdout: string; stderr: string }

/** The environment of a vault in a fresh folder, talking to `server`: nothing inherited that names another vault. */
export function vaultEnv(server: string, extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDir('provenant-vault-');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PROVENANT_'))) as Record<string, string>;
  return { ...env, PROVENANT_SERVER: server, PROVENANT_VAULT_KEY: join(dir, 'vault', 'key.json'), XDG_CONFIG_HOME: dir, ...extra };
}

/** Starts `provenant ...args`; stdin stays open for the caller (end it to send EOF). */
export function startCli(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env });
}

/** Runs `provenant ...args` to its end with `input` on stdin (then EOF). */
export function cli(args: string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  const child = startCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

/** Resolves with everything the stream printed once it matches `pattern`; rejects after `timeoutMs`. */
export function waitFor(stream: NodeJS.ReadableStream, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.off('data', onData);
      reject(new Error(`timed out waiting for ${pattern}; saw: ${seen}`));
    }, timeoutMs);
    const onData = (d: Buffer): void => {
      seen += d;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        stream.off('data', onData);
        resolve(seen);
      }
    };
    stream.on('data', onData);
  });
}

/** A vault in a fresh folder, made (`vault init`) and linked to a new account of `srv`, on `tier` (default the account's free tier). */
export async function linkedVaultEnv(srv: TestServer, tier?: string): Promise<Record<string, string>> {
  const env = vaultEnv(srv.url);
  const email = `vault-${Math.random().toString(36).slice(2)}@example.org`;
  const user = await srv.register(email, { password: 'correct horse battery staple' });
  if (tier !== undefined) await srv.deps.store.accounts.setUserTier(user.user.id, tier as never);
  assert.is((await cli(['vault', 'init'], env)).status, 0);
  assert.is((await cli(['vault', 'link', '--email', email, '--password-stdin'], env, 'correct horse battery staple\n')).status, 0);
  return env;
}

/** `vault sign FILE --c2pa OUT` (issue 33): the copy's bytes, the record's action hash and the id of the manifest store it published. */
export async function signWithCredentials(env: Record<string, string>, file: string, ext: string): Promise<{ copy: Uint8Array; action_hash: string; manifest_id: string }> {
  const out = join(tempDir('provenant-c2pa-'), `signed.${ext}`);
  const run = await cli(['vault', 'sign', file, '--c2pa', out, '--ai-generation', 'none', '--yes', '--json'], env);
  assert.is(run.status, 0, run.stderr);
  const manifest = /published the manifest store (\S+) to/.exec(run.stderr)?.[1];
  assert.ok(manifest !== undefined, run.stderr);
  return { copy: new Uint8Array(readFileSync(out)), action_hash: JSON.parse(run.stdout).results[0].action_hash, manifest_id: manifest! };
}
