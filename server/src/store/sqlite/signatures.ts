// The signatures store on SQLite (decisions.md 2, 6, 8): records, revocations,
// thumbnails and the event outbox.
//
// Records are immutable: a row is inserted once and never updated; revocations and
// thumbnails are rows of their own linked by action hash. Quota is counted from the
// stored rows of the period inside the same `BEGIN IMMEDIATE` transaction as the
// insert (the one writer serialises every charge), so concurrent signs never overshoot
// a limit. The store knows the counting, not the rules: the caller's `decide` callback
// turns the counts into a charge.
import canonicalize from 'canonicalize';
import type { SignatureRecord } from 'provenant';
import { reducedJson } from '../reduced.js';
import type { OutboxEvent, QuotaUsage, SignaturesStore, StoredSignature } from '../types.js';
import { fromRow, type SignatureRow } from '../rows/signatures.js';
import type { Db, Queryable } from './db.js';
import type { SqliteChangeFeed } from './feed.js';

/** A signature row as SQLite holds it: `overage` is 0 or 1. */
type SqliteSignatureRow = Omit<SignatureRow, 'overage'> & { overage: number };

const fromSqliteRow = (row: SqliteSignatureRow): StoredSignature => fromRow({ ...row, overage: row.overage === 1 });

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

async function countUsageOn(q: Queryable, userId: string, orgId: string | null, start: number, end: number): Promise<QuotaUsage> {
  const personal = await q.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM signatures WHERE pool = 'personal' AND user_id = ? AND published_at >= ? AND published_at < ?`,
    [userId, start, end],
  );
  if (orgId === null) return { personalUsed: personal?.n ?? 0, orgUsed: null, orgOverage: null };
  const org = await q.get<{ n: number; overage: number | null }>(
    `SELECT COUNT(*) AS n, SUM(overage) AS overage FROM signatures WHERE pool = 'org' AND org_id = ? AND published_at >= ? AND published_at < ?`,
    [orgId, start, end],
  );
  return { personalUsed: personal?.n ?? 0, orgUsed: org?.n ?? 0, orgOverage: org?.overage ?? 0 };
}

const INSERT_SIGNATURE = `INSERT INTO signatures
  (action_hash, file_hash, signer, signed_at, intent, supersedes, has_fingerprint, record, signature,
   user_id, app_id, source, published_at, pool, org_id, overage)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export async function insertEvents(q: Queryable, events: readonly OutboxEvent[], now: number): Promise<void> {
  for (const e of events) {
    await q.run('INSERT INTO event_outbox (app_id, type, payload, created_at) VALUES (?, ?, ?, ?)', [
      e.appId,
      e.type,
      JSON.stringify(e.payload),
      now,
    ]);
  }
}

export function createSqliteSignaturesStore(db: Db, feed: SqliteChangeFeed): SignaturesStore {
  return {
    async insertSignatures(rows, charge, events = []) {
      const publishedAt = Date.now();
      return feed.write(async (tx, changes) => {
        const usage = await countUsageOn(tx, charge.userId, charge.orgId, charge.periodStart, charge.periodEnd);
        const d = charge.decide(usage, rows.length);
        const seqs: number[] = [];
        const reduced: [seq: number, signedAt: number, json: string][] = [];
        for (let i = 0; i < rows.length; i++) {
          const s = rows[i];
          const text = canonicalize(s.record);
          if (text === undefined) throw new TypeError('record is not JSON');
          const { lastID } = await tx.run(INSERT_SIGNATURE, [
            s.action_hash,
            s.record.file_hash,
            s.record.signer,
            s.record.signed_at,
            s.record.intent,
            s.record.supersedes,
            s.record.perceptual_hash === null ? 0 : 1,
            text,
            s.signature,
            s.userId,
            s.appId,
            s.source,
            publishedAt,
            d.quota,
            d.quota === 'org' ? d.orgId : null,
            d.overage[i] ? 1 : 0,
          ]);
          seqs.push(lastID);
          if (s.record.perceptual_hash !== null) reduced.push([lastID, s.record.signed_at, reducedJson(s.record)]);
        }
        // one statement for the batch's reduced rows, handed over as one JSON array: a
        // statement per record halved the rate of batch inserts
        if (reduced.length > 0) {
          await tx.run(
            `INSERT INTO signature_reduced (seq, signed_at, reduced)
             SELECT value->>0, value->>1, value->>2 FROM json_each(?)`,
            [JSON.stringify(reduced)],
          );
        }
        if (seqs.length > 0) await changes.appendStored(seqs[0], seqs[seqs.length - 1], publishedAt);
        await insertEvents(tx, events, publishedAt);
        return d;
      }, 'user');
    },

    countUsage(userId, orgId, start, end) {
      return countUsageOn(db, userId, orgId, start, end);
    },

    async get(actionHash) {
      const row = await db.get<SqliteSignatureRow>(`${SELECT} WHERE s.action_hash = ?`, [actionHash]);
      return row === undefined ? undefined : fromSqliteRow(row);
    },

    async findByFileHash(fileHash) {
      const rows = await db.all<SqliteSignatureRow>(`${SELECT} WHERE s.file_hash = ? ORDER BY s.signed_at, s.seq`, [fileHash]);
      return rows.map(fromSqliteRow);
    },

    async findBySigners(agentKeys) {
      if (agentKeys.length === 0) return [];
      const marks = agentKeys.map(() => '?').join(', ');
      const rows = await db.all<SqliteSignatureRow>(`${SELECT} WHERE s.signer IN (${marks}) ORDER BY s.signed_at, s.seq`, [...agentKeys]);
      return rows.map(fromSqliteRow);
    },

    async findForUser(userId) {
      const rows = await db.all<SqliteSignatureRow>(
        `${SELECT} WHERE s.user_id = ? OR s.signer IN (SELECT agent_key FROM agents WHERE user_id = ?)
         ORDER BY s.signed_at DESC, s.seq DESC`,
        [userId, userId],
      );
      return rows.map(fromSqliteRow);
    },

    async insertRevocation(rev, events = []) {
      const now = Date.now();
      return feed.write(async (tx, changes) => {
        const found = await tx.get<{ file_hash: string; revoked: number | null }>(
          `SELECT s.file_hash, r.revoked_at AS revoked FROM signatures s
           LEFT JOIN revocations r ON r.action_hash = s.action_hash WHERE s.action_hash = ?`,
          [rev.action_hash],
        );
        if (found === undefined) return 'unknown';
        if (found.revoked !== null) return 'already_revoked';
        await tx.run(
          `INSERT INTO revocations (action_hash, signer, reason, revoked_at, signature, source, app_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [rev.action_hash, rev.signer, rev.reason, rev.revoked_at, rev.signature, rev.source, rev.appId, now],
        );
        await insertEvents(tx, events, now);
        await changes.append({ kind: 'revoked', file_hash: found.file_hash, action_hash: rev.action_hash, at: now });
        return 'revoked';
      });
    },

    async setThumbnail(actionHash, dataUri, now) {
      return feed.write(async (tx, changes) => {
        const found = await tx.get<{ file_hash: string }>('SELECT file_hash FROM signatures WHERE action_hash = ?', [actionHash]);
        if (found === undefined) return false;
        await tx.run(
          `INSERT INTO thumbnails (action_hash, data, set_at) VALUES (?, ?, ?)
           ON CONFLICT (action_hash) DO UPDATE SET data = excluded.data, set_at = excluded.set_at`,
          [actionHash, dataUri, now],
        );
        await changes.append({ kind: 'thumbnail', file_hash: found.file_hash, action_hash: actionHash, at: now });
        return true;
      });
    },

    async reducedBySeqs(seqs) {
      if (seqs.length === 0) return [];
      // Kept as JSON text beside the record (migration 003, reducedJson), handed over as
      // one text, a line "seq,signed_at,json" per record: turning 100 rows into JS objects
      // costs the event loop more than splitting one string. JSON text holds no raw line
      // feed (control characters are escaped). The seqs go in as one JSON array: node-sqlite3 spends ~0.5 µs of the event loop on each bound parameter,
      // and one statement text serves every count (readers keep it prepared).
      const row = await db.get<{ lines: string | null }>(
        `SELECT group_concat(seq || ',' || signed_at || ',' || reduced, char(10)) AS lines
         FROM signature_reduced WHERE seq IN (SELECT value FROM json_each(?))`,
        [JSON.stringify(seqs)],
      );
      if (!row?.lines) return [];
      return row.lines.split('\n').map((line) => {
        const a = line.indexOf(',');
        const b = line.indexOf(',', a + 1);
        return { seq: Number(line.slice(0, a)), signed_at: Number(line.slice(a + 1, b)), json: line.slice(b + 1) };
      });
    },

    async listPerceptualHashes(afterSeq, upToSeq) {
      // A record SQLite cannot read (nested over its 1,000 levels: an older version could
      // store one) gives null instead of failing the whole range, and so the index load.
      // json_valid costs nothing here: SQLite reuses its parse for the ->.
      const rows = await db.all<{ seq: number; signed_at: number; ph: string | null }>(
        `SELECT seq, signed_at, CASE WHEN json_valid(record) THEN record->'$.perceptual_hash' END AS ph FROM signatures
         WHERE has_fingerprint = 1 AND seq > ? AND seq <= ? ORDER BY seq`,
        [afterSeq, upToSeq],
      );
      return rows.map((r) => ({ seq: r.seq, signed_at: r.signed_at, perceptual_hash_json: r.ph }));
    },

    async lastSeq() {
      const row = await db.get<{ last: number | null }>('SELECT max(seq) AS last FROM signatures');
      return row?.last ?? 0;
    },

    async listFingerprinted(afterSeq, limit) {
      const rows = await db.all<{ seq: number; action_hash: string; record: string; revoked: number | null }>(
        `SELECT s.seq, s.action_hash, s.record, r.revoked_at AS revoked FROM signatures s
         LEFT JOIN revocations r ON r.action_hash = s.action_hash
         WHERE s.has_fingerprint = 1 AND s.seq > ? ORDER BY s.seq LIMIT ?`,
        [afterSeq, limit],
      );
      return rows.map((r) => ({
        seq: r.seq,
        action_hash: r.action_hash,
        record: JSON.parse(r.record) as SignatureRecord,
        revoked: r.revoked !== null,
      }));
    },

    async pendingEvents(limit) {
      const rows = await db.all<{ id: number; app_id: string; type: string; payload: string; created_at: number }>(
        'SELECT id, app_id, type, payload, created_at FROM event_outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT ?',
        [limit],
      );
      return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as Record<string, unknown> }));
    },

    async markEventDispatched(id, now) {
      await db.run('UPDATE event_outbox SET dispatched_at = ? WHERE id = ? AND dispatched_at IS NULL', [now, id]);
    },

  };
}
