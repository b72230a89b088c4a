// Public views of signers and files (spec 2.6, 4.6, 4.14; decisions.md 9): a creator's
// signatures as amend chains, and the rights declared for a file. Reads only.
import { combineContentRights, type ContentRights } from 'provenant';
import { supersededByMap } from './superseded-by.js';
import type { StoredSignature, Store, User } from '../store/index.js';

/**
 * The latest signature of each amend chain (spec 2.6, 3.1): every record that no newer
 * unrevoked record of its signer in the same list supersedes.
 */
export function chainHeads(list: readonly StoredSignature[]): StoredSignature[] {
  const superseded = supersededByMap(list);
  return list.filter((s) => !superseded.has(s.action_hash));
}

export interface Creator {
  agentKey: string;
  /** The account holding the key, null for a key no account holds. */
  user: User | null;
  /** Every record of the account's keys (or of the key alone), oldest first. */
  signatures: StoredSignature[];
}

/**
 * Spec 4.6: the creator behind an agent key is the account holding it, with the records
 * of every key linked to that account (one person, several devices); a key no account
 * holds has no records (publishing needs an account, decisions.md 2) and answers empty.
 */
export async function findCreator(store: Store, agentKey: string): Promise<Creator> {
  const user = await store.accounts.findUserByAgentKey(agentKey);
  const keys = user === null ? [agentKey] : (await store.accounts.listAgents(user.id)).map((a) => a.agentKey);
  return { agentKey, user, signatures: await store.signatures.findBySigners(keys) };
}

/** The rights one signature declared, every key present (null where not declared). */
export function declaredRights(s: StoredSignature): ContentRights {
  const r = s.record.content_rights;
  return {
    license: r?.license ?? null,
    commercial_licensing: r?.commercial_licensing ?? null,
    ai_training: r?.ai_training ?? null,
    contact_preference: r?.contact_preference ?? null,
  };
}

export interface FileRights {
  fileHash: string;
  /** The latest unrevoked signature of each chain, oldest first. */
  signatures: StoredSignature[];
  /** Per field the most restrictive value any of them declared (decisions.md 11); null when none declared any. */
  combined: ContentRights | null;
}

/**
 * decisions.md 9, spec 4.14: revoked signatures are excluded, and so is a version an
 * amendment replaced (its rights are the amendment's now); the most restrictive value
 * wins per field.
 */
export async function fileRights(store: Store, fileHash: string): Promise<FileRights> {
  const live = chainHeads((await store.signatures.findByFileHash(fileHash)).filter((s) => s.revocation === null));
  return { fileHash, signatures: live, combined: combineContentRights(live.map(declaredRights)) };
}
