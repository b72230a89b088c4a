// The witness (c2sp.org/tlog-witness) over real HTTP on loopback: started in-process
// (startWitness, as the server's tests will) and as `provenant witness serve`. It cosigns
// a consistent checkpoint (the cosignature checked by our verifier and, where Go is
// installed, by Go's note.Open), refuses one that rewrites history, answers each status
// the spec names, keeps its state and key across restarts, and keeps its key 0600.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import '../../src/lib/wasm.js';
import {
  EMPTY_ROOT, SIG_COSIGNATURE_V1, SIG_ED25519, TileBuilder, encodeBase64, formatCheckpoint, noteSigner, parseSignatureLines, proveConsistency,
  signCheckpoint, signNote, tileHashReader, tilePath, verifierOf, verifyCheckpoint, formatNote, parseNote, type TileCoord,
  TlogError, cosignaturesFrom, formatAddCheckpoint, parseConflictSize,
} from '../../src/lib/tlog/index.js';
import { startWitness, witnessClientKey, type RunningWitness } from '../../src/lib/tlog/witness-server.js';
import { Witness, type WitnessRecord } from '../../src/lib/tlog/witness.js';
import { request as httpRequest } from 'node:http';
import { goUnavailable, runTlogref } from '../helpers/go.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const ORIGIN = 'log.example/witnessed';
const logSeed = new Uint8Array(32).fill(41);
const logSigner = noteSigner(ORIGIN, SIG_ED25519, logSeed);
const LOG_VKEY = verifierOf(ORIGIN, SIG_ED25519, logSeed).vkey;
const enc = new TextEncoder();

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'provenant-witness-'));
  dirs.push(d);
  return d;
}

/** A log of `entries` (strings): its tiles, and its signed checkpoint at any size. */
class TestLog {
  readonly builder = new TileBuilder();
  readonly tiles = new Map<string, Uint8Array>();
  constructor(entries: string[] = []) {
    this.append(entries);
  }
  append(entries: string[]): void {
    for (const e of entries) this.builder.appendEntry(enc.encode(e));
    for (const t of this.builder.takeTiles()) this.tiles.set(`${t.level}/${t.index}`, t.data);
  }
  get size(): number {
    return this.builder.size;
  }
  checkpoint(signers = [logSigner], origin = ORIGIN): string {
    return signCheckpoint({ origin, size: this.size, rootHash: this.builder.root(), extensions: [] }, signers);
  }
  async proof(from: number): Promise<Uint8Array[]> {
    return proveConsistency(from, this.size, tileHashReader(this.size, { readTiles: (cs: readonly TileCoord[]) => cs.map((c) => this.tiles.get(`${c.level}/${c.index}`)!) }));
  }
}
const entries = (from: number, to: number, tag = 'e') => Array.from({ length: to - from }, (_, i) => `${tag}${from + i}`);

function body(old: number, proof: Uint8Array[], checkpoint: string): string {
  return `old ${old}\n${proof.map((h) => `${encodeBase64(h)}\n`).join('')}\n${checkpoint}`;
}

async function post(w: { url: string }, text: string | Uint8Array): Promise<{ status: number; type: string | null; text: string }> {
  const r = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: typeof text === 'string' ? text : Buffer.from(text) });
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
}

const cosignedBy = (checkpoint: string, answer: string) => formatNote(parseNote(checkpoint).text, [...parseNote(checkpoint).signatures, ...parseSignatureLines(answer)]);

