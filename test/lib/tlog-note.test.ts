// Signed notes, checkpoints, cosignatures and tlog-proof bundles: the signed-note spec's
// example key and note, signatures and key IDs checked with node:crypto (Ed25519,
// SHA-256) rather than with the library's own code, and every refusal the specs name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import '../../src/lib/wasm.js';
import {
  EMPTY_ROOT, SIG_COSIGNATURE_V1, SIG_ED25519, TileBuilder, TlogError, buildProofBundle, formatCheckpoint, formatNote, formatProofBundle,
  formatSignerKey, formatVerifierKey, generateSignerKey, keyId, leafHash, noteSigner, openNote, parseCheckpoint, parseNote, parseProofBundle,
  parseSignatureLines, parseSignerKey, parseVerifierKey, signCheckpoint, signNote, tileHashReader, verifierOf, verifyCheckpoint, verifyProofBundle,
  type TileCoord, type TileData,
} from '../../src/lib/tlog/index.js';

const enc = new TextEncoder();
const code = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof TlogError) return e.code;
    throw e;
  }
};
const seed = (n: number) => new Uint8Array(32).fill(n);
/** Ed25519 verification by node:crypto, from the raw 32-byte key. */
function nodeEd25519(publicKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
  return nodeVerify(null, msg, key, sig);
}

const EXAMPLE_VKEY = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const EXAMPLE_NOTE = 'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

test('signed-note.md example: the verifier key opens the example note', () => {
  const v = parseVerifierKey(EXAMPLE_VKEY);
  assert.is(v.name, 'example.com/foo');
  assert.is(v.keyId, 0x530d903a);
  assert.is(v.type, SIG_ED25519);
  assert.is(v.vkey, EXAMPLE_VKEY);
  // the key ID as the spec defines it, by node:crypto
  const want = createHash('sha256').update(Buffer.concat([Buffer.from('example.com/foo\n'), Buffer.from([1]), v.publicKey])).digest().readUInt32BE(0);
  assert.is(keyId('example.com/foo', 1, v.publicKey), want);
  const opened = openNote(EXAMPLE_NOTE, [v]);
  assert.is(opened.text, 'This is an example message.\n');
  assert.is(opened.verified.length, 1);
  assert.ok(nodeEd25519(v.publicKey, enc.encode(opened.text), opened.verified[0].signature));
  // as bytes too
  assert.is(openNote(enc.encode(EXAMPLE_NOTE), [v]).text, opened.text);
  // one changed character in the text: the known key's signature fails, the note is refused
  assert.is(code(() => openNote(EXAMPLE_NOTE.replace('example', 'Example'), [v])), 'bad_signature');
  // the same key under another name, or another key ID: unknown, so nothing verifies
  const other = formatVerifierKey('example.com/bar', SIG_ED25519, v.publicKey);
  assert.is(code(() => openNote(EXAMPLE_NOTE, [parseVerifierKey(other)])), 'no_verified_signature');
});

test('verifier keys: malformed, wrong key ID, unsupported type are refused', () => {
  const good = EXAMPLE_VKEY;
  for (const bad of [
    good.replace('530d903a', '530d903b'), good.replace('530d903a', '530D903A'), good.replace('example.com/foo', 'example.com/fo o'),
    'example.com/foo+530d903a', `${good}+x`, good.replace('Aeky', 'Beky'), good.slice(0, -4), '+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k',
  ]) assert.is(code(() => parseVerifierKey(bad)), 'malformed_key', bad);
  // a type-0x02 key with a correct key ID is still refused: only 0x01 and 0x04 are supported
  const pub = parseVerifierKey(good).publicKey;
  const id = keyId('a.example/k', 2, pub).toString(16).padStart(8, '0');
  assert.is(code(() => parseVerifierKey(`a.example/k+${id}+${Buffer.concat([Buffer.from([2]), pub]).toString('base64')}`)), 'malformed_key');
});

