// The signatures store on PostgreSQL (decisions.md 2, 6, 8): records, revocations,
// thumbnails and the event outbox. Same behaviour as ../sqlite/signatures.ts.
//
// Quotas across nodes: insertSignatures takes transaction-level advisory locks on the
// user's and the organisation's quota (LOCKS.userQuota/orgQuota, keyed by hashtext of
// the id; always user first, then org, so two charges never wait on each other in a
// cycle) before it counts the period's usage, and holds them to its commit. Under READ
// COMMITTED a charge that waited for the lock then counts what the previous holder
// committed, so concurrent signs on any number of nodes never overshoot a limit.
// Charges of other users and organisations count in parallel; the inserts then take
// the feed lock (feed.ts), which keeps record seqs in commit order as well.
import canonicalize from 'canonicalize';
import type { SignatureRecord } from 'provenant';
import { reducedJson } from '../reduced.js';
import type { OutboxEvent, QuotaUsage, SignaturesStore } from '../types.js';
import { fromRow, type SignatureRow } from '../rows/signatures.js';
import { LOCKS, prepared, type PgDb, type Queryable } from './db.js';
import type { PgChangeFeed } from './feed.js';

const SELECT = `
  SELECT s.seq, s.action_hash, s.record, s.signature, s.user_id, s.app_id, s.source, s.published_at,
         s.pool, s.org_id, s.overage,
         r.reason AS r_reason, r.revoked_at AS r_revoked_at, r.signer AS r_signer, r.signature AS r_signature,
         t.data AS thumbnail,
         u.display_name AS p_display_name, u.username AS p_username, u.profile_picture AS p_profile_picture,
         u.public_fields AS p_public_fields
  FROM signatures s
  LEFT JOIN revocations r ON r.action_hash = s.action_hash
  LEFT JOIN thumbnails t ON t.action_hash = s.action_hash
  LEFT JOIN agents a ON a.agent_key = s.signer
  LEFT JOIN users u ON u.id = COALESCE(a.user_id, s.user_id)`;

/** The hot reads (GET /verify, the embedded record, verify-fuzzy's rows), prepared on each connection (db.ts prepared()). */
const BY_ACTION_HASH = prepared(`${SELECT} WHERE s.action_hash = $1`);
const BY_FILE_HASH = prepared(`${SELECT} WHERE s.file_hash = $1 ORDER BY s.signed_at, s.seq`);
const REDUCED_BY_SEQS = prepared('SELECT seq, signed_at, reduced AS json FROM signature_reduced WHERE seq = ANY($1::bigint[])');

