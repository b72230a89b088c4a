// Signatures (decisions.md 2, 6, 8): records, revocations, thumbnails, with their
// outbox rows and changes. The interface, its values, the row as both engines read it
// and the queries, written once for every engine (./sql.ts).
//
// Records are immutable: a row is inserted once and never updated; revocations and
// thumbnails are rows of their own linked by action hash. Quota is counted from the
// stored rows of the period inside the inserting transaction, after the quota locks of
// the user and the organisation (always user first, then org, so two charges never wait
// on each other in a cycle; SQLite's one writer serialises them anyway): a charge that
// waited then counts what the previous one committed, so concurrent signs on any number
// of nodes never overshoot a limit. The store knows the counting, not the rules: the
// caller's `decide` callback turns the counts into a charge.
import canonicalize from 'canonicalize';
import { isccContentUnit, type SignatureRecord } from 'provenant';
import type { Feed } from './feed.js';
import { appendLogEntries, recordLogEntry, revocationLogEntry, thumbnailLogEntry } from './log.js';
import { reducedJson } from './reduced.js';
import { flag, jsonArray, prepared, type Db, type Queryable } from './sql.js';
import { insertEvents, type OutboxEvent } from './webhooks.js';

/** The quota a sign is charged to: the user's own, or an organisation's (spec 2.5 "pool"). */
export type QuotaSource = 'personal' | 'org';
export type SignatureSource = 'rest' | 'vault';

export interface Revocation {
  reason: string | null;
  revoked_at: number;
  /** The agent key that signed the revocation (the record's signer). */
  signer: string;
  /** base64 Ed25519 over canonicalRevocationBytes({action_hash, reason, revoked_at, signer}). */
  signature: string;
}

/** The signer's profile as stored, for the public fields of spec 2.1 (gated by public_fields). */
export interface SignerProfile {
  display_name: string | null;
  username: string | null;
  profile_picture: string | null;
  public_fields: string[];
}

export interface StoredSignature {
  seq: number;
  action_hash: string;
  record: SignatureRecord;
  signature: string;
  user_id: string;
  app_id: string | null;
  source: SignatureSource;
  published_at: number;
  quota: QuotaSource;
  org_id: string | null;
  overage: boolean;
  revocation: Revocation | null;
  thumbnail: string | null;
  /** The profile of the account that holds the signer's key now (or made the record). */
  profile: SignerProfile | null;
}

/** A signed record ready to store. */
export interface NewSignature {
  record: SignatureRecord;
  signature: string;
  action_hash: string;
  userId: string;
  appId: string | null;
  source: SignatureSource;
  /** Issue 32: the feature set's bytes, when the record has `features` (the caller checked them against its digest). */
  features?: Uint8Array;
}

/** Signs counted in the period, read inside the insert transaction. */
export interface QuotaUsage {
  /** Signs charged to the user's personal quota. */
  personalUsed: number;
  /** Signs charged to the org's quota (null when no org is involved). */
  orgUsed: number | null;
  /** Of those, signs beyond the org's included amount. */
  orgOverage: number | null;
}

/** Where a write is charged: the quota and, per record, whether it is overage. */
export interface ChargeDecision {
  quota: QuotaSource;
  orgId: string | null;
  /** One flag per record, in order; true = beyond a paid org tier's included signs. */
  overage: boolean[];
}

export interface Charge {
  /** Whose personal quota is counted. */
  userId: string;
  /** The sponsoring org, if any. */
  orgId: string | null;
  /** The quota period: [start, end) in Unix ms. */
  periodStart: number;
  periodEnd: number;
  /** Turns the counts into a charge; throws to refuse (nothing is written then). */
  decide(usage: QuotaUsage, requested: number): ChargeDecision;
}

export interface NewRevocation extends Revocation {
  action_hash: string;
  source: SignatureSource;
  appId: string | null;
}

