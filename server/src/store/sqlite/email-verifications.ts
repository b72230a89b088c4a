// E-mail verification links on SQLite: a use reads and writes in one transaction on the
// single writer, so of concurrent uses of one link exactly one verifies.
import type { EmailVerificationStore } from '../types.js';
import type { VerificationRow } from '../rows/email-verifications.js';
import type { Db } from './db.js';

export function createSqliteEmailVerificationStore(db: Db): EmailVerificationStore {
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
        const row = await tx.get<VerificationRow>(
          `SELECT v.user_id, v.email, v.expires_at, v.used_at, u.email AS current_email
           FROM email_verifications v LEFT JOIN users u ON u.id = v.user_id WHERE v.hash = ?`,
          [hash],
        );
        if (!row) return { outcome: 'unknown' };
        if (row.used_at !== null) return { outcome: 'used' };
        if (row.expires_at <= now) return { outcome: 'expired' };
        if (row.current_email === null || row.current_email.toLowerCase() !== row.email) return { outcome: 'stale' };
        await tx.run('UPDATE email_verifications SET used_at = ? WHERE hash = ?', [now, hash]);
        await tx.run('UPDATE users SET email_verified = 1 WHERE id = ?', [row.user_id]);
        return { outcome: 'verified', userId: row.user_id, email: row.email };
      });
    },
  };
}
