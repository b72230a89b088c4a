// `provenant admin export-hashes --type pdq` (issue 28): every live record's PDQ in the
// exchange text of Meta's tools, for hash-sharing (ThreatExchange, the HMA): an image's
// as pdq-photo-hasher prints it, `hash,quality,name` with the record's action hash as
// the name; a video's as vpdq lines, `frame,quality,hash,timestamp`, each followed by
// `,action_hash`. Revoked records are left out. Records are read in seq order from the
// store's pdq_hash column.
import { pdqExchangeLines, pdqHashOrAbsent } from 'provenant';
import type { Store } from '../store/index.js';

const PAGE = 1000;

/** The export's lines, page by page (`write` is awaited, so a slow file bounds memory). */
export async function exportPdqHashes(store: Store, write: (lines: string[]) => Promise<void>): Promise<{ records: number; lines: number }> {
  let after = 0;
  let records = 0;
  let lines = 0;
  for (;;) {
    const page = await store.signatures.listPdqHashes(after, PAGE);
    const out: string[] = [];
    for (const r of page) {
      if (r.revoked) continue;
      let pdq;
      try {
        pdq = pdqHashOrAbsent(JSON.parse(r.pdq_hash_json));
      } catch {
        continue; // not a pdq_hash (a record stored before the rule): nothing to share
      }
      if (pdq === undefined) continue;
      records++;
      for (const line of pdqExchangeLines(pdq)) out.push(`${line},${r.action_hash}`);
    }
    if (out.length > 0) await write(out);
    lines += out.length;
    if (page.length < PAGE) break;
    after = page[page.length - 1].seq;
  }
  return { records, lines };
}
