// RFC 9162 hashing and proofs, and the c2sp.org/tlog-tiles layout, against independent
// references: the transparency-dev/merkle vectors in test/fixtures/tlog (a copy of the
// team's ../shared/fixtures/tlog, Apache-2.0: every happy path verifies, every tampered
// proof is refused), its constants (node hashes and roots of the trees of size 0..8), a
// naive RFC 9162 MTH/PATH/PROOF written over node:crypto here, and the spec's own
// examples of tile paths and widths.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import '../../src/lib/wasm.js';
import {
  EMPTY_ROOT, TileBuilder, TlogError, decodeEntryBundle, encodeEntryBundle, encodeTileIndex, entriesPath, leafHash, newTiles, nodeHash,
  parseTilePath, partialTiles, proveConsistency, proveInclusion, rootFromLevel0Tiles, tileHashReader, tilePath, tileWidthAt, treeHash,
  verifyConsistency, verifyInclusion, type TileCoord, type TileData, type TileReader,
} from '../../src/lib/tlog/index.js';
import { rng } from '../helpers/random.js';

const FIXTURES = new URL('../fixtures/tlog/', import.meta.url).pathname;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const b64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));

// ---------------------------------------------------------------- a naive reference over node:crypto

const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const refLeaf = (e: Uint8Array) => sha(Uint8Array.of(0), e);
const refNode = (l: Uint8Array, r: Uint8Array) => sha(Uint8Array.of(1), l, r);
const split = (n: number) => { let k = 1; while (k * 2 < n) k *= 2; return k; };
/** RFC 9162 2.1.1 MTH over leaf hashes. */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0];
  const k = split(leaves.length);
  return refNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
/** RFC 9162 2.1.3.1 PATH. */
function path(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
/** RFC 9162 2.1.4.1 SUBPROOF. */
function subproof(m: number, leaves: Uint8Array[], b: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [mth(leaves)];
  const k = split(n);
  return m <= k ? [...subproof(m, leaves.slice(0, k), b), mth(leaves.slice(k))] : [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

/** In-memory tiles of a built tree, as a TileReader (answers the latest tile: a reader may). */
function memoryTiles(tiles: TileData[]): TileReader & { map: Map<string, Uint8Array> } {
  const map = new Map<string, Uint8Array>();
  for (const t of tiles) {
    const key = `${t.level}/${t.index}`;
    const had = map.get(key);
    if (had === undefined || had.length <= t.data.length) map.set(key, t.data);
  }
  return { map, readTiles: (coords: readonly TileCoord[]) => coords.map((c) => map.get(`${c.level}/${c.index}`)!) };
}

// ---------------------------------------------------------------- fixtures

/** Reads a fixture; integers beyond 2^53 (leafIdx 2^64 - 1) become unsafe numbers, which the API must refuse. */
function fixture(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8').replace(/:\s*(\d{16,})/g, ': "$1"'), (_k, v) => (typeof v === 'string' && /^\d{16,}$/.test(v) ? Number(BigInt(v)) : v)) as Record<string, unknown>;
}

function fixtureFiles(kind: 'inclusion' | 'consistency'): string[] {
  const dir = join(FIXTURES, 'testdata', kind);
  return readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).filter((f) => f.endsWith('.json')).map((f) => join(dir, d, f)));
}

const outcome = (fn: () => void): 'ok' | 'refused' => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (!(e instanceof TlogError)) throw e;
    return 'refused';
  }
};

test('inclusion fixtures: every happy path verifies, every tampered proof is refused', () => {
  const files = fixtureFiles('inclusion');
  assert.ok(files.length >= 60, `${files.length} files`);
  let happy = 0;
  for (const f of files) {
    const v = fixture(f) as { leafIdx: number; treeSize: number; root: string; leafHash: string; proof: string[] | null; wantErr: boolean };
    const got = outcome(() => verifyInclusion(b64(v.leafHash), v.leafIdx, v.treeSize, (v.proof ?? []).map(b64), b64(v.root)));
    assert.is(got, v.wantErr ? 'refused' : 'ok', f);
    if (!v.wantErr) happy++;
  }
  assert.ok(happy >= 5);
});

