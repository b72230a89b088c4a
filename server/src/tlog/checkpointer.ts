// The log's checkpoint signer (docs/transparency-log.md), a long-lived part built by the
// composition root: at start and then at least once a second while entries arrive, it
// adds the new entries' leaf hashes to the tree (TileBuilder, resumed from the stored
// tiles), stores the new tiles and the signed checkpoint in one transaction, sends the
// checkpoint to every witness at once (each bounded by WITNESS_DEADLINE_MS) and stores
// it again with the cosignatures it got.
//
// Several nodes may run one each: the tiles and the checkpoint of a size are the same
// whoever computes them (Ed25519 signatures are deterministic), and saveCheckpoint
// stores only a size above the stored one, so a node that lost the race drops its work.
import {
  formatNote, parseCheckpoint, parseNote, proveConsistency, signCheckpoint, tileHashReader, TileBuilder, TlogError, verifyCheckpoint,
  type HashReader, type NoteSignature, type TileCoord, type TileReader,
} from 'provenant';
import type { Logger } from '../log.js';
import type { PartHealth } from '../parts.js';
import type { LogIdentity } from './log-key.js';
import type { StoredCheckpoint, TransparencyLogStore } from '../store/index.js';
import { WitnessClient } from './witnesses.js';
import type { LogWitnessConfig } from '../config.js';

/** A witness that has not cosigned the latest checkpoint is sent it again after this long (ms). */
export const WITNESS_RETRY_MS = 5_000;
/** Entries read per query while catching up. */
const LEAF_BATCH = 16_384;

export interface CheckpointerOptions {
  store: TransparencyLogStore;
  identity: LogIdentity;
  witnesses: readonly LogWitnessConfig[];
  log: Logger;
  /** How often it looks for new entries (ms); default 1000. */
  intervalMs?: number;
  witnessDeadlineMs?: number;
}

/** The stored tiles as the library's TileReader; a missing tile is an error (the store lost it). */
export function storedTileReader(store: TransparencyLogStore): TileReader {
  return {
    async readTiles(coords: readonly TileCoord[]) {
      const tiles = await store.readTiles(coords);
      return tiles.map((t, i) => {
        if (t === null) throw new Error(`tile ${coords[i]!.level}/${coords[i]!.index} of width ${coords[i]!.width} is not stored`);
        return t;
      });
    },
  };
}

/** The hashes of the tree of `size` from the stored tiles. */
export function storedHashReader(store: TransparencyLogStore, size: number): HashReader {
  return tileHashReader(size, storedTileReader(store));
}

export class Checkpointer {
  readonly name = 'transparency_log';
  private readonly store: TransparencyLogStore;
  private readonly identity: LogIdentity;
  private readonly log: Logger;
  private readonly intervalMs: number;
  readonly witnesses: WitnessClient[];
  private builder: TileBuilder | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly abort = new AbortController();
  private lastError: string | null = null;
  private latest: StoredCheckpoint | null = null;

  constructor(options: CheckpointerOptions) {
    this.store = options.store;
    this.identity = options.identity;
    this.log = options.log;
    this.intervalMs = options.intervalMs ?? 1_000;
    this.witnesses = options.witnesses.map((w) => new WitnessClient(w, options.witnessDeadlineMs));
  }