test('signing: Ed25519 and cosignature/v1 signatures node:crypto verifies; signer keys round trip', () => {
  const log = noteSigner('log.example/a', SIG_ED25519, seed(1));
  const witness = noteSigner('witness.example/w', SIG_COSIGNATURE_V1, seed(2), () => 1679315147);
  const text = 'log.example/a\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
  const note = signNote(text, [log, witness]);
  const lv = verifierOf('log.example/a', SIG_ED25519, seed(1));
  const wv = verifierOf('witness.example/w', SIG_COSIGNATURE_V1, seed(2));
  const opened = openNote(note, [lv, wv]);
  assert.is(opened.verified.length, 2);
  assert.ok(nodeEd25519(lv.publicKey, enc.encode(text), opened.verified[0].signature));
  const cosig = opened.verified[1];
  assert.is(cosig.timestamp, 1679315147);
  assert.is(Buffer.from(cosig.signature.subarray(0, 8)).readBigUInt64BE(0), 1679315147n);
  // tlog-cosignature "Ed25519 signed message", spelled out here
  assert.ok(nodeEd25519(wv.publicKey, enc.encode(`cosignature/v1\ntime 1679315147\n${text}`), cosig.signature.subarray(8)));
  // the cosignature key ID uses type 0x04, so the same key and name under 0x01 is another key
  assert.is.not(wv.keyId, verifierOf('witness.example/w', SIG_ED25519, seed(2)).keyId);
  assert.is(code(() => openNote(note, [verifierOf('witness.example/w', SIG_ED25519, seed(2))])), 'no_verified_signature');
  // a cosignature whose timestamp was changed no longer verifies
  const sigs = parseNote(note).signatures;
  const moved = sigs[1].signature.slice();
  moved[7] ^= 1;
  assert.is(code(() => openNote(formatNote(text, [sigs[0], { ...sigs[1], signature: moved }]), [lv, wv])), 'bad_signature');
  // signer keys
  const sk = formatSignerKey('log.example/a', SIG_ED25519, seed(1));
  assert.equal(parseSignerKey(sk), { name: 'log.example/a', type: SIG_ED25519, seed: seed(1) });
  assert.is(code(() => parseSignerKey(sk.replace('+log.example/a+', '+log.example/b+'))), 'malformed_key');
  const g = generateSignerKey('w.example/x', SIG_COSIGNATURE_V1);
  const parsed = parseSignerKey(g.signerKey);
  assert.is(verifierOf(parsed.name, parsed.type, parsed.seed).vkey, g.verifierKey);
  assert.is(parseVerifierKey(g.verifierKey).type, SIG_COSIGNATURE_V1);
});

test('note format: what signed-note.md forbids is malformed', () => {
  const v = parseVerifierKey(EXAMPLE_VKEY);
  const sigLine = EXAMPLE_NOTE.slice(EXAMPLE_NOTE.indexOf('\u2014'));
  const cases: Record<string, string> = {
    'no blank line': EXAMPLE_NOTE.replace('\n\n', '\n'),
    'no final newline': EXAMPLE_NOTE.slice(0, -1),
    'a control character': EXAMPLE_NOTE.replace('This', 'Th\tis'),
    'a CR': EXAMPLE_NOTE.replace('message.', 'message.\r'),
    'a lone surrogate': EXAMPLE_NOTE.replace('This', 'Th\ud800is'),
    'a hyphen instead of the em dash': EXAMPLE_NOTE.replace('\u2014', '-'),
    'no signature': 'This is an example message.\n\n',
    'bad base64': EXAMPLE_NOTE.replace('Uw2Q', 'Uw2!'),
    'a short signature': 'x\n\n\u2014 a.example AAAA\n',
    'a name with a plus': EXAMPLE_NOTE.replace('example.com/foo Uw', 'example.com+foo Uw'),
    'trailing text after the signatures': `${EXAMPLE_NOTE}junk\n`,
  };
  for (const [why, note] of Object.entries(cases)) assert.is(code(() => openNote(note, [v])), 'malformed_note', why);
  // a blank line between signatures makes the first one part of the text, which then is not what was signed
  assert.is(code(() => openNote(EXAMPLE_NOTE.replace(sigLine, `${sigLine}\n${sigLine}`), [v])), 'bad_signature');
  // the text may hold blank lines: the last one separates
  const multi = signNote('a\n\nb\n', [noteSigner('k.example', SIG_ED25519, seed(3))]);
  assert.is(openNote(multi, [verifierOf('k.example', SIG_ED25519, seed(3))]).text, 'a\n\nb\n');
  // invalid UTF-8 bytes
  assert.is(code(() => openNote(Uint8Array.from([0xff, 0x0a, 0x0a, ...enc.encode(sigLine)]), [v])), 'malformed_note');
  // at most 100 signatures are read; unknown ones are set aside, identical unknown lines listed once
  const many = EXAMPLE_NOTE + sigLine.repeat(100);
  assert.is(code(() => openNote(many, [v])), 'malformed_note');
  const unknown = '\u2014 other.example AAAAAAAAAAAAAAAAAAAAAAAA\n';
  const some = EXAMPLE_NOTE + unknown + unknown;
  const o = openNote(some, [v]);
  assert.is(o.verified.length, 1);
  assert.is(o.unverified.length, 1);
  assert.is(o.unverified[0].name, 'other.example');
});

