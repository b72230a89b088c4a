// Server nodes as child processes for the two-node tests: `provenant serve` from the
// sources (node --import tsx src/cli/main.ts serve, one process per node, so a test can
// SIGKILL it), on a free loopback port, each with its own data directory and the
// database, Redis and secrets directory given in `env`. start() resolves once
// /healthz answers 200.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis.js';
import { tempDir } from './temp.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface NodeProcess {
  name: string;
  url: string;
  /** The running process (undefined while stopped). */
  readonly child: ChildProcess | undefined;
  /** Starts the node (again, on the same port and data directory) and waits for /healthz 200. */
  start(): Promise<void>;
  /** SIGKILL: no drain, no close, as a crash. */
  kill(): Promise<void>;
  /** SIGTERM (the node drains), SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** Stops it and removes its data directory. */
  remove(): Promise<void>;
  /** What it wrote to stdout and stderr (its log), for failure messages. */
  output(): string;
}

export async function serverNode(name: string, env: Record<string, string>): Promise<NodeProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `provenant-${name}-`));
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let log = '';

  async function start(): Promise<void> {
    if (child) throw new Error(`${name} is running`);
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
      cwd: root,
      env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn', PROVENANT_WORKERS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    // a test process that ends without stop() leaves no node behind
    const onExit = () => proc.kill('SIGKILL');
    process.once('exit', onExit);
    proc.once('exit', () => process.removeListener('exit', onExit));
    proc.stdout!.on('data', (d: Buffer) => (log += d));
    proc.stderr!.on('data', (d: Buffer) => (log += d));
    const until = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${name} exited (${proc.exitCode}) while starting: ${log.slice(-2000)}`);
      const ok = await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false);
      if (ok) return;
      if (Date.now() > until) throw new Error(`${name} did not become healthy within 60 s: ${log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function signal(sig: NodeJS.Signals): Promise<void> {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill(sig);
    const timer = sig === 'SIGKILL' ? undefined : setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  return {
    name,
    url,
    get child() {
      return child;
    },
    start,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM'),
    async remove() {
      await signal('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
    output: () => log,
  };
}

/**
 * Nodes `node-a` and `node-b` on `env`, started one after the other (the first applies
 * the migrations and records the keys' fingerprint); when either fails to start, both
 * are removed before the error is thrown.
 */
/**
 * One request to a node on a connection of its own (no keep-alive pool: a pooled socket the
 * node closed, or that died with a killed node, would fail the next request for a reason
 * that is not the one under test). `body`: JSON; `bytes`: an octet-stream upload.
 */
export function nodeRequest(
  node: NodeProcess,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; bytes?: Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: Buffer | undefined;
  if (opts.bytes) {
    headers['content-type'] = 'application/octet-stream';
    payload = opts.bytes;
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = Buffer.from(JSON.stringify(opts.body));
  }
  return new Promise((resolve, reject) => {
    const req = request(`${node.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export async function startTwoNodes(env: Record<string, string>): Promise<[NodeProcess, NodeProcess]> {
  const a = await serverNode('node-a', env);
  const b = await serverNode('node-b', env);
  try {
    await a.start();
    await b.start();
  } catch (err) {
    await Promise.allSettled([a.remove(), b.remove()]);
    throw err;
  }
  return [a, b];
}

/** `provenant admin ...` against the cluster's database and secrets (`env`); its JSON answer. */
export async function clusterAdmin(env: Record<string, string>, args: string[], stdin?: string): Promise<any> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'admin', ...args], {
    cwd: root,
    env: { ...process.env, ...env, PROVENANT_DATA_DIR: tempDir('provenant-admin-') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end(stdin ?? '');
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`admin ${args.join(' ')} exited ${code}: ${err}`);
  return JSON.parse(out);
}

/** A user with a server-hosted cell on `tier`, made with the admin CLI; its session token. */
export async function clusterCellUser(env: Record<string, string>, tier: 'premium' | 'premium_plus'): Promise<string> {
  const email = `user-${randomBytes(4).toString('hex')}@example.com`;
  await clusterAdmin(env, ['create-user', '--email', email, '--password-stdin', '--tier', tier, '--server-cell'], 'correct horse battery staple\n');
  return (await clusterAdmin(env, ['session-token', '--email', email])).token;
}
