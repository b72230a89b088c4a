// Our transparency log against Go's reference (golang.org/x/mod/sumdb/note and tlog), in
// both directions: Go opens our checkpoint with note.Open and our verifier key (and our
// witnesses' cosignatures with a cosignature/v1 verifier), checks our proofs with
// tlog.CheckRecord and tlog.CheckTree, recomputes the root through tlog.TileHashReader
// over our tiles and from our level-0 tiles alone, and its proofs from our tiles equal
// ours; Go builds a log, signs a checkpoint and makes proofs and tiles, and we verify them.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import '../../src/lib/wasm.js';
import {
  SIG_COSIGNATURE_V1, SIG_ED25519, TileBuilder, TlogError, encodeBase64, leafHash, noteSigner, openNote, parseHash, parseVerifierKey,
  proveConsistency, proveInclusion, signCheckpoint, tileHashReader, tilePath, verifierOf, verifyCheckpoint, verifyConsistency, verifyInclusion,
  type TileCoord,
} from '../../src/lib/tlog/index.js';
import { runTlogref, runWithGo } from '../helpers/go.js';

const test = suite('tlog against Go');
const enc = new TextEncoder();
const ORIGIN = 'provenant.example/log';

interface Built { dir: string; size: number; leaves: Uint8Array[]; roots: Uint8Array[]; tiles: Map<string, Uint8Array>; checkpoint: string }

/** Our log of `size` entries written as Go's check mode reads it: tiles at their C2SP paths, the checkpoint, keys, proofs. */
async function writeOurLog(size: number, tamper?: (b: Built) => void): Promise<Built> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-tlog-go-'));
  const builder = new TileBuilder();
  const leaves: Uint8Array[] = [];
  const roots: Uint8Array[] = [];
  for (let i = 0; i < size; i++) {
    const e = enc.encode(`{"record":${i},"pad":"${'x'.repeat(i % 50)}"}`);
    leaves.push(leafHash(e));
    builder.appendEntry(e);
    if (i % 997 === 0 || i === size - 2) roots[i + 1] = builder.root();
  }
  const tiles = new Map<string, Uint8Array>();
  for (const t of builder.takeTiles()) tiles.set(tilePath(t), t.data);
  const log = noteSigner(ORIGIN, SIG_ED25519, new Uint8Array(32).fill(7));
  const w1 = noteSigner('w1.example', SIG_COSIGNATURE_V1, new Uint8Array(32).fill(8));
  const w2 = noteSigner('w2.example', SIG_COSIGNATURE_V1, new Uint8Array(32).fill(9));
  const checkpoint = signCheckpoint({ origin: ORIGIN, size, rootHash: builder.root(), extensions: [] }, [log, w1, w2]);
  const b: Built = { dir, size, leaves, roots, tiles, checkpoint };
  const reader = tileHashReader(size, { readTiles: (cs: readonly TileCoord[]) => cs.map((c) => tiles.get(tilePath(c))!) });
  const picks = [0, 1, 255, 256, Math.floor(size / 2), size - 1].filter((i) => i < size);
  const inclusion = await Promise.all(picks.map(async (index) => ({ index, leafHash: encodeBase64(leaves[index]), proof: (await proveInclusion(size, index, reader)).map(encodeBase64) })));
  const olds = Object.keys(roots).map(Number).filter((o) => o <= size);
  const consistency = await Promise.all(olds.map(async (old) => ({ old, oldRoot: encodeBase64(roots[old]), proof: (await proveConsistency(old, size, reader)).map(encodeBase64) })));
  tamper?.(b);
  for (const [path, data] of b.tiles) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), data);
  }
  writeFileSync(join(dir, 'checkpoint'), b.checkpoint);
  writeFileSync(join(dir, 'vkey'), `${verifierOf(ORIGIN, SIG_ED25519, new Uint8Array(32).fill(7)).vkey}\n`);
  writeFileSync(join(dir, 'witness-vkeys'), [8, 9].map((s, i) => verifierOf(`w${i + 1}.example`, SIG_COSIGNATURE_V1, new Uint8Array(32).fill(s)).vkey).join('\n'));
  writeFileSync(join(dir, 'proofs.json'), JSON.stringify({ inclusion, consistency }));
  return b;
}

test('Go opens our checkpoint, checks our proofs, and recomputes our root from our tiles', async () => {
  for (const size of [1, 256, 257, 70000]) {
    const b = await writeOurLog(size);
    try {
      const r = runTlogref('check', b.dir);
      assert.ok(r.ok, r.ok ? '' : r.stderr);
      if (!r.ok) continue;
      assert.is(r.json.origin, ORIGIN);
      assert.is(r.json.size, size);
      // our log signature and both cosignatures verified by Go
      assert.equal(r.json.signers, [ORIGIN, 'w1.example', 'w2.example']);
      assert.is(r.json.unverified, 0);
      // Go's own proofs from our tiles are ours, byte for byte
      const mine = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(join(b.dir, 'proofs.json'), 'utf8')));
      assert.equal(r.json.proofs.inclusion.map((p: { proof: string[] | null }) => p.proof ?? []), mine.inclusion.map((p: { proof: string[] }) => p.proof));
      assert.equal(r.json.proofs.consistency.map((p: { proof: string[] | null }) => p.proof ?? []), mine.consistency.map((p: { proof: string[] }) => p.proof));
    } finally {
      rmSync(b.dir, { recursive: true });
    }
  }
});

