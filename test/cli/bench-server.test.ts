// `provenant bench --server URL` against a real server on loopback (test/helpers/server.ts:
// the server's own composition root, real SQLite), the CLI run as installed (compiled)
// in a child process. The server counts what arrives: the bench never sends more than
// --max-requests, never has more than --concurrency requests open, stops by itself after
// --duration, and reports answers by status (the 30-a-minute limits answer 429).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { copyFileSync, createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { compiledFile } from '../../src/lib/wasm.js';
import type { BenchResult } from '../../src/cli/bench/run.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newSigner, sign } from '../public/support.js';

const test = suite('cli/bench-server');
const MAIN = compiledFile('src/cli/main.js');
const MEDIA = new URL('../fixtures/media/', import.meta.url).pathname;
let dir: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-bench-server-'));
  mkdirSync(join(dir, 'corpus'));
  copyFileSync(join(MEDIA, 'fruits.jpg'), join(dir, 'corpus', 'fruits.jpg'));
  copyFileSync(join(MEDIA, 'cat.gif'), join(dir, 'corpus', 'cat.gif'));
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI without blocking this process's event loop (the server lives here). */
function bench(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, 'bench', join(dir, 'corpus'), '--json', '--index-size', '1000', '--min-time', '0', '--workers', '1', ...args], { cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Requests the server received per path, and the most open at once. */
function watch(srv: TestServer) {
  const byPath: Record<string, number> = {};
  let open = 0;
  let maxOpen = 0;
  srv.http.on('request', (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    byPath[path] = (byPath[path] ?? 0) + 1;
    maxOpen = Math.max(maxOpen, ++open);
    res.on('close', () => open--);
  });
  return { byPath, maxOpen: () => maxOpen };
}

const sha256 = (path: string) => new Promise<string>((done) => {
  const h = createHash('sha256');
  createReadStream(path).on('data', (c) => h.update(c)).on('end', () => done(h.digest('hex')));
});

test('rate limits on: exactly --max-requests per endpoint sent, 30 answered and the rest counted as 429', async () => {
  const srv = await startTestServer();
  try {
    const seen = watch(srv);
    // 2 in flight: the test server has 1 worker and takes 2 uploads at once (a third answers 503 busy)
    const r = await bench(['--server', srv.url, '--concurrency', '2', '--duration', '60', '--max-requests', '40']);
    assert.is(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout) as BenchResult;
    assert.equal(result.server!.endpoints.map((e) => e.endpoint), ['POST /verify-file', 'POST /verify-fuzzy', 'GET /verify']);
    for (const e of result.server!.endpoints) {
      assert.is(e.requests, 40, e.endpoint);
      assert.is(e.ok, 30, e.endpoint);
      assert.equal(e.errors, { 429: 10 }, e.endpoint);
      assert.ok(e.p50Ms! > 0 && e.p99Ms! >= e.p50Ms! && e.maxMs! >= e.p99Ms!);
    }
    assert.is(seen.byPath['/api/v1/sign-it/verify-file'], 40);
    assert.is(seen.byPath['/api/v1/sign-it/verify-fuzzy'], 40);
    assert.is(seen.byPath['/api/v1/sign-it/verify'], 40);
    assert.ok(seen.maxOpen() <= 2, `at most 2 open at once, saw ${seen.maxOpen()}`);
  } finally {
    await srv.close();
  }
});

test('rate limits off: runs for --duration and stops by itself, every answer 200, a signed photo found', async () => {
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' });
  try {
    const photo = join(dir, 'corpus', 'fruits.jpg');
    const signer = await newSigner(srv);
    await sign(srv, signer, { file_hash: await sha256(photo), perceptual_hash: await fingerprintFile(photo), intent: 'Authorship', ai_generation: 'none' });
    const seen = watch(srv);
    // 2 in flight, as above
    const r = await bench(['--server', `${srv.url}/`, '--concurrency', '2', '--duration', '1.5']);
    assert.is(r.status, 0, r.stderr);
    const server = (JSON.parse(r.stdout) as BenchResult).server!;
    assert.equal([server.concurrency, server.durationS], [2, 1.5]);
    for (const e of server.endpoints) {
      assert.ok(e.requests > 2, `${e.endpoint}: ${e.requests}`);
      assert.equal(e.errors, {}, e.endpoint);
      assert.is(e.ok, e.requests);
      // started within the duration; the last ones may finish a little after it
      assert.ok(e.seconds >= 1.5 && e.seconds < 30, `${e.endpoint}: ${e.seconds} s`);
      assert.ok(Math.abs(e.rps - e.requests / e.seconds) < 1e-9);
    }
    const sent = Object.fromEntries(server.endpoints.map((e) => [e.endpoint, e.requests]));
    assert.is(seen.byPath['/api/v1/sign-it/verify-file'], sent['POST /verify-file']);
    assert.is(seen.byPath['/api/v1/sign-it/verify-fuzzy'], sent['POST /verify-fuzzy']);
    assert.is(seen.byPath['/api/v1/sign-it/verify'], sent['GET /verify']);
    assert.ok(seen.maxOpen() <= 2, `at most 2 open at once, saw ${seen.maxOpen()}`);
    // what the bench sent is what a client sends: the signed photo is found by each route
    const found = await fetch(`${srv.url}/api/v1/sign-it/verify?hash=${await sha256(photo)}`).then((x) => x.json()) as { count: number };
    assert.is(found.count, 1);
  } finally {
    await srv.close();
  }
});

test('a server that is not there: every request counted as a network error, exit 0', async () => {
  const r = await bench(['--server', 'http://127.0.0.1:9', '--duration', '0.5', '--max-requests', '5']);
  assert.is(r.status, 0, r.stderr);
  for (const e of (JSON.parse(r.stdout) as BenchResult).server!.endpoints) {
    assert.is(e.requests, 5);
    assert.equal(e.errors, { network: 5 });
    assert.is(e.p50Ms, null);
  }
});

test.run();
