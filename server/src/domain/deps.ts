// What the domain works with: the store, and the server's keys (secrets.ts), which seal
// server-hosted cell keys and sign session tokens. The server's deps are one; the
// admin CLI opens the store alone and is another. Domain modules know no HTTP: they
// take typed inputs, write through the store and throw DomainError (../errors.ts).
import type { Secrets } from '../secrets.js';
import type { Store } from '../store/index.js';

export interface DomainDeps {
  store: Store;
  /** The server's keys: jwt.key signs session tokens, cell.key seals cell keys and webhook secrets. */
  secrets: Secrets;
}

/** Who acts: the user, and the app whose token they act through (spec 6: an app's REST calls fire its webhooks). */
export interface Caller {
  userId: string;
  appId: string | null;
}
