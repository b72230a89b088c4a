// The answer cache on its own: which writes make an answer stale, the byte budget,
// and which queries are not cached (server/src/matching/answers.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerCache } from '../../server/src/matching/answers.js';

const image = (bytes: number[]) => bytes.map((b) => [b]);
const body = (text: string) => Buffer.from(text);

test('an image answer goes stale only through a write into one of its 8 band buckets', () => {
  const c = new AnswerCache();
  const bands = image([1, 2, 3, 4, 5, 6, 7, 8]);
  const key = AnswerCache.key(['ImagePHash'], 70, bands, [1, 2, 3, 4, 5, 6, 7, 8])!;
  c.set(key, c.now(), ['ImagePHash'], bands, body('a'));
  assert.equal(c.get(key), body('a'));
  // same bytes at other positions, and sequence types: not candidates of this query
  c.written('ImagePHash', image([8, 7, 6, 5, 4, 3, 2, 1]));
  c.written('AudioChromaprint', Array.from({ length: 8 }, () => [1, 2, 3, 4]));
  assert.equal(c.get(key), body('a'));
  // shares position 6 (byte 7)
  c.written('ImagePHash', image([0, 0, 0, 0, 0, 0, 7, 0]));
  assert.is(c.get(key), undefined);
  assert.is(c.size, 0);
});

test('an answer computed across a write is not kept', () => {
  const c = new AnswerCache();
  const bands = image([9, 9, 9, 9, 9, 9, 9, 9]);
  const key = AnswerCache.key(['ImagePHash'], 70, bands, null)!;
  const tick = c.now();
  c.written('ImagePHash', image([9, 1, 1, 1, 1, 1, 1, 1])); // lands while the answer is computed
  c.set(key, tick, ['ImagePHash'], bands, body('old'));
  assert.is(c.get(key), undefined);
});

test('sequence answers go stale through any write of their hash types', () => {
  const c = new AnswerCache();
  const bands = Array.from({ length: 8 }, (_, i) => [i, 0, 0, 1]);
  const types = ['AudioChromaprint', 'VideoPHash'] as const;
  const key = AnswerCache.key(types, 70, bands, [1, 2, 3])!;
  c.set(key, c.now(), types, bands, body('s'));
  c.written('ImagePHash', image([0, 0, 0, 0, 0, 0, 0, 1]));
  assert.equal(c.get(key), body('s'));
  c.written('VideoPHash', Array.from({ length: 8 }, () => [7, 7, 7, 7]));
  assert.is(c.get(key), undefined);
});

test('keys tell queries apart; long hash values are not cached', () => {
  const bands = image([1, 2, 3, 4, 5, 6, 7, 8]);
  const keys = new Set([
    AnswerCache.key(['ImagePHash'], 70, bands, null),
    AnswerCache.key(['ImagePHash'], 60, bands, null),
    AnswerCache.key(['ImagePHash'], 70, bands, [1, 2, 3, 4, 5, 6, 7, 8]),
    AnswerCache.key(['ImagePHash'], 70, image([1, 2, 3, 4, 5, 6, 7, 9]), null),
    AnswerCache.key(['AudioChromaprint', 'VideoPHash'], 70, bands, null),
    AnswerCache.key(['ImagePHash'], 70, bands, []),
    AnswerCache.key(['ImagePHash'], 70, [[1, 2], [3]], null),
    AnswerCache.key(['ImagePHash'], 70, [[1], [2, 3]], null),
  ]);
  assert.is(keys.size, 8);
  assert.is(AnswerCache.key(['AudioChromaprint'], 70, bands, new Array(2000).fill(1)), null);
});

test('the oldest answers leave once the byte or count budget is passed; a used one is spared once', () => {
  const c = new AnswerCache(3000);
  const keyOf = (i: number) => AnswerCache.key(['ImagePHash'], 70, image([i, 0, 0, 0, 0, 0, 0, 0]), null)!;
  for (let i = 0; i < 3; i++) c.set(keyOf(i), c.now(), ['ImagePHash'], image([i, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(900));
  assert.ok(c.get(keyOf(0))); // 0 is used: spared by the next eviction
  c.set(keyOf(3), c.now(), ['ImagePHash'], image([3, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(900));
  assert.is(c.size, 3);
  assert.is(c.get(keyOf(1)), undefined);
  assert.ok(c.get(keyOf(0)));
  // an answer larger than the whole budget is not kept
  c.set(keyOf(4), c.now(), ['ImagePHash'], image([4, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(4000));
  assert.is(c.get(keyOf(4)), undefined);
  // and the count: at most 2 of any size
  const few = new AnswerCache(1 << 20, 2);
  for (let i = 0; i < 3; i++) few.set(keyOf(i), few.now(), ['ImagePHash'], image([i, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{}'));
  assert.is(few.size, 2);
  assert.is(few.get(keyOf(0)), undefined);
  // second chance: a used answer moves behind the others once, then ages like them
  const three = new AnswerCache(1 << 20, 3);
  const put = (i: number) => three.set(keyOf(i), three.now(), ['ImagePHash'], image([i, 0, 0, 0, 0, 0, 0, 0]), Buffer.from(`${i}`));
  const kept = () => [0, 1, 2, 3, 4, 5, 6].filter((i) => three.has(keyOf(i)));
  [0, 1, 2].forEach(put);
  assert.ok(three.get(keyOf(0)));
  put(3);
  assert.equal(kept(), [0, 2, 3]);
  put(4);
  put(5);
  assert.equal(kept(), [0, 4, 5]);
  put(6);
  assert.equal(kept(), [4, 5, 6]);
});

test.run();