test('Go refuses what we would: a tampered level-0 tile, a tampered checkpoint, a wrong proof', async () => {
  const flip = (d: Uint8Array) => d.map((x, i) => (i === 40 ? x ^ 1 : x));
  const cases: Array<[string, (b: Built) => void, RegExp]> = [
    ['a level-0 tile', (b) => b.tiles.set('tile/0/002', flip(b.tiles.get('tile/0/002')!)), /./],
    ['the checkpoint size', (b) => { b.checkpoint = b.checkpoint.replace(`\n${b.size}\n`, `\n${b.size - 1}\n`); }, /invalid signature|verif/i],
  ];
  for (const [what, tamper, msg] of cases) {
    const b = await writeOurLog(1000, tamper);
    try {
      const r = runTlogref('check', b.dir);
      assert.not.ok(r.ok, `Go accepted ${what}`);
      if (!r.ok) assert.match(r.stderr, msg);
    } finally {
      rmSync(b.dir, { recursive: true });
    }
  }
  // a proof whose first hash is changed
  const b = await writeOurLog(1000);
  try {
    const proofs = JSON.parse((await import('node:fs')).readFileSync(join(b.dir, 'proofs.json'), 'utf8'));
    const h = Buffer.from(proofs.inclusion[2].proof[0], 'base64');
    h[0] ^= 1;
    proofs.inclusion[2].proof[0] = h.toString('base64');
    writeFileSync(join(b.dir, 'proofs.json'), JSON.stringify(proofs));
    const r = runTlogref('check', b.dir);
    assert.not.ok(r.ok);
    if (!r.ok) assert.match(r.stderr, /inclusion of 255/);
  } finally {
    rmSync(b.dir, { recursive: true });
  }
});

test('we verify what Go makes: its signed checkpoint, its proofs, its tiles', () => {
  for (const size of [1, 2, 7, 256, 1000, 66000]) {
    const r = runTlogref('make', String(size));
    assert.ok(r.ok, r.ok ? '' : r.stderr);
    if (!r.ok) continue;
    const go = r.json as { vkey: string; note: string; size: number; root: string; proofs: { inclusion: { index: number; leafHash: string; proof: string[] | null }[]; consistency: { old: number; oldRoot: string; proof: string[] | null }[] }; tiles: Record<string, string> };
    // Go's note.GenerateKey vkey and note.Sign signature
    const key = parseVerifierKey(go.vkey);
    assert.is(key.name, 'go.example/log');
    const v = verifyCheckpoint(go.note, { logKeys: [go.vkey] });
    assert.is(v.checkpoint.size, size);
    assert.is(encodeBase64(v.checkpoint.rootHash), go.root);
    try {
      openNote(go.note.replace(go.root, encodeBase64(new Uint8Array(32))), [key]);
      assert.unreachable('a changed note opened');
    } catch (e) {
      assert.instance(e, TlogError);
    }
    // the same entries through our builder: the same root and tiles
    const builder = new TileBuilder();
    for (let i = 0; i < size; i++) builder.appendEntry(enc.encode(`go entry ${i}\n`));
    assert.is(encodeBase64(builder.root()), go.root);
    const ours = new Map(builder.takeTiles().map((t) => [tilePath(t), encodeBase64(t.data)]));
    // Go's NewTiles lists every partial width on the way (its sumdb serves them all); C2SP
    // logs serve the partial tiles of checkpointed sizes: ours are those of this size
    const full = (paths: string[]) => paths.filter((p) => !p.includes('.p/')).sort();
    assert.equal(full([...ours.keys()]), full(Object.keys(go.tiles)));
    for (const [path, data] of ours) assert.is(data, go.tiles[path], path);
    // Go's proofs verify with ours
    const root = parseHash(go.root);
    for (const p of go.proofs.inclusion) verifyInclusion(parseHash(p.leafHash), p.index, size, (p.proof ?? []).map((h) => parseHash(h)), root);
    for (const p of go.proofs.consistency) verifyConsistency(p.old, size, (p.proof ?? []).map((h) => parseHash(h)), parseHash(p.oldRoot), root);
    // and a proof of Go's for one index is refused for another
    const p = go.proofs.inclusion[0];
    if (size > 1) assert.throws(() => verifyInclusion(parseHash(p.leafHash), p.index + 1, size, (p.proof ?? []).map((h) => parseHash(h)), root), (e: unknown) => e instanceof TlogError);
  }
});

runWithGo(test);