export interface SignaturesStore {
  /**
   * In one transaction, all or nothing: takes the quota lock of `charge.userId` and
   * `charge.orgId` (see the top of this file), counts the period's usage,
   * lets `charge.decide` choose the quota (or refuse by throwing), inserts every record,
   * the outbox rows and one 'stored' change per record. Returns the decision.
   * StoreConflictError('action_hash') when a record is already stored;
   * StoreNotFoundError('user') when a row's user does not exist.
   */
  insertSignatures(rows: readonly NewSignature[], charge: Charge, events?: readonly OutboxEvent[]): Promise<ChargeDecision>;
  /** Usage of the period, read outside any transaction (for quota displays; signing recounts inside its own). */
  countUsage(userId: string, orgId: string | null, periodStart: number, periodEnd: number): Promise<QuotaUsage>;
  get(actionHash: string): Promise<StoredSignature | undefined>;
  /** Every record of a file, oldest first, with revocation and signer profile. */
  findByFileHash(fileHash: string): Promise<StoredSignature[]>;
  /** Records of the given signers, oldest first. */
  findBySigners(agentKeys: readonly string[]): Promise<StoredSignature[]>;
  /** Records made by the user or signed by any agent key linked to the user, newest first. */
  findForUser(userId: string): Promise<StoredSignature[]>;
  /**
   * Stores a revocation, its outbox rows and a 'revoked' change in one transaction.
   * 'unknown' when no such record exists, 'already_revoked' when it has one.
   */
  insertRevocation(revocation: NewRevocation, events?: readonly OutboxEvent[]): Promise<'revoked' | 'unknown' | 'already_revoked'>;
  /** Sets (or replaces) the thumbnail of a record, with a 'thumbnail' change. False when the record is unknown. */
  setThumbnail(actionHash: string, dataUri: string, now: number): Promise<boolean>;
  /**
   * The reduced shape's stored fields of the fingerprinted records with these seqs (the
   * match index's ids) as JSON object text (`reducedJson`, written when the record was
   * stored); in no particular order; unknown seqs and records without a fingerprint are
   * skipped.
   */
  reducedBySeqs(seqs: readonly number[]): Promise<{ seq: number; signed_at: number; json: string }[]>;
  /**
   * Perceptual hashes (JSON text, parsed by whoever indexes them; null for a record the
   * engine cannot read) and signed_at of the fingerprinted records with
   * `afterSeq < seq <= upToSeq`, in seq order: the match index's lean load, in ranges
   * that can be read concurrently.
   */
  listPerceptualHashes(afterSeq: number, upToSeq: number): Promise<{ seq: number; signed_at: number; perceptual_hash_json: string | null }[]>;
  /**
   * Issue 28: the records with a pdq_hash after `afterSeq`, `limit` at most, in seq
   * order: its JSON text (from its own column), the action hash and whether the record
   * was revoked (the PDQ index's load and feed, `admin export-hashes`).
   */
  listPdqHashes(afterSeq: number, limit: number): Promise<{ seq: number; action_hash: string; pdq_hash_json: string; revoked: boolean }[]>;
  /**
   * Issue 32: the feature sets of the records with `afterSeq < seq <= upToSeq`, in seq
   * order (the match index's load and feed).
   */
  listFeatures(afterSeq: number, upToSeq: number): Promise<{ seq: number; data: Uint8Array }[]>;
  /** Issue 32: the stored feature sets of these records (those without one are skipped), in no particular order. */
  featuresBySeqs(seqs: readonly number[]): Promise<{ seq: number; data: Uint8Array }[]>;
  /**
   * Issue 33: the Content-Code units of the records' ISCC-CODEs after `afterSeq`, `limit`
   * at most, in seq order (the ISCC index's load and feed).
   */
  listIsccContents(afterSeq: number, limit: number): Promise<{ seq: number; content: string }[]>;
  /** Fingerprinted records after `afterSeq`, `limit` at most, in seq order. */
  listFingerprinted(afterSeq: number, limit: number): Promise<{ seq: number; record: SignatureRecord }[]>;
  /** The highest record seq stored so far (0 when there is none). */
  lastSeq(): Promise<number>;
}
// ---------------------------------------------------------------- rows

/** A record with its revocation, thumbnail and signer's profile (SELECT below). */
interface SignatureRow {
  seq: number;
  action_hash: string;
  record: string;
  signature: string;
  user_id: string;
  app_id: string | null;
  source: SignatureSource;
  published_at: number;
  pool: QuotaSource; // the column keeps its name from SQLite's migration 002
  org_id: string | null;
  overage: boolean | number;
  r_reason: string | null;
  r_revoked_at: number | null;
  r_signer: string | null;
  r_signature: string | null;
  thumbnail: string | null;
  p_display_name: string | null;
  p_username: string | null;
  p_profile_picture: string | null;
  p_public_fields: string | null;
}

