// The contact relay's queue (spec 4.13): claimed with a lease, so that a request is
// worked on by one drainer at a time, whichever node it runs on (a claim passes over
// rows another is claiming: FOR UPDATE SKIP LOCKED; SQLite's one writer serialises
// claims anyway), and picked up again after a crash. The interface, its values, the
// row and the queries, written once for every engine (./sql.ts).
import type { Db } from './sql.js';

/**
 * A request to the blind contact relay (spec 4.13), queued as received (fields already
 * checked and made header-safe); who the signer is, whether they opted in and their
 * address are decided when the queue is drained, never on the request path.
 */
export interface NewContactRequest {
  /** Canonical `uhCAk...` agent key. */
  signerAgentKey: string;
  /** Lowercase hex; null for a profile contact. */
  fileHash: string | null;
  senderName: string;
  senderEmail: string;
  message: string;
  purpose: 'licensing' | 'ai_training' | 'collaboration' | 'other';
  createdAt: number;
}

export interface QueuedContactRequest extends NewContactRequest {
  id: number;
  /** Delivery attempts that failed so far. */
  attempts: number;
}

export interface ContactStore {
  /** Queues a request durably (committed when this resolves). */
  enqueue(request: NewContactRequest): Promise<void>;
  /**
   * Up to `limit` requests due at `now` (oldest first), each leased until `leaseUntil`:
   * a second claim before then does not return it, so two drainers never work on the
   * same request; a lease that runs out (a crashed drainer) makes it due again.
   */
  claimDue(now: number, leaseUntil: number, limit: number): Promise<QueuedContactRequest[]>;
  /** Removes a request that was delivered or dropped (the relay keeps no copy). */
  complete(id: number): Promise<void>;
  /** Counts a failed attempt and makes the request due again at `retryAt`. */
  retryLater(id: number, retryAt: number, error: string): Promise<void>;
  /** Requests waiting (for /healthz). */
  pending(): Promise<number>;
}
interface ContactRow {
  id: number;
  signer_agent_key: string;
  file_hash: string | null;
  sender_name: string;
  sender_email: string;
  message: string;
  purpose: NewContactRequest['purpose'];
  created_at: number;
  attempts: number;
}

const toRequest = (r: ContactRow): QueuedContactRequest => ({
  id: r.id,
  signerAgentKey: r.signer_agent_key,
  fileHash: r.file_hash,
  senderName: r.sender_name,
  senderEmail: r.sender_email,
  message: r.message,
  purpose: r.purpose,
  createdAt: r.created_at,
  attempts: r.attempts,
});

export function createContactStore(db: Db): ContactStore {
  const d = db.dialect;
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
        const rows = await tx.all<ContactRow>(
          `SELECT * FROM contact_queue WHERE due_at <= ? ORDER BY due_at, id LIMIT ? ${d.lock('update', { skipLocked: true })}`,
          [now, limit],
        );
        if (rows.length > 0) await tx.run(`UPDATE contact_queue SET due_at = ? WHERE ${d.inList('id', 'bigint')}`, [leaseUntil, d.list(rows.map((r) => r.id))]);
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
