// E-mail address verification links: only a link's token hash is stored, bound to the
// address it was sent to. A use reads and writes in one transaction under the link's
// row lock (SQLite: its one writer), so of concurrent uses of one link, on any node,
// exactly one verifies. The interface, its values and the queries, written once for
// every engine (./sql.ts).
import type { Db } from './sql.js';

/** A verification link as stored: only its token's SHA-256 (hex), bound to the address it was sent to. */
export interface NewEmailVerification {
  hash: string;
  userId: string;
  /** The address the link was sent to (lowercase, as the user row holds it). */
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** How using a verification link ended (consume). */
export type EmailVerificationOutcome =
  /** The address is verified now (the link is used up). */
  | { outcome: 'verified'; userId: string; email: string }
  /** No link with this hash (never sent, mistyped, or purged long after it expired). */
  | { outcome: 'unknown' }
  | { outcome: 'used' }
  | { outcome: 'expired' }
  /** The account's address is no longer the one the link was sent to (or the account is gone). */
  | { outcome: 'stale' };

export interface EmailVerificationStore {
  /**
   * Stores a link and drops the user's links that expired before `purgeBefore`, in one
   * transaction (a used or expired link is kept a while so that it is told apart from an
   * unknown one). StoreNotFoundError 'user'.
   */
  create(verification: NewEmailVerification, purgeBefore: number): Promise<void>;
  /**
   * Uses a link up in one transaction: unknown, used, expired (at `now`), stale; or
   * marks it used and the user's address verified. Of concurrent uses exactly one verifies.
   */
  consume(hash: string, now: number): Promise<EmailVerificationOutcome>;
}
export function createEmailVerificationStore(db: Db): EmailVerificationStore {
  const d = db.dialect;
  return {
    create(v, purgeBefore) {
      return db.transaction(async (tx) => {
        await tx.run('DELETE FROM email_verifications WHERE user_id = ? AND expires_at < ?', [v.userId, purgeBefore]);
        await tx.run('INSERT INTO email_verifications (hash, user_id, email, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', [
          v.hash, v.userId, v.email, v.createdAt, v.expiresAt,
        ]);
      }, 'user');
    },

    consume(hash, now) {
      return db.transaction(async (tx) => {
        const row = await tx.get<{ user_id: string; email: string; expires_at: number; used_at: number | null; current_email: string | null }>(
          `SELECT v.user_id, v.email, v.expires_at, v.used_at, u.email AS current_email
           FROM email_verifications v LEFT JOIN users u ON u.id = v.user_id WHERE v.hash = ? ${d.lock('update', { of: 'v' })}`,
          [hash],
        );
        if (!row) return { outcome: 'unknown' };
        if (row.used_at !== null) return { outcome: 'used' };
        if (row.expires_at <= now) return { outcome: 'expired' };
        if (row.current_email === null || row.current_email.toLowerCase() !== row.email) return { outcome: 'stale' };
        await tx.run('UPDATE email_verifications SET used_at = ? WHERE hash = ?', [now, hash]);
        await tx.run(`UPDATE users SET email_verified = ${d.true} WHERE id = ?`, [row.user_id]);
        return { outcome: 'verified', userId: row.user_id, email: row.email };
      });
    },
  };
}
