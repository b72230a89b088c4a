// The store contract (test/store/contract.ts) on the SQLite engine, a fresh database
// file per suite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../server/src/store/index.js';
import { storeContract } from './contract.js';

storeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-store-'));
  return { store: await openSqliteStore(join(dir, 'provenant.db')), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
