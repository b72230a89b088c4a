// A reader of the store's change feed (store/feed.ts ChangeFeed) that keeps its own
// cursor: the verify cache and the match index each follow the feed through one, so
// they see every committed write, whichever route, CLI or store call made it.
//
// A wake (onAppend) only says "something was appended": the follower then reads
// since(cursor) in batches and hands them to `apply`, one read at a time, until it
// has read past every wake so far. Between a wake and that read the follower is
// `behind`: its owner must not trust what it holds (a cache bypasses itself, the
// index waits with caughtUp()), so a client that wrote and then reads sees its write.
//
// The feed keeps a window of recent changes (ChangeFeed.prune). A follower that finds
// its cursor below the feed's horizon (a node stalled, cut off or asleep while the
// window moved past it) cannot read what it missed: it takes the feed's latest seq,
// has its owner reload what it follows from the tables (`reload`, as at a start), and
// follows on from that seq. Proof that nothing was missed costs nothing in the usual
// case: a read whose first change is cursor + 1 saw every change after the cursor;
// only an empty read or one that starts later asks for the horizon (after the read).
import type { Change, ChangeFeed } from './store/index.js';
import type { Logger } from './log.js';

/** Changes read per since() call. */
const BATCH = 1000;
/** Pause before a failed feed read is tried again. */
const RETRY_MS = 1000;

interface Waiter {
  wake: number;
  resolve(): void;
  reject(err: Error): void;
}

export class FeedFollower {
  /** The seq of the last change applied; null until start() has read the feed's latest. */
  private cursor: number | null = null;
  /** Wakes seen, and how many of them the changes applied so far account for. */
  private wakes = 0;
  private applied = 0;
  private reading = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private waiters: Waiter[] = [];
  private readonly unsubscribe: () => void;
  private readonly unsubscribeRemote: () => void;

  /** Times the follower fell behind the feed's window and had its owner reload. */
  reloads = 0;

  /**
   * Listens at once (a wake before start() is read after it); `apply` is awaited before
   * the cursor moves. `reload` is called when the follower has fallen behind the feed's
   * window: it must bring what the owner holds up to date with the tables as they are
   * when it runs (changes committed meanwhile are applied again after it: applying a
   * change twice must be harmless); it is awaited while the follower is behind.
   */
  constructor(
    private readonly feed: ChangeFeed,
    private readonly apply: (changes: Change[]) => void | Promise<void>,
    private readonly log: Logger,
    /** Named in log lines. */
    private readonly name: string,
    private readonly reload: () => void | Promise<void>,
  ) {
    this.unsubscribe = feed.onAppend(() => this.wake());
    // another node's commit (or a notification channel back up): read since() as for ours
    this.unsubscribeRemote = feed.onRemote(() => this.wake());
  }

  /**
   * Takes the feed's latest seq as the cursor and returns it: read BEFORE the owner
   * loads a snapshot, so that whatever commits meanwhile is in the snapshot, the
   * feed after the cursor, or both (applying a change twice must be harmless).
   */
  async start(): Promise<number> {
    const latest = await this.feed.latest();
    this.cursor = latest;
    // waiters from before the cursor was known and no wake: nothing to read for them
    this.settle((w) => w.wake <= this.applied, (w) => w.resolve());
    if (this.behind) void this.read();
    return latest;
  }

  /** A wake came that has not been read yet (or start() has not read the cursor). */
  get behind(): boolean {
    return this.cursor === null || this.applied < this.wakes;
  }

  /** The seq of the last change applied (0 before start). */
  get seq(): number {
    return this.cursor ?? 0;
  }

  /** Resolves once every change appended before the call is applied; rejects when the feed read fails. */
  caughtUp(): Promise<void> {
    if (!this.behind) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ wake: this.wakes, resolve, reject }));
  }

  private wake(): void {
    this.wakes += 1;
    if (this.cursor !== null && !this.reading && this.retry === undefined) void this.read();
  }

  private async read(): Promise<void> {
    this.reading = true;
    try {
      while (!this.closed && this.applied < this.wakes) {
        const upTo = this.wakes;
        for (;;) {
          const changes = await this.feed.since(this.cursor!, BATCH);
          if (this.closed) return;
          if ((changes.length === 0 || changes[0].seq !== this.cursor! + 1) && (await this.feed.horizon()) > this.cursor!) {
            await this.rejoin();
            if (this.closed) return;
            continue;
          }
          if (changes.length > 0) {
            await this.apply(changes);
            this.cursor = changes[changes.length - 1].seq;
          }
          if (changes.length < BATCH) break;
        }
        this.applied = upTo;
        this.settle((w) => w.wake <= upTo, (w) => w.resolve());
      }
    } catch (err) {
      if (this.closed) return;
      const error = err instanceof Error ? err : new Error(String(err));
      this.log.error('change feed read failed; retrying', { follower: this.name, error: error.message, after_ms: RETRY_MS });
      // whoever waits now gets the failure instead of an answer that may miss a write
      this.settle(() => true, (w) => w.reject(error));
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.read();
      }, RETRY_MS);
      this.retry.unref();
    } finally {
      this.reading = false;
    }
  }

  /** The window moved past the cursor: reload from the tables, then follow from the latest seq read before. */
  private async rejoin(): Promise<void> {
    const cursor = this.cursor;
    const latest = await this.feed.latest();
    this.log.warn('behind the change feed\'s window; reloading from the tables', { follower: this.name, cursor, latest });
    await this.reload();
    this.cursor = latest;
    this.reloads += 1;
  }

  private settle(which: (w: Waiter) => boolean, how: (w: Waiter) => void): void {
    const now = this.waiters.filter(which);
    if (now.length === 0) return;
    this.waiters = this.waiters.filter((w) => !which(w));
    for (const w of now) how(w);
  }

  /** Stops listening; waiters are released with an error. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.unsubscribeRemote();
    clearTimeout(this.retry);
    this.settle(() => true, (w) => w.reject(new Error(`the ${this.name} has stopped following the change feed`)));
  }
}