/** `v` with a count of its verify calls. */
function counting(v: ReturnType<typeof parseVerifierKey>): { verifier: typeof v; calls: () => number } {
  let calls = 0;
  return { verifier: { ...v, verify: (text, sig) => { calls++; return v.verify(text, sig); } }, calls: () => calls };
}

test('issue 34: a known key\'s signature line repeated refuses the note before any signature is verified', () => {
  const sigLine = EXAMPLE_NOTE.slice(EXAMPLE_NOTE.indexOf('\u2014'));
  const c = counting(parseVerifierKey(EXAMPLE_VKEY));
  // the add-checkpoint of the report: the log's valid signature 99 times more (100 lines, the most read)
  assert.is(code(() => openNote(EXAMPLE_NOTE + sigLine.repeat(99), [c.verifier])), 'repeated_signature');
  assert.is(c.calls(), 0);
  // a repeat after unknown lines and another known key, and a repeat with other (broken) bytes: the same
  const log = noteSigner('log.example/a', SIG_ED25519, seed(1));
  const lc = counting(verifierOf('log.example/a', SIG_ED25519, seed(1)));
  const text = 'log.example/a\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
  const [good] = parseNote(signNote(text, [log])).signatures;
  const broken = { ...good, signature: good.signature.map((x, i) => (i === 3 ? x ^ 1 : x)) };
  const unknown = { name: 'other.example', keyId: 7, signature: new Uint8Array(64) };
  for (const sigs of [[good, unknown, good], [good, broken], [broken, good]]) {
    assert.is(code(() => openNote(formatNote(text, sigs), [lc.verifier, c.verifier])), 'repeated_signature');
  }
  assert.is(lc.calls() + c.calls(), 0);
  // each known key once: one verify each
  const opened = openNote(formatNote(text, [unknown, good]), [lc.verifier, c.verifier]);
  assert.is(opened.verified.length, 1);
  assert.is(lc.calls(), 1);
  assert.is(c.calls(), 0);
});

// ---------------------------------------------------------------- checkpoints

const LOG = 'log.example/tlog';
const logSigner = noteSigner(LOG, SIG_ED25519, seed(10));
const logKey = verifierOf(LOG, SIG_ED25519, seed(10)).vkey;
const witnesses = [1, 2, 3].map((i) => ({
  signer: noteSigner(`w${i}.example`, SIG_COSIGNATURE_V1, seed(20 + i), () => 1700000000 + i),
  vkey: verifierOf(`w${i}.example`, SIG_COSIGNATURE_V1, seed(20 + i)).vkey,
}));

test('checkpoint text: three lines and extensions, strict numbers and hashes', () => {
  const c = { origin: LOG, size: 20852163, rootHash: Buffer.from('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=', 'base64'), extensions: [] };
  const text = formatCheckpoint(c);
  assert.is(text, `${LOG}\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`);
  assert.equal({ ...parseCheckpoint(text), rootHash: Buffer.from(parseCheckpoint(text).rootHash) }, { ...c, rootHash: Buffer.from(c.rootHash) });
  assert.equal(parseCheckpoint(`${text}ext one\nx\n`).extensions, ['ext one', 'x']);
  for (const bad of [`${LOG}\n020852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`, `${LOG}\n-1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`,
    `${LOG}\n9007199254740992\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`, `${LOG}\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2\n`,
    `${LOG}\n1\n`, `\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`, `${text}\n`, text.slice(0, -1), `${LOG}\n1 \nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`]) {
    assert.is(code(() => parseCheckpoint(bad)), 'malformed_checkpoint', JSON.stringify(bad));
  }
});

function cosigned(size: number, root: Uint8Array, which: number[]): string {
  const text = formatCheckpoint({ origin: LOG, size, rootHash: root, extensions: [] });
  return signNote(text, [logSigner, ...which.map((i) => witnesses[i].signer)]);
}

