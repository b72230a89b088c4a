// Go's reference implementation (golang.org/x/mod/sumdb/note and tlog, test/go/tlogref)
// against what a running server SERVES (issue 27): the checkpoint from GET
// /log/checkpoint opened with note.Open and the key from GET /log/key (its witness's
// cosignature with a cosignature/v1 verifier), the proofs from GET
// /api/v1/sign-it/proof checked with tlog.CheckRecord, a consistency proof made from the
// served tiles checked with tlog.CheckTree, the root recomputed through
// tlog.TileHashReader over the served tiles and from the served level-0 tiles alone, and
// Go's proofs from those tiles equal to the served ones. Skipped without Go (a failure
// under CI=true).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  decodeEntryBundle, encodeBase64, entriesPath, leafHash, parseProofBundle, proveConsistency, startWitness, tileHashReader, tilePath, tileWidthAt, verifyCheckpoint,
} from 'provenant';
import { runTlogref, runWithGo } from '../helpers/go.js';
import { apiRequest, startTestServer, testEngine } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { Checkpointer } from '../../server/src/tlog/checkpointer.js';

const test = suite('served log against Go');
const engine = testEngine(import.meta.url);

async function get(url: string): Promise<Uint8Array> {
  const res = await fetch(url);
  assert.is(res.status, 200, url);
  return new Uint8Array(await res.arrayBuffer());
}

test('Go opens the served checkpoint, checks the served proofs and recomputes the root from the served tiles', async () => {
  const secrets = mkdtempSync(join(tmpdir(), 'provenant-go-secrets-'));
  writeFileSync(join(secrets, 'log.key'), randomBytes(32), { mode: 0o600 });
  const { verifierOf, SIG_ED25519 } = await import('provenant');
  const logVkey = verifierOf('log.example/log', SIG_ED25519, new Uint8Array((await import('node:fs')).readFileSync(join(secrets, 'log.key')))).vkey;
  const wdir = mkdtempSync(join(tmpdir(), 'provenant-go-witness-'));
  const witness = await startWitness({ dir: wdir, name: 'witness.example/w1', logs: [logVkey] });
  const srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_SECRETS_DIR: secrets, PROVENANT_BASE_URL: 'http://log.example', PROVENANT_LOG_WITNESSES: `${witness.verifierKey} ${witness.url}` }, { engine });
  const dir = mkdtempSync(join(tmpdir(), 'provenant-go-served-'));
  try {
    const log = srv.deps.transparencyLog;
    await log.checkpointer.close();
    const node = new Checkpointer({ store: log.store, identity: log.identity, witnesses: srv.deps.config.logWitnesses, log: srv.deps.log });
    const actions: string[] = [];
    let oldSize = 0;
    let oldRoot: Uint8Array = new Uint8Array();
    for (let u = 0; u < 3; u++) {
      const { token, user } = await srv.register();
      await createServerCell(srv.deps, user.id);
      await srv.deps.store.accounts.setUserTier(user.id, 'premium');
      const r = await apiRequest(srv.url, 'POST', '/api/v1/sign-it/sign-batch', { token, body: { files: Array.from({ length: 100 }, () => ({ file_hash: randomBytes(32).toString('hex') })) } });
      assert.is(r.status, 200, r.text);
      actions.push(...(r.body.results as { action_hash: string }[]).map((x) => x.action_hash));
      await node.tick();
      if (u === 1) {
        const c = verifyCheckpoint(new TextDecoder().decode(await get(`${srv.url}/log/checkpoint`)), { logKeys: [logVkey] }).checkpoint;
        oldSize = c.size;
        oldRoot = c.rootHash;
      }
    }
    const note = new TextDecoder().decode(await get(`${srv.url}/log/checkpoint`));
    const { checkpoint } = verifyCheckpoint(note, { logKeys: [logVkey], witnesses: [witness.verifierKey], quorum: 1 });
    assert.is(checkpoint.size, 300);
    assert.is(oldSize, 200);
    assert.is((await get(`${srv.url}/log/key`)).length > 0, true);
    writeFileSync(join(dir, 'checkpoint'), note);
    writeFileSync(join(dir, 'vkey'), new TextDecoder().decode(await get(`${srv.url}/log/key`)));
    writeFileSync(join(dir, 'witness-vkeys'), witness.verifierKey);

    // every tile the server serves at this size, at its C2SP path
    const tiles = new Map<string, Uint8Array>();
    for (let level = 0; 256 ** level <= checkpoint.size || level === 0; level++) {
      for (let index = 0; tileWidthAt(checkpoint.size, level, index) > 0; index++) {
        const path = tilePath({ level, index, width: tileWidthAt(checkpoint.size, level, index) });
        tiles.set(path, await get(`${srv.url}/log/${path}`));
      }
    }
    for (const [path, data] of tiles) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), data);
    }
    // the served proofs, with the leaf hashes of the served entries
    const entries = [
      ...decodeEntryBundle(await get(`${srv.url}/log/${entriesPath(0, 256)}`), 256),
      ...decodeEntryBundle(await get(`${srv.url}/log/${entriesPath(1, 44)}`), 44),
    ];
    const picks = [0, 1, 199, 255, 256, 299];
    const inclusion = [];
    for (const index of picks) {
      const bundle = parseProofBundle(new TextDecoder().decode(await get(`${srv.url}/api/v1/sign-it/proof?action_hash=${actions[index]}`)));
      assert.is(bundle.index, index);
      inclusion.push({ index, leafHash: encodeBase64(leafHash(entries[index]!)), proof: bundle.proof.map(encodeBase64) });
    }
    const reader = tileHashReader(checkpoint.size, { readTiles: (cs) => cs.map((c) => tiles.get(tilePath(c))!) });
    const consistency = [{ old: oldSize, oldRoot: encodeBase64(oldRoot), proof: (await proveConsistency(oldSize, checkpoint.size, reader)).map(encodeBase64) }];
    writeFileSync(join(dir, 'proofs.json'), JSON.stringify({ inclusion, consistency }));

    const go = runTlogref('check', dir);
    assert.ok(go.ok, go.ok ? '' : go.stderr);
    if (!go.ok) return;
    assert.is(go.json.origin, 'log.example/log');
    assert.is(go.json.size, 300);
    assert.is(go.json.root, encodeBase64(checkpoint.rootHash));
    assert.equal(go.json.signers.sort(), ['log.example/log', 'witness.example/w1']);
    assert.equal(go.json.proofs.inclusion, inclusion, 'Go\'s proofs from the served tiles are the served ones');
    assert.equal(go.json.proofs.consistency, consistency);
    await node.close();
  } finally {
    await srv.close();
    await witness.close();
    for (const d of [dir, wdir, secrets]) rmSync(d, { recursive: true, force: true });
  }
});

runWithGo(test);