function fromRow(row: SignatureRow): StoredSignature {
  return {
    seq: row.seq,
    action_hash: row.action_hash,
    record: JSON.parse(row.record) as SignatureRecord,
    signature: row.signature,
    user_id: row.user_id,
    app_id: row.app_id,
    source: row.source,
    published_at: row.published_at,
    quota: row.pool,
    org_id: row.org_id,
    overage: flag(row.overage),
    revocation:
      row.r_revoked_at === null
        ? null
        : { reason: row.r_reason, revoked_at: row.r_revoked_at, signer: row.r_signer ?? '', signature: row.r_signature ?? '' },
    thumbnail: row.thumbnail,
    profile:
      row.p_public_fields === null
        ? null
        : {
            display_name: row.p_display_name,
            username: row.p_username,
            profile_picture: row.p_profile_picture,
            public_fields: jsonArray<unknown>(row.p_public_fields).filter((v): v is string => typeof v === 'string'),
          },
  };
}

// ---------------------------------------------------------------- queries

/**
 * Whether a match can find the record: by its perceptual hash, its PDQ (issue 28), its
 * local features (issue 32) or its ISCC's Content-Code (issue 33). These records get a
 * reduced row and count as fingerprinted (has_fingerprint).
 */
function matchable(s: NewSignature): boolean {
  const r = s.record;
  return r.perceptual_hash !== null || (r.pdq_hash !== undefined && r.pdq_hash !== null) || s.features !== undefined || contentUnit(r) !== null;
}

/** The Content-Code unit of a record's ISCC-CODE (issue 33), or null without one. */
function contentUnit(r: SignatureRecord): string | null {
  return typeof r.iscc === 'string' ? isccContentUnit(r.iscc) : null;
}

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

/** The hot reads (GET /verify, the embedded record, verify-fuzzy's rows), prepared on each connection (sql.ts prepared()). */
const BY_ACTION_HASH = prepared(`${SELECT} WHERE s.action_hash = ?`);
const BY_FILE_HASH = prepared(`${SELECT} WHERE s.file_hash = ? ORDER BY s.signed_at, s.seq`);