async function countUsageOn(q: Queryable, userId: string, orgId: string | null, start: number, end: number): Promise<QuotaUsage> {
  const personal = await q.get<{ n: number }>(
    `SELECT count(*) AS n FROM signatures WHERE pool = 'personal' AND user_id = $1 AND published_at >= $2 AND published_at < $3`,
    [userId, start, end],
  );
  if (orgId === null) return { personalUsed: personal?.n ?? 0, orgUsed: null, orgOverage: null };
  const org = await q.get<{ n: number; overage: number }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE overage) AS overage FROM signatures
     WHERE pool = 'org' AND org_id = $1 AND published_at >= $2 AND published_at < $3`,
    [orgId, start, end],
  );
  return { personalUsed: personal?.n ?? 0, orgUsed: org?.n ?? 0, orgOverage: org?.overage ?? 0 };
}

/**
 * Every record of a batch in one statement, its columns as arrays (unnest keeps them in
 * step; WITH ORDINALITY ... ORDER BY inserts them in the batch's order).
 */
const INSERT_SIGNATURES = `INSERT INTO signatures
  (action_hash, file_hash, signer, signed_at, intent, supersedes, has_fingerprint, perceptual_hash, record, signature,
   user_id, app_id, source, overage, published_at, pool, org_id)
  SELECT action_hash, file_hash, signer, signed_at, intent, supersedes, has_fingerprint, perceptual_hash, record, signature,
         user_id, app_id, source, overage, $15, $16, $17
  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::boolean[], $8::text[], $9::text[],
              $10::text[], $11::text[], $12::text[], $13::text[], $14::boolean[])
       WITH ORDINALITY AS batch (action_hash, file_hash, signer, signed_at, intent, supersedes, has_fingerprint, perceptual_hash,
                                record, signature, user_id, app_id, source, overage, n)
  ORDER BY n
  RETURNING seq, action_hash`;

export async function insertEvents(q: Queryable, events: readonly OutboxEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  await q.run(
    `INSERT INTO event_outbox (app_id, type, payload, created_at)
     SELECT app_id, type, payload, $4 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS e (app_id, type, payload, n) ORDER BY n`,
    [events.map((e) => e.appId), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload)), now],
  );
}

export function createPgSignaturesStore(db: PgDb, feed: PgChangeFeed): SignaturesStore {
  return {
    async insertSignatures(rows, charge, events = []) {
      const publishedAt = Date.now();
      return feed.write(async (tx, changes) => {
        await tx.run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCKS.userQuota, charge.userId]);
        if (charge.orgId !== null) await tx.run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCKS.orgQuota, charge.orgId]);
        const usage = await countUsageOn(tx, charge.userId, charge.orgId, charge.periodStart, charge.periodEnd);
        const d = charge.decide(usage, rows.length);
        await changes.serialise();
        if (rows.length > 0) {
          const texts = rows.map((s) => {
            const text = canonicalize(s.record);
            if (text === undefined) throw new TypeError('record is not JSON');
            return text;
          });
          const inserted = await tx.all<{ seq: number; action_hash: string }>(INSERT_SIGNATURES, [
            rows.map((s) => s.action_hash),
            rows.map((s) => s.record.file_hash),
            rows.map((s) => s.record.signer),
            rows.map((s) => s.record.signed_at),
            rows.map((s) => s.record.intent),
            rows.map((s) => s.record.supersedes),
            rows.map((s) => s.record.perceptual_hash !== null),
            rows.map((s) => (s.record.perceptual_hash === null ? null : (canonicalize(s.record.perceptual_hash) ?? null))),
            texts,
            rows.map((s) => s.signature),
            rows.map((s) => s.userId),
            rows.map((s) => s.appId),
            rows.map((s) => s.source),
            rows.map((_, i) => d.overage[i] === true),
            publishedAt,
            d.quota,
            d.quota === 'org' ? d.orgId : null,
          ]);
          const seqOf = new Map(inserted.map((r) => [r.action_hash, r.seq]));
          const seqs = inserted.map((r) => r.seq).sort((a, b) => a - b);
          const reduced = rows.flatMap((s) =>
            s.record.perceptual_hash === null ? [] : [{ seq: seqOf.get(s.action_hash)!, signedAt: s.record.signed_at, json: reducedJson(s.record) }],
          );
          if (reduced.length > 0) {
            await tx.run('INSERT INTO signature_reduced (seq, signed_at, reduced) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[])', [
              reduced.map((r) => r.seq),
              reduced.map((r) => r.signedAt),
              reduced.map((r) => r.json),
            ]);
          }
          await changes.appendStored(seqs[0], seqs[seqs.length - 1], publishedAt);
        }
        await insertEvents(tx, events, publishedAt);
        return d;
      }, { missing: 'user', serialiseLater: true });
    },

    countUsage(userId, orgId, start, end) {
      return countUsageOn(db, userId, orgId, start, end);
    },

    async get(actionHash) {
      const row = await db.get<SignatureRow>(BY_ACTION_HASH, [actionHash]);
      return row === undefined ? undefined : fromRow(row);
    },

    async findByFileHash(fileHash) {
      return (await db.all<SignatureRow>(BY_FILE_HASH, [fileHash])).map(fromRow);
    },

    async findBySigners(agentKeys) {
      if (agentKeys.length === 0) return [];
      return (await db.all<SignatureRow>(`${SELECT} WHERE s.signer = ANY($1::text[]) ORDER BY s.signed_at, s.seq`, [[...agentKeys]])).map(fromRow);
    },

    async findForUser(userId) {
      const rows = await db.all<SignatureRow>(
        `${SELECT} WHERE s.user_id = $1 OR s.signer IN (SELECT agent_key FROM agents WHERE user_id = $1)
         ORDER BY s.signed_at DESC, s.seq DESC`,
        [userId],
      );
      return rows.map(fromRow);
    },

    async insertRevocation(rev, events = []) {
      const now = Date.now();
      // under the feed lock: of two revocations of one record, the second sees the first
      return feed.write(async (tx, changes) => {
        const found = await tx.get<{ file_hash: string; revoked: number | null }>(
          `SELECT s.file_hash, r.revoked_at AS revoked FROM signatures s
           LEFT JOIN revocations r ON r.action_hash = s.action_hash WHERE s.action_hash = $1`,
          [rev.action_hash],
        );
        if (found === undefined) return 'unknown';
        if (found.revoked !== null) return 'already_revoked';
        await tx.run(
          `INSERT INTO revocations (action_hash, signer, reason, revoked_at, signature, source, app_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [rev.action_hash, rev.signer, rev.reason, rev.revoked_at, rev.signature, rev.source, rev.appId, now],
        );
        await insertEvents(tx, events, now);
        await changes.append({ kind: 'revoked', file_hash: found.file_hash, action_hash: rev.action_hash, at: now });
        return 'revoked';
      });
    },

    async setThumbnail(actionHash, dataUri, now) {
      return feed.write(async (tx, changes) => {
        const found = await tx.get<{ file_hash: string }>('SELECT file_hash FROM signatures WHERE action_hash = $1', [actionHash]);
        if (found === undefined) return false;
        await tx.run(
          `INSERT INTO thumbnails (action_hash, data, set_at) VALUES ($1, $2, $3)
           ON CONFLICT (action_hash) DO UPDATE SET data = excluded.data, set_at = excluded.set_at`,
          [actionHash, dataUri, now],
        );
        await changes.append({ kind: 'thumbnail', file_hash: found.file_hash, action_hash: actionHash, at: now });
        return true;
      });
    },

    async reducedBySeqs(seqs) {
      if (seqs.length === 0) return [];
      return db.all<{ seq: number; signed_at: number; json: string }>(REDUCED_BY_SEQS, [[...seqs]]);
    },

    async listPerceptualHashes(afterSeq, upToSeq) {
      // the hash's JSON text was written beside the record: no record is parsed here
      const rows = await db.all<{ seq: number; signed_at: number; perceptual_hash: string | null }>(
        `SELECT seq, signed_at, perceptual_hash FROM signatures WHERE has_fingerprint AND seq > $1 AND seq <= $2 ORDER BY seq`,
        [afterSeq, upToSeq],
      );
      return rows.map((r) => ({ seq: r.seq, signed_at: r.signed_at, perceptual_hash_json: r.perceptual_hash }));
    },

    async lastSeq() {
      const row = await db.get<{ last: number | null }>('SELECT max(seq) AS last FROM signatures');
      return row?.last ?? 0;
    },

    async listFingerprinted(afterSeq, limit) {
      const rows = await db.all<{ seq: number; action_hash: string; record: string; revoked: number | null }>(
        `SELECT s.seq, s.action_hash, s.record, r.revoked_at AS revoked FROM signatures s
         LEFT JOIN revocations r ON r.action_hash = s.action_hash
         WHERE s.has_fingerprint AND s.seq > $1 ORDER BY s.seq LIMIT $2`,
        [afterSeq, limit],
      );
      return rows.map((r) => ({ seq: r.seq, action_hash: r.action_hash, record: JSON.parse(r.record) as SignatureRecord, revoked: r.revoked !== null }));
    },

    async pendingEvents(limit) {
      const rows = await db.all<{ id: number; app_id: string; type: string; payload: string; created_at: number }>(
        'SELECT id, app_id, type, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT $1',
        [limit],
      );
      return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as Record<string, unknown> }));
    },

    async markEventDispatched(id, now) {
      await db.run('UPDATE event_outbox SET dispatched_at = $1 WHERE id = $2 AND dispatched_at IS NULL', [now, id]);
    },
  };
}