test('consistency fixtures: every happy path verifies, every tampered proof is refused', () => {
  const files = fixtureFiles('consistency');
  assert.ok(files.length >= 70, `${files.length} files`);
  for (const f of files) {
    const v = fixture(f) as { size1: number; size2: number; root1: string; root2: string; proof: string[] | null; wantErr: boolean };
    const got = outcome(() => verifyConsistency(v.size1, v.size2, (v.proof ?? []).map(b64), b64(v.root1), b64(v.root2)));
    assert.is(got, v.wantErr ? 'refused' : 'ok', f);
  }
});

test('the constants: leaf hashes, every node hash and the roots of sizes 0..8', () => {
  const src = readFileSync(join(FIXTURES, 'constants.go.txt'), 'utf8');
  const block = (name: string) => src.slice(src.indexOf(`func ${name}`), src.indexOf('\n}\n', src.indexOf(`func ${name}`)));
  const inputs = [...block('LeafInputs').matchAll(/hd\("([0-9a-f]*)"\)/g)].map((m) => unhex(m[1]));
  const levels = block('NodeHashes').split('}, {').map((part) => [...part.matchAll(/hd\("([0-9a-f]{64})"\)/g)].map((m) => m[1]));
  const roots = [hex(EMPTY_ROOT), ...[...block('RootHashes').matchAll(/hd\("([0-9a-f]{64})"\)/g)].map((m) => m[1])];
  assert.is(inputs.length, 8);
  assert.is(roots.length, 9);
  assert.is(roots[8], '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328');
  assert.is(hex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(inputs.map((e) => hex(leafHash(e))), levels[0]);
  for (let l = 1; l < levels.length; l++) {
    for (let i = 0; i < levels[l].length; i++) assert.is(hex(nodeHash(unhex(levels[l - 1][2 * i]), unhex(levels[l - 1][2 * i + 1]))), levels[l][i]);
  }
  const b = new TileBuilder();
  assert.is(hex(b.root()), roots[0]);
  inputs.forEach((e, i) => {
    assert.is(b.appendEntry(e), i);
    assert.is(hex(b.root()), roots[i + 1], `size ${i + 1}`);
  });
});

test('leaf hashes of entries up to and past the kernel slice agree with node:crypto', () => {
  const r = rng(7);
  for (const n of [0, 1, 31, 64, 65534, 65535, 65536, 200000]) {
    const e = new Uint8Array(n).map(() => r() & 0xff);
    assert.is(hex(leafHash(e)), hex(refLeaf(e)), `length ${n}`);
  }
});

// ---------------------------------------------------------------- proofs from tiles, against the naive reference

function buildTree(n: number, seed = 1): { leaves: Uint8Array[]; builder: TileBuilder; tiles: TileData[] } {
  const r = rng(seed);
  const leaves: Uint8Array[] = [];
  const builder = new TileBuilder();
  for (let i = 0; i < n; i++) {
    const e = new Uint8Array(8 + (i % 40)).map(() => r() & 0xff);
    leaves.push(refLeaf(e));
    assert.is(builder.appendEntry(e), i);
  }
  return { leaves, builder, tiles: builder.takeTiles() };
}

test('proofs produced from stored tiles equal RFC 9162 PATH and PROOF, and verify', async () => {
  for (const n of [1, 2, 3, 7, 8, 255, 256, 257, 511, 1000, 65536, 65537, 70000]) {
    const { leaves, builder, tiles } = buildTree(n, n);
    const root = mth(leaves);
    assert.is(hex(builder.root()), hex(root), `root of ${n}`);
    const reader = tileHashReader(n, memoryTiles(tiles));
    assert.is(hex(await treeHash(n, reader)), hex(root));
    const r = rng(n);
    const picks = n <= 300 ? [...Array(n).keys()] : [0, 1, 255, 256, n - 1, ...Array.from({ length: 12 }, () => Math.floor(r() / 2 ** 32 * n))];
    for (const m of picks) {
      const proof = await proveInclusion(n, m, reader);
      if (n <= 2000) assert.equal(proof.map(hex), path(m, leaves).map(hex), `PATH(${m}, ${n})`);
      verifyInclusion(leaves[m], m, n, proof, root);
      const wrong = outcome(() => verifyInclusion(leaves[(m + 1) % n], m, n, proof, root));
      if (n > 1) assert.is(wrong, 'refused');
    }
    for (const m of picks) {
      if (m === 0) continue;
      const proof = await proveConsistency(m, n, reader);
      if (n <= 2000) assert.equal(proof.map(hex), (m === n ? [] : subproof(m, leaves, true)).map(hex), `PROOF(${m}, ${n})`);
      verifyConsistency(m, n, proof, mth(leaves.slice(0, m)), root);
      if (proof.length > 0) {
        const bad = proof.map((h) => h.slice());
        bad[bad.length - 1][0] ^= 1;
        assert.is(outcome(() => verifyConsistency(m, n, bad, mth(leaves.slice(0, m)), root)), 'refused');
      }
    }
  }
});

test('a proof reads all its tiles in one readTiles call, each tile once', async () => {
  const { tiles } = buildTree(70000, 21);
  const mem = memoryTiles(tiles);
  const calls: TileCoord[][] = [];
  const counting = { readTiles: (cs: readonly TileCoord[]) => { calls.push([...cs]); return mem.readTiles(cs); } };
  for (const prove of [() => proveInclusion(70000, 12345, tileHashReader(70000, counting)), () => proveConsistency(33333, 70000, tileHashReader(70000, counting))]) {
    calls.length = 0;
    await prove();
    assert.is(calls.length, 1);
    const keys = calls[0].map((c) => `${c.level}/${c.index}`);
    assert.is(new Set(keys).size, keys.length);
    assert.ok(keys.length <= 6, keys.join(' '));
  }
});

test('a proof at an older size is read from today\'s tiles (partial tiles grew full since)', async () => {
  const { leaves, tiles } = buildTree(70000, 3);
  const reader = tileHashReader(1000, memoryTiles(tiles)); // the tiles of size 70000, asked as size 1000
  const root = mth(leaves.slice(0, 1000));
  assert.is(hex(await treeHash(1000, reader)), hex(root));
  verifyInclusion(leaves[999], 999, 1000, await proveInclusion(1000, 999, reader), root);
  const big = tileHashReader(70000, memoryTiles(tiles));
  verifyConsistency(1000, 70000, await proveConsistency(1000, 70000, big), root, mth(leaves));
});

test('the builder resumes from its partial tiles alone and yields the same tiles and root', async () => {
  const { leaves, tiles } = buildTree(70000, 9);
  // a first builder stops at 66000 and stores its tiles; a second resumes from them
  const first = new TileBuilder();
  for (let i = 0; i < 66000; i++) first.appendLeafHash(leaves[i]);
  const stored = memoryTiles(first.takeTiles());
  const resumed = await TileBuilder.resume(66000, stored);
  assert.is(resumed.size, 66000);
  assert.is(hex(resumed.root()), hex(mth(leaves.slice(0, 66000))));
  for (let i = 66000; i < 70000; i++) assert.is(resumed.appendLeafHash(leaves[i]), i);
  assert.is(hex(resumed.root()), hex(mth(leaves)));
  const more = resumed.takeTiles();
  const want = newTiles(66000, 70000);
  assert.equal(more.map((t) => tilePath(t)).sort(), want.map((t) => tilePath(t)).sort());
  const all = memoryTiles(tiles);
  for (const t of more) assert.is(hex(t.data), hex(all.map.get(`${t.level}/${t.index}`)!.subarray(0, t.width * 32)), tilePath(t));
});

test('tiles hold MTH(D[(n*256+i)*256^l : (n*256+i+1)*256^l]) (tlog-tiles "Merkle Tree")', () => {
  const { leaves, tiles } = buildTree(70000, 5);
  const byPath = new Map(tiles.map((t) => [tilePath(t), t]));
  // tlog-tiles: size 70000 = 273 full level-0 tiles, a partial of 112, a full level-1 tile, a partial of 17, a level-2 partial of 1
  assert.equal(partialTiles(70000), [{ level: 0, index: 273, width: 112 }, { level: 1, index: 1, width: 17 }, { level: 2, index: 0, width: 1 }]);
  assert.equal(tiles.filter((t) => t.level === 0 && t.width === 256).length, 273);
  assert.equal(tiles.filter((t) => t.level === 1 && t.width === 256).length, 1);
  assert.equal(partialTiles(256), [{ level: 1, index: 0, width: 1 }]);
  for (const [l, n, w] of [[0, 0, 256], [0, 273, 112], [1, 0, 256], [1, 1, 17], [2, 0, 1]]) {
    const t = byPath.get(tilePath({ level: l, index: n, width: w }))!;
    assert.ok(t, `${l}/${n}/${w}`);
    for (let i = 0; i < w; i++) {
      const lo = (n * 256 + i) * 256 ** l;
      assert.is(hex(t.data.subarray(i * 32, i * 32 + 32)), hex(mth(leaves.slice(lo, lo + 256 ** l))));
    }
  }
  assert.is(tileWidthAt(70000, 0, 273), 112);
  assert.is(tileWidthAt(70000, 0, 274), 0);
  assert.is(tileWidthAt(70000, 1, 0), 256);
});

test('the root from level-0 tiles alone, and the upper tiles rebuilt on the way', async () => {
  const { leaves, tiles } = buildTree(70000, 11);
  const rebuilt: TileData[] = [];
  const root = await rootFromLevel0Tiles(70000, memoryTiles(tiles.filter((t) => t.level === 0)), { onFullTile: (t) => rebuilt.push(t), batch: 7 });
  assert.is(hex(root), hex(mth(leaves)));
  assert.equal(rebuilt.map((t) => tilePath(t)), ['tile/1/000']);
  assert.is(hex(rebuilt[0].data), hex(tiles.find((t) => t.level === 1 && t.index === 0 && t.width === 256)!.data));
  // a level-0 tile with one bit flipped gives another root
  const bad = tiles.filter((t) => t.level === 0).map((t) => (t.index === 100 ? { ...t, data: t.data.map((x, i) => (i === 5 ? x ^ 1 : x)) } : t));
  assert.is.not(hex(await rootFromLevel0Tiles(70000, memoryTiles(bad))), hex(mth(leaves)));
  // a missing or short tile is an error, not a wrong root
  const short = tiles.filter((t) => t.level === 0).map((t) => (t.index === 273 ? { ...t, data: t.data.subarray(0, 64) } : t));
  try {
    await rootFromLevel0Tiles(70000, memoryTiles(short));
    assert.unreachable();
  } catch (e) {
    assert.instance(e, TlogError);
    assert.is((e as TlogError).code, 'malformed_tile');
  }
});

test('appendLeafHashes in odd chunks builds what appendLeafHash does', () => {
  const { leaves, builder } = buildTree(3000, 13);
  const b = new TileBuilder();
  const all = new Uint8Array(leaves.length * 32);
  leaves.forEach((l, i) => all.set(l, i * 32));
  for (const [lo, hi] of [[0, 3], [3, 259], [259, 1024], [1024, 1025], [1025, 3000]]) b.appendLeafHashes(all.subarray(lo * 32, hi * 32));
  assert.is(b.size, 3000);
  assert.is(hex(b.root()), hex(builder.root()));
  assert.equal(b.takeTiles().map((t) => hex(t.data)), buildTree(3000, 13).tiles.map((t) => hex(t.data)));
});

// ---------------------------------------------------------------- paths and bundles

test('tile paths: the spec\'s N encoding, partial widths, one canonical spelling', () => {
  assert.is(encodeTileIndex(1234067), 'x001/x234/067');
  assert.is(encodeTileIndex(0), '000');
  assert.is(encodeTileIndex(1000), 'x001/000');
  assert.is(tilePath({ level: 0, index: 1234067, width: 256 }), 'tile/0/x001/x234/067');
  assert.is(tilePath({ level: 2, index: 5, width: 17 }), 'tile/2/005.p/17');
  assert.is(entriesPath(1234067, 3), 'tile/entries/x001/x234/067.p/3');
  assert.equal(parseTilePath('tile/0/x001/x234/067'), { kind: 'tile', level: 0, index: 1234067, width: 256 });
  assert.equal(parseTilePath('tile/1/x001/x234/067.p/8'), { kind: 'tile', level: 1, index: 1234067, width: 8 });
  assert.equal(parseTilePath('tile/entries/000.p/255'), { kind: 'entries', index: 0, width: 255 });
  assert.equal(parseTilePath('tile/63/999'), { kind: 'tile', level: 63, index: 999, width: 256 });
  for (const bad of ['tile/0/1234067', 'tile/0/x000/005', 'tile/0/001/234', 'tile/00/000', 'tile/64/000', 'tile/0/000.p/256', 'tile/0/000.p/0',
    'tile/0/000.p/01', 'tile/0/00a', 'tile/0', 'tiles/0/000', 'tile/-1/000', 'tile/0/x001', 'tile/0/x01/000', 'tile//000', 'tile/0/000/', 'tile/entries/000.p/', 'tile/0/x999/x999/x999/x999/x999/x999/999']) {
    assert.throws(() => parseTilePath(bad), (e: unknown) => e instanceof TlogError && e.code === 'malformed_tile_path', bad);
  }
  const r = rng(17);
  for (let i = 0; i < 2000; i++) {
    const index = Math.floor((r() / 2 ** 32) * 10 ** (1 + (i % 15)));
    const p = tilePath({ level: i % 64, index, width: 1 + (i % 256) });
    const q = parseTilePath(p);
    assert.is(q.kind === 'tile' && tilePath(q), p);
  }
});

test('newTiles lists what appears between two sizes', () => {
  assert.equal(newTiles(0, 1).map(tilePath), ['tile/0/000.p/1']);
  assert.equal(newTiles(255, 256).map(tilePath), ['tile/0/000', 'tile/1/000.p/1']);
  assert.equal(newTiles(256, 256), []);
  assert.equal(newTiles(100, 600).map(tilePath), ['tile/0/000', 'tile/0/001', 'tile/0/002.p/88', 'tile/1/000.p/2']);
});

test('entry bundles: uint16 big-endian lengths, round trip, truncation refused', () => {
  const entries = [new Uint8Array(0), Uint8Array.of(1, 2, 3), new Uint8Array(65535).fill(7)];
  const bundle = encodeEntryBundle(entries);
  assert.equal([...bundle.subarray(0, 5)], [0, 0, 0, 3, 1]);
  assert.equal(decodeEntryBundle(bundle, 3).map((e) => e.length), [0, 3, 65535]);
  assert.throws(() => encodeEntryBundle([new Uint8Array(65536)]), /does not fit/);
  assert.throws(() => decodeEntryBundle(bundle.subarray(0, bundle.length - 1)), /ends inside an entry/);
  assert.throws(() => decodeEntryBundle(bundle, 4), /not 4/);
  assert.throws(() => decodeEntryBundle(Uint8Array.of(0)), /inside a length/);
});

test('sizes beyond 2^53 and negative ones are refused, never rounded', async () => {
  const h = refLeaf(new Uint8Array(1));
  for (const n of [-1, 2 ** 53, 1.5, Number.NaN]) {
    assert.is(outcome(() => verifyInclusion(h, 0, n, [], h)), 'refused');
    assert.is(outcome(() => verifyConsistency(n, n, [], h, h)), 'refused');
  }
  try {
    await proveInclusion(5, 5, { readHashes: () => [] });
    assert.unreachable();
  } catch (e) {
    assert.is((e as TlogError).code, 'bad_index');
  }
});

test.run();