async function countUsageOn(db: Db, q: Queryable, userId: string, orgId: string | null, start: number, end: number): Promise<QuotaUsage> {
  const personal = await q.get<{ n: number }>(
    `SELECT count(*) AS n FROM signatures WHERE pool = 'personal' AND user_id = ? AND published_at >= ? AND published_at < ?`,
    [userId, start, end],
  );
  if (orgId === null) return { personalUsed: personal?.n ?? 0, orgUsed: null, orgOverage: null };
  const org = await q.get<{ n: number; overage: number }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE overage = ${db.dialect.true}) AS overage FROM signatures
     WHERE pool = 'org' AND org_id = ? AND published_at >= ? AND published_at < ?`,
    [orgId, start, end],
  );
  return { personalUsed: personal?.n ?? 0, orgUsed: org?.n ?? 0, orgOverage: org?.overage ?? 0 };
}

export function createSignaturesStore(db: Db, feed: Feed, options: { transparencyLog: boolean } = { transparencyLog: true }): SignaturesStore {
  const d = db.dialect;
  // the log's entries of an event, in its transaction (off only for benches: StoreOptions)
  const appendLog: typeof appendLogEntries = options.transparencyLog ? appendLogEntries : async () => undefined;
  // a batch's records go in as one statement (a statement per record halved the rate of
  // batch inserts), in the batch's order, so their seqs follow it
  const columns = [
    ['action_hash', 'text'], ['file_hash', 'text'], ['signer', 'text'], ['signed_at', 'bigint'], ['intent', 'text'], ['supersedes', 'text'],
    ['has_fingerprint', 'boolean'], ...(d.perceptualHash.written ? ([['perceptual_hash', 'text']] as const) : []), ['pdq_hash', 'text'], ['record', 'text'], ['signature', 'text'],
    ['user_id', 'text'], ['app_id', 'text'], ['source', 'text'], ['overage', 'boolean'],
  ] as const;
  const names = columns.map(([name]) => name).join(', ');
  const FEATURES_BY_SEQS = prepared(`SELECT seq, data FROM record_features WHERE ${d.inList('seq', 'bigint')}`);
  const REDUCED_BY_SEQS = prepared(
    `SELECT ${d.lines("seq || ',' || signed_at || ',' || reduced")} AS lines FROM signature_reduced WHERE ${d.inList('seq', 'bigint')}`,
  );

  return {
    async insertSignatures(rows, charge, events = []) {
      const publishedAt = Date.now();
      return feed.write(async (tx, changes) => {
        await d.serialise(tx, 'userQuota', charge.userId);
        if (charge.orgId !== null) await d.serialise(tx, 'orgQuota', charge.orgId);
        const usage = await countUsageOn(db, tx, charge.userId, charge.orgId, charge.periodStart, charge.periodEnd);
        const decision = charge.decide(usage, rows.length);
        await changes.serialise();
        if (rows.length > 0) {
          const batch = d.batch(
            columns,
            rows.map((s, i) => {
              const text = canonicalize(s.record);
              if (text === undefined) throw new TypeError('record is not JSON');
              const hash = s.record.perceptual_hash;
              const pdq = s.record.pdq_hash === undefined || s.record.pdq_hash === null ? null : (canonicalize(s.record.pdq_hash) ?? null);
              return [
                s.action_hash, s.record.file_hash, s.record.signer, s.record.signed_at, s.record.intent, s.record.supersedes, matchable(s),
                ...(d.perceptualHash.written ? [hash === null ? null : (canonicalize(hash) ?? null)] : []),
                pdq, text, s.signature, s.userId, s.appId, s.source, decision.overage[i] === true,
              ];
            }),
          );
          const inserted = await tx.all<{ seq: number; action_hash: string }>(
            `INSERT INTO signatures (${names}, published_at, pool, org_id)
             SELECT ${names}, ?, ?, ? FROM ${batch.from} ORDER BY n RETURNING seq, action_hash`,
            [publishedAt, decision.quota, decision.quota === 'org' ? decision.orgId : null, ...batch.params],
          );
          // RETURNING keeps no order
          const seqOf = new Map(inserted.map((r) => [r.action_hash, r.seq]));
          const seqs = inserted.map((r) => r.seq).sort((a, b) => a - b);
          const reduced = rows.flatMap((s) => (!matchable(s) ? [] : [[seqOf.get(s.action_hash)!, s.record.signed_at, reducedJson(s.record)]]));
          if (reduced.length > 0) {
            const r = d.batch([['seq', 'bigint'], ['signed_at', 'bigint'], ['reduced', 'text']], reduced);
            await tx.run(`INSERT INTO signature_reduced (seq, signed_at, reduced) SELECT seq, signed_at, reduced FROM ${r.from}`, r.params);
          }
          for (const s of rows) {
            if (s.features !== undefined && s.record.features !== undefined && s.record.features !== null) {
              await tx.run('INSERT INTO record_features (seq, data) VALUES (?, ?)', [seqOf.get(s.action_hash)!, Buffer.from(s.features.buffer, s.features.byteOffset, s.features.byteLength)]);
            }
          }
          const iscc = rows.flatMap((s) => {
            const content = contentUnit(s.record);
            return content === null ? [] : [[seqOf.get(s.action_hash)!, content]];
          });
          if (iscc.length > 0) {
            const b = d.batch([['seq', 'bigint'], ['content', 'text']], iscc);
            await tx.run(`INSERT INTO record_iscc (seq, content) SELECT seq, content FROM ${b.from}`, b.params);
          }
          await changes.appendStored(seqs[0], seqs[seqs.length - 1], publishedAt);
          // the log's entries, in the batch's (= seq) order, under the feed lock taken above
          await appendLog(db, tx, rows.map((s) => recordLogEntry(s.action_hash, s.record, s.signature, publishedAt)));
        }
        await insertEvents(db, tx, events, publishedAt);
        return decision;
      }, { missing: 'user', serialiseLater: true });
    },

    countUsage(userId, orgId, start, end) {
      return countUsageOn(db, db, userId, orgId, start, end);
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
      return (await db.all<SignatureRow>(`${SELECT} WHERE ${d.inList('s.signer', 'text')} ORDER BY s.signed_at, s.seq`, [d.list(agentKeys)])).map(fromRow);
    },

    async findForUser(userId) {
      const rows = await db.all<SignatureRow>(
        `${SELECT} WHERE s.user_id = ? OR s.signer IN (SELECT agent_key FROM agents WHERE user_id = ?)
         ORDER BY s.signed_at DESC, s.seq DESC`,
        [userId, userId],
      );
      return rows.map(fromRow);
    },

    async insertRevocation(rev, events = []) {
      const now = Date.now();
      // under the feed lock: of two revocations of one record, the second sees the first
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
        await insertEvents(db, tx, events, now);
        await changes.append({ kind: 'revoked', file_hash: found.file_hash, action_hash: rev.action_hash, at: now });
        await appendLog(db, tx, [revocationLogEntry(rev)]);
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
        await appendLog(db, tx, [thumbnailLogEntry(actionHash, dataUri)]);
        return true;
      });
    },

    async reducedBySeqs(seqs) {
      if (seqs.length === 0) return [];
      // Kept as JSON text beside the record (reducedJson), handed over as one text, a line
      // "seq,signed_at,json" per record: turning 100 rows into JS objects costs the event
      // loop more than splitting one string (JSON text holds no raw line feed). The seqs
      // go in as one parameter: node-sqlite3 spends ~0.5 µs of the event loop on each
      // bound one, and one statement text serves every count (kept prepared).
      const row = await db.get<{ lines: string | null }>(REDUCED_BY_SEQS, [d.list(seqs)]);
      if (!row?.lines) return [];
      return row.lines.split('\n').map((line) => {
        const a = line.indexOf(',');
        const b = line.indexOf(',', a + 1);
        return { seq: Number(line.slice(0, a)), signed_at: Number(line.slice(a + 1, b)), json: line.slice(b + 1) };
      });
    },

    async listPerceptualHashes(afterSeq, upToSeq) {
      const rows = await db.all<{ seq: number; signed_at: number; ph: string | null }>(
        `SELECT seq, signed_at, ${d.perceptualHash.read} AS ph FROM signatures
         WHERE has_fingerprint = ${d.true} AND seq > ? AND seq <= ? ORDER BY seq`,
        [afterSeq, upToSeq],
      );
      return rows.map((r) => ({ seq: r.seq, signed_at: r.signed_at, perceptual_hash_json: r.ph }));
    },

    async listPdqHashes(afterSeq, limit) {
      const rows = await db.all<{ seq: number; action_hash: string; pdq: string; revoked: number | null }>(
        `SELECT s.seq, s.action_hash, s.pdq_hash AS pdq, r.revoked_at AS revoked FROM signatures s
         LEFT JOIN revocations r ON r.action_hash = s.action_hash
         WHERE s.pdq_hash IS NOT NULL AND s.seq > ? ORDER BY s.seq LIMIT ?`,
        [afterSeq, limit],
      );
      return rows.map((r) => ({ seq: r.seq, action_hash: r.action_hash, pdq_hash_json: r.pdq, revoked: r.revoked !== null }));
    },

    async listFeatures(afterSeq, upToSeq) {
      const rows = await db.all<{ seq: number; data: Uint8Array }>(
        'SELECT seq, data FROM record_features WHERE seq > ? AND seq <= ? ORDER BY seq',
        [afterSeq, upToSeq],
      );
      return rows.map((r) => ({ seq: Number(r.seq), data: new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength) }));
    },

    async featuresBySeqs(seqs) {
      if (seqs.length === 0) return [];
      const rows = await db.all<{ seq: number; data: Uint8Array }>(FEATURES_BY_SEQS, [d.list(seqs)]);
      return rows.map((r) => ({ seq: Number(r.seq), data: new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength) }));
    },

    async listIsccContents(afterSeq, limit) {
      const rows = await db.all<{ seq: number; content: string }>('SELECT seq, content FROM record_iscc WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]);
      return rows.map((r) => ({ seq: Number(r.seq), content: r.content }));
    },

    async listFingerprinted(afterSeq, limit) {
      const rows = await db.all<{ seq: number; record: string }>(
        `SELECT seq, record FROM signatures WHERE has_fingerprint = ${d.true} AND seq > ? ORDER BY seq LIMIT ?`,
        [afterSeq, limit],
      );
      return rows.map((r) => ({ seq: r.seq, record: JSON.parse(r.record) as SignatureRecord }));
    },

    async lastSeq() {
      const row = await db.get<{ last: number | null }>('SELECT max(seq) AS last FROM signatures');
      return row?.last ?? 0;
    },
  };
}
