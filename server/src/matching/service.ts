// Perceptual matching (spec 2.3, 4.2, 4.3, 4.11; decisions.md 3): one MatchIndex per
// server, on a thread of its own (the library's IndexThread), built from the stored
// perceptual hashes at start and kept current by following the store's change feed
// (every stored record, whoever wrote it; revoked signatures keep matching, so
// revocations change nothing here). Index ids are the records' seqs.
// The request checks are schema.ts's, the answers' JSON text present.ts's.
import {
  HASH_TYPES, IndexThread, MATCH_LIMIT, PDQ_MATCH_DISTANCE, aiGenerationConflicts, imagePHashFromGrey72,
  type ContentCredentials, type Examination, type FeatureMatch, type Fingerprint, type HashType, type Match, type MatchQuery,
} from 'provenant';
import { FeedFollower } from '../feed-follower.js';
import type { Logger } from '../log.js';
import type { Change, Store } from '../store/index.js';
import { AnswerCache } from './answers.js';
import { embeddedRecord, type EmbeddedRecord } from '../domain/embedded-record.js';
import { recoverCredentials } from '../domain/manifests.js';
import { body, withCredentials, type MatchedRecord, type ReducedText } from './present.js';
import type { FuzzyRequest } from './schema.js';
import { findMatches } from './pipeline.js';
import { pdqSimilarity } from './sources/pdq.js';

/** Spec 8: the similarity thresholds. */
export const VERIFY_FILE_THRESHOLD = 60;
export const VERIFY_FUZZY_THRESHOLD = 70;
/** Seqs per range read during the initial load, and ranges read ahead (and waiting to be indexed). */
const LOAD_RANGE = 10_000;
const LOAD_AHEAD = 3;
/** Longest pause before a crashed index thread is restarted. */
const MAX_RESTART_PAUSE_MS = 60_000;
/** Serialised reduced rows kept in memory (first in, first out; about 300 bytes each). */
const ROW_CACHE_SIZE = 50_000;

export interface LoadStats {
  /** Fingerprinted records read. */
  records: number;
  /** Of those, indexed (can match). */
  indexed: number;
  ms: number;
  /** Images with local features held after the load (issue 32). */
  features: number;
}

/** Where the index stands, for /healthz: loading (at start or after its thread ended), ready, or failed to load. */
export type IndexState = 'loading' | 'ready' | 'failed';

/** The index of one server (on its own thread), its initial load and its answer cache. */
export class MatchingService {
  private thread: IndexThread;
  /** Resolves once every stored fingerprint is in the index (again, after the index thread was restarted). */
  ready: Promise<LoadStats>;
  state: IndexState = 'loading';
  private readonly follower: FeedFollower;
  /** seq -> its reduced fields, serialised; records never change. */
  private readonly rowCache = new Map<number, ReducedText>();
  /** The cached seqs in the order they came (0 = free); rowNext is the oldest. */
  private readonly rowRing = new Float64Array(ROW_CACHE_SIZE);
  private rowNext = 0;
  /** Whole answers by query, dropped when a write reaches their candidates. */
  readonly answers = new AnswerCache();
  private closed = false;
  /** How long to wait before the next restart of the index thread (see startThread). */
  private restartPauseMs = 0;
  /**
   * Every record up to this seq is in the index (or was handed to its thread): the last
   * seq of a load, or the highest record of a 'stored' change applied.
   */
  private indexedThrough = 0;

  /** Starts the thread and the load at once; queries wait for it (`ready`). */
  constructor(private readonly deps: { store: Store; log: Logger }) {
    this.follower = new FeedFollower(deps.store.feed, (changes) => this.applyChanges(changes), deps.log, 'match index', () => this.reloadNewer());
    this.thread = this.startThread();
    // The feed's position is read before the snapshot: a record stored meanwhile is
    // added twice at worst, and adding an id again replaces it.
    this.ready = this.load(this.follower.start());
    this.ready.catch(() => {}); // load() logged it; queries see the rejection
  }

  /**
   * A new index thread. When it ends on its own (a crash), the answer cache is emptied
   * and a new thread is loaded from SQLite, after a pause that doubles with each crash
   * not followed by a full load (1 s up to 60 s), so a thread that cannot start does
   * not spin; queries wait for the new load.
   */
  private startThread(): IndexThread {
    return new IndexThread((err) => {
      if (this.closed) return;
      const pause = this.restartPauseMs;
      this.restartPauseMs = Math.min(MAX_RESTART_PAUSE_MS, Math.max(1000, 2 * pause));
      this.deps.log.error('match index thread ended; reloading the index', { error: err.message, after_ms: pause });
      this.answers.clear();
      this.state = 'loading';
      this.ready = (async () => {
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (this.closed) throw new Error('the matching service is closed');
        this.thread = this.startThread();
        const stats = await this.load();
        this.restartPauseMs = 0;
        return stats;
      })();
      this.ready.catch(() => {});
    });
  }

