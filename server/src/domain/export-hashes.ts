// `provenant admin export-hashes --type pdq` (issue 28): every live record's PDQ in the
// exchange text of Meta's tools, for hash-sharing (ThreatExchange, the HMA): an image's
// as pdq-photo-hasher prints it, `hash,quality,name` with the record's action hash as
// the name; a video's as vpdq lines, `frame,quality,hash,timestamp`, each followed by
// `,action_hash`. Revoked records are left out. Records are read in seq order from the
// store's pdq_hash column.
//
// A stored pdq_hash that today's rule refuses (stored before it, e.g. a vPDQ timestamp
// of 1e300 or out of order before issue 34) is skipped and named in the summary: its
// timestamps have no place in Meta's text, and rewriting them would export what the
// signer did not sign. The record itself stays stored, answered and matched.
import { InvalidFieldError, pdqExchangeLines, pdqHashOrAbsent } from 'provenant';
import type { Store } from '../store/index.js';

const PAGE = 1000;
/** Skipped records named in the summary at most (all are counted). */
export const EXPORT_SKIPPED_LISTED = 100;

export interface ExportSummary {
  records: number;
  lines: number;
  /** Stored pdq_hash values not exported, counted. */
  skipped: number;
  /** The first EXPORT_SKIPPED_LISTED of them, with why. */
  skipped_records: { action_hash: string; reason: string }[];
}

/** The export's lines, page by page (`write` is awaited, so a slow file bounds memory). */
export async function exportPdqHashes(store: Store, write: (lines: string[]) => Promise<void>): Promise<ExportSummary> {
  let after = 0;
  const summary: ExportSummary = { records: 0, lines: 0, skipped: 0, skipped_records: [] };
  const skip = (action_hash: string, reason: string) => {
    summary.skipped++;
    if (summary.skipped_records.length < EXPORT_SKIPPED_LISTED) summary.skipped_records.push({ action_hash, reason });
  };
  for (;;) {
    const page = await store.signatures.listPdqHashes(after, PAGE);
    const out: string[] = [];
    for (const r of page) {
      if (r.revoked) continue;
      let pdq;
      try {
        pdq = pdqHashOrAbsent(JSON.parse(r.pdq_hash_json));
      } catch (e) {
        skip(r.action_hash, e instanceof InvalidFieldError ? e.message : 'the stored pdq_hash is not JSON');
        continue;
      }
      if (pdq === undefined) continue;
      summary.records++;
      for (const line of pdqExchangeLines(pdq)) out.push(`${line},${r.action_hash}`);
    }
    if (out.length > 0) await write(out);
    summary.lines += out.length;
    if (page.length < PAGE) break;
    after = page[page.length - 1].seq;
  }
  return summary;
}
