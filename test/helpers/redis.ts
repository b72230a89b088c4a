// A throwaway Redis for tests: `redis-server --port N --save ''` on a free loopback port,
// nothing written to disk, stopped (SIGTERM, then SIGKILL) by stop(). Where redis-server
// is not installed the suites that need it are skipped and say why; under CI=true a
// missing Redis is a failure (.ci/run installs redis-server).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';

export const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** Why no Redis can be started here (null: it can). */
export function redisUnavailable(): string | null {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `${REDIS_SERVER} is not installed (apt-get install redis-server)`;
  return null;
}

/**
 * Runs `tests` when Redis can be started; otherwise says why and skips them, or under
 * CI=true runs one failing test in their place.
 */
export function runWithRedis(tests: Test): void {
  const reason = redisUnavailable();
  if (reason === null) return tests.run();
  if (process.env.CI === 'true') {
    const ci = suite('Redis (CI)');
    ci('Redis is installed', () => assert.unreachable(reason));
    return ci.run();
  }
  console.log(`  (skipped: ${reason})`);
}

/** A free TCP port on 127.0.0.1 (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface TestRedis {
  port: number;
  /** redis://127.0.0.1:PORT */
  url: string;
  /** Stops the server (SIGTERM, SIGKILL after 2 s); the port stays this Redis's for start(). */
  stop(): Promise<void>;
  /** Starts it again, empty, on the same port (after stop()). */
  start(): Promise<void>;
}

/** Starts a Redis on a free loopback port and resolves once it answers PING. */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    if (child) throw new Error('this Redis is running');
    const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    // a test process that ends without stop() leaves no server behind
    const onExit = () => proc.kill('SIGKILL');
    process.once('exit', onExit);
    proc.once('exit', () => process.removeListener('exit', onExit));
    let stderr = '';
    proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const until = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited (${proc.exitCode}): ${stderr.trim()}`);
      if (Date.now() > until) throw new Error(`redis-server on port ${port} did not answer within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function stop(): Promise<void> {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  }

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}

/** One PING over a raw connection: true on +PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