test('cosigns a consistent history; the cosignature verifies (ours and Go\'s note.Open)', async () => {
  const dir = tempDir();
  const w = await startWitness({ dir, name: 'witness.example/w1', logs: [LOG_VKEY] });
  try {
    const log = new TestLog(entries(0, 10));
    const first = log.checkpoint();
    const a = await post(w, body(0, [], first));
    assert.is(a.status, 200, a.text);
    assert.match(a.text, /^\u2014 witness\.example\/w1 [A-Za-z0-9+/=]+\n$/);
    const cosigned = cosignedBy(first, a.text);
    const v = verifyCheckpoint(cosigned, { logKeys: [LOG_VKEY], witnesses: [w.verifierKey], quorum: 1 });
    assert.is(v.cosignatures.length, 1);
    assert.ok(Math.abs(v.cosignatures[0].timestamp! - Date.now() / 1000) < 600);
    // it grows, with a consistency proof from the size it cosigned
    log.append(entries(10, 300));
    const b = await post(w, body(10, await log.proof(10), log.checkpoint()));
    assert.is(b.status, 200, b.text);
    // the same checkpoint again: cosigned again
    assert.is((await post(w, body(300, [], log.checkpoint()))).status, 200);
    // the monitoring endpoint answers the latest, with the log's signature and the cosignature
    const hash = createHash('sha256').update(ORIGIN).digest('hex');
    const latest = await fetch(`${w.url}/${hash}/checkpoint`);
    assert.is(latest.status, 200);
    const latestText = await latest.text();
    assert.is(verifyCheckpoint(latestText, { logKeys: [LOG_VKEY], witnesses: [w.verifierKey], quorum: 1 }).checkpoint.size, 300);
    assert.is((await fetch(`${w.url}/${'0'.repeat(64)}/checkpoint`)).status, 404);
    if (goUnavailable() === null) {
      // Go's note.Open with our log key and a cosignature/v1 verifier of the witness's key
      const gdir = tempDir();
      for (const [k, data] of log.tiles) {
        const [level, index] = k.split('/').map(Number);
        const width = Math.min(256, Math.floor(log.size / 256 ** level) - index * 256);
        const p = join(gdir, tilePath({ level, index, width }));
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, data);
      }
      writeFileSync(join(gdir, 'checkpoint'), latestText);
      writeFileSync(join(gdir, 'vkey'), LOG_VKEY);
      writeFileSync(join(gdir, 'witness-vkeys'), w.verifierKey);
      writeFileSync(join(gdir, 'proofs.json'), JSON.stringify({ inclusion: [], consistency: [] }));
      const r = runTlogref('check', gdir);
      assert.ok(r.ok, r.ok ? '' : r.stderr);
      if (r.ok) assert.equal(r.json.signers, [ORIGIN, 'witness.example/w1']);
    }
  } finally {
    await w.close();
  }
});

test('refuses a rewritten history: a fork, a tampered tile, another root at the same size (422); a stale old size (409)', async () => {
  const dir = tempDir();
  const w = await startWitness({ dir, name: 'witness.example/w2', logs: [LOG_VKEY] });
  try {
    const log = new TestLog(entries(0, 1000));
    assert.is((await post(w, body(0, [], log.checkpoint()))).status, 200);
    // 409: the old size is not the one it cosigned; the body is that size, as text/x.tlog.size
    const grown = new TestLog(entries(0, 1500));
    const stale = await post(w, body(900, await grown.proof(900), grown.checkpoint()));
    assert.is(stale.status, 409);
    assert.is(stale.type, 'text/x.tlog.size');
    assert.is(stale.text, '1000\n');
    const fresh = await post(w, body(0, [], grown.checkpoint()));
    assert.is(fresh.status, 409);
    assert.is(fresh.text, '1000\n');
    // a fork: entry 500 differs, the tree grows on; its proof from 1000 (made in the fork) fails
    const fork = new TestLog([...entries(0, 500), 'rewritten', ...entries(501, 1500)]);
    assert.is((await post(w, body(1000, await fork.proof(1000), fork.checkpoint()))).status, 422);
    // a proof read from a tampered level-0 tile (the one holding leaves 768..1023, which the proof from 1000 reads)
    const tampered = new TestLog(entries(0, 1500));
    const t = tampered.tiles.get('0/3')!;
    for (let i = 0; i < t.length; i += 32) t[i + 3] ^= 1;
    assert.is((await post(w, body(1000, await tampered.proof(1000), tampered.checkpoint()))).status, 422);
    // the same size with another root
    const other = new TestLog([...entries(0, 999), 'other']);
    assert.is((await post(w, body(1000, [], other.checkpoint()))).status, 422);
    // the honest next checkpoint still goes through, and nothing above moved the state
    assert.is((await post(w, body(1000, await grown.proof(1000), grown.checkpoint()))).status, 200);
  } finally {
    await w.close();
  }
});