  /**
   * Indexes the fingerprints of the records these changes stored, read from the store
   * (by the seq range they span: one read, whatever the batch).
   */
  private async applyChanges(changes: readonly Change[]): Promise<void> {
    const seqs = new Set<number>();
    let low = Infinity;
    let high = 0;
    let stored = 0;
    for (const c of changes) {
      if (c.kind === 'stored') stored = Math.max(stored, c.signature_seq);
      if (c.kind !== 'stored' || !c.has_fingerprint) continue;
      seqs.add(c.signature_seq);
      low = Math.min(low, c.signature_seq);
      high = Math.max(high, c.signature_seq);
    }
    if (seqs.size > 0) {
      const rows = (await this.deps.store.signatures.listPerceptualHashes(low - 1, high)).filter((r) => seqs.has(r.seq));
      this.addRecords(rows.map((r) => r.seq), rows.map((r) => parseFingerprint(r.perceptual_hash_json)), rows.map((r) => r.signed_at));
      const pdq = (await this.deps.store.signatures.listPdqHashes(low - 1, high - low + 1)).filter((r) => seqs.has(r.seq));
      this.addPdq(pdq.map((r) => r.seq), pdq.map((r) => parseFingerprint(r.pdq_hash_json)));
      await this.applyIscc(seqs, low, high);
      const sets = (await this.deps.store.signatures.listFeatures(low - 1, high)).filter((r) => seqs.has(r.seq));
      this.addFeatures(sets.map((r) => r.seq), sets.map((r) => r.data));
    }
    this.indexedThrough = Math.max(this.indexedThrough, stored);
  }

  /**
   * The follower fell behind the feed's window: the changes it missed are gone, but
   * the records are not. Records are numbered in commit order (SQLite's one writer;
   * on PostgreSQL they are inserted under the feed lock), so every record the index
   * lacks comes after `indexedThrough`: those are loaded from the tables as at a start
   * (records stored meanwhile may be added twice: an id added again replaces itself).
   * Answers cached before may miss them: dropped.
   */
  private async reloadNewer(): Promise<void> {
    await this.ready.catch(() => undefined); // the first load (or a restart's) sets indexedThrough
    await this.load(undefined, this.indexedThrough);
    this.answers.clear();
  }

  /**
   * Indexes stored fingerprints (not awaited: the thread takes them in order, before
   * any later query). Answers their bands could change are stale at once.
   */
  private addRecords(seqs: number[], fps: unknown[], signedAt: number[]): void {
    for (const fp of fps) {
      const { hash_type, bands } = (fp ?? {}) as Partial<Fingerprint>;
      if (!HASH_TYPES.includes(hash_type as HashType) || !Array.isArray(bands)) continue; // never indexed
      try {
        this.answers.written(hash_type as HashType, bands);
      } catch {
        // bands of no layout: never indexed, no answer can change
      }
    }
    // a thread that ended is being replaced: the new one's load reads these from SQLite
    if (!this.thread.alive) return;
    this.thread.add(seqs, fps, signedAt).catch((err: Error) => {
      if (!this.closed) this.deps.log.error('match index add failed', { error: err.message });
    });
  }

  /**
   * Indexes records' pdq_hash values (issue 28; not awaited, in order before any later
   * query), read from their own column (store listPdqHashes).
   */
  private addPdq(seqs: number[], values: unknown[]): void {
    if (seqs.length === 0 || !this.thread.alive) return;
    this.thread.pdqAdd(seqs, values).catch((err: Error) => {
      if (!this.closed) this.deps.log.error('match index PDQ add failed', { error: err.message });
    });
  }

  /**
   * Issue 33: indexes the ISCC Content-Codes of the records these changes stored (read from
   * their own table by the seq range; not awaited, in order before any later query).
   */
  private async applyIscc(seqs: ReadonlySet<number>, low: number, high: number): Promise<void> {
    const rows = (await this.deps.store.signatures.listIsccContents(low - 1, high - low + 1)).filter((r) => seqs.has(r.seq));
    if (rows.length === 0 || !this.thread.alive) return;
    this.thread.isccAdd(rows.map((r) => r.seq), rows.map((r) => r.content)).catch((err: Error) => {
      if (!this.closed) this.deps.log.error('match index ISCC add failed', { error: err.message });
    });
  }

