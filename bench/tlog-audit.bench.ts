// `provenant log audit` (issue 27) of a log of N record entries (default 1M), against
// `sha256sum` over the same bytes (the entries, concatenated), run side by side; goal:
// the audit at >= 0.5x sha256sum's speed.
//
// The server is the compiled one (`npm start`'s), on SQLite in a temp folder, in this
// process; its records are signed with real Ed25519 keys (16 signers) and stored through
// the store's own insertSignatures (the append path every sign takes), then the
// checkpointer's tick builds the tiles and signs the checkpoint. The audit is the
// compiled CLI in a child process (`log audit --restart`): it fetches every entry bundle
// and level-0 tile over loopback, re-verifies every entry's signature, rebuilds the tree
// and checks the root, then asks /verify about 20 sampled files.
//
// What an audit does beyond sha256sum's work is then timed apart, in this process, over
// the same entry bytes with the library's own functions: the tree (leaf hashes and the
// tiles above them: sha256sum's work, shaped as RFC 9162) and the entries' checks
// (decodeLogEntry, which re-encodes to prove canonical form, and the signature check),
// the latter against node:crypto's bare Ed25519 verify of the same signatures, its floor.
//   node --import tsx bench/tlog-audit.bench.ts [--entries N]   (after `npm run build:ts`)
// Times are wall clock, from one run each (the children's CPU times from bash's `time`).
import { spawn } from 'node:child_process';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compiled } from './support.js';
import { unlimitedCharge } from '../test/helpers/charge.js';
import type * as Lib from '../src/index.js';

const lib = await compiled<typeof Lib>('src/index.js');
const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
const { createUserAccount } = await compiled<typeof import('../server/src/domain/accounts.js')>('server/src/domain/accounts.js');
const { packageRoot } = await compiled<typeof import('../src/lib/wasm.js')>('src/lib/wasm.js');

const { values } = parseArgs({ options: { entries: { type: 'string' } } });
const N = Number(values.entries ?? 1_000_000);
const BATCH = 2_000;
const SIGNERS = 16;

