// The change feed's window (issue 25 item 10): a long-lived part, built and closed by
// the composition root, that prunes the feed (store/feed.ts ChangeFeed.prune) to its
// newest PROVENANT_FEED_MAX_CHANGES changes written within PROVENANT_FEED_MAX_AGE_HOURS,
// at start and then every PRUNE_EVERY_MS. Without it the `changes` table grows by about
// 150 bytes per write forever. Every node prunes (the first to get there deletes, the
// others find nothing); a follower that was behind the window reloads from the tables
// (feed-follower.ts), so pruning never makes a node wrong, only costs it a reload.
import type { Logger } from './log.js';
import type { ChangeFeed, FeedWindow } from './store/index.js';

/** How often the window is pruned. */
export const PRUNE_EVERY_MS = 5 * 60_000;

export class FeedPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closed = false;
  /** Changes this node deleted since start, and when it last pruned (Unix ms; null: not yet). */
  pruned = 0;
  lastRunAt: number | null = null;

  constructor(
    private readonly feed: ChangeFeed,
    readonly window: FeedWindow,
    private readonly log: Logger,
    private readonly everyMs = PRUNE_EVERY_MS,
  ) {}

  /** Prunes now (off the caller's path) and every `everyMs`. */
  start(): void {
    this.timer = setInterval(() => void this.run(), this.everyMs);
    this.timer.unref();
    void this.run();
  }

  /** One pruning pass (a pass under way is joined); resolves with the changes deleted. Never rejects: a failure is logged and tried again next time. */
  run(): Promise<number> {
    if (this.running) return this.running;
    if (this.closed) return Promise.resolve(0);
    this.running = (async () => {
      try {
        const started = Date.now();
        const n = await this.feed.prune(this.window, started);
        this.pruned += n;
        this.lastRunAt = started;
        if (n > 0) this.log.info('change feed pruned', { deleted: n, ms: Date.now() - started, max_changes: this.window.maxChanges, max_age_ms: this.window.maxAgeMs });
        return n;
      } catch (err) {
        if (!this.closed) this.log.warn('pruning the change feed failed; trying again later', { error: err instanceof Error ? err.message : String(err) });
        return 0;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Stops the timer and waits for a pass under way. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
  }
}
