// What the transparency log needs of the store: its table module (store/log.ts) holds the
// interface; the entries themselves are appended by the store in the transaction of their
// event, under the change feed's lock.
import type { Checkpointer } from './checkpointer.js';
import type { LogIdentity } from './log-key.js';
import type { TransparencyLogStore } from '../store/index.js';

export type { StoredCheckpoint, TransparencyLogStore } from '../store/index.js';

/** The log as the server's routes see it. */
export interface TransparencyLog {
  store: TransparencyLogStore;
  identity: LogIdentity;
  checkpointer: Checkpointer;
}
