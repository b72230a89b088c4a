// Child process for test/store/sqlite/engine.test.ts: opens the database file given in
// argv[2], makes argv[3] records for the user argv[4] with a fresh key, and stores them
// in one insertSignatures transaction. Prints "in-transaction" once the transaction
// has begun and "committed" after it commits, then waits to be killed.
import { randomBytes } from 'node:crypto';
import { openSqliteStore, type NewSignature } from '../../../server/src/store/index.js';
import { agentKeyFromPublicKey, generateSigningKey } from '../../../src/lib/identity.js';
import type { SignatureRecord } from '../../../src/lib/records.js';

const [file, countText, userId] = process.argv.slice(2);
const store = (await openSqliteStore(file)).signatures;
const key = generateSigningKey();
const signer = agentKeyFromPublicKey(key.publicKey);
const rows: NewSignature[] = [];
for (let i = 0; i < Number(countText); i++) {
  const record: SignatureRecord = {
    file_hash: randomBytes(32).toString('hex'), signer, signed_at: Date.now(), intent: 'Authorship',
    ai_generation: null, content_rights: null, integrity_report: null, perceptual_hash: null,
    comment: null, supersedes: null, expires_at: null, tags: null,
  };
  // The store does not verify signatures; random ones keep the setup fast.
  rows.push({ record, signature: randomBytes(64).toString('base64'), action_hash: randomBytes(32).toString('hex'), userId, appId: null, source: 'vault' });
}
process.stdout.write(`signer ${signer}\n`);
await store.insertSignatures(rows, {
  userId, orgId: null, periodStart: 0, periodEnd: Number.MAX_SAFE_INTEGER,
  decide(_usage, requested) {
    process.stdout.write('in-transaction\n');
    return { quota: 'personal', orgId: null, overage: new Array(requested).fill(false) };
  },
});
process.stdout.write('committed\n');
setInterval(() => undefined, 1000);
