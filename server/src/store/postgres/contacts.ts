// The contact relay's queue on PostgreSQL (spec 4.13), as ../sqlite/contacts.ts: claimed
// with a lease, so that a request is worked on by one drainer at a time, whichever node
// it runs on (FOR UPDATE SKIP LOCKED: a second claim passes over rows being claimed),
// and picked up again after a crash.
import type { ContactStore } from '../types.js';
import { toRequest, type ContactRow } from '../rows/contacts.js';
import type { PgDb } from './db.js';

export function createPgContactStore(db: PgDb): ContactStore {
  return {
    async enqueue(r) {
      await db.run(
        `INSERT INTO contact_queue (signer_agent_key, file_hash, sender_name, sender_email, message, purpose, created_at, due_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
        [r.signerAgentKey, r.fileHash, r.senderName, r.senderEmail, r.message, r.purpose, r.createdAt],
      );
    },

    async claimDue(now, leaseUntil, limit) {
      const rows = await db.all<ContactRow & { was_due: number }>(
        `WITH due AS (
           SELECT id, due_at FROM contact_queue WHERE due_at <= $1 ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED
         )
         UPDATE contact_queue c SET due_at = $2 FROM due WHERE c.id = due.id
         RETURNING c.*, due.due_at AS was_due`,
        [now, leaseUntil, limit],
      );
      // RETURNING keeps no order: oldest due first, as claimed
      return rows.sort((a, b) => a.was_due - b.was_due || a.id - b.id).map(toRequest);
    },

    async complete(id) {
      await db.run('DELETE FROM contact_queue WHERE id = $1', [id]);
    },

    async retryLater(id, retryAt, error) {
      await db.run('UPDATE contact_queue SET attempts = attempts + 1, due_at = $1, last_error = $2 WHERE id = $3', [retryAt, error, id]);
    },

    async pending() {
      const row = await db.get<{ n: number }>('SELECT count(*) AS n FROM contact_queue');
      return row?.n ?? 0;
    },
  };
}