test('the spec\'s other answers: 404 unknown origin, 403 signatures, 400 malformed, 422 empty tree and stray proof; 405, 413', async () => {
  const dir = tempDir();
  const w = await startWitness({ dir, name: 'witness.example/w3', logs: [LOG_VKEY] });
  try {
    const log = new TestLog(entries(0, 5));
    // 404: a log it does not witness, even well signed
    const stranger = noteSigner('stranger.example/log', SIG_ED25519, new Uint8Array(32).fill(1));
    assert.is((await post(w, body(0, [], log.checkpoint([stranger], 'stranger.example/log')))).status, 404);
    // 403: the origin's name but another key (unknown key ID: no trusted signature)
    const impostor = noteSigner(ORIGIN, SIG_ED25519, new Uint8Array(32).fill(2));
    assert.is((await post(w, body(0, [], log.checkpoint([impostor])))).status, 403);
    // 403: the trusted key's signature broken (even beside a good one of it)
    const good = log.checkpoint();
    const sig = parseNote(good).signatures[0];
    const broken = { ...sig, signature: sig.signature.map((x, i) => (i === 9 ? x ^ 1 : x)) };
    assert.is((await post(w, body(0, [], formatNote(parseNote(good).text, [sig, broken])))).status, 403);
    // 400: malformed bodies, the old size above the checkpoint's
    for (const bad of ['', 'old 0\n', `old 00\n\n${good}`, `old -1\n\n${good}`, `old 0\nnot base64\n\n${good}`, `old 0\n\nnot a note\n`,
      `old 0\n${'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n'.repeat(64)}\n${good}`]) {
      const r = await post(w, bad);
      assert.is(r.status, 400, JSON.stringify(bad));
    }
    assert.is((await post(w, body(6, [], good))).status, 400);
    assert.is((await post(w, Uint8Array.of(0x6f, 0x6c, 0x64, 0x20, 0x30, 0x0a, 0x0a, 0xff))).status, 400);
    // a checkpoint in a known log's name that is not a checkpoint (no size line)
    assert.is((await post(w, body(0, [], signNote(`${ORIGIN}\nx\n`, [logSigner])))).status, 400);
    // 422: size 0 with a root other than the empty tree's; a proof from size 0
    const zeroBad = signCheckpoint({ origin: ORIGIN, size: 0, rootHash: new Uint8Array(32), extensions: [] }, [logSigner]);
    assert.is((await post(w, body(0, [], zeroBad))).status, 422);
    assert.is((await post(w, body(0, [new Uint8Array(32)], good))).status, 422);
    // size 0 with the empty root is fine, and then size 5
    assert.is((await post(w, body(0, [], signCheckpoint({ origin: ORIGIN, size: 0, rootHash: EMPTY_ROOT, extensions: [] }, [logSigner])))).status, 200);
    assert.is((await post(w, body(0, [], good))).status, 200);
    // HTTP: another method, another path, a body above the limit
    assert.is((await fetch(`${w.url}/add-checkpoint`)).status, 405);
    assert.is((await fetch(`${w.url}/nothing`)).status, 404);
    assert.is((await post(w, new Uint8Array(2 << 20).fill(0x41))).status, 413);
  } finally {
    await w.close();
  }
});

test('issue 34: a checkpoint repeating the log\'s signature is refused (403) before any verify, and nothing is cosigned', async () => {
  const real = verifierOf(ORIGIN, SIG_ED25519, logSeed);
  let verifies = 0;
  const counted = { ...real, verify: (text: Uint8Array, sig: Uint8Array) => { verifies++; return real.verify(text, sig); } };
  const records = new Map<string, WitnessRecord>();
  const store = { get: async (o: string) => records.get(o) ?? null, put: async (o: string, r: WitnessRecord) => { records.set(o, r); } };
  const w = new Witness({ name: 'witness.example/w9', seed: new Uint8Array(32).fill(9), logs: [counted], store });
  const log = new TestLog(entries(0, 5));
  const good = log.checkpoint();
  const [sig] = parseNote(good).signatures;
  // the report's body: the log's one valid signature line, 100 times (the most a note may hold)
  const repeated = formatNote(parseNote(good).text, Array<typeof sig>(100).fill(sig));
  const r = await w.addCheckpoint(body(0, [], repeated));
  assert.is(r.status, 403);
  assert.match(r.body, /repeats a signature of the log key/);
  assert.is(verifies, 0);
  assert.is(records.size, 0);
  // the same checkpoint with its line once: one verify, cosigned
  const ok = await w.addCheckpoint(body(0, [], good));
  assert.is(ok.status, 200, ok.body);
  assert.is(verifies, 1);
  // over HTTP, with the key as configured
  const served = await startWitness({ dir: tempDir(), name: 'witness.example/w11', logs: [LOG_VKEY] });
  try {
    assert.is((await post(served, body(0, [], repeated))).status, 403);
    assert.is((await fetch(`${served.url}/${createHash('sha256').update(ORIGIN).digest('hex')}/checkpoint`)).status, 404);
  } finally {
    await served.close();
  }
});

