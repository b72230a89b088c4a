// The manifest repository (issue 33): detached C2PA manifest stores by manifest id, each
// for one stored record, written once and never updated. What may be stored is the
// domain's rule (domain/manifests.ts); this module only keeps and finds rows. The
// interface, its values, the row and the queries, written once for every engine (./sql.ts).
import { StoreConflictError } from './errors.js';
import { jsonArray, type Db } from './sql.js';

/** Manifests one record may have: its signer publishes one per signed copy; more is a flood. */
export const MANIFESTS_PER_RECORD = 16;

export interface NewManifest {
  manifestId: string;
  /** The record's seq. */
  seq: number;
  store: Uint8Array;
  /** A store of the active manifest alone. */
  active: Uint8Array;
  validationState: 'valid' | 'untrusted_signer' | 'invalid';
  validationCodes: string[];
  /** The io.iscc.v0 soft binding's value (an ISCC Content-Code), or null. */
  softBinding: string | null;
  storedAt: number;
}

/** A stored manifest without its bytes, with its record's action hash. */
export interface ManifestEntry {
  manifestId: string;
  seq: number;
  actionHash: string;
  validationState: NewManifest['validationState'];
  validationCodes: string[];
  softBinding: string | null;
  storedAt: number;
}

export interface ManifestsStore {
  /**
   * Stores a manifest: 'stored', or 'unchanged' when this id holds these very bytes
   * already. StoreConflictError('manifest') when the id holds other bytes,
   * StoreConflictError('manifest_limit') when the record has MANIFESTS_PER_RECORD,
   * StoreNotFoundError('record') when the seq is no record.
   */
  insert(manifest: NewManifest): Promise<'stored' | 'unchanged'>;
  /** The stored bytes of a manifest id (the whole store or the active manifest alone). */
  bytes(manifestId: string, which: 'store' | 'active'): Promise<Uint8Array | undefined>;
  /** The manifests of these records, newest first per record. */
  bySeqs(seqs: readonly number[]): Promise<ManifestEntry[]>;
}

interface EntryRow {
  manifest_id: string;
  seq: number;
  action_hash: string;
  validation_state: NewManifest['validationState'];
  validation_codes: string;
  soft_binding: string | null;
  stored_at: number;
}

const bytesOf = (b: Uint8Array) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0;

export function createManifestsStore(db: Db): ManifestsStore {
  const d = db.dialect;
  const bytes = async (manifestId: string, which: 'store' | 'active') => {
    const row = await db.get<{ b: Uint8Array }>(`SELECT ${which === 'store' ? 'store' : 'active'} AS b FROM c2pa_manifests WHERE manifest_id = ?`, [manifestId]);
    return row === undefined ? undefined : bytesOf(row.b);
  };
  const insertOnce = (m: NewManifest) =>
    db.transaction(async (tx): Promise<'stored' | 'unchanged'> => {
      const held = await tx.get<{ store: Uint8Array }>('SELECT store FROM c2pa_manifests WHERE manifest_id = ?', [m.manifestId]);
      if (held !== undefined) {
        if (sameBytes(bytesOf(held.store), m.store)) return 'unchanged';
        throw new StoreConflictError('manifest');
      }
      const count = await tx.get<{ n: number }>('SELECT count(*) AS n FROM c2pa_manifests WHERE seq = ?', [m.seq]);
      if (Number(count?.n ?? 0) >= MANIFESTS_PER_RECORD) throw new StoreConflictError('manifest_limit');
      await tx.run(
        `INSERT INTO c2pa_manifests (manifest_id, seq, store, active, validation_state, validation_codes, soft_binding, stored_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [m.manifestId, m.seq, Buffer.from(m.store), Buffer.from(m.active), m.validationState, JSON.stringify(m.validationCodes), m.softBinding, m.storedAt],
      );
      return 'stored';
    }, 'record');
  return {
    async insert(m) {
      try {
        return await insertOnce(m);
      } catch (err) {
        // two nodes storing one id at once: the later insert conflicts; the same bytes are no conflict
        if (!(err instanceof StoreConflictError && err.what === 'manifest')) throw err;
        const held = await bytes(m.manifestId, 'store');
        if (held !== undefined && sameBytes(held, m.store)) return 'unchanged';
        throw err;
      }
    },

    bytes,

    async bySeqs(seqs) {
      if (seqs.length === 0) return [];
      const rows = await db.all<EntryRow>(
        `SELECT m.manifest_id, m.seq, s.action_hash, m.validation_state, m.validation_codes, m.soft_binding, m.stored_at
         FROM c2pa_manifests m JOIN signatures s ON s.seq = m.seq
         WHERE ${d.inList('m.seq', 'bigint')} ORDER BY m.seq, m.stored_at DESC, m.manifest_id`,
        [d.list(seqs)],
      );
      return rows.map((r) => ({
        manifestId: r.manifest_id,
        seq: Number(r.seq),
        actionHash: r.action_hash,
        validationState: r.validation_state,
        validationCodes: jsonArray<string>(r.validation_codes),
        softBinding: r.soft_binding,
        storedAt: Number(r.stored_at),
      }));
    },
  };
}