  /** Issue 33: feeds the ISCC index every record's Content-Code after `from` up to `last`, LOAD_RANGE at a time. */
  private async loadIscc(thread: IndexThread, from: number, last: number, stopIfEnded: () => void): Promise<void> {
    for (let after = from; after < last; ) {
      const page = await this.deps.store.signatures.listIsccContents(after, LOAD_RANGE);
      stopIfEnded();
      const inRange = page.filter((r) => r.seq <= last);
      if (inRange.length > 0) await thread.isccAdd(inRange.map((r) => r.seq), inRange.map((r) => r.content));
      if (page.length < LOAD_RANGE || inRange.length < page.length) break;
      after = page[page.length - 1].seq;
    }
  }

  /** Issue 32: indexes records' feature sets for retrieval (not awaited, in order before any later query). */
  private addFeatures(seqs: number[], sets: Uint8Array[]): void {
    if (seqs.length === 0 || !this.thread.alive) return;
    this.thread.featuresAdd(seqs, sets).catch((err: Error) => {
      if (!this.closed) this.deps.log.error('match index features add failed', { error: err.message });
    });
  }

  /** Feeds the feature index every record with a feature set after `from` up to `last`, LOAD_RANGE seqs at a time. */
  private async loadFeatures(thread: IndexThread, from: number, last: number, stopIfEnded: () => void): Promise<number> {
    let held = 0;
    for (let after = from; after < last; after += LOAD_RANGE) {
      const page = await this.deps.store.signatures.listFeatures(after, Math.min(last, after + LOAD_RANGE));
      stopIfEnded();
      if (page.length > 0) held = await thread.featuresAdd(page.map((r) => r.seq), page.map((r) => r.data));
    }
    return held;
  }

  /** Feeds the PDQ index every record with a pdq_hash after `from` up to `last`, LOAD_RANGE at a time. */
  private async loadPdq(thread: IndexThread, from: number, last: number, stopIfEnded: () => void): Promise<void> {
    for (let after = from; after < last; ) {
      const page = await this.deps.store.signatures.listPdqHashes(after, LOAD_RANGE);
      stopIfEnded();
      const inRange = page.filter((r) => r.seq <= last);
      if (inRange.length > 0) await thread.pdqAdd(inRange.map((r) => r.seq), inRange.map((r) => parseFingerprint(r.pdq_hash_json)));
      if (page.length < LOAD_RANGE || inRange.length < page.length) break;
      after = page[page.length - 1].seq;
    }
  }

  /**
   * Reads every stored fingerprint up to the last seq at start (later ones arrive
   * through the feed, from `position`, read before) in ranges of LOAD_RANGE seqs,
   * LOAD_AHEAD ranges in flight: SQLite extracts the JSON on its reader connections,
   * the index thread parses and indexes the ranges before, and this thread only
   * passes the text along. Every range and add is given a handler as it is made (the
   * loop awaits one while others may fail: a close ends the thread under the adds, a
   * closed store fails the reads), and after each wait the load stops when the service
   * was closed or its thread ended.
   */
  private async load(position?: Promise<number>, from = 0): Promise<LoadStats> {
    const started = performance.now();
    const thread = this.thread;
    const signatures = this.deps.store.signatures;
    const ranges: ReturnType<typeof signatures.listPerceptualHashes>[] = [];
    const adds: Promise<number>[] = [];
    const stopIfEnded = () => {
      if (this.closed) throw new Error('the matching service is closed');
      if (!thread.alive) throw new Error('the match index thread ended during the load');
    };
    let records = 0;
    try {
      await position;
      stopIfEnded();
      const last = await signatures.lastSeq();
      let next = from;
      const fetchNext = () => {
        if (next >= last) return;
        ranges.push(handled(signatures.listPerceptualHashes(next, Math.min(last, next + LOAD_RANGE))));
        next += LOAD_RANGE;
      };
      stopIfEnded();
      for (let i = 0; i < LOAD_AHEAD; i++) fetchNext();
      let indexed = 0;
      while (ranges.length > 0) {
        const page = await ranges.shift()!;
        stopIfEnded();
        fetchNext();
        // at most LOAD_AHEAD ranges wait for the thread too: memory stays bounded when
        // SQLite reads faster than the thread indexes
        if (adds.length >= LOAD_AHEAD) {
          indexed += await adds.shift()!;
          stopIfEnded();
        }
        adds.push(handled(thread.add(page.map((r) => r.seq), page.map((r) => r.perceptual_hash_json), page.map((r) => r.signed_at))));
        records += page.length;
      }
      for (const n of await Promise.all(adds)) indexed += n;
      stopIfEnded();
      await this.loadPdq(thread, from, last, stopIfEnded);
      await this.loadIscc(thread, from, last, stopIfEnded);
      const withFeatures = await this.loadFeatures(thread, from, last, stopIfEnded);
      const stats = { records, indexed, ms: Math.round(performance.now() - started), features: withFeatures };
      this.deps.log.info('match index loaded', { ...stats, after_seq: from, bytes: thread.bytes() });
      if (thread === this.thread) {
        this.state = 'ready';
        this.indexedThrough = Math.max(this.indexedThrough, last);
      }
      return stats;
    } catch (err) {
      if (this.closed) throw err; // a stop, not a failure: state and log stay as they were
      this.deps.log.error('match index load failed', { error: (err as Error).message });
      if (thread === this.thread) this.state = 'failed';
      throw err;
    }
  }