/** POST add-checkpoint from `localAddress` (a loopback address other than 127.0.0.1 is another client). */
function postFrom(w: { port: number }, text: string, localAddress: string): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: w.port, path: '/add-checkpoint', method: 'POST', localAddress, agent: false }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { t += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text: t }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

test('issue 34: add-checkpoint is rate-limited per submitting address: 429 with Retry-After, others still served', async () => {
  let now = 1_000_000;
  // one request a second on average, five at once; the clock stands still unless moved
  const w = await startWitness({ dir: tempDir(), name: 'witness.example/w10', logs: [LOG_VKEY], clientRate: 1, clock: () => now });
  try {
    const log = new TestLog(entries(0, 3));
    const cp = log.checkpoint();
    const first = await postFrom(w, body(0, [], cp), '127.0.0.1');
    assert.is(first.status, 200, first.text);
    // the same size again is cosigned again (old size 3); four more fill the burst
    for (let i = 0; i < 4; i++) assert.is((await postFrom(w, body(3, [], cp), '127.0.0.1')).status, 200);
    const limited = await postFrom(w, body(3, [], cp), '127.0.0.1');
    assert.is(limited.status, 429);
    assert.is(limited.retryAfter, '1');
    // malformed bodies count too (the limit is taken before the body is read)
    assert.is((await postFrom(w, 'junk', '127.0.0.1')).status, 429);
    // another address is another client
    assert.is((await postFrom(w, body(3, [], cp), '127.0.0.2')).status, 200);
    // a second later the first has one request again, and then none
    now += 1000;
    assert.is((await postFrom(w, body(3, [], cp), '127.0.0.1')).status, 200);
    assert.is((await postFrom(w, body(3, [], cp), '127.0.0.1')).status, 429);
    // the monitoring endpoint is not limited
    const hash = createHash('sha256').update(ORIGIN).digest('hex');
    assert.is((await fetch(`${w.url}/${hash}/checkpoint`)).status, 200);
  } finally {
    await w.close();
  }
});

