// A quota charge that admits every write, on the personal quota: for tests and benches
// that store records through the store directly (insertSignatures), past the routes'
// quota rules.
import type { Charge } from '../../server/src/store/index.js';

export function unlimitedCharge(userId: string): Charge {
  return {
    userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
    decide: (_usage, n) => ({ quota: 'personal', orgId: null, overage: new Array<boolean>(n).fill(false) }),
  };
}
