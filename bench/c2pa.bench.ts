// C2PA reading's share of verify-file time on JPEG photos (issue 21): the pool's task
// as verify-file ran it before (fingerprint only) against as it runs it now (the
// fingerprint, with the Content Credentials read in the sandbox beside it), one worker,
// one file at a time, interleaved (A, B, A, B...) so that drift hits both alike; and the
// whole POST /verify-file over loopback for the same files, for the share. Photos from
// the dev corpus (../shared/corpus/build-dev-corpus.sh) when built, else the fixtures:
// fruits.jpg and the C2PA fixtures (real photos, with and without credentials). Each
// result is checked inside the loop.
//   npm run build:ts && node --import tsx bench/c2pa.bench.ts
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createFingerprintPool } from '../src/pool/index.js';
import { startTestServer } from '../test/helpers/server.js';

const CORPUS = '/tmp/provenant-corpus/files/image/jpg';
const FIXTURES = new URL('../test/fixtures/', import.meta.url).pathname;
const ROUNDS = Number(process.env.ROUNDS ?? 40);

function photos(): { name: string; bytes: Uint8Array }[] {
  const files = existsSync(CORPUS)
    ? readdirSync(CORPUS).map((f) => join(CORPUS, f)).filter((f) => statSync(f).size > 50_000).sort().slice(0, 8)
    : ['media/fruits.jpg', 'c2pa/CA.jpg', 'c2pa/CACA.jpg', 'c2pa/no_manifest.jpg', 'c2pa/adobe-20220124-E-clm-CAICAI.jpg'].map((f) => join(FIXTURES, f));
  return files.map((f) => ({ name: f.slice(f.lastIndexOf('/') + 1), bytes: new Uint8Array(readFileSync(f)) }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const files = photos();
const pool = createFingerprintPool({ workers: 1 });
const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_WORKERS: '1' });
const check = (ok: boolean, who: string) => {
  if (!ok) throw new Error(`${who} gave no result`);
};

// warm-up: the worker, its sandbox and the reader's WebAssembly (instantiated once per sandbox process)
for (const f of files) {
  await pool.examine(f.bytes.slice());
  await fetch(`${srv.url}/api/v1/sign-it/verify-file`, { method: 'POST', body: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) }).then((r) => r.json());
}

const before: number[] = [];
const now: number[] = [];
const http: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const f of files) {
    before.push(await timed(async () => check((await pool.fingerprint(f.bytes.slice()))?.hash_type === 'ImagePHash', 'fingerprint')));
    now.push(await timed(async () => {
      const r = await pool.examine(f.bytes.slice());
      check(r.fingerprint?.hash_type === 'ImagePHash' && r.content_credentials.present !== null, 'examine');
    }));
    http.push(await timed(async () => {
      const res = await fetch(`${srv.url}/api/v1/sign-it/verify-file`, { method: 'POST', body: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) });
      check(res.status === 200 && 'content_credentials' in (await res.json()), 'verify-file');
    }));
  }
}

const a = median(before);
const b = median(now);
const h = median(http);
console.log(`${files.length} JPEG photos (${files.map((f) => f.name).join(', ')}), ${ROUNDS} rounds, medians:`);
console.log(`  pool task, fingerprint only (verify-file before)       ${a.toFixed(1)} ms`);
console.log(`  pool task, fingerprint + Content Credentials (now)     ${b.toFixed(1)} ms   ratio ${(b / a).toFixed(2)}`);
console.log(`  POST /verify-file over loopback (now)                  ${h.toFixed(1)} ms`);
console.log(`  C2PA reading's share of verify-file time               ${(((b - a) / h) * 100).toFixed(0)}%`);
files.forEach((f, i) => {
  const of = (xs: number[]) => median(xs.filter((_, j) => j % files.length === i));
  console.log(`    ${f.name.padEnd(34)} ${of(before).toFixed(1).padStart(6)} -> ${of(now).toFixed(1).padStart(6)} ms (verify-file ${of(http).toFixed(1)} ms)`);
});
await pool.close();
await srv.close();
