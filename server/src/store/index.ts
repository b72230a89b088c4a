// The store: everything the server and the admin CLI persist, behind one narrow
// interface. Routes and services see `Store`, never SQL or the Db; a PostgreSQL
// store would implement the same interfaces (docs/server.md, "the store seam").
import type { Db } from './db.js';
import { createSqliteAccountsStore, type AccountsStore } from './accounts.js';
import { createSqliteSignaturesStore, type SignaturesStore } from './signatures.js';

export interface Store {
  accounts: AccountsStore;
  signatures: SignaturesStore;
}

export function createSqliteStore(db: Db): Store {
  return {
    accounts: createSqliteAccountsStore(db),
    signatures: createSqliteSignaturesStore(db),
  };
}

export type { AccountsStore } from './accounts.js';
export type { SignaturesStore } from './signatures.js';