  /** Signs the first checkpoint (of every entry committed so far), then one a tick while entries arrive. */
  async start(): Promise<void> {
    await this.run(true);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run(false).finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * A round that covers every entry committed before the call (tests, benches): a round
   * already running may have read the log's size before them, so it is awaited and
   * another one run (callers waiting together share that next round).
   */
  async tick(): Promise<void> {
    if (this.running) await this.running.catch(() => undefined);
    await this.run(false);
  }

  private run(first: boolean): Promise<void> {
    if (this.running) return this.running;
    this.running = this.round(first)
      .then(() => {
        this.lastError = null;
      })
      .catch((err: unknown) => {
        this.builder = null;
        this.lastError = err instanceof Error ? err.message : String(err);
        this.log.error('transparency log: checkpoint failed', { error: this.lastError });
        if (first) throw err;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async round(first: boolean): Promise<void> {
    const stored = await this.store.latestCheckpoint();
    // a note this node signed or checked before needs no second Ed25519 check each second
    if (stored !== null && stored.note !== this.latest?.note) this.checkOwnKey(stored);
    this.latest = stored;
    const size = await this.store.size();
    const storedSize = stored?.size ?? 0;
    if (stored !== null && size < storedSize) throw new Error(`the log holds ${size} entries, below its checkpoint's ${storedSize}`);
    if (stored !== null && size === storedSize) {
      // nothing new (a restart signs nothing new): the stored checkpoint goes to the
      // witnesses that have not cosigned it, each at most every WITNESS_RETRY_MS
      const behind = this.witnesses.filter((w) => w.lastSize !== storedSize && (first || Date.now() - w.lastAttempt >= WITNESS_RETRY_MS));
      if (behind.length > 0) await this.sendToWitnesses(stored, behind);
      return;
    }
    let builder = this.builder;
    if (builder === null || builder.size !== storedSize) {
      builder = await TileBuilder.resume(storedSize, storedTileReader(this.store));
      builder.takeTiles();
    }
    for (let from = builder.size; from < size; from += LEAF_BATCH) {
      const entries = await this.store.entries(from, Math.min(size, from + LEAF_BATCH));
      if (entries.length !== Math.min(size, from + LEAF_BATCH) - from) throw new Error(`entries ${from}.. of the log are missing`);
      for (const entry of entries) builder.appendEntry(entry);
    }
    const tiles = builder.takeTiles();
    const note = signCheckpoint({ origin: this.identity.origin, size, rootHash: builder.root(), extensions: [] }, this.identity.signer);
    if (!(await this.store.saveCheckpoint(size, tiles, note))) {
      // another node stored this size or a larger one first: start again from the store next time
      this.builder = null;
      return;
    }
    this.builder = builder;
    this.latest = { size, note };
    this.log.debug('transparency log: checkpoint', { size });
    await this.sendToWitnesses(this.latest, this.witnesses);
  }

  /**
   * The stored checkpoint must be signed by this node's log key under its origin: a node
   * with another log.key or origin (logOrigin) than the one that signed it would sign
   * the same log under a second identity, which every client pinned to the first would
   * refuse (or report as a fork). At start that stops the node (the composition root
   * fails); later it stops this node's rounds, reported by /healthz.
   */
  private checkOwnKey(stored: StoredCheckpoint): void {
    try {
      verifyCheckpoint(stored.note, { logKeys: [this.identity.verifierKey] });
    } catch (err) {
      const why = err instanceof TlogError ? err.message : String(err);
      throw new Error(
        `the log's stored checkpoint is not signed by this node's log key ${this.identity.verifierKey} (${why}): every node of a log must share the secrets directory's log.key and the log's origin (PROVENANT_LOG_ORIGIN, else the host of PROVENANT_BASE_URL)`,
      );
    }
  }

  /** Sends `checkpoint` to `witnesses` at once; stores it with the cosignatures it had and those it got. */
  private async sendToWitnesses(checkpoint: StoredCheckpoint, witnesses: readonly WitnessClient[]): Promise<void> {
    if (witnesses.length === 0) return;
    const { size } = checkpoint;
    const reader = storedHashReader(this.store, size);
    const bare = noteWithout(checkpoint.note, this.identity.origin);
    const outcomes = await Promise.all(witnesses.map((w) => w.addCheckpoint(bare, size, (old) => proveConsistency(old, size, reader), this.abort.signal)));
    const cosignatures: NoteSignature[] = [];
    const keys = new Set<string>();
    outcomes.forEach((o, i) => {
      // one per key: a key configured at two URLs answers twice, and a note repeating a
      // key's signature is refused by every reader (openNote)
      if (o.ok) {
        for (const c of o.cosignatures) {
          if (!keys.has(`${c.name}+${c.keyId}`)) cosignatures.push(c);
          keys.add(`${c.name}+${c.keyId}`);
        }
      }
      else this.log.warn('transparency log: a witness did not cosign', { witness: witnesses[i]!.config.url, error: o.error });
    });
    if (cosignatures.length === 0) return;
    // the cosignatures stored meanwhile (another round, another node) stay, one per key
    const current = (await this.store.latestCheckpoint()) ?? checkpoint;
    if (current.size !== size) return;
    const { text, signatures } = parseNote(current.note);
    const fresh = new Set(cosignatures.map((c) => `${c.name}+${c.keyId}`));
    const note = formatNote(text, [...signatures.filter((s) => !fresh.has(`${s.name}+${s.keyId}`)), ...cosignatures]);
    if (await this.store.cosignCheckpoint(size, note)) this.latest = { size, note };
  }

  /**
   * health() for /healthz: when the last round failed (the database was away), a round
   * runs now (or the one running is awaited), so the part recovers as soon as the
   * database does instead of reporting the old failure until the next tick.
   */
  async check(): Promise<PartHealth> {
    if (this.lastError !== null && !this.closed) await this.run(false);
    return this.health();
  }

  /** The state as of the last round (the witnesses' as of their last attempt). */
  health(): PartHealth {
    const failing = this.witnesses.filter((w) => w.lastError !== null).length;
    return {
      status: this.lastError !== null ? 'error' : failing > 0 ? 'degraded' : 'ok',
      checkpoint_size: this.latest?.size ?? null,
      witnesses: this.witnesses.length,
      witnesses_failing: failing,
      ...(this.lastError !== null ? { error: this.lastError } : {}),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }
}

/** The note with only the log's own signature (what witnesses are sent). */
function noteWithout(note: string, origin: string): string {
  const { text, signatures } = parseNote(note);
  parseCheckpoint(text);
  return formatNote(text, signatures.filter((s) => s.name === origin));
}
