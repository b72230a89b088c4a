// FeedFollower (server/src/feed-follower.ts) over an in-memory ChangeFeed: it starts at
// the feed's latest seq, reads every change appended after a wake (in batches), is
// `behind` from the wake until the read is applied, and survives a failed read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FeedFollower } from '../../server/src/feed-follower.js';
import { createLogger } from '../../server/src/log.js';
import type { Change, ChangeFeed } from '../../server/src/store/index.js';

/** A feed in memory; append() wakes the listeners as a commit would; failNext makes since() reject once. */
class MemoryFeed implements ChangeFeed {
  readonly changes: Change[] = [];
  readonly listeners = new Set<() => void>();
  sinceCalls = 0;
  failNext = false;

  append(n = 1): void {
    for (let i = 0; i < n; i++) {
      this.changes.push({ seq: this.changes.length + 1, kind: 'profile', user_id: 'u', at: 0 });
    }
    for (const l of this.listeners) l();
  }
  async latest() {
    return this.changes.length;
  }
  async since(afterSeq: number, limit: number) {
    this.sinceCalls += 1;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('engine gone for a moment');
    }
    return this.changes.slice(afterSeq, afterSeq + limit);
  }
  onAppend(listener: () => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  /** Another node's commit: changes appear without a local wake; remote() wakes as a notification would. */
  readonly remoteListeners = new Set<() => void>();
  appendElsewhere(n = 1): void {
    for (let i = 0; i < n; i++) this.changes.push({ seq: this.changes.length + 1, kind: 'profile', user_id: 'u', at: 0 });
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

test('starts at latest(): earlier changes are not applied, later ones are, in order; behind until applied', async () => {
  const feed = new MemoryFeed();
  feed.append(3);
  const applied: number[] = [];
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test');
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
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test');
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
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test');
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
  const follower = new FeedFollower(feed, (changes) => void applied.push(...changes.map((c) => c.seq)), silent, 'test');
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

test.run();
