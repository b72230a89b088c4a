// The contact relay's queue on SQLite (spec 4.13): claimed with a lease, so a request is
// worked on by one drainer at a time and picked up again after a crash.
import type { ContactStore } from '../types.js';
import { toRequest, type ContactRow } from '../rows/contacts.js';
import type { Db } from './db.js';

export function createSqliteContactStore(db: Db): ContactStore {
  return {
    async enqueue(r) {
      await db.run(
        `INSERT INTO contact_queue (signer_agent_key, file_hash, sender_name, sender_email, message, purpose, created_at, due_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [r.signerAgentKey, r.fileHash, r.senderName, r.senderEmail, r.message, r.purpose, r.createdAt, r.createdAt],
      );
    },

    claimDue(now, leaseUntil, limit) {
      return db.transaction(async (tx) => {
        const rows = await tx.all<ContactRow>('SELECT * FROM contact_queue WHERE due_at <= ? ORDER BY due_at, id LIMIT ?', [now, limit]);
        for (const row of rows) await tx.run('UPDATE contact_queue SET due_at = ? WHERE id = ?', [leaseUntil, row.id]);
        return rows.map(toRequest);
      });
    },

    async complete(id) {
      await db.run('DELETE FROM contact_queue WHERE id = ?', [id]);
    },

    async retryLater(id, retryAt, error) {
      await db.run('UPDATE contact_queue SET attempts = attempts + 1, due_at = ?, last_error = ? WHERE id = ?', [retryAt, error, id]);
    },

    async pending() {
      const row = await db.get<{ n: number }>('SELECT count(*) AS n FROM contact_queue');
      return row?.n ?? 0;
    },
  };
}
