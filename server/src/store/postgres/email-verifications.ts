// E-mail verification links on PostgreSQL, as ../sqlite/email-verifications.ts: a use
// locks the link's row (FOR UPDATE) before deciding, so of concurrent uses of one link,
// on any node, exactly one verifies.
import type { EmailVerificationStore } from '../types.js';
import type { VerificationRow } from '../rows/email-verifications.js';
import type { PgDb } from './db.js';

export function createPgEmailVerificationStore(db: PgDb): EmailVerificationStore {
  return {
    create(v, purgeBefore) {
      return db.transaction(async (tx) => {
        await tx.run('DELETE FROM email_verifications WHERE user_id = $1 AND expires_at < $2', [v.userId, purgeBefore]);
        await tx.run('INSERT INTO email_verifications (hash, user_id, email, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
          v.hash, v.userId, v.email, v.createdAt, v.expiresAt,
        ]);
      }, 'user');
    },

    consume(hash, now) {
      return db.transaction(async (tx) => {
        const row = await tx.get<VerificationRow>(
          `SELECT v.user_id, v.email, v.expires_at, v.used_at, u.email AS current_email
           FROM email_verifications v LEFT JOIN users u ON u.id = v.user_id WHERE v.hash = $1 FOR UPDATE OF v`,
          [hash],
        );
        if (!row) return { outcome: 'unknown' };
        if (row.used_at !== null) return { outcome: 'used' };
        if (row.expires_at <= now) return { outcome: 'expired' };
        if (row.current_email === null || row.current_email.toLowerCase() !== row.email) return { outcome: 'stale' };
        await tx.run('UPDATE email_verifications SET used_at = $1 WHERE hash = $2', [now, hash]);
        await tx.run('UPDATE users SET email_verified = true WHERE id = $1', [row.user_id]);
        return { outcome: 'verified', userId: row.user_id, email: row.email };
      });
    },
  };
}