test('verifyCheckpoint: log key and origin, k of n cosignatures, any bad signature of a known key refuses', () => {
  const root = leafHash(Uint8Array.of(1));
  const all = witnesses.map((w) => w.vkey);
  const note = cosigned(1, root, [0, 2]);
  const v = verifyCheckpoint(note, { logKeys: [logKey], witnesses: all, quorum: 2 });
  assert.is(v.checkpoint.size, 1);
  assert.equal(v.cosignatures.map((c) => [c.name, c.timestamp]), [['w1.example', 1700000001], ['w3.example', 1700000003]]);
  assert.is(code(() => verifyCheckpoint(note, { logKeys: [logKey], witnesses: all, quorum: 3 })), 'quorum_not_met');
  assert.is(code(() => verifyCheckpoint(note, { logKeys: [logKey], witnesses: all, quorum: 4 })), 'malformed_key');
  // a witness's cosignature twice never counts twice: the note is refused (issue 34); a key listed twice in the policy counts once
  const dup = signNote(formatCheckpoint({ origin: LOG, size: 1, rootHash: root, extensions: [] }), [logSigner, witnesses[0].signer, witnesses[0].signer]);
  assert.is(code(() => verifyCheckpoint(dup, { logKeys: [logKey], witnesses: all, quorum: 2 })), 'repeated_signature');
  assert.is(code(() => verifyCheckpoint(note, { logKeys: [logKey], witnesses: [all[0], all[0]], quorum: 2 })), 'quorum_not_met');
  // no log signature: witnesses alone do not make a checkpoint
  const witnessOnly = signNote(formatCheckpoint({ origin: LOG, size: 1, rootHash: root, extensions: [] }), [witnesses[0].signer]);
  assert.is(code(() => verifyCheckpoint(witnessOnly, { logKeys: [logKey], witnesses: all, quorum: 1 })), 'no_verified_signature');
  // a checkpoint signed by the log key but naming another origin
  const elsewhere = signNote(formatCheckpoint({ origin: 'other.example/log', size: 1, rootHash: root, extensions: [] }), [logSigner]);
  assert.is(code(() => verifyCheckpoint(elsewhere, { logKeys: [logKey] })), 'unknown_origin');
  assert.is(verifyCheckpoint(elsewhere, { logKeys: [logKey], origin: 'other.example/log' }).checkpoint.origin, 'other.example/log');
  // a cosignature that fails (its bytes changed) refuses the whole note, even with quorum 0
  const sigs = parseNote(note).signatures;
  const broken = sigs[1].signature.slice();
  broken[40] ^= 1;
  const tampered = formatNote(parseNote(note).text, [sigs[0], { ...sigs[1], signature: broken }, sigs[2]]);
  assert.is(code(() => verifyCheckpoint(tampered, { logKeys: [logKey], witnesses: all, quorum: 0 })), 'bad_signature');
  // a log key given as a witness key, and a witness key as a log key, are refused
  assert.is(code(() => verifyCheckpoint(note, { logKeys: [witnesses[0].vkey] })), 'malformed_key');
  assert.is(code(() => verifyCheckpoint(note, { logKeys: [logKey], witnesses: [logKey], quorum: 0 })), 'malformed_key');
  // the empty tree
  assert.is(verifyCheckpoint(cosigned(0, EMPTY_ROOT, []), { logKeys: [logKey] }).checkpoint.size, 0);
});

// ---------------------------------------------------------------- tlog-proof bundles

async function logOf(n: number): Promise<{ entries: Uint8Array[]; tiles: Map<string, Uint8Array>; checkpoint: string; builder: TileBuilder }> {
  const builder = new TileBuilder();
  const entries = Array.from({ length: n }, (_, i) => enc.encode(`{"entry":${i}}`));
  for (const e of entries) builder.appendEntry(e);
  const tiles = new Map<string, Uint8Array>();
  for (const t of builder.takeTiles() as TileData[]) tiles.set(`${t.level}/${t.index}`, t.data);
  const checkpoint = signCheckpoint({ origin: LOG, size: n, rootHash: builder.root(), extensions: [] }, [logSigner, witnesses[0].signer, witnesses[1].signer]);
  return { entries, tiles, checkpoint, builder };
}

