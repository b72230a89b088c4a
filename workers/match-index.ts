// The match index thread (not a Piscina task: it holds state). One MatchIndex lives
// here, off the server's event loop; src/pool/match-index-thread.ts posts it
// adds and queries. Messages are handled in the order they were posted, so a query
// sees every add posted before it.
import { parentPort } from 'node:worker_threads';
import { HASH_TYPES, MatchIndex, type IndexedFingerprint } from '../src/lib/match-index.js';
import '../src/lib/wasm.js'; // installs the Node loader of the WebAssembly kernels (build/*.wasm)
import type { IndexReply, IndexRequest } from '../src/lib/match-index-messages.js';
import { PDQ_MIN_QUALITY, PdqIndex } from '../src/lib/pdq-index.js';
import { pdqHashOrAbsent } from '../src/lib/records.js';

const index = new MatchIndex();
/** Records' image PDQs of quality >= 50 (issue 28), by seq. */
const pdq = new PdqIndex();
const port = parentPort!;

function handle(req: IndexRequest): IndexReply {
  if (req.op === 'pdq-add') {
    for (let i = 0; i < req.ids.length; i++) {
      let value = null;
      try {
        value = pdqHashOrAbsent(req.pdq[i]) ?? null;
      } catch {
        // not a pdq_hash: never matched
      }
      if (value !== null && value.hash_type === 'PDQ' && value.quality >= PDQ_MIN_QUALITY) pdq.add(req.ids[i], value.hash_value);
      else pdq.remove(req.ids[i]);
    }
    return { n: req.n, pdqSize: pdq.size() };
  }
  if (req.op === 'pdq-query') return { n: req.n, pdqMatches: pdq.query(req.hashes, req.maxDistance).map(({ id, distance }) => ({ id, distance })) };
  if (req.op === 'add') {
    let indexed = 0;
    for (let i = 0; i < req.ids.length; i++) {
      try {
        // the initial load sends the JSON text SQLite extracted: parsed here, off the event loop
        const fp = req.fps[i];
        const at = req.signedAt[i]; // a record's signed_at that is not a finite number sorts as 0
        if (index.add(req.ids[i], (typeof fp === 'string' ? JSON.parse(fp) : fp) as IndexedFingerprint, Number.isFinite(at) ? at : 0)) indexed++;
      } catch {
        // not JSON, not a fingerprint, or an unknown hash_type: stored as given, never matched
      }
    }
    return { n: req.n, indexed, sizes: HASH_TYPES.map((t) => index.size(t)), bytes: index.bytes() };
  }
  const { bands, hash_value } = req.query;
  const matches = req.types.flatMap((hash_type) => index.query({ hash_type, bands, hash_value }, { threshold: req.threshold, limit: req.limit }));
  return { n: req.n, matches };
}

port.on('message', (req: IndexRequest) => {
  let reply: IndexReply;
  try {
    reply = handle(req);
  } catch (e) {
    reply = { n: req.n, error: (e as Error).message };
  }
  port.postMessage(reply);
});
