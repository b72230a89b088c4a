// Closing the MatchingService (server/src/matching/service.ts) while its initial load is
// under way, as a SIGTERM does when the composition root closes its parts (found by the
// issue-16 cluster bench: the process ended on an unhandled rejection "the match index
// thread is closed"). The store here is one in memory whose ranges after the first wait
// until the test lets them go, so the close comes with adds posted to the index thread
// and ranges still being read; the process must see no unhandled rejection, close()
// must resolve, and the load must stop reading ranges once closed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MatchingService } from '../../server/src/matching/service.js';
import { createLogger } from '../../server/src/log.js';
import type { Store } from '../../server/src/store/index.js';

/** Must match LOAD_RANGE in service.ts: ranges are read LOAD_RANGE seqs at a time. */
const LOAD_RANGE = 10_000;
const STORED = 40 * LOAD_RANGE;

/** Distinct image fingerprints (JSON text, as the store gives them) so the thread has work for each add. */
function fingerprintJson(seq: number): string {
  const b = [seq & 255, (seq >> 8) & 255, (seq >> 16) & 255, 1, 2, 3, 4, 5];
  return JSON.stringify({ hash_type: 'ImagePHash', hash_value: b, bands: b.map((x) => [x]) });
}

/** A store of STORED fingerprinted records whose ranges after the first wait for release(), then come one timer tick apart. */
function slowStore() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const requested: number[] = [];
  let onRange = (_from: number) => {};
  const store = {
    feed: {
      latest: async () => 0,
      since: async () => [],
      onAppend: () => () => {},
      onRemote: () => () => {},
    },
    signatures: {
      lastSeq: async () => STORED,
      async listPerceptualHashes(afterSeq: number, upToSeq: number) {
        requested.push(afterSeq);
        onRange(afterSeq);
        if (afterSeq > 0) {
          await gate;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        const rows = [];
        for (let seq = afterSeq + 1; seq <= upToSeq; seq++) rows.push({ seq, signed_at: seq, perceptual_hash_json: fingerprintJson(seq) });
        return rows;
      },
    },
  };
  return { store: store as unknown as Store, release, requested, set onRange(f: (from: number) => void) { onRange = f; } };
}

test('closing the matching service during its initial load: no unhandled rejection, close resolves, the load stops', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const slow = slowStore();
    const service = new MatchingService({ store: slow.store, log: createLogger('error') });
    // the 4th range is asked for right after the first page was posted to the thread:
    // close then, with that add waiting for its answer and three ranges being read
    const closing = new Promise<Promise<void>>((resolve) => {
      slow.onRange = (from) => {
        if (from === 3 * LOAD_RANGE) resolve(service.close());
      };
    });
    const closed = await closing;
    await closed; // resolves (the add that was waiting fails with the thread)
    slow.release(); // the ranges being read come back after the close
    await service.ready.then(
      () => assert.unreachable('a load closed midway must not report itself complete'),
      () => {},
    );
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(unhandled.map((r) => (r instanceof Error ? r.message : String(r))), []);
    // no range was asked for after the close (the three in flight and the 4th, asked in the same tick as the close)
    assert.equal(slow.requested, [0, 1, 2, 3].map((i) => i * LOAD_RANGE));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test.run();