test('witnessClientKey: an IPv4 address, an IPv4-mapped one as IPv4, an IPv6 address as its /64', () => {
  assert.is(witnessClientKey('192.0.2.7'), '192.0.2.7');
  assert.is(witnessClientKey('::ffff:192.0.2.7'), '192.0.2.7');
  assert.is(witnessClientKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.is(witnessClientKey('2001:db8:1:2::9'), '2001:db8:1:2::/64');
  assert.is(witnessClientKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.is(witnessClientKey('::1'), '0:0:0:0::/64');
  assert.is(witnessClientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.is(witnessClientKey(undefined), 'unknown');
});

test('a slow client is cut off at the request deadline while others are served', async () => {
  const w = await startWitness({ dir: tempDir(), name: 'witness.example/w7', logs: [LOG_VKEY], requestTimeoutMs: 1000 });
  try {
    const { connect } = await import('node:net');
    const socket = connect(w.port, '127.0.0.1');
    await once(socket, 'connect');
    // headers promising a body that never comes
    socket.write('POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nold 0\n');
    let answer = '';
    socket.on('data', (d) => { answer += d; });
    const closed = once(socket, 'close');
    // meanwhile the witness answers others
    const log = new TestLog(entries(0, 3));
    assert.is((await post(w, body(0, [], log.checkpoint()))).status, 200);
    await closed;
    assert.match(answer, /^HTTP\/1\.1 408/);
  } finally {
    await w.close();
  }
});

test('concurrent submissions from one size: exactly one is cosigned, the other learns the new size (409)', async () => {
  const dir = tempDir();
  const w = await startWitness({ dir, name: 'witness.example/w4', logs: [LOG_VKEY] });
  try {
    const base = new TestLog(entries(0, 100));
    assert.is((await post(w, body(0, [], base.checkpoint()))).status, 200);
    const a = new TestLog(entries(0, 150));
    const b = new TestLog(entries(0, 200));
    const answers = await Promise.all([post(w, body(100, await a.proof(100), a.checkpoint())), post(w, body(100, await b.proof(100), b.checkpoint()))]);
    const statuses = answers.map((r) => r.status).sort();
    assert.equal(statuses, [200, 409]);
    const winner = answers[0].status === 200 ? 150 : 200;
    assert.is(answers.find((r) => r.status === 409)!.text, `${winner}\n`);
  } finally {
    await w.close();
  }
});

test('state and key survive a restart; the key file is 0600 in a 0700 directory; a readable key is refused', async () => {
  const dir = join(tempDir(), 'w');
  let w: RunningWitness = await startWitness({ dir, name: 'witness.example/w5', logs: [LOG_VKEY] });
  const vkey = w.verifierKey;
  const log = new TestLog(entries(0, 77));
  try {
    assert.is((await post(w, body(0, [], log.checkpoint()))).status, 200);
  } finally {
    await w.close();
  }
  assert.is(statSync(join(dir, 'witness.key')).mode & 0o777, 0o600);
  assert.is(statSync(dir).mode & 0o777, 0o700);
  for (const f of readdirSync(join(dir, 'logs'))) assert.is(statSync(join(dir, 'logs', f)).mode & 0o777, 0o600, f);
  assert.equal(readdirSync(join(dir, 'logs')), [createHash('sha256').update(ORIGIN).digest('hex')]);
  w = await startWitness({ dir, name: 'witness.example/w5', logs: [LOG_VKEY] });
  try {
    assert.is(w.verifierKey, vkey);
    const again = await post(w, body(0, [], log.checkpoint()));
    assert.is(again.status, 409);
    assert.is(again.text, '77\n');
    log.append(entries(77, 80));
    assert.is((await post(w, body(77, await log.proof(77), log.checkpoint()))).status, 200);
  } finally {
    await w.close();
  }
  // the key belongs to its name; a key others can read is refused
  await startWitness({ dir, name: 'witness.example/other', logs: [LOG_VKEY] }).then(
    (x) => x.close().then(() => assert.unreachable('started with a key of another name')),
    (e: Error) => assert.match(e.message, /witness\.example\/w5/),
  );
  chmodSync(join(dir, 'witness.key'), 0o644);
  await startWitness({ dir, name: 'witness.example/w5', logs: [LOG_VKEY] }).then(
    (x) => x.close().then(() => assert.unreachable('started with a readable key')),
    (e: Error) => assert.match(e.message, /chmod 600/),
  );
});

test('the log\'s side: formatAddCheckpoint, cosignaturesFrom (the witness key checked), parseConflictSize', async () => {
  const w = await startWitness({ dir: tempDir(), name: 'witness.example/w6', logs: [LOG_VKEY] });
  try {
    const log = new TestLog(entries(0, 600));
    const cp = log.checkpoint();
    const a = await post(w, formatAddCheckpoint(0, [], cp));
    assert.is(a.status, 200);
    const cos = cosignaturesFrom(a.text, cp, w.verifierKey);
    assert.equal(cos.map((c) => c.name), ['witness.example/w6']);
    assert.is(verifyCheckpoint(formatNote(parseNote(cp).text, [...parseNote(cp).signatures, ...cos]), { logKeys: [LOG_VKEY], witnesses: [w.verifierKey], quorum: 1 }).cosignatures.length, 1);
    // another witness's key: nothing verifies; a changed cosignature: refused; an answer for another checkpoint: refused
    const stranger = verifierOf('witness.example/w6', SIG_COSIGNATURE_V1, new Uint8Array(32).fill(5)).vkey;
    assert.throws(() => cosignaturesFrom(a.text, cp, stranger), (e: unknown) => e instanceof TlogError && e.code === 'no_verified_signature');
    const at = a.text.lastIndexOf(' ') + 40; // inside the Ed25519 signature
    const flipped = `${a.text.slice(0, at)}${a.text[at] === 'A' ? 'B' : 'A'}${a.text.slice(at + 1)}`;
    assert.throws(() => cosignaturesFrom(flipped, cp, w.verifierKey), (e: unknown) => e instanceof TlogError && e.code === 'bad_signature');
    log.append(entries(600, 601));
    assert.throws(() => cosignaturesFrom(a.text, log.checkpoint(), w.verifierKey), (e: unknown) => e instanceof TlogError && e.code === 'bad_signature');
    // a 409 names the size to prove from
    const stale = await post(w, formatAddCheckpoint(0, [], log.checkpoint()));
    assert.is(stale.status, 409);
    assert.is(parseConflictSize(stale.text), 600);
    assert.is(parseConflictSize('0600\n'), null);
    assert.is((await post(w, formatAddCheckpoint(600, await log.proof(600), log.checkpoint()))).status, 200);
  } finally {
    await w.close();
  }
});

// ---------------------------------------------------------------- the command

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, encoding: 'utf8' });

async function serveCli(args: string[]): Promise<{ child: ChildProcess; url: string; vkey: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'witness', 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`witness serve did not start: ${err}`)), 30_000);
    child.on('exit', (code) => reject(new Error(`witness serve exited ${code}: ${err}`)));
    child.stdout!.on('data', (d) => {
      out += d;
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const vkey = /verifier key (\S+)/.exec(out)?.[1];
      if (url && vkey && out.includes('Ctrl-C')) {
        clearTimeout(timer);
        resolve({ child, url, vkey });
      }
    });
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