  /** Resolves once every fingerprint stored so far is in the index (sizes and bytes current). */
  async flush(): Promise<void> {
    await this.loaded();
    await this.thread.flush();
  }

  /**
   * Waits for the initial load, for the load of a thread that replaced the index
   * thread meanwhile (see startThread), and for the feed to be read past every write
   * committed so far. The caller posts to the thread in the same tick: a replacement
   * (the old thread's exit event) cannot come in between.
   */
  private async loaded(): Promise<void> {
    if (this.follower.behind) await this.follower.caughtUp();
    for (let ready = this.ready; ; ready = this.ready) {
      try {
        await ready;
      } catch (err) {
        if (ready === this.ready) throw err;
        continue; // that load failed with its thread; the replacement's counts
      }
      if (ready === this.ready) return;
    }
  }

  /** Entries held of one type (or all), and the index's WebAssembly bytes, as of the last add. */
  indexSize(hashType?: HashType): number {
    return hashType === undefined ? this.thread.total() : this.thread.size(hashType);
  }

  indexBytes(): number {
    return this.thread.bytes();
  }

  /** The seq of the last change of the feed the index has applied. */
  get seq(): number {
    return this.follower.seq;
  }

  /** Times the index fell behind the feed's window and loaded newer records from the tables. */
  get reloads(): number {
    return this.follower.reloads;
  }

  /**
   * Spec 4.2/4.3: candidates of each hash type at or above `threshold` (null
   * similarities kept), best first, at most 100, with their reduced fields.
   */
  async match(query: Omit<MatchQuery, 'hash_type'>, hashTypes: readonly HashType[], threshold: number): Promise<MatchedRecord[]> {
    await this.loaded();
    const found = await this.thread.query({ bands: query.bands, hash_value: query.hash_value }, hashTypes, threshold, MATCH_LIMIT);
    if (found.length === 0) return [];
    const rows = await this.reducedRows(found);
    const out: MatchedRecord[] = [];
    for (const m of found) {
      const row = rows.get(m.id);
      if (row !== undefined) out.push({ similarity: m.similarity, row, seq: m.id });
    }
    // Merging two types' lists needs the same order again (decisions.md 3).
    if (hashTypes.length > 1) out.sort((a, b) => (b.similarity ?? -1) - (a.similarity ?? -1) || b.row.signed_at - a.row.signed_at);
    return out.length > MATCH_LIMIT ? out.slice(0, MATCH_LIMIT) : out;
  }

  /**
   * The answer body (see body()) of `match`, from the answer cache when an equal query
   * was answered since the last write that could change it.
   */
  async answer(query: Omit<MatchQuery, 'hash_type'>, hashTypes: readonly HashType[], threshold: number): Promise<Buffer> {
    const key = AnswerCache.key(hashTypes, threshold, query.bands, query.hash_value);
    // a committed write the feed has not been read past yet may change any answer
    if (this.follower.behind) await this.follower.caughtUp();
    if (key !== null) {
      const hit = this.answers.get(key);
      if (hit !== undefined) return hit;
    }
    const tick = this.answers.now();
    const text = Buffer.from(body(await this.match(query, hashTypes, threshold)));
    if (key !== null) this.answers.set(key, tick, hashTypes, query.bands, text);
    return text;
  }

