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
import { IsccIndex } from '../src/lib/iscc-index.js';
import { FeatureIndex } from '../src/lib/feature-index.js';
import { FEATURE_CODEBOOK } from '../src/lib/feature-codebook.js';
import { decodeFeatureSet, descriptorsOf, matchFeatures, RETRIEVAL_FEATURES, type FeatureSet } from '../src/lib/features.js';

const index = new MatchIndex();
/** Records' image PDQs of quality >= 50 (issue 28), by seq. */
const pdq = new PdqIndex();
/** Records' video frames (vPDQ) of quality >= 50, by a frame number of their own, and whose they are. */
const frames = new PdqIndex();
const frameSeq = new Map<number, number>();
const seqFrames = new Map<number, number[]>();
let nextFrame = 0;
/** Records' local features (issue 32), by seq: retrieval only; the geometric check reads the stored sets back. */
const features = new FeatureIndex(FEATURE_CODEBOOK);

function removeFrames(seq: number): void {
  for (const f of seqFrames.get(seq) ?? []) {
    frames.remove(f);
    frameSeq.delete(f);
  }
  seqFrames.delete(seq);
}

/**
 * vPDQ as Meta defines it: the query's frames (quality >= 50) and a record's as
 * unordered sets; a query frame has a partner when some frame of the record is within
 * `maxDistance`; a record matches when at least `minPercent` of the query's frames have
 * one. Answers each record's share of query frames matched (0-100), best first.
 */
function vpdqQuery(hashes: string[], maxDistance: number, minPercent: number): { id: number; percent: number }[] {
  if (hashes.length === 0) return [];
  const partners = new Map<number, number>();
  for (const h of hashes) {
    const seqs = new Set<number>();
    for (const m of frames.query(h, maxDistance)) {
      const seq = frameSeq.get(m.id);
      if (seq !== undefined) seqs.add(seq);
    }
    for (const seq of seqs) partners.set(seq, (partners.get(seq) ?? 0) + 1);
  }
  const out: { id: number; percent: number }[] = [];
  for (const [id, n] of partners) if (100 * n >= minPercent * hashes.length) out.push({ id, percent: Math.floor((100 * n) / hashes.length) });
  return out.sort((a, b) => b.percent - a.percent || a.id - b.id);
}

/** Records' ISCC Content-Code units (issue 33), by seq. */
const iscc = new IsccIndex();

/** Indexes (or replaces) records' Content-Codes; a null, malformed or contentless code takes the seq out. */
function isccAdd(ids: number[], codes: (string | null)[]): number {
  for (let i = 0; i < ids.length; i++) {
    const code = codes[i];
    try {
      if (code === null || !iscc.add(ids[i], code)) iscc.remove(ids[i]);
    } catch {
      iscc.remove(ids[i]); // not a Content-Code the index compares: never matched
    }
  }
  return iscc.size();
}
const port = parentPort!;

function handle(req: IndexRequest): IndexReply {
  if (req.op === 'pdq-add') {
    for (let i = 0; i < req.ids.length; i++) {
      let value = null;
      try {
        // as stored: a record from before issue 34's timestamp bound keeps matching
        value = pdqHashOrAbsent(req.pdq[i], false, 'as stored') ?? null;
      } catch {
        // not a pdq_hash: never matched
      }
      const seq = req.ids[i];
      if (value !== null && value.hash_type === 'PDQ' && value.quality >= PDQ_MIN_QUALITY) pdq.add(seq, value.hash_value);
      else pdq.remove(seq);
      removeFrames(seq);
      if (value !== null && value.hash_type === 'vPDQ') {
        const mine: number[] = [];
        for (const f of value.frames) {
          if (f.quality < PDQ_MIN_QUALITY) continue;
          const id = nextFrame++;
          frames.add(id, f.hash_value);
          frameSeq.set(id, seq);
          mine.push(id);
        }
        if (mine.length > 0) seqFrames.set(seq, mine);
      }
    }
    return { n: req.n, pdqSize: pdq.size() };
  }
  if (req.op === 'iscc-add') return { n: req.n, isccSize: isccAdd(req.ids, req.codes) };
  if (req.op === 'iscc-query') return { n: req.n, isccMatches: iscc.query(req.code, req.maxDistance, req.limit) };
  if (req.op === 'features-add') {
    for (let i = 0; i < req.ids.length; i++) {
      let set: FeatureSet;
      try {
        set = decodeFeatureSet(req.sets[i]);
      } catch {
        continue; // checked at publish: a stored set that does not decode is never matched
      }
      features.addSet(req.ids[i], set);
    }
    return { n: req.n, featureImages: features.size(), featureBytes: features.bytes() };
  }
  if (req.op === 'features-query') {
    const query = decodeFeatureSet(req.set);
    return { n: req.n, featureCandidates: features.query(descriptorsOf(query, RETRIEVAL_FEATURES), { limit: req.limit }).map(({ id, votes }) => ({ id, votes })) };
  }
  if (req.op === 'features-verify') {
    const query = decodeFeatureSet(req.set);
    return {
      n: req.n,
      featureMatches: req.records.map(({ seq, data }) => {
        try {
          return { seq, match: matchFeatures(query, decodeFeatureSet(data)) };
        } catch {
          return { seq, match: null };
        }
      }),
    };
  }
  if (req.op === 'vpdq-query') return { n: req.n, vpdqMatches: vpdqQuery(req.hashes, req.maxDistance, req.minPercent) };
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