const now = (): number => performance.now();
const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** `command` under bash's `time -p`: wall, user+sys ms, its output (async: the server it calls runs in this process). */
function timed(command: string, env: NodeJS.ProcessEnv = process.env): Promise<{ wall: number; cpu: number; stdout: string; stderr: string; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `time -p ${command}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      const field = (name: string) => Number(new RegExp(`^${name} ([0-9.]+)$`, 'm').exec(stderr)?.[1] ?? NaN);
      resolve({ wall: field('real') * 1000, cpu: (field('user') + field('sys')) * 1000, stdout, stderr, status });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'provenant-audit-bench-'));
const server = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: join(dir, 'data'), PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent' }));
try {
  console.log(`log audit of ${N.toLocaleString('en')} entries, node ${process.version}, load average ${loadavg()[0].toFixed(1)}\n`);
  const { deps } = server;
  const user = await createUserAccount(deps, { email: 'audit@bench.example', password: 'bench password 1234' });
  const signers = Array.from({ length: SIGNERS }, (_, i) => {
    const key = lib.privateKeyFromSeed(new Uint8Array(32).fill(i + 1));
    return { key, agent: lib.agentKeyFromPublicKey(lib.publicKeyFromPrivateKey(key)) };
  });
  const charge = unlimitedCharge(user.id);

  // ------------------------------------------------------------------ the log
  let t = now();
  for (let done = 0; done < N; done += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, N - done) }, (_, i) => {
      const signer = signers[(done + i) % SIGNERS]!;
      const record: Lib.SignatureRecord = {
        file_hash: randomBytes(32).toString('hex'), signer: signer.agent, signed_at: 1_767_225_600_000 + done + i, intent: 'Authorship',
        ai_generation: 'None', content_rights: { license: 'CCBY', commercial_licensing: 'ContactForTerms', ai_training: 'NotAllowed', contact_preference: 'AllowContactRequests' },
        integrity_report: null, perceptual_hash: null, comment: `Photo ${done + i} of the bench set`, supersedes: null, expires_at: null, tags: ['bench', 'audit'],
      };
      const { signature, action_hash } = lib.signRecord(record, signer.key);
      return { record, signature, action_hash, userId: user.id, appId: null, source: 'vault' as const };
    });
    await deps.store.signatures.insertSignatures(rows, charge);
  }
  const appendMs = now() - t;
  t = now();
  await deps.transparencyLog.checkpointer.tick();
  const tickMs = now() - t;
  const size = await deps.transparencyLog.store.size();
  if (size !== N) throw new Error(`the log holds ${size} entries, not ${N}`);
  console.log(`built: ${N.toLocaleString('en')} signed records stored (with their entries) in ${s(appendMs)}, tiles and checkpoint in ${s(tickMs)}`);

  // the same bytes for sha256sum
  const file = join(dir, 'entries.bin');
  const fd = openSync(file, 'w');
  const entries: Uint8Array[] = [];
  for (let from = 0; from < N; from += 65_536) {
    for (const e of await deps.transparencyLog.store.entries(from, Math.min(N, from + 65_536))) {
      writeSync(fd, e);
      entries.push(e);
    }
  }
  closeSync(fd);
  const bytes = statSync(file).size;
  console.log(`entries: ${(bytes / 1e6).toFixed(0)} MB, ${Math.round(bytes / N)} B each on average\n`);

  // ------------------------------------------------------------------ side by side
  const sum = await timed(`sha256sum ${file}`);
  if (sum.status !== 0) throw new Error(`sha256sum: ${sum.stderr}`);
  const cli = join(packageRoot, 'dist', 'src', 'cli', 'main.js');
  const audit = await timed(`${process.execPath} ${cli} log audit --server ${server.url} --restart`, { ...process.env, PROVENANT_LOG_STATE_DIR: join(dir, 'state') });
  if (audit.status !== 0 || !audit.stdout.includes(`${N} entries, root matches`)) throw new Error(`the audit failed (${audit.status}): ${audit.stdout}${audit.stderr}`);

  // ------------------------------------------------------------------ its parts, in this process
  t = now();
  const leaves = new Uint8Array(N * 32);
  entries.forEach((e, i) => lib.leafHashInto(e, leaves, i * 32));
  const builder = new lib.TileBuilder();
  builder.appendLeafHashes(leaves);
  const root = builder.root();
  const treeMs = now() - t;
  const checkpoint = lib.parseCheckpoint(lib.parseNote((await deps.transparencyLog.store.latestCheckpoint())!.note).text);
  if (!lib.hashEqual(root, checkpoint.rootHash)) throw new Error('the tree rebuilt here is not the checkpoint');

  t = now();
  const decoded = entries.map((e) => lib.decodeLogEntry(e));
  const decodeMs = now() - t;
  t = now();
  for (const entry of decoded) if (!lib.verifyLogEntrySignature(entry)) throw new Error('an entry does not verify');
  const signaturesMs = now() - t;
  // the floor: node:crypto alone, the key objects made once, over the same signed bytes
  const keys = new Map(signers.map((k) => [k.agent, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(lib.publicKeyFromPrivateKey(k.key)).toString('base64url') }, format: 'jwk' })]));
  const signed = decoded.map((e) => {
    const r = e as Extract<Lib.LogEntry, { record: Lib.SignatureRecord }>;
    return { key: keys.get(r.record.signer)!, bytes: lib.canonicalRecordBytes(r.record), signature: Buffer.from(r.signature, 'base64') };
  });
  t = now();
  for (const x of signed) if (!verify(null, x.bytes, x.key, x.signature)) throw new Error('node:crypto refuses a signature');
  const floorMs = now() - t;

  const ratio = (ms: number) => `${(sum.wall / ms).toFixed(2)}x`;
  console.log('| what | wall | CPU | vs sha256sum (wall) |\n|---|---|---|---|');
  console.log(`| sha256sum over the ${(bytes / 1e6).toFixed(0)} MB of entries | ${s(sum.wall)} | ${s(sum.cpu)} | 1x |`);
  console.log(`| provenant log audit (CLI, over loopback; server in this process) | ${s(audit.wall)} | ${s(audit.cpu)} (the CLI's) | ${ratio(audit.wall)} |`);
  console.log(`| its tree: leaf hashes and tiles (library, in process) | ${s(treeMs)} | | ${ratio(treeMs)} |`);
  console.log(`| its entry parsing: decodeLogEntry (canonical form re-checked) | ${s(decodeMs)} | | ${ratio(decodeMs)} |`);
  console.log(`| its signature checks: verifyLogEntrySignature | ${s(signaturesMs)} (${((1000 * signaturesMs) / N).toFixed(1)} µs each) | | ${ratio(signaturesMs)} |`);
  console.log(`| peer of the last: node:crypto Ed25519 verify alone (keys made once) | ${s(floorMs)} (${((1000 * floorMs) / N).toFixed(1)} µs each) | | ${ratio(floorMs)} |`);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