const readerOf = (n: number, tiles: Map<string, Uint8Array>) => tileHashReader(n, { readTiles: (cs: readonly TileCoord[]) => cs.map((c) => tiles.get(`${c.level}/${c.index}`)!) });

test('proof bundles: built from tiles, verified offline; every tampering refused', async () => {
  const { entries, tiles, checkpoint } = await logOf(1000);
  const policy = { logKeys: [logKey], witnesses: witnesses.map((w) => w.vkey), quorum: 2 };
  const text = await buildProofBundle({ index: 737, checkpoint, reader: readerOf(1000, tiles), extra: Uint8Array.of(1, 2, 3) });
  const lines = text.split('\n');
  assert.is(lines[0], 'c2sp.org/tlog-proof@v1');
  assert.is(lines[1], 'extra AQID');
  assert.is(lines[2], 'index 737');
  assert.is(lines[3 + 10], ''); // ten proof hashes for a tree of 1000
  assert.ok(text.endsWith(checkpoint));
  const ok = verifyProofBundle(text, { entry: entries[737] }, policy);
  assert.is(ok.index, 737);
  assert.equal([...ok.extra!], [1, 2, 3]);
  assert.is(ok.checkpoint.cosignatures.length, 2);
  assert.is(verifyProofBundle(text, { leafHash: leafHash(entries[737]) }, policy).index, 737);
  // the parse round trip
  assert.is(formatProofBundle(parseProofBundle(text)), text);
  // refusals
  assert.is(code(() => verifyProofBundle(text, { entry: entries[736] }, policy)), 'inclusion_failed');
  assert.is(code(() => verifyProofBundle(text.replace('index 737', 'index 736'), { entry: entries[737] }, policy)), 'inclusion_failed');
  const hashLine = lines[5];
  const flipped = Buffer.from(hashLine, 'base64');
  flipped[0] ^= 1;
  assert.is(code(() => verifyProofBundle(text.replace(hashLine, flipped.toString('base64')), { entry: entries[737] }, policy)), 'inclusion_failed');
  assert.is(code(() => verifyProofBundle(text.replace(`${hashLine}\n`, ''), { entry: entries[737] }, policy)), 'inclusion_failed');
  assert.is(code(() => verifyProofBundle(text.replace('\n1000\n', '\n1001\n'), { entry: entries[737] }, policy)), 'bad_signature');
  assert.is(code(() => verifyProofBundle(text, { entry: entries[737] }, { ...policy, quorum: 3 })), 'quorum_not_met');
  assert.is(code(() => verifyProofBundle(text, { entry: entries[737] }, { logKeys: [verifierOf(LOG, SIG_ED25519, seed(11)).vkey] })), 'no_verified_signature');
  for (const bad of [text.replace('c2sp.org/tlog-proof@v1', 'c2sp.org/tlog-proof@v2'), text.replace('index 737', 'index 0737'), text.replace('index 737', 'index  737'),
    text.replace('extra AQID', 'extra A!ID'), text.replace(hashLine, hashLine.slice(4)), text.replace('index 737\n', ''), `${lines.slice(0, 3).join('\n')}\n${'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n'.repeat(64)}\n${checkpoint}`]) {
    assert.is(code(() => parseProofBundle(bad)), 'malformed_proof_bundle');
  }
  // no extra line, index 0, a tree of one
  const one = await logOf(1);
  const single = await buildProofBundle({ index: 0, checkpoint: one.checkpoint, reader: readerOf(1, one.tiles) });
  assert.ok(single.startsWith('c2sp.org/tlog-proof@v1\nindex 0\n\n'));
  assert.is(verifyProofBundle(single, { entry: one.entries[0] }, policy).extra, undefined);
});

test('witness answer lines parse as signature lines', () => {
  const text = formatCheckpoint({ origin: LOG, size: 0, rootHash: EMPTY_ROOT, extensions: [] });
  const note = signNote(text, [witnesses[0].signer, witnesses[1].signer]);
  const lines = note.slice(text.length + 1);
  assert.equal(parseSignatureLines(lines).map((s) => s.name), ['w1.example', 'w2.example']);
  assert.is(code(() => parseSignatureLines(lines.slice(0, -1))), 'malformed_note');
  assert.is(code(() => parseSignatureLines(`x${lines}`)), 'malformed_note');
});

test.run();