  /**
   * The reduced fields (JSON text) of these matches' records: from a bounded cache
   * (records never change: revocation is a separate row and not part of the reduced
   * shape), else one query for the missing ones, whose JSON SQLite wrote when the record
   * was stored. Nothing is serialised per answer. 100 records from SQLite take 0.3-0.45
   * ms at 1M stored (more when the file is not in the OS page cache), about as much as
   * the index query. The cache is first in, first out: a ring of seqs beside the map
   * (evicting a Map's oldest key over and over walks its deleted slots, which cost more
   * than the cache saved).
   */
  private async reducedRows(found: readonly Match[]): Promise<Map<number, ReducedText>> {
    const out = new Map<number, ReducedText>();
    const missing: number[] = [];
    for (const { id } of found) {
      const row = this.rowCache.get(id);
      if (row === undefined) missing.push(id);
      else out.set(id, row);
    }
    if (missing.length > 0) {
      for (const { seq, signed_at, json } of await this.deps.store.signatures.reducedBySeqs(missing)) {
        const row = { signed_at, fields: json.slice(0, -1) };
        out.set(seq, row);
        this.cacheRow(seq, row);
      }
    }
    return out;
  }

  private cacheRow(seq: number, row: ReducedText): void {
    if (this.rowCache.has(seq)) return;
    const old = this.rowRing[this.rowNext];
    if (old !== 0) this.rowCache.delete(old);
    this.rowRing[this.rowNext] = seq;
    this.rowNext = (this.rowNext + 1) % ROW_CACHE_SIZE;
    this.rowCache.set(seq, row);
  }

  /**
   * The candidate sources' queries (sources/): each waits for the index to hold every
   * record committed so far, as match() does.
   */
  async query(fp: Omit<MatchQuery, 'hash_type'>, hashType: HashType, threshold: number): Promise<Match[]> {
    await this.loaded();
    return this.thread.query({ bands: fp.bands, hash_value: fp.hash_value }, [hashType], threshold, MATCH_LIMIT);
  }

  /** Issue 28: the stored image PDQs within `maxDistance` of any of `hashes`, nearest first, at most MATCH_LIMIT. */
  async pdqQuery(hashes: string[], maxDistance: number): Promise<{ id: number; distance: number }[]> {
    await this.loaded();
    return (await this.thread.pdqQuery(hashes, maxDistance)).slice(0, MATCH_LIMIT);
  }

  /** Issue 28: the stored videos at least `minPercent` of whose query frames have a partner within `maxDistance`, best first. */
  async vpdqQuery(frames: string[], maxDistance: number, minPercent: number): Promise<{ id: number; percent: number }[]> {
    await this.loaded();
    return (await this.thread.vpdqQuery(frames, maxDistance, minPercent)).slice(0, MATCH_LIMIT);
  }

  /** Issue 32: the stored images a query's feature set (encoded) votes for, most votes first, at most `limit`. */
  async featuresQuery(set: Uint8Array, limit: number): Promise<{ id: number; votes: number }[]> {
    await this.loaded();
    return this.thread.featuresQuery(set, limit);
  }

  /**
   * Issue 32: the geometric check of the query's set (encoded) against the stored sets of
   * those of `seqs` whose records have one (read from the store); the others are absent
   * from the answer.
   */
  async featuresVerify(set: Uint8Array, seqs: readonly number[]): Promise<Map<number, FeatureMatch | null>> {
    const stored = await this.deps.store.signatures.featuresBySeqs(seqs);
    const out = new Map<number, FeatureMatch | null>();
    for (const { seq, match } of await this.thread.featuresVerify(set, stored)) out.set(seq, match);
    return out;
  }

  /**
   * Issue 33: the records whose ISCC Content-Code is of `code`'s type and within
   * `maxDistance` bits of it (the index's rules: src/lib/iscc-index.ts), nearest first, at
   * most `limit`. `code` is a checked Content-Code of at least 64 bits.
   */
  async isccQuery(code: string, maxDistance: number, limit: number): Promise<{ id: number; distance: number }[]> {
    await this.loaded();
    return this.thread.isccQuery(code, maxDistance, limit);
  }

