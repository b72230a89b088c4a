// Piscina task for `provenant log audit` (src/cli/log.ts): the entries of one entry
// bundle checked, off the thread that fetches and hashes. Each entry must be a canonical
// log entry (decodeLogEntry) and its signature must verify (verifyLogEntrySignature):
// an Ed25519 verify costs ~25x the hashing of its entry's bytes, so an audit spreads
// them over every core. The answer is in entry order; the first failure stops the task.
import { decodeLogEntry, verifyLogEntrySignature } from '../src/lib/log-entry.js';
import { decodeEntryBundle } from '../src/lib/tlog/tiles.js';

export interface LogEntriesTask {
  /** The entry bundle's bytes (c2sp.org/tlog-tiles), transferred. */
  bundle: ArrayBuffer;
  /** Its entries' count. */
  width: number;
  /** Entries before this one are not checked (counted by an earlier run). */
  skip: number;
  /** The log index of the bundle's first entry (for messages). */
  first: number;
}

export interface LogEntriesOutcome {
  signatures: number;
  /** Thumbnail entries: signed by no one. */
  unsigned: number;
  /** Record entries too large to carry their record (record_sha256). */
  notSelfContained: number;
  /** The file hash of each record entry that carries its record, in entry order. */
  fileHashes: string[];
  /** The first entry that does not check, or null. */
  failure: string | null;
}

export default function checkLogEntries({ bundle, width, skip, first }: LogEntriesTask): LogEntriesOutcome {
  const out: LogEntriesOutcome = { signatures: 0, unsigned: 0, notSelfContained: 0, fileHashes: [], failure: null };
  const entries = decodeEntryBundle(new Uint8Array(bundle), width);
  for (let i = skip; i < width; i++) {
    let entry;
    try {
      entry = decodeLogEntry(entries[i]!);
    } catch (err) {
      out.failure = `entry ${first + i}: ${(err as Error).message}`;
      return out;
    }
    if (entry.kind === 'thumbnail') out.unsigned += 1;
    else if (entry.kind === 'record' && !('record' in entry)) out.notSelfContained += 1;
    else if (!verifyLogEntrySignature(entry)) {
      out.failure = `entry ${first + i}: its ${entry.kind}'s signature does not verify`;
      return out;
    } else out.signatures += 1;
    if (entry.kind === 'record' && 'record' in entry) out.fileHashes.push(entry.record.file_hash);
  }
  return out;
}
