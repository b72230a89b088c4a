// The store contract (test/store/contract.ts) on the PostgreSQL engine: one throwaway
// PostgreSQL for the file, a fresh database per suite. Skipped (and why) without the
// PostgreSQL binaries; a failure under CI=true.
import { openPostgresStore } from '../../server/src/store/postgres/index.js';
import { storeContract } from './contract.js';
import { runWithPostgres, sharedPostgres } from '../helpers/postgres.js';

runWithPostgres(() =>
  storeContract('postgres', async () => {
    const url = await (await sharedPostgres()).createDatabase();
    return { store: await openPostgresStore(url), cleanup: async () => undefined };
  }),
);