test('provenant witness serve and key: cosigns over HTTP, prints its key, keeps its state across a restart', async () => {
  const dir = join(tempDir(), 'data');
  // key before any serve: nothing to print
  const none = cli('witness', 'key', '--data-dir', dir);
  assert.is(none.status, 1, none.stderr);
  assert.match(none.stderr, /no witness key/);
  const args = ['--port', '0', '--data-dir', dir, '--name', 'witness.example/cli', '--log', LOG_VKEY];
  let s = await serveCli(args);
  const log = new TestLog(entries(0, 40));
  try {
    const r = await post(s, body(0, [], log.checkpoint()));
    assert.is(r.status, 200, r.text);
    assert.is(verifyCheckpoint(cosignedBy(log.checkpoint(), r.text), { logKeys: [LOG_VKEY], witnesses: [s.vkey], quorum: 1 }).cosignatures.length, 1);
  } finally {
    assert.is(await stop(s.child), 0);
  }
  const printed = cli('witness', 'key', '--data-dir', dir);
  assert.is(printed.status, 0, printed.stderr);
  assert.is(printed.stdout, `${s.vkey}\n`);
  assert.match(printed.stdout, /^witness\.example\/cli\+[0-9a-f]{8}\+/);
  assert.is(Buffer.from(printed.stdout.trim().split('+').slice(2).join('+'), 'base64')[0], SIG_COSIGNATURE_V1);
  assert.is(statSync(join(dir, 'witness.key')).mode & 0o777, 0o600);
  s = await serveCli(args);
  try {
    const r = await post(s, body(0, [], log.checkpoint()));
    assert.is(r.status, 409);
    assert.is(r.text, '40\n');
  } finally {
    await stop(s.child);
  }
  // usage errors: a log key that is not one, a cosignature key as a log key, a missing flag
  for (const bad of [['--log', 'nonsense'], ['--log', s.vkey]]) {
    const r = cli('witness', 'serve', '--port', '0', '--data-dir', dir, '--name', 'witness.example/cli', ...bad);
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, /--log/);
  }
  assert.is(cli('witness', 'serve', '--data-dir', dir, '--name', 'x', '--log', LOG_VKEY).status, 2);
  assert.is(JSON.stringify(readFileSync(join(dir, 'witness.key'), 'utf8')).includes('PRIVATE+KEY+witness.example/cli+'), true);
});

test('kill -9 at any moment: a cosigned size is never lost, and the state is never torn', async () => {
  const dir = join(tempDir(), 'crash');
  const args = ['--port', '0', '--data-dir', dir, '--name', 'witness.example/crash', '--log', LOG_VKEY];
  const log = new TestLog(entries(0, 1));
  let answered = 0; // the largest size the witness answered 200 for
  for (let round = 0; round < 6; round++) {
    const s = await serveCli(args);
    // what it holds after the last kill: the last answered size, or the one in flight then
    const probe = await post(s, body(0, [], log.checkpoint()));
    const held = probe.status === 200 ? log.size : Number(probe.text);
    assert.ok(held >= answered, `round ${round}: holds ${held}, answered ${answered} before the kill`);
    assert.ok(held <= log.size, `round ${round}: holds ${held}, more than was ever sent (${log.size})`);
    answered = held;
    // the log grows from what the witness holds: answered requests, then one in flight killed after a random delay
    for (let k = 0; k < 3; k++) {
      const from = log.size;
      log.append(entries(from, from + 50));
      const r = await post(s, body(answered, await log.proof(answered), log.checkpoint()));
      assert.is(r.status, 200, r.text);
      answered = log.size;
    }
    const from = log.size;
    log.append(entries(from, from + 50));
    const inflight = post(s, body(answered, await log.proof(answered), log.checkpoint())).then((r) => r.status, () => 0);
    await new Promise((resolve) => setTimeout(resolve, round * 3));
    const exited = once(s.child, 'exit');
    s.child.kill('SIGKILL');
    await exited;
    if ((await inflight) === 200) answered = log.size;
  }
  assert.equal(readdirSync(join(dir, 'logs')).filter((f) => !f.endsWith('.tmp')).length, 1);
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
