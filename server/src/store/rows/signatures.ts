// The signature row (a record with its revocation, thumbnail and signer's profile) as
// both engines read it, and its mapping to a StoredSignature. `overage` is a boolean
// here as on PostgreSQL; SQLite, which stores 0/1, converts it in its engine. No SQL here.
import type { SignatureRecord } from 'provenant';
import type { QuotaSource, SignatureSource, StoredSignature } from '../types.js';

export interface SignatureRow {
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
  overage: boolean;
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

export function parsePublicFields(text: string | null): string[] {
  if (text === null) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

export function fromRow(row: SignatureRow): StoredSignature {
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
    overage: row.overage,
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
            public_fields: parsePublicFields(row.p_public_fields),
          },
  };
}
