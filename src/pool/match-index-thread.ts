// The server's match index on a thread of its own (workers/match-index.ts), so that
// index queries (about 0.5 ms at 1M stored images, 8 ms at 10M) and the initial load
// never hold the event loop. Adds and queries travel over one message port, in
// order: a query sees every add posted before it. The thread does not keep the
// process alive; it is referenced only while an answer is awaited.
import { Worker } from 'node:worker_threads';
import { HASH_TYPES, type Match, type MatchQuery } from '../lib/match-index.js';
import type { IndexReply, IndexRequest } from '../lib/match-index-messages.js';
import type { HashType } from '../lib/types.js';
import type { FeatureMatch } from '../lib/features.js';
import { compiledWorkerFile } from './index.js';

/** A request as posted, before its number is given (Omit over each member of the union). */
type Unnumbered<R> = R extends unknown ? Omit<R, 'n'> : never;

interface Waiting {
  resolve(reply: IndexReply): void;
  reject(err: Error): void;
}

export class IndexThreadError extends Error {
  override name = 'IndexThreadError';
}

export class IndexThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextRequest = 1;
  private closed = false;
  /** Entries held per type and WebAssembly bytes, as of the last add answered. */
  private sizes: number[] = HASH_TYPES.map(() => 0);
  private heldBytes = 0;
  /** The feature index's bytes (issue 32), as of the last features-add answered. */
  private featureBytes = 0;

  /** `onExit` is called when the thread ends on its own (a crash), never after close(). */
  constructor(onExit: (err: Error) => void) {
    this.worker = new Worker(compiledWorkerFile('match-index'));
    this.worker.unref();
    this.worker.on('message', (reply: IndexReply) => {
      const w = this.waiting.get(reply.n);
      if (w === undefined) return;
      this.waiting.delete(reply.n);
      if (this.waiting.size === 0) this.worker.unref();
      if (reply.error !== undefined) w.reject(new IndexThreadError(reply.error));
      else w.resolve(reply);
    });
    let failure: Error | undefined;
    this.worker.on('error', (err) => (failure = err));
    this.worker.on('exit', (code) => {
      const err = new IndexThreadError(`the match index thread ended (exit ${code}${failure ? `: ${failure.message}` : ''})`);
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
      if (!this.closed) {
        this.closed = true;
        onExit(err);
      }
    });
  }

  private request(req: Unnumbered<IndexRequest>): Promise<IndexReply> {
    if (this.closed) return Promise.reject(new IndexThreadError('the match index thread is closed'));
    const n = this.nextRequest++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(n, { resolve, reject });
      this.worker.postMessage({ ...req, n });
    });
  }

  /** Adds (or replaces) entries (a signed_at that is not a finite number counts as 0); resolves to how many were indexed (could match). */
  async add(ids: number[], fps: unknown[], signedAt: number[]): Promise<number> {
    const reply = await this.request({ op: 'add', ids, fps, signedAt });
    this.sizes = reply.sizes!;
    this.heldBytes = reply.bytes!;
    return reply.indexed!;
  }

  /** The matches of each type in `types`, in turn (MatchIndex.query per type). */
  async query(query: Omit<MatchQuery, 'hash_type'>, types: readonly HashType[], threshold: number, limit: number): Promise<Match[]> {
    // A typed-array hash_value goes as a plain array of its own values: postMessage
    // clones a view's whole ArrayBuffer, and a small Buffer's is Node's shared pool.
    const { bands, hash_value } = query;
    const own = { bands, hash_value: hash_value == null ? hash_value : Array.from(hash_value) };
    return (await this.request({ op: 'query', query: own, types, threshold, limit })).matches!;
  }

  /** issue 28: indexes records' pdq_hash values by id (images of quality >= 50; anything else takes the id out). */
  async pdqAdd(ids: number[], values: unknown[]): Promise<number> {
    return (await this.request({ op: 'pdq-add', ids, pdq: values })).pdqSize!;
  }

  /** issue 28: the stored image PDQs within `maxDistance` (<= 31) of any of `hashes` (1-8, 64 hex each), nearest first. */
  async pdqQuery(hashes: string[], maxDistance: number): Promise<{ id: number; distance: number }[]> {
    return (await this.request({ op: 'pdq-query', hashes, maxDistance })).pdqMatches!;
  }

  /** issue 28: the stored videos (vPDQ) at least `minPercent` of whose query frames have a partner within `maxDistance`, best first. */
  async vpdqQuery(hashes: string[], maxDistance: number, minPercent: number): Promise<{ id: number; percent: number }[]> {
    return (await this.request({ op: 'vpdq-query', hashes, maxDistance, minPercent })).vpdqMatches!;
  }

  /** issue 33: indexes records' ISCC Content-Code units by id (null, or a code without content, takes the id out); resolves to the codes held. */
  async isccAdd(ids: number[], codes: (string | null)[]): Promise<number> {
    return (await this.request({ op: 'iscc-add', ids, codes })).isccSize!;
  }

  /** issue 33: the stored Content-Codes of `code`'s type within `maxDistance` bits, nearest first (then by id), at most `limit`. */
  async isccQuery(code: string, maxDistance: number, limit: number): Promise<{ id: number; distance: number }[]> {
    return (await this.request({ op: 'iscc-query', code, maxDistance, limit })).isccMatches!;
  }

  /** Issue 32: indexes records' feature sets (encoded, as stored) for retrieval; resolves to the images held. */
  async featuresAdd(ids: number[], sets: Uint8Array[]): Promise<number> {
    const reply = await this.request({ op: 'features-add', ids, sets });
    this.featureBytes = reply.featureBytes!;
    return reply.featureImages!;
  }

  /** Issue 32: the stored images the query's feature set (encoded) votes for, most votes first, at most `limit`. */
  async featuresQuery(set: Uint8Array, limit: number): Promise<{ id: number; votes: number }[]> {
    return (await this.request({ op: 'features-query', set, limit })).featureCandidates!;
  }

  /** Issue 32: the geometric check (matchFeatures) of the query's set against each record's stored set. */
  async featuresVerify(set: Uint8Array, records: { seq: number; data: Uint8Array }[]): Promise<{ seq: number; match: FeatureMatch | null }[]> {
    if (records.length === 0) return [];
    return (await this.request({ op: 'features-verify', set, records })).featureMatches!;
  }

  /** False once the thread has ended or was closed. */
  get alive(): boolean {
    return !this.closed;
  }

  /** Resolves once everything posted before has been handled (and its answers are in). */
  async flush(): Promise<void> {
    await this.request({ op: 'query', query: { bands: [] }, types: [], threshold: 0, limit: 0 });
  }

  /** Entries held of one type (indexed or not), as of the last add answered. */
  size(hashType: HashType): number {
    return this.sizes[HASH_TYPES.indexOf(hashType)];
  }

  /** Entries held in all. */
  total(): number {
    return this.sizes.reduce((a, b) => a + b, 0);
  }

  /** WebAssembly bytes the indexes hold, as of the last add answered. */
  bytes(): number {
    return this.heldBytes + this.featureBytes;
  }

  /** Ends the thread; waiting requests fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
  }
}
