// The `provenant` command as a child process for the vault and verify suites: run from
// the sources through tsx, asynchronously (the test server answers in this process).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from './temp.js';

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
