// The read behind `GET /verify` of a random stored hash (a verify-cache miss):
// store.signatures.findByFileHash plus the answer's serialisation (signit/present.ts),
// on SQLite and on PostgreSQL (a throwaway cluster, test/helpers/postgres.ts), each
// seeded with the same STORED records, CONNECTIONS reads in flight, alternating rounds
// of DURATION s. Without HTTP: what the engine costs per read, and how many statements
// PostgreSQL ran per read (pg_stat_statements is not needed: pg's Pool.query is counted).
//   VERIFY_STORED=200000 node --import tsx bench/verify-read.bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { verifyAnswer } from '../server/src/signit/present.js';
import { openPostgresStore, openSqliteStore, type Store } from '../server/src/store/index.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { xorshift } from './support.js';

const STORED = Number(process.env.VERIFY_STORED ?? 200_000);
const DURATION = Number(process.env.DURATION ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = 16;

/** The file hash of row i (1-based seq i+1), as the cluster bench's database has them. */
const fileHash = (i: number) => `f${i.toString(16).padStart(63, '0')}`;

/** The seeding SELECT over g = 0 .. STORED-1, the same text for both engines but for the hex of g. */
function seedSql(hex: string, series: string): string {
  const hash = (p: string) => `'${p}' || substr('${'0'.repeat(63)}', 1, 63 - length(${hex})) || ${hex}`;
  const record = `'{"ai_generation":"None","comment":null,"content_rights":{"license":"CCBY"},"expires_at":null,"file_hash":"' || ${hash('f')} || '","integrity_report":null,"intent":"Authorship","perceptual_hash":null,"signed_at":' || (1700000000000 + g) || ',"signer":"uhCAkbench","supersedes":null,"tags":null}'`;
  return `INSERT INTO signatures (seq, action_hash, file_hash, signer, signed_at, intent, record, signature, user_id, source, published_at, pool)
    SELECT g + 1, ${hash('a')}, ${hash('f')}, 'uhCAkbench', 1700000000000 + g, 'Authorship', ${record}, 'sig', 'bench-user', 'vault', 1700000000000 + g, 'personal' FROM ${series}`;
}

async function seedPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`INSERT INTO users (id, created_at) VALUES ('bench-user', 0)`);
    await client.query(seedSql(`to_hex(g)`, `generate_series(0, ${STORED - 1}) g`));
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

function seedSqlite(file: string): void {
  const series = `(WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < ${STORED - 1}) SELECT g FROM s)`;
  const sql = `INSERT INTO users (id, created_at) VALUES ('bench-user', 0);\n${seedSql(`lower(printf('%x', g))`, series)};\nANALYZE;`;
  execFileSync('sqlite3', [file], { input: sql });
}

/** Reads per second over DURATION s with CONNECTIONS in flight. */
async function readsPerSecond(store: Store, seed: number): Promise<number> {
  const next = xorshift(seed);
  const end = performance.now() + DURATION * 1000;
  let reads = 0;
  const reader = async () => {
    while (performance.now() < end) {
      const hash = fileHash((next() >>> 0) % STORED);
      const found = await store.signatures.findByFileHash(hash);
      if (found.length !== 1) throw new Error(`${hash}: ${found.length} records`);
      verifyAnswer(found);
      reads += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, reader));
  return reads / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-verify-read-'));
  const postgres = await startPostgres();
  try {
    const file = join(dir, 'provenant.db');
    await (await openSqliteStore(file)).close(); // migrated, then seeded behind its back
    seedSqlite(file);
    const sqlite = await openSqliteStore(file);
    const onPg = await openPostgresStore(postgres.url);
    await seedPostgres(postgres.url);
    // statements per read: every query pg's pooled clients send
    let statements = 0;
    const count = (target: { query: (...args: any[]) => unknown }) => {
      const query = target.query;
      target.query = function (this: unknown, ...args: any[]) {
        statements += 1;
        return query.apply(this, args);
      };
    };
    count(pg.Client.prototype);
    const before = statements;
    for (let i = 0; i < 100; i++) await onPg.signatures.findByFileHash(fileHash(i * 7));
    console.log(`verify read: ${STORED} records, ${CONNECTIONS} in flight, ${ROUNDS} alternating rounds of ${DURATION} s; PostgreSQL statements per read: ${(statements - before) / 100}`);
    const results: Record<string, number[]> = { sqlite: [], postgres: [] };
    for (let round = 0; round < ROUNDS; round++) {
      results.sqlite.push(await readsPerSecond(sqlite, round + 1));
      results.postgres.push(await readsPerSecond(onPg, round + 1));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    for (const [engine, rs] of Object.entries(results)) console.log(`${engine.padEnd(10)} median ${median(rs).toFixed(0)} reads/s (rounds ${rs.map((r) => r.toFixed(0)).join(' ')})`);
    await sqlite.close();
    await onPg.close();
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
