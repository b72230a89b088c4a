// Perceptual matching over real HTTP on loopback, on a real SQLite file, with real
// media fixtures (spec 4.2, 4.3, 4.11, 8; decisions.md 3, 10). Expected matches are
// computed independently: a brute-force scan over what was signed, with similarity()
// from the library and dHash step 4 written out here for `pixels`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createServerCell } from '../../server/src/domain/cells.js';
import { fingerprintFile, similarity } from '../../src/media/fingerprint.js';
import { UPLOAD_LIMIT_BYTES } from '../../server/src/matching/upload.js';
import { sha256Hex } from '../../src/lib/sha256.js';
import type { Fingerprint } from '../../src/lib/types.js';

const S = '/api/v1/sign-it';
const FIX = join(import.meta.dirname, '..', 'fixtures');
const media = (name: string) => new Uint8Array(readFileSync(join(FIX, 'media', name)));
const audio = (name: string) => new Uint8Array(readFileSync(join(FIX, 'audio', name)));

let srv: TestServer;
let token: string;

interface Signed {
  file_hash: string;
  action_hash: string;
  fp: Fingerprint;
  signed_at: number;
}
const signed: Signed[] = [];

interface Res {
  status: number;
  body: any;
  type: string | null;
}

async function api(method: string, path: string, opts: { token?: string; json?: unknown; raw?: Uint8Array } = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Blob | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.raw !== undefined) {
    headers['content-type'] = 'application/octet-stream';
    body = new Blob([opts.raw as Uint8Array<ArrayBuffer>]);
  }
  const res = await fetch(`${srv.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, type: res.headers.get('content-type') };
}

/** Signs a fingerprint through POST /sign (a server-hosted cell), remembering what was signed. */
async function sign(fp: Fingerprint, fileHash = randomBytes(32).toString('hex')): Promise<Signed> {
  const res = await api('POST', `${S}/sign`, {
    token,
    json: { file_hash: fileHash, intent: 'Authorship', ai_generation: 'none', content_rights: { license: 'cc-by' }, perceptual_hash: fp },
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  const s = { file_hash: fileHash, action_hash: res.body.action_hash as string, fp, signed_at: res.body.signed_at as number };
  signed.push(s);
  return s;
}

/** What decisions.md 3 says verify-* must answer, by brute force over everything signed. */
function expected(q: { hash_type?: string; bands: number[][]; hash_value?: number[] }, types: string[], threshold: number) {
  const rows: { file_hash: string; similarity: number | null; signed_at: number }[] = [];
  for (const s of signed) {
    if (!types.includes(s.fp.hash_type)) continue;
    if (!q.bands.some((band, p) => s.fp.bands[p]?.length === band.length && band.every((v, j) => s.fp.bands[p][j] === v))) continue;
    const sim = q.hash_value && q.hash_value.length > 0 && s.fp.hash_value.length > 0
      ? similarity({ hash_type: s.fp.hash_type, hash_value: q.hash_value, bands: q.bands }, s.fp)
      : null;
    if (sim !== null && sim < threshold) continue;
    rows.push({ file_hash: s.file_hash, similarity: sim, signed_at: s.signed_at });
  }
  rows.sort((a, b) => (b.similarity ?? -1) - (a.similarity ?? -1) || b.signed_at - a.signed_at);
  return rows.slice(0, 100).map(({ file_hash, similarity }) => ({ file_hash, similarity }));
}

const brief = (body: any) => body.signatures.map((s: any) => ({ file_hash: s.file_hash, similarity: s.similarity }));

function flipBits(hash: number[], bits: number[]): number[] {
  const out = hash.slice();
  for (const b of bits) out[b >> 3] ^= 0x80 >> (b & 7);
  return out;
}

/** dHash step 4 (decisions.md 3) on 72 grey values: bit 8y+x = p[y][x] > p[y][x+1], MSB first. */
function dhashOfPixels(p: number[]): number[] {
  const out: number[] = [];
  for (let y = 0; y < 8; y++) {
    let byte = 0;
    for (let x = 0; x < 8; x++) byte = (byte << 1) | (p[y * 9 + x] > p[y * 9 + x + 1] ? 1 : 0);
    out.push(byte);
  }
  return out;
}

const imageFp = (hash: number[]): Fingerprint => ({ hash_type: 'ImagePHash', hash_value: hash, bands: hash.map((b) => [b]) });

let fruits: Signed;
let frontiers: Signed;
let cockatoo: Signed;
let fruitsFp: Fingerprint;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_WORKERS: '1' });
  const { user, token: t } = await srv.register();
  token = t;
  await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium');
  fruitsFp = (await fingerprintFile(media('fruits.jpg')))!;
  fruits = await sign(fruitsFp, sha256Hex(media('fruits.jpg')));
  frontiers = await sign((await fingerprintFile(audio('frontiers-25s.mp3')))!, sha256Hex(audio('frontiers-25s.mp3')));
  cockatoo = await sign((await fingerprintFile(media('cockatoo.mp4')))!, sha256Hex(media('cockatoo.mp4')));
  // random neighbours, and one image signed with bands only (similarity null)
  for (let i = 0; i < 40; i++) await sign(imageFp(Array.from(randomBytes(8))));
  await sign({ hash_type: 'ImagePHash', hash_value: [], bands: fruitsFp.bands });
});

test.after(async () => {
  await srv.close();
});

test('verify-fuzzy: bands alone find the candidates with similarity null', async () => {
  const res = await api('POST', `${S}/verify-fuzzy`, { json: { bands: fruitsFp.bands } });
  assert.is(res.status, 200);
  assert.is(res.type, 'application/json; charset=utf-8'); // the answer is built as JSON text
  assert.equal(brief(res.body), expected({ bands: fruitsFp.bands }, ['ImagePHash'], 70));
  assert.ok(res.body.signatures.some((s: any) => s.file_hash === fruits.file_hash && s.similarity === null));
  assert.is(res.body.count, res.body.signatures.length);
  const one = res.body.signatures.find((s: any) => s.file_hash === fruits.file_hash);
  assert.equal(Object.keys(one).sort(), ['ai_generation', 'content_rights', 'file_hash', 'intent', 'match_type', 'signed_at', 'signer', 'similarity']);
  assert.is(one.match_type, 'perceptual');
  assert.is(one.intent, 'Authorship');
  assert.is(one.ai_generation, 'None');
  assert.equal(one.content_rights.license, 'CCBY');
  assert.is(one.signed_at, fruits.signed_at);
});

test('verify-fuzzy: bands + hash_value of a near-duplicate rank it by similarity', async () => {
  const near = flipBits(fruitsFp.hash_value, [3, 17, 60]); // 3 bits: floor(100 * 61 / 64) = 95
  const q = { bands: near.map((b) => [b]), hash_value: near };
  const res = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(res.status, 200);
  assert.equal(brief(res.body), expected(q, ['ImagePHash'], 70));
  assert.equal(brief(res.body)[0], { file_hash: fruits.file_hash, similarity: 95 });
  // far from everything: only null-similarity entries can remain
  const far = fruitsFp.hash_value.map((b, i) => (i === 0 ? b : b ^ 0xff));
  const res2 = await api('POST', `${S}/verify-fuzzy`, { json: { bands: far.map((b) => [b]), hash_value: far } });
  assert.equal(brief(res2.body), expected({ bands: far.map((b) => [b]), hash_value: far }, ['ImagePHash'], 70));
  assert.not.ok(res2.body.signatures.some((s: any) => s.file_hash === fruits.file_hash));
});

test('verify-fuzzy: pixels are hashed by the server (bands and hash_value ignored)', async () => {
  const pixels = Array.from({ length: 72 }, (_, i) => (i * 37 + (i % 9) * 11) % 256);
  const hash = dhashOfPixels(pixels);
  const s = await sign(imageFp(hash));
  const res = await api('POST', `${S}/verify-fuzzy`, { json: { pixels, bands: [[1]], hash_value: [1, 2, 3] } });
  assert.is(res.status, 200);
  assert.equal(brief(res.body)[0], { file_hash: s.file_hash, similarity: 100 });
  assert.equal(brief(res.body), expected(imageFp(hash), ['ImagePHash'], 70));
});

test('verify-fuzzy: audio/video band layout queries both types; other layouts match nothing', async () => {
  const q = { bands: frontiers.fp.bands, hash_value: frontiers.fp.hash_value };
  const res = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(res.status, 200);
  assert.equal(brief(res.body)[0], { file_hash: frontiers.file_hash, similarity: 100 });
  assert.equal(brief(res.body), expected(q, ['AudioChromaprint', 'VideoPHash'], 70));
  const v = await api('POST', `${S}/verify-fuzzy`, { json: { bands: cockatoo.fp.bands } });
  assert.ok(v.body.signatures.some((s: any) => s.file_hash === cockatoo.file_hash && s.similarity === null));
  for (const bands of [[[1, 2]], fruitsFp.bands.slice(0, 7), [...fruitsFp.bands, [1]], fruitsFp.bands.map((b) => [b[0], 0])]) {
    const r = await api('POST', `${S}/verify-fuzzy`, { json: { bands } });
    assert.is(r.status, 200);
    assert.equal(r.body, { signatures: [], count: 0 });
  }
});

test('verify-fuzzy: missing_bands and invalid_request', async () => {
  for (const json of [{}, { hash_value: [1, 2] }, { bands: null }]) {
    const r = await api('POST', `${S}/verify-fuzzy`, { json });
    assert.is(r.status, 400);
    assert.is(r.body.error, 'missing_bands');
  }
  const r0 = await api('POST', `${S}/verify-fuzzy`);
  assert.is(r0.body.error, 'missing_bands');
  for (const json of [
    { bands: 'abc' },
    { bands: [[256]] },
    { bands: [[-1]] },
    { bands: [[1.5]] },
    { bands: [['1']] },
    { bands: [1, 2, 3] },
    { bands: fruitsFp.bands, hash_value: 'x' },
    { bands: fruitsFp.bands, hash_value: [300] },
    { pixels: [1, 2, 3] },
    { pixels: Array(72).fill(256) },
  ]) {
    const r = await api('POST', `${S}/verify-fuzzy`, { json });
    assert.is(r.status, 400, JSON.stringify(json));
    assert.is(r.body.error, 'invalid_request');
  }
});

test('verify-file: a resized, re-compressed copy of a signed image matches', async () => {
  const copy = new Uint8Array(await sharp(media('fruits.jpg')).resize({ width: 400 }).jpeg({ quality: 55 }).toBuffer());
  const copyFp = (await fingerprintFile(copy))!;
  assert.ok(similarity(copyFp, fruitsFp)! >= 90); // the premise: a near-duplicate
  const res = await api('POST', `${S}/verify-file`, { raw: copy });
  assert.is(res.status, 200);
  assert.equal(brief(res.body), expected(copyFp, ['ImagePHash'], 60));
  assert.ok(brief(res.body).some((m: any) => m.file_hash === fruits.file_hash && m.similarity === similarity(copyFp, fruitsFp)));
  assert.is(res.body.match_type, undefined);
});

test('verify-file: a different image does not match; revoked signatures still match', async () => {
  const cat = media('cat.gif');
  const catFp = (await fingerprintFile(cat))!;
  const res = await api('POST', `${S}/verify-file`, { raw: cat });
  assert.is(res.status, 200);
  assert.equal(brief(res.body), expected(catFp, ['ImagePHash'], 60));
  assert.not.ok(res.body.signatures.some((s: any) => s.file_hash === fruits.file_hash));

  const rev = await api('POST', `${S}/revoke`, { token, json: { action_hash: fruits.action_hash, reason: 'test' } });
  assert.is(rev.status, 200, JSON.stringify(rev.body));
  const again = await api('POST', `${S}/verify-file`, { raw: media('fruits.jpg') });
  assert.ok(again.body.signatures.some((s: any) => s.file_hash === fruits.file_hash && s.similarity === 100));
});

test('verify-file: audio and video fixtures match what was signed from them', async () => {
  const a = await api('POST', `${S}/verify-file`, { raw: audio('frontiers-25s.mp3') });
  assert.is(a.status, 200);
  assert.equal(brief(a.body)[0], { file_hash: frontiers.file_hash, similarity: 100 });
  const other = audio('drascula-track2-18s.ogg');
  const otherFp = (await fingerprintFile(other))!;
  const b = await api('POST', `${S}/verify-file`, { raw: other });
  assert.equal(brief(b.body), expected(otherFp, [otherFp.hash_type], 60));
  assert.not.ok(b.body.signatures.some((s: any) => s.file_hash === frontiers.file_hash));

  const v = await api('POST', `${S}/verify-file`, { raw: media('cockatoo.mp4') });
  assert.equal(brief(v.body)[0], { file_hash: cockatoo.file_hash, similarity: 100 });
  const webm = media('cockatoo-vp8.webm'); // the same clip, another codec
  const webmFp = (await fingerprintFile(webm))!;
  const w = await api('POST', `${S}/verify-file`, { raw: webm });
  assert.equal(brief(w.body), expected(webmFp, ['VideoPHash'], 60));
});

test('verify-file: empty body is 400 no_file; garbage, truncated and hostile files are match_type none', async () => {
  const empty = await api('POST', `${S}/verify-file`, { raw: new Uint8Array(0) });
  assert.is(empty.status, 400);
  assert.is(empty.body.error, 'no_file');
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#808080' } }).png().toBuffer();
  // a PNG that claims 60000 x 60000 pixels: refused by the decoder's pixel cap
  const bomb = Buffer.from(png);
  bomb.writeUInt32BE(60000, 16);
  bomb.writeUInt32BE(60000, 20);
  for (const raw of [randomBytes(5000), png.subarray(0, 40), media('fruits.jpg').subarray(0, 300), bomb, Buffer.from('RIFF\0\0\0\0WAVEfmt ')]) {
    const r = await api('POST', `${S}/verify-file`, { raw: new Uint8Array(raw) });
    assert.is(r.status, 200);
    assert.equal({ ...r.body, content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }, { signatures: [], count: 0, match_type: 'none', content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }); // issues 21 and 33's fields: test/c2pa
  }
});

/**
 * Sends headers (and optionally streams chunks) by hand; resolves with the status, the
 * bytes written and the body. The server closes the connection after a 413, so a write
 * may fail with EPIPE once the answer is in: that counts as answered.
 */
function rawPost(path: string, headers: Record<string, string | number>, chunk: Buffer | null, maxBytes: number): Promise<{ status: number; sent: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(srv.url + path);
    let sent = 0;
    let status = 0;
    let body = '';
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      resolve({ status, sent, body });
      req.destroy();
    };
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', (err) => {
      if (status !== 0) return finish();
      // the answer may still be in flight behind the failed write
      setTimeout(() => (status !== 0 ? finish() : settled ? undefined : ((settled = true), reject(err))), 500);
    });
    const pump = () => {
      while (!settled && status === 0 && chunk && sent < maxBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!settled && status === 0 && chunk) req.end();
    };
    if (chunk) pump();
    else req.flushHeaders();
  });
}

const errorCode = (body: string) => {
  try {
    return (JSON.parse(body) as { error?: string }).error;
  } catch {
    return undefined; // the connection closed before the whole body arrived
  }
};

test('verify-file: 413 from Content-Length before reading, and while streaming past 50 MB', async () => {
  const declared = await rawPost(`${S}/verify-file`, { 'content-length': UPLOAD_LIMIT_BYTES + 1, 'content-type': 'application/octet-stream' }, null, 0);
  assert.is(declared.status, 413);
  assert.is(errorCode(declared.body), 'payload_too_large');
  const chunk = Buffer.alloc(1 << 20, 7);
  const streamed = await rawPost(`${S}/verify-file`, { 'transfer-encoding': 'chunked', 'content-type': 'application/octet-stream' }, chunk, 150 << 20);
  assert.is(streamed.status, 413);
  // answered long before the 150 MB were sent (what is in flight in socket buffers aside)
  assert.ok(streamed.sent <= UPLOAD_LIMIT_BYTES + (40 << 20), `${streamed.sent} bytes sent before the answer`);
  assert.is(errorCode(streamed.body), 'payload_too_large');
  // exactly at the limit is accepted (and is no media: match_type none)
  const atLimit = await api('POST', `${S}/verify-file`, { raw: new Uint8Array(UPLOAD_LIMIT_BYTES) });
  assert.is(atLimit.status, 200);
  assert.is(atLimit.body.match_type, 'none');
});

/** A chunked upload that stays open until `finish()` is called. */
function slowUpload(path: string): { finish(): Promise<{ status: number; body: string }> } {
  const url = new URL(srv.url + path);
  let resolveRes: (v: { status: number; body: string }) => void;
  const answer = new Promise<{ status: number; body: string }>((r) => (resolveRes = r));
  const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => resolveRes({ status: res.statusCode ?? 0, body }));
  });
  req.write(randomBytes(1024));
  return {
    finish() {
      req.end(randomBytes(1024));
      return answer;
    },
  };
}

test('verify-file: uploads beyond 2 x workers in flight get 503 busy at once', async () => {
  const held = [slowUpload(`${S}/verify-file`), slowUpload(`${S}/verify-file`)]; // 1 worker: 2 places
  let busy: Res | null = null;
  for (let i = 0; i < 50 && busy === null; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const r = await api('POST', `${S}/verify-file`, { raw: media('fruits.jpg') });
    if (r.status === 503) busy = r;
    else assert.is(r.status, 200); // the two held uploads were not in yet
  }
  assert.ok(busy, 'no 503 while two uploads were held open');
  assert.is(busy!.body.error, 'busy');
  for (const h of held) {
    const r = await h.finish();
    assert.is(r.status, 200);
    assert.equal({ ...JSON.parse(r.body), content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }, { signatures: [], count: 0, match_type: 'none', content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }); // issues 21 and 33's fields: test/c2pa
  }
  const after = await api('POST', `${S}/verify-file`, { raw: media('cat.gif') });
  assert.is(after.status, 200);
});

test('fingerprint: 401 without a token; the fingerprint of a file, or null', async () => {
  const anon = await api('POST', `${S}/fingerprint`, { raw: media('fruits.jpg') });
  assert.is(anon.status, 401);
  const ok = await api('POST', `${S}/fingerprint`, { token, raw: media('fruits.jpg') });
  assert.is(ok.status, 200);
  assert.equal(ok.body, { fingerprint: fruitsFp });
  const a = await api('POST', `${S}/fingerprint`, { token, raw: audio('machine-wars-6s.wav') });
  assert.equal(a.body, { fingerprint: await fingerprintFile(audio('machine-wars-6s.wav')) });
  for (const raw of [randomBytes(3000), new Uint8Array(0)]) {
    const r = await api('POST', `${S}/fingerprint`, { token, raw: new Uint8Array(raw) });
    assert.is(r.status, 200);
    assert.equal(r.body, { fingerprint: null });
  }
  const big = await rawPost(`${S}/fingerprint`, { authorization: `Bearer ${token}`, 'content-length': UPLOAD_LIMIT_BYTES + 1 }, null, 0);
  assert.is(big.status, 413);
  // chunked (joined at the end) and with a Content-Length (copied into one buffer as
  // it arrives) upload the same bytes
  const file = Buffer.from(media('fruits.jpg'));
  for (const headers of [{ 'transfer-encoding': 'chunked' }, { 'content-length': file.length }] as Record<string, string | number>[]) {
    const r = await rawPost(`${S}/fingerprint`, { authorization: `Bearer ${token}`, ...headers }, file, file.length);
    assert.is(r.status, 200);
    assert.equal(JSON.parse(r.body), { fingerprint: fruitsFp }, JSON.stringify(headers));
  }
});

test('verify-fuzzy: a repeated query is answered from the cache until a sign reaches its candidates', async () => {
  const answers = srv.deps.matching.answers;
  const h = Array.from(randomBytes(8));
  const q = { bands: h.map((b) => [b]), hash_value: h };
  const first = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.equal(brief(first.body), expected(q, ['ImagePHash'], 70));
  const hits = answers.hits;
  const again = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.equal(again.body, first.body);
  assert.is(answers.hits, hits + 1);
  // a sign sharing none of the query's bands cannot change the answer: still cached
  await sign(imageFp(h.map((b) => b ^ 0x5a)));
  await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(answers.hits, hits + 2);
  // a near-duplicate shares its bands: the answer is computed again and includes it
  const near = await sign(imageFp(flipBits(h, [9, 40])));
  const after = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(answers.hits, hits + 2);
  assert.equal(brief(after.body), expected(q, ['ImagePHash'], 70));
  assert.equal(brief(after.body)[0], { file_hash: near.file_hash, similarity: 96 });
  const metrics = srv.deps.metrics.render(); // what GET /metrics serves (ops.test.ts)
  assert.match(metrics, `provenant_match_answers{source="cache"} ${answers.hits}`);
});

test('the index is rebuilt from SQLite at start and kept current by signing', async () => {
  const service = srv.deps.matching;
  const stats = await service.ready;
  await service.flush();
  assert.is(service.indexSize(), signed.length);
  assert.ok(stats.ms >= 0);
  // a second service over the same store loads every signed fingerprint
  const { MatchingService } = await import('../../server/src/matching/service.js');
  const fresh = new MatchingService(srv.deps);
  const loaded = await fresh.ready;
  assert.is(loaded.records, signed.length);
  assert.is(fresh.indexSize(), signed.length);
  const q = { bands: fruitsFp.bands, hash_value: fruitsFp.hash_value };
  const mine = await service.match(q, ['ImagePHash'], 0);
  assert.ok(mine.length > 0);
  assert.equal(await fresh.match(q, ['ImagePHash'], 0), mine);
  await fresh.close();
  const metrics = srv.deps.metrics.render(); // what GET /metrics serves (ops.test.ts)
  const images = signed.filter((x) => x.fp.hash_type === 'ImagePHash').length;
  assert.match(metrics, `provenant_match_index_fingerprints{hash_type="ImagePHash"} ${images}`);
});

test('a match index thread that ends is replaced and reloaded from SQLite; answers stay the same', async () => {
  const service = srv.deps.matching;
  await service.flush();
  const q = { bands: fruitsFp.bands, hash_value: fruitsFp.hash_value };
  const before = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(before.status, 200);
  assert.ok(before.body.count > 0);
  const firstReady = service.ready;
  await service['thread']['worker'].terminate(); // as a crash would end it
  assert.is.not(service.ready, firstReady);
  // asked at once: waits for the new thread's load; the answer cache was emptied, so
  // the answer comes from the new index
  const misses = service.answers.misses;
  const after = await api('POST', `${S}/verify-fuzzy`, { json: q });
  assert.is(after.status, 200);
  assert.is(service.answers.misses, misses + 1);
  assert.is((await service.ready).records, signed.length);
  assert.equal(after.body, before.body);
  // a thread that ends during the initial load: a query already waiting for that load
  // is answered from the replacement's
  const { MatchingService } = await import('../../server/src/matching/service.js');
  const fresh = new MatchingService(srv.deps);
  const waiting = fresh.match(q, ['ImagePHash'], 0);
  await fresh['thread']['worker'].terminate();
  assert.equal(await waiting, await service.match(q, ['ImagePHash'], 0));
  await fresh.close();
});

test('an index thread that keeps ending during its load is restarted after a pause doubling from 1 s; a full load resets it', async () => {
  const { MatchingService } = await import('../../server/src/matching/service.js');
  const pauses: unknown[] = [];
  const log = { ...srv.deps.log, error: (msg: string, fields?: Record<string, unknown>) => {
    if (msg.startsWith('match index thread ended')) pauses.push(fields?.after_ms);
  } };
  const service = new MatchingService({ ...srv.deps, log });
  const q = { bands: fruitsFp.bands, hash_value: fruitsFp.hash_value };
  const waiting = service.match(q, ['ImagePHash'], 0);
  const crash = async () => {
    const thread = service['thread'];
    await thread['worker'].terminate();
    return thread;
  };
  const first = await crash(); // during the initial load: replaced at once
  assert.is.not(service['thread'], first);
  const second = await crash(); // during the replacement's load: replaced after 1 s
  assert.is(service['thread'], second);
  for (let waited = 0; service['thread'] === second; waited += 50) {
    assert.ok(waited < 10_000, 'no replacement within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const third = await crash(); // and again: after 2 s
  assert.is(service['thread'], third);
  assert.equal(pauses, [0, 1000, 2000]);
  // the query waiting all along is answered once a replacement has loaded
  assert.equal(await waiting, await srv.deps.matching.match(q, ['ImagePHash'], 0));
  const fourth = await crash(); // after a full load the pause starts over
  assert.is.not(service['thread'], fourth);
  assert.equal(pauses, [0, 1000, 2000, 0]);
  await service.ready;
  await service.close();
});

test.run();
