// Resolving manifests (issue 33), no HTTP: the records a query finds, then their stored
// manifests. byContent finds records as verify-file does (matching/pipeline.ts, every
// fingerprint the upload has) or, with alg io.iscc.v0, by its ISCC Content-Code alone;
// byBinding by an ISCC Content-Code within ISCC_BINDING_MAX_DISTANCE bits. A manifest
// whose own io.iscc.v0 soft binding does not match the code that found it is left out
// (C2PA 2.x 18.10.5.1).
import { ISCC_BINDING_MAX_DISTANCE, ISCC_SOFT_BINDING_ALG, MATCH_LIMIT, isccSimilarity, type Examination } from 'provenant';
import type { Store } from '../store/index.js';
import type { MatchingService } from '../matching/service.js';
import { VERIFY_FILE_THRESHOLD } from '../matching/service.js';
import { findMatches } from '../matching/pipeline.js';
import { comparableContent } from '../matching/sources/iscc.js';
import { softBindingMatch } from '../domain/manifests.js';
import type { BindingQuery, ContentQuery } from './schema.js';

/** One answer of c2pa.softBindingQueryResult. */
export interface ManifestMatch {
  manifestId: string;
  similarityScore?: number;
}

/** A record found, with its 0-100 similarity (null: none computed) and the Content-Code it was found by, if it was. */
interface FoundRecord {
  seq: number;
  similarity: number | null;
  byCode: string | null;
}

/** The records whose Content-Code is within ISCC_BINDING_MAX_DISTANCE bits of `content`. */
async function byIscc(matching: MatchingService, content: string | null): Promise<FoundRecord[]> {
  if (content === null) return [];
  const found = await matching.isccQuery(content, ISCC_BINDING_MAX_DISTANCE, MATCH_LIMIT);
  return found.map((m) => ({ seq: m.id, similarity: isccSimilarity(m.distance), byCode: content }));
}

/** The manifests of the records, best record first (each record's newest first), at most `max`, soft bindings checked against the code that found them. */
async function manifestsOf(store: Store, records: readonly FoundRecord[], max: number): Promise<ManifestMatch[]> {
  const best = new Map<number, FoundRecord>();
  for (const r of records) {
    const held = best.get(r.seq);
    if (held === undefined || (r.similarity ?? -1) > (held.similarity ?? -1)) best.set(r.seq, r);
  }
  const ranked = [...best.values()].sort((a, b) => (b.similarity ?? -1) - (a.similarity ?? -1) || a.seq - b.seq);
  const entries = await store.manifests.bySeqs(ranked.map((r) => r.seq));
  const out: ManifestMatch[] = [];
  for (const r of ranked) {
    for (const e of entries) {
      if (e.seq !== r.seq || out.length >= max) continue;
      const binding = r.byCode === null ? null : softBindingMatch(e, r.byCode);
      if (binding !== null && !binding.matches) continue;
      out.push(r.similarity === null ? { manifestId: e.manifestId } : { manifestId: e.manifestId, similarityScore: r.similarity });
    }
  }
  return out;
}

/** GET and POST /matches/byBinding. */
export async function resolveByBinding(deps: { matching: MatchingService; store: Store }, query: BindingQuery): Promise<ManifestMatch[]> {
  return manifestsOf(deps.store, await byIscc(deps.matching, query.content), query.maxResults);
}

/** The upload's Content-Code when the index can compare it, else null. */
const contentOf = (found: Examination): string | null => comparableContent(found.iscc?.content);

/** POST /matches/byContent, over the upload's examination. */
export async function resolveByContent(deps: { matching: MatchingService; store: Store }, found: Examination, query: ContentQuery): Promise<ManifestMatch[]> {
  const records: FoundRecord[] = [];
  if (query.alg === ISCC_SOFT_BINDING_ALG) records.push(...(await byIscc(deps.matching, contentOf(found))));
  else {
    for (const m of await findMatches(deps.matching, found, VERIFY_FILE_THRESHOLD)) {
      if (m.seq !== undefined) records.push({ seq: m.seq, similarity: m.similarity, byCode: m.matchedBy === 'ISCC' ? contentOf(found) : null });
    }
  }
  records.push(...(await byIscc(deps.matching, query.hint)));
  return manifestsOf(deps.store, records, query.maxResults);
}