  /**
   * Matches ready to present: each candidate with its record's reduced fields (a record
   * gone from the store is dropped), sorted by similarity then signed_at (newest first,
   * decisions.md 3), at most MATCH_LIMIT.
   */
  async withRows(candidates: readonly { seq: number; similarity: number | null; matchedBy?: MatchedRecord['matchedBy']; pdqDistance?: number; features?: FeatureMatch }[]): Promise<MatchedRecord[]> {
    if (candidates.length === 0) return [];
    const rows = await this.reducedRows(candidates.map((c) => ({ id: c.seq, similarity: null })));
    const out: MatchedRecord[] = [];
    for (const c of candidates) {
      const row = rows.get(c.seq);
      if (row !== undefined) out.push({ similarity: c.similarity, row, seq: c.seq, matchedBy: c.matchedBy, pdqDistance: c.pdqDistance, features: c.features });
    }
    out.sort((x, y) => (y.similarity ?? -1) - (x.similarity ?? -1) || y.row.signed_at - x.row.signed_at);
    return out.length > MATCH_LIMIT ? out.slice(0, MATCH_LIMIT) : out;
  }

  /** Stops following the feed and ends the index thread. */
  async close(): Promise<void> {
    this.closed = true;
    this.follower.close();
    this.ready.catch(() => {});
    await this.thread.close();
  }
}

/** The promise, marked handled at once (whoever awaits it later still sees a rejection). */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

/** A stored perceptual hash's JSON text as an object; null when it is absent or not JSON (never indexed). */
function parseFingerprint(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Spec 4.2: an examined upload's matches (every candidate source that applies, confirmed
 * and presented by the pipeline; none for an unsupported or unreadable file), and (issue
 * 21, additive) the upload's Content Credentials, the record a vault embedded in them
 * (embeddedRecord), the conflicts between the credentials and the records found
 * (aiGenerationConflicts), and (issue 33) for a file without credentials, the manifests
 * the records found have in the repository (recoverCredentials).
 */
export async function verifyFile(deps: { matching: MatchingService; store: Store }, found: Examination): Promise<string> {
  const credentials = found.content_credentials ?? { present: null, message: 'not read' };
  const readable = found.fingerprint !== null || found.pdq_hash !== null;
  const matches = readable ? await findMatches(deps.matching, found, VERIFY_FILE_THRESHOLD) : [];
  const answer = readable ? body(matches) : body([], true);
  const embedded = credentials.present === true && credentials.provenant_record !== null ? await embeddedRecord(deps.store, credentials.provenant_record) : null;
  // issue 33: a copy without credentials of its own gets those its records' signers stored
  const recovered = credentials.present === true ? [] : await recoverCredentials(deps.store, matches.flatMap((m) => (m.seq === undefined ? [] : [m.seq])), found);
  return withCredentials(answer, credentials, embedded, credentialConflicts(answer, credentials, embedded), recovered);
}

/**
 * Issue 21: the conflicts between the file's Content Credentials and the records found
 * (the answer's signatures, and the embedded record when its signature holds); the
 * answer's signatures are parsed only when the credentials declare AI generation.
 */
function credentialConflicts(answer: string, credentials: ContentCredentials, embedded: EmbeddedRecord | null): unknown[] {
  if (credentials.present !== true || !credentials.ai_generated) return [];
  const records = (JSON.parse(answer) as { signatures: { file_hash: string; ai_generation?: string | null }[] }).signatures;
  if (embedded?.signature_valid) records.push(embedded.record as { file_hash: string; ai_generation?: string | null });
  return aiGenerationConflicts(credentials, records);
}

/**
 * Spec 4.3: the matches of a checked verify-fuzzy query (schema.ts parseFuzzyQuery):
 * a PDQ hash at distance <= 31 (issue 28), 72 grey pixels (the server computes hash
 * and bands), or bands with an optional hash_value.
 */
export async function verifyFuzzy(matching: MatchingService, query: FuzzyRequest): Promise<Buffer | string> {
  if (query.kind === 'pdq') {
    const found = await matching.pdqQuery([query.hash], PDQ_MATCH_DISTANCE);
    return body(await matching.withRows(found.map((m) => ({ seq: m.id, similarity: pdqSimilarity(m.distance), matchedBy: 'PDQ' as const, pdqDistance: m.distance }))));
  }
  if (query.kind === 'pixels') return matching.answer(imagePHashFromGrey72(query.pixels), ['ImagePHash'], VERIFY_FUZZY_THRESHOLD);
  if (query.types.length === 0) return body([]);
  return matching.answer({ bands: query.bands, hash_value: query.hash_value }, query.types, VERIFY_FUZZY_THRESHOLD);
}
