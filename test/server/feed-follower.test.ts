// FeedFollower (server/src/feed-follower.ts) over an in-memory ChangeFeed: it starts at
// the feed's latest seq, reads every change appended after a wake (in batches), is
// `behind` from the wake until the read is applied, and survives a failed read. When
// the feed's window has moved past its cursor it has its owner reload, then follows on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FeedFollower } from '../../server/src/feed-follower.js';
import { createLogger } from '../../server/src/log.js';
import type { Change, ChangeFeed } from '../../server/src/store/index.js';

/**
 * A feed in memory; append() wakes the listeners as a commit would; failNext makes
 * since() reject once; pruneThrough() drops the oldest changes as the store's window
 * does; skip() loses a seq as a rolled-back append does on PostgreSQL.
 */
class MemoryFeed implements ChangeFeed {
  changes: Change[] = [];
  readonly listeners = new Set<() => void>();
  sinceCalls = 0;
  horizonCalls = 0;
  failNext = false;
  private last = 0;
  private pruned = 0;

  private push(n: number): void {
    for (let i = 0; i < n; i++) this.changes.push({ seq: ++this.last, kind: 'profile', user_id: 'u', at: 0 });
  }
  append(n = 1): void {
    this.push(n);
    for (const l of this.listeners) l();
  }
  skip(): void {
    this.last += 1;
  }
  pruneThrough(seq: number): void {
    this.changes = this.changes.filter((c) => c.seq > seq);
    this.pruned = Math.max(this.pruned, seq);
  }
  async latest() {
    return Math.max(this.last, this.pruned);
  }
  async since(afterSeq: number, limit: number) {
    this.sinceCalls += 1;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('engine gone for a moment');
    }
    return this.changes.filter((c) => c.seq > afterSeq).slice(0, limit);
  }
  async horizon() {
    this.horizonCalls += 1;
    return this.pruned;
  }
  async prune(): Promise<number> {
    throw new Error('not used by a follower');
  }
  onAppend(listener: () => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  /** Another node's commit: changes appear without a local wake; remote() wakes as a notification would. */
  readonly remoteListeners = new Set<() => void>();
  appendElsewhere(n = 1): void {
    this.push(n);
  }
  remote(): void {
    for (const l of this.remoteListeners) l();
  }
  onRemote(listener: () => void) {
    this.remoteListeners.add(listener);
    return () => void this.remoteListeners.delete(listener);
  }
}

const silent = createLogger('silent');
const noReload = () => assert.unreachable('reloaded while inside the window');

test('starts at latest(): earlier changes are not applied, later ones are, in order; behind until applied', async () => {
  const feed = new MemoryFeed();
  feed.append(3);
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', noReload);
  assert.ok(follower.behind, 'no cursor yet');
  assert.is(await follower.start(), 3);
  assert.not.ok(follower.behind);
  feed.append(2);
  assert.ok(follower.behind, 'a wake makes it behind at once, before any read');
  await follower.caughtUp();
  assert.not.ok(follower.behind);
  assert.equal(applied, [4, 5]);
  assert.is(follower.seq, 5);
  follower.close();
  feed.append();
  assert.is(feed.listeners.size, 0, 'close() stops listening');
});

test('a wake before start() is read after it; a long run of changes is read in batches', async () => {
  const feed = new MemoryFeed();
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', noReload);
  const started = follower.start(); // latest() is read now: 0
  feed.append(2500);
  await started;
  await follower.caughtUp();
  assert.is(applied.length, 2500);
  assert.equal(applied.slice(0, 2), [1, 2]);
  assert.is(follower.seq, 2500);
  assert.ok(feed.sinceCalls >= 3, 'batches of at most 1000');
  follower.close();
});

test('a failed read rejects who waits, keeps the cursor, and is tried again', async () => {
  const feed = new MemoryFeed();
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', noReload);
  await follower.start();
  feed.failNext = true;
  feed.append();
  let failure: Error | undefined;
  await follower.caughtUp().catch((err: Error) => (failure = err));
  assert.match(failure?.message ?? 'no failure', 'engine gone');
  assert.ok(follower.behind, 'still behind: nothing applied');
  // the retry's timer does not hold a process open (the server's sockets do); this one does
  const alive = setInterval(() => {}, 100);
  try {
    await follower.caughtUp(); // the retry reads the same change
  } finally {
    clearInterval(alive);
  }
  assert.equal(applied, [1]);
  follower.close();
});

test('another node: its changes are read on a remote wake (a notification, or the channel back up), not before', async () => {
  const feed = new MemoryFeed();
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', noReload);
  await follower.start();
  feed.appendElsewhere(2);
  assert.not.ok(follower.behind, 'nothing told it yet');
  feed.remote();
  assert.ok(follower.behind);
  await follower.caughtUp();
  assert.equal(applied, [1, 2]);
  follower.close();
  assert.is(feed.remoteListeners.size, 0, 'close() stops listening to remote wakes too');
});

test('behind the window: the owner reloads (while the follower is behind), then it follows from the latest seq read before', async () => {
  const feed = new MemoryFeed();
  const applied: number[] = [];
  const events: string[] = [];
  let release!: () => void;
  const reloading = new Promise<void>((resolve) => (release = resolve));
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', async () => {
    events.push(`reload (behind: ${follower.behind})`);
    feed.appendElsewhere(1); // committed during the reload: in the tables it reads, and in the feed after
    await reloading;
  });
  await follower.start();
  feed.appendElsewhere(5); // a node cut off: not woken
  feed.pruneThrough(3); // meanwhile the window moved past its cursor (0)
  feed.append(); // seq 6; the wake that reaches it
  let waited = false;
  const waiting = follower.caughtUp().then(() => (waited = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(events, ['reload (behind: true)']);
  assert.not.ok(waited, 'a waiter waits for the reload');
  release();
  await waiting;
  assert.equal(applied, [7], 'nothing from before the latest seq (the reload covered it); seq 7, committed during the reload, applied after it');
  assert.is(follower.seq, 7);
  assert.is(follower.reloads, 1);
  feed.append(2);
  await follower.caughtUp();
  assert.equal(applied, [7, 8, 9]);
  assert.is(follower.reloads, 1, 'inside the window again: no more reloads');
  follower.close();
});

test('behind a window pruned empty: an empty read is checked against the horizon too', async () => {
  const feed = new MemoryFeed();
  let reloads = 0;
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', () => void (reloads += 1));
  await follower.start();
  feed.appendElsewhere(4);
  feed.pruneThrough(4);
  feed.remote();
  await follower.caughtUp();
  assert.equal([reloads, applied, follower.seq], [1, [], 4]);
  follower.close();
});

test('inside the window: a read starting at cursor + 1 asks no horizon; a gap (a rolled-back append) that is not pruning reloads nothing', async () => {
  const feed = new MemoryFeed();
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test', noReload);
  await follower.start();
  feed.append(3);
  await follower.caughtUp();
  assert.is(feed.horizonCalls, 0, 'contiguous: no second query');
  feed.skip();
  feed.append();
  await follower.caughtUp();
  assert.equal(applied, [1, 2, 3, 5]);
  assert.ok(feed.horizonCalls >= 1, 'a gap is checked against the horizon');
  follower.close();
});

test.run();
