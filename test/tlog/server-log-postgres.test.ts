// server-log.test.ts and server-witness.test.ts again, unchanged, against a node on PostgreSQL (imported with
// ?engine=postgres). Skipped (and why) without the PostgreSQL binaries; a failure under CI=true.
import { postgresUnavailable, runWithPostgres } from '../helpers/postgres.js';

const SUITES = ['./server-log.test.ts', './server-witness.test.ts'];
if (postgresUnavailable() === null) for (const file of SUITES) await import(`${file}?engine=postgres`);
else runWithPostgres(() => undefined);
