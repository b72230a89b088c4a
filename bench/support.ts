// Small pieces shared by the benches.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sqlite3 from 'sqlite3';
import { compiledFile, packageRoot } from '../src/lib/wasm.js';

/** xorshift32: a seeded generator of 32-bit unsigned integers, so runs are repeatable. */
export function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** Best-of-5 CPU time of one call in ms: on a shared machine wall time includes waiting. */
export function cpuMs(fn: () => void): number {
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const c0 = process.cpuUsage();
    fn();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return best;
}

/**
 * A module as compiled by `npm run build`, named by its source path with a .js ending
 * ('src/...' is in dist/src/, 'server/src/...' in server/dist/), typed as its source:
 * the server benches load the server as `npm start` runs it. Loaded through tsx
 * instead, its closures are wrapped for tsx's keepNames (a property definition per
 * closure made, several per request), which cost the server a fifth of its requests
 * per second in side-by-side runs.
 */
export async function compiled<T>(srcPath: string): Promise<T> {
  const server = /^server\/src\/(.*)$/.exec(srcPath);
  const file = server ? join(packageRoot, 'server', 'dist', server[1]) : compiledFile(srcPath);
  if (!existsSync(file)) throw new Error(`${file} is missing; run "npm run build:ts" to compile it`);
  return (await import(pathToFileURL(file).href)) as T;
}

/** The peer of the HTTP benches: a Koa hello-world on loopback, run beside ours in the same script. */
export async function helloWorld(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { hello: 'world' };
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** What loadFromChild measured. */
export interface ChildLoad {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * GETs `url` with autocannon in a child process of its own (its CLI, --json): the load
 * generator's work (parsing answers: an 8 KiB body costs it more than a small one) is not
 * charged to the server measured, which keeps this process's event loop to itself.
 */
export async function loadFromChild(url: string, connections: number, durationS: number): Promise<ChildLoad> {
  const { execFile } = await import('node:child_process');
  const cli = join(packageRoot, 'node_modules', 'autocannon', 'autocannon.js');
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [cli, '--json', '-c', String(connections), '-d', String(durationS), url], { maxBuffer: 16 << 20 }, (err, out) => (err ? reject(err) : resolve(out)));
  });
  const r = JSON.parse(stdout) as { requests: { average: number }; latency: { p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

/** One statement on a raw sqlite3 connection (the benches that build a large database straight into SQLite). */
export function sqliteRun(db: sqlite3.Database, text: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(text, params, (err) => (err ? reject(err) : resolve())));
}

/**
 * The bench file `self` run again as a child process with `args` (its server modes), from
 * the package root: resolves with the process and the JSON of its first stdout line.
 */
export function benchChild(self: string, args: string[]): Promise<{ proc: ChildProcess; info: any }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', self, ...args], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ proc, info: JSON.parse(out.slice(0, nl)) });
    });
    proc.on('exit', (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}

/** Ends a benchChild and waits for it. */
export function stopChild(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

/**
 * A new SQLite database of the server's schema in `dir` (emptied first: the store's
 * migrations run), opened raw for a bench to fill in bulk, with the one user its records
 * belong to ('bench-user').
 */
export async function freshBenchDatabase(dir: string): Promise<sqlite3.Database> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { Db } = await import('../server/src/store/sqlite/db.js');
  await (await Db.open(join(dir, 'provenant.db'))).close();
  const db = new sqlite3.Database(join(dir, 'provenant.db'));
  await sqliteRun(db, `INSERT INTO users (id, created_at) VALUES ('bench-user', 0)`);
  return db;
}
