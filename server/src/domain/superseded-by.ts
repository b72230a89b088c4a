// Which record amends which (spec 2.1, 3.1): a rule over a list of stored signatures,
// used by the signer's public view (creators.ts) and by every answer that carries
// `superseded_by` (signit/present.ts).
import type { StoredSignature } from '../store/index.js';

/**
 * `superseded_by` within one result set (spec 2.1, 3.1): the newest unrevoked record
 * of the same signer whose `supersedes` names it. Another signer cannot amend a record.
 */
export function supersededByMap(list: readonly StoredSignature[]): Map<string, string> {
  const byHash = new Map(list.map((s) => [s.action_hash, s]));
  const out = new Map<string, string>();
  const when = new Map<string, number>();
  for (const s of list) {
    const target = s.record.supersedes;
    if (target === null || s.revocation !== null) continue;
    const old = byHash.get(target);
    if (old === undefined || old.record.signer !== s.record.signer) continue;
    if ((when.get(target) ?? -Infinity) < s.record.signed_at) {
      out.set(target, s.action_hash);
      when.set(target, s.record.signed_at);
    }
  }
  return out;
}
