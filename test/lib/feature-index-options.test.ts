// FeatureIndex.query's options (issue 32): each is checked before it reaches the kernel,
// which would take any u32 (a limit of 2^31 asks its allocator for 32 GB). A rejected
// query leaves the index answering as before.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FeatureIndex, FEATURE_QUERY_MAX_LIMIT } from '../../src/lib/feature-index.js';
import { FEATURE_CODEBOOK } from '../../src/lib/feature-codebook.js';

let s = 7;
const byte = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24);
const descriptors = Uint8Array.from({ length: 64 * 32 }, byte);

test('options out of range are RangeErrors naming the option; the index still answers after them', () => {
  const index = new FeatureIndex(FEATURE_CODEBOOK);
  index.add(1, descriptors);
  const before = index.query(descriptors);
  assert.equal(before[0]?.id, 1);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ limit: 2 ** 31 }, /limit must be an integer from 0 to 1000000/],
    [{ limit: FEATURE_QUERY_MAX_LIMIT + 1 }, /limit/],
    [{ limit: -1 }, /limit/],
    [{ limit: 2.5 }, /limit/],
    [{ limit: Number.NaN }, /limit/],
    [{ limit: '20' }, /limit/],
    [{ maxEmbeddingDistance: 65 }, /maxEmbeddingDistance must be an integer from 0 to 64/],
    [{ maxEmbeddingDistance: -1 }, /maxEmbeddingDistance/],
    [{ minVotes: 0 }, /minVotes must be an integer from 1 to 64/],
    [{ minVotes: 65 }, /minVotes/],
    [{ maxList: -1 }, /maxList must be an integer from 0 to 4294967295/],
    [{ maxList: 2 ** 32 }, /maxList/],
    [{ probes: 2 }, /probes must be 1 or 3/],
    [{ probes: '3' }, /probes/],
    [{ mirror: 1 }, /mirror must be a boolean/],
  ];
  for (const [options, message] of bad) {
    assert.throws(() => index.query(descriptors, options as never), (e: unknown) => e instanceof RangeError && message.test((e as Error).message), JSON.stringify(options));
  }
  assert.equal(index.query(descriptors), before);
  // the bounds themselves are taken
  assert.equal(index.query(descriptors, { limit: 0 }), []);
  assert.equal(index.query(descriptors, { limit: FEATURE_QUERY_MAX_LIMIT, minVotes: 64, maxEmbeddingDistance: 64, maxList: 0xffff_ffff, probes: 1, mirror: false })[0]?.id, 1);
  index.free();
});

test.run();
