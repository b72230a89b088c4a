// The store as routes and services see it (decisions.md 2, 5, 6, 8): one interface per
// table module, everything the server and the admin CLI persist, as plain objects (ids
// are UUID strings, times Unix ms). Each table module (accounts.ts, signatures.ts,
// contacts.ts, email-verifications.ts, webhooks.ts, oauth.ts, feed.ts, manifests.ts) holds its
// interface, its values, its rows and its queries, written once over ./sql.ts; an
// engine (SQLite in ./sqlite/, PostgreSQL in ./postgres/) supplies the connections and
// the dialect, and test/store/contract.ts holds every engine to the same behaviour.
//
// The rule for concurrent writes, for every engine: each method is one transaction, all
// or nothing; quota checks and charges for one user or organisation are serialised
// inside the writing transaction (SQLite: its single writer; PostgreSQL: advisory locks
// on the user's and the organisation's quota, taken before counting), so concurrent
// signs never overshoot a limit; read-then-write methods (revocation, challenge
// consumption, agent linking) decide on what they read in that transaction.
//
// To add a table: its module here (interface, values, rows, `create<Area>Store(db[, feed])`
// using db.get/all/run for reads and db.transaction, or feed.write when the write
// changes verification answers, for every write), a field on Store and in tableStores();
// a migration for each engine (sqlite/migrations, postgres/migrations; unique
// constraints named in each engine's UNIQUE_WHAT); its cases in test/store/contract.ts.
import { createAccountsStore, type AccountsStore } from './accounts.js';
import { createContactStore, type ContactStore } from './contacts.js';
import { createEmailVerificationStore, type EmailVerificationStore } from './email-verifications.js';
import type { ChangeFeed, Feed } from './feed.js';
import { createOAuthStore, type OAuthStore } from './oauth.js';
import { createSignaturesStore, type SignaturesStore } from './signatures.js';
import { createLogStore, type TransparencyLogStore } from './log.js';
import { createManifestsStore, type ManifestsStore } from './manifests.js';
import type { Db } from './sql.js';
import { createWebhooksStore, type WebhooksStore } from './webhooks.js';

export interface Store {
  /** Which engine holds the data (for /healthz). */
  readonly engine: 'sqlite' | 'postgres';
  accounts: AccountsStore;
  signatures: SignaturesStore;
  contacts: ContactStore;
  emailVerifications: EmailVerificationStore;
  webhooks: WebhooksStore;
  oauth: OAuthStore;
  feed: ChangeFeed;
  /** The transparency log's entries, tiles and checkpoint (issue 27). */
  log: TransparencyLogStore;
  /** The manifest repository's C2PA manifest stores (issue 33). */
  manifests: ManifestsStore;
  /**
   * Records `fingerprint` (of the node's secrets; never the secrets) unless one is
   * recorded already, and returns the recorded one: nodes sharing a database compare it
   * with their own at start. SQLite keeps its secrets beside its one file and records
   * nothing: it returns `fingerprint`.
   */
  recordSecretsFingerprint(fingerprint: string): Promise<string>;
  /**
   * Cheap liveness check of the engine (for /healthz): throws when it cannot answer;
   * `degraded` says what works less well meanwhile (PostgreSQL: other nodes' changes are
   * not heard of until the notification connection is back).
   */
  ping(): Promise<{ degraded?: string }>;
  /** Waits for queued writes, then closes. */
  close(): Promise<void>;
}

/** How a store is opened beyond its engine. */
export interface StoreOptions {
  /**
   * false: events append no transparency-log entry (benches measure the log's cost
   * against this). Programmatic only, never an operator's setting: a database written
   * without its entries would have events missing from its log for good.
   */
  transparencyLog?: boolean;
}

/** Every table's store over an engine's connections and its change feed. */
export function tableStores(db: Db, feed: Feed, options: StoreOptions = {}): Pick<Store, 'accounts' | 'signatures' | 'contacts' | 'emailVerifications' | 'webhooks' | 'oauth' | 'feed' | 'log' | 'manifests'> {
  return {
    accounts: createAccountsStore(db, feed),
    signatures: createSignaturesStore(db, feed, { transparencyLog: options.transparencyLog ?? true }),
    contacts: createContactStore(db),
    emailVerifications: createEmailVerificationStore(db),
    webhooks: createWebhooksStore(db),
    oauth: createOAuthStore(db),
    log: createLogStore(db, feed),
    manifests: createManifestsStore(db),
    feed,
  };
}
