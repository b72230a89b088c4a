// Local features on the server (issue 32) over real HTTP: a vault's POST /publish carries
// a record's feature set beside it, bound by the signed digest; GET /verify says
// has_features; POST /verify-file finds a cropped, framed, rotated or screenshotted copy by features
// where the global hashes miss it, and confirms every candidate whose record has
// features: one whose features are of another picture is dropped (unless PDQ finds it
// within 31 bits), one without features follows today's rule; the features survive a
// restart (loaded from the store).
// postgres/suites.test.ts runs this file again on PostgreSQL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes, sign as edSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import sharp from 'sharp';
import { apiRequest, serverCellUser, startTestServer, testEngine, vaultDevice, type TestServer, type VaultDevice } from '../helpers/server.js';
import { examineFile } from '../../src/media/examine.js';
import { encodeFeatureSet, RECORD_FEATURES_MAX, type FeatureSet } from '../../src/lib/features.js';
import { SUITE_TRANSFORMS } from '../../src/cli/bench/suite.js';
import { streamFor } from '../../src/cli/bench/random.js';

const engine = testEngine(import.meta.url);
let srv: TestServer;
const S = '/api/v1/sign-it';
const FIX = join(import.meta.dirname, '..', 'fixtures');
const PHOTO = readFileSync(join(FIX, 'media', 'fruits.jpg'));
const OTHER = readFileSync(join(FIX, 'integrity', 'happyfish.jpg'));

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine });
});
test.after(async () => {
  await srv.close();
});

const api = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => apiRequest(srv.url, method, path, opts);
const hex = (n = 32) => randomBytes(n).toString('hex');

interface Examined { perceptual_hash: unknown; pdq_hash: unknown; set: FeatureSet }

async function examined(bytes: Buffer): Promise<Examined> {
  const e = await examineFile(new Uint8Array(bytes), { recordFeatures: true });
  return { perceptual_hash: e.fingerprint, pdq_hash: e.pdq_hash, set: e.features! };
}

/** A vault's record of a file with these hashes and (unless null) this feature set, published; answers the action hash and file hash. */
async function publish(d: VaultDevice, hashes: { perceptual_hash: unknown; pdq_hash: unknown }, set: FeatureSet | null, over: Record<string, unknown> = {}) {
  const data = set === null ? null : encodeFeatureSet(set);
  const record: Record<string, unknown> = {
    file_hash: hex(), signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
    integrity_report: null, perceptual_hash: hashes.perceptual_hash, comment: null, supersedes: null, expires_at: null, tags: null,
    ...(hashes.pdq_hash === null ? {} : { pdq_hash: hashes.pdq_hash }),
    ...(set === null ? {} : { features: { version: set.version, count: set.count, digest: createHash('sha256').update(data!).digest('hex') } }),
    ...over,
  };
  const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
  const r = await api('POST', `${S}/publish`, { body: { ...record, signature, ...(data === null ? {} : { features_data: Buffer.from(data).toString('base64') }) } });
  return { r, file: record.file_hash as string };
}

async function verifyFile(bytes: Buffer, base = srv.url): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${base}${S}/verify-file`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(bytes) });
  const answer = (await res.json()) as { signatures: Record<string, unknown>[] };
  assert.is(res.status, 200, JSON.stringify(answer));
  return answer.signatures;
}

test('POST /publish with a feature set: stored, has_features true; a bad or unbound set is 400 and nothing is stored', async () => {
  const d = await vaultDevice(srv.url);
  const e = await examined(PHOTO);
  assert.is(e.set.count, RECORD_FEATURES_MAX);
  const { r, file } = await publish(d, e, e.set);
  assert.is(r.status, 200, JSON.stringify(r.body));
  const s = (await api('GET', `${S}/verify?hash=${file}`)).body.signatures[0];
  assert.is(s.has_features, true);
  assert.equal(Object.keys(s.features).sort(), ['count', 'digest', 'version']);
  assert.not.ok('features_data' in s, 'the set itself is not answered');

  const data = encodeFeatureSet(e.set);
  const digest = createHash('sha256').update(data).digest('hex');
  const cases: [string, Record<string, unknown>, unknown][] = [
    ['another digest', { features: { version: 1, count: e.set.count, digest: hex() } }, Buffer.from(data).toString('base64')],
    ['no features_data', { features: { version: 1, count: e.set.count, digest } }, undefined],
    ['features_data without features', {}, Buffer.from(data).toString('base64')],
    ['another count', { features: { version: 1, count: 100, digest } }, Buffer.from(data).toString('base64')],
    ['not base64', { features: { version: 1, count: e.set.count, digest } }, '!!!!'],
  ];
  for (const [why, over, featuresData] of cases) {
    const record: Record<string, unknown> = {
      file_hash: hex(), signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null,
      integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, ...over,
    };
    const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
    const bad = await api('POST', `${S}/publish`, { body: { ...record, signature, ...(featuresData === undefined ? {} : { features_data: featuresData }) } });
    assert.is(bad.status, 400, `${why}: ${JSON.stringify(bad.body)}`);
    assert.is(bad.body.error, 'invalid_request', why);
    assert.is((await api('GET', `${S}/verify?hash=${record.file_hash}`)).body.count, 0, why);
  }
  // a set bigger than a record keeps: refused by size before anything is decoded
  const huge = Buffer.alloc(70 * 1024).toString('base64');
  const record = { file_hash: hex(), signer: d.agentKey, signed_at: Date.now(), intent: 'Authorship', ai_generation: null, content_rights: null, integrity_report: null, perceptual_hash: null, comment: null, supersedes: null, expires_at: null, tags: null, features: { version: 1, count: 1, digest } };
  const signature = edSign(null, Buffer.from(canonicalize(record)!, 'utf8'), d.privateKey).toString('base64');
  assert.is((await api('POST', `${S}/publish`, { body: { ...record, signature, features_data: huge } })).status, 400);
  // POST /sign takes no features: they come from the device that saw the file
  const u = await serverCellUser(srv, 'premium');
  const sign = await api('POST', `${S}/sign`, { token: u.token, body: { file_hash: hex(), features: { version: 1, count: 1, digest } } });
  assert.is(sign.status, 400);
});

/** The photo as `provenant bench`'s edit `id` of suite v2 makes it. */
async function benchEdit(id: string): Promise<Buffer> {
  const out = mkdtempSync(join(tmpdir(), 'provenant-features-'));
  try {
    const t = SUITE_TRANSFORMS[2].image.find((x) => x.id === id)!;
    return readFileSync(await t.make({ path: join(FIX, 'media', 'fruits.jpg'), kind: 'image', format: 'jpeg' }, new Uint8Array(PHOTO), join(out, id), streamFor(1, id)));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

test('POST /verify-file: cropped, framed, rotated and screenshotted copies are found by Features; answers carry the inliers and coverage', async () => {
  const d = await vaultDevice(srv.url);
  const e = await examined(PHOTO);
  const { r, file } = await publish(d, e, e.set);
  assert.is(r.status, 200, JSON.stringify(r.body));
  const meta = await sharp(PHOTO).metadata();
  const w = meta.width!, h = meta.height!;
  const copies: [string, Buffer][] = [
    ['a corner crop keeping half the area', await sharp(PHOTO).extract({ left: Math.round(w * 0.29), top: Math.round(h * 0.29), width: Math.round(w * 0.71), height: Math.round(h * 0.71) }).jpeg({ quality: 80 }).toBuffer()],
    ['inside a wide frame', await sharp(PHOTO).resize(Math.round(w * 0.8)).extend({ left: w / 2, right: w / 2, top: 200, bottom: 200, background: '#204060' }).jpeg({ quality: 85 }).toBuffer()],
    ['rotated 15 degrees, corners cropped', await sharp(await sharp(PHOTO).rotate(15).toBuffer()).extract({ left: 120, top: 120, width: w - 60, height: h - 60 }).jpeg().toBuffer()],
    ['inside a phone screenshot (the bench\'s)', await benchEdit('screenshot')],
  ];
  for (const [edit, copy] of copies) {
    const ours = (await verifyFile(copy)).find((s) => s.file_hash === file);
    assert.ok(ours !== undefined, `${edit}: not found`);
    assert.ok((ours.feature_inliers as number) >= 16, `${edit}: ${JSON.stringify(ours)}`);
    assert.ok((ours.feature_coverage as number) > 0 && (ours.feature_coverage as number) <= 1);
    assert.ok((ours.similarity as number) >= 60);
    if (ours.matched_by === 'Features') assert.is(ours.similarity, 60 + Math.round(40 * (ours.feature_coverage as number)));
  }
});

test("a candidate whose record's features are of another picture is dropped unless PDQ finds it (within Meta's 31 bits); a record without features keeps today's rule", async () => {
  const d = await vaultDevice(srv.url);
  const e = await examined(PHOTO);
  const other = await examined(OTHER);
  // a slightly edited copy: ImagePHash finds the records, PDQ is 11+ bits away
  const meta = await sharp(PHOTO).metadata();
  const copy = await sharp(PHOTO).extract({ left: 20, top: 20, width: meta.width! - 40, height: meta.height! - 40 }).modulate({ brightness: 1.1 }).jpeg({ quality: 60 }).toBuffer();
  // the photo's ImagePHash, the features of another picture: ImagePHash finds it, the check drops it
  const forged = await publish(d, { perceptual_hash: e.perceptual_hash, pdq_hash: null }, other.set);
  assert.is(forged.r.status, 200, JSON.stringify(forged.r.body));
  // the same with the photo's PDQ: the upload of the photo itself is a near-exact copy (distance 0), kept
  const nearCopy = await publish(await vaultDevice(srv.url), e, other.set);
  assert.is(nearCopy.r.status, 200, JSON.stringify(nearCopy.r.body));
  const plain = await publish(await vaultDevice(srv.url), e, null);
  assert.is(plain.r.status, 200);
  const found = await verifyFile(copy);
  assert.is(found.find((s) => s.file_hash === forged.file), undefined, 'not confirmed: dropped');
  const kept = found.find((s) => s.file_hash === plain.file)!;
  assert.ok(kept !== undefined && !('feature_inliers' in kept), JSON.stringify(kept));
  const exact = await verifyFile(PHOTO);
  const near = exact.find((s) => s.file_hash === nearCopy.file)!;
  assert.ok(near !== undefined && near.pdq_distance === 0 && !('feature_inliers' in near), JSON.stringify(near));
  assert.is(exact.find((s) => s.file_hash === forged.file), undefined, 'without PDQ the exact photo does not save it either');
});

test('the features are loaded again at start: a new server over the same store finds the crop', async () => {
  const d = await vaultDevice(srv.url);
  const e = await examined(PHOTO);
  const { file } = await publish(d, e, e.set);
  const crop = await sharp(PHOTO).extract({ left: 150, top: 140, width: 300, height: 300 }).jpeg().toBuffer();
  assert.ok((await verifyFile(crop)).some((s) => s.file_hash === file));
  if (engine !== 'sqlite') return; // the second server opens the first one's SQLite file (PostgreSQL loads the same way, from listFeatures)
  const again = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DATA_DIR: srv.dataDir }, { engine });
  try {
    const hit = (await verifyFile(crop, again.url)).find((s) => s.file_hash === file);
    assert.ok(hit !== undefined && (hit.feature_inliers as number) >= 16, JSON.stringify(hit));
  } finally {
    await again.close();
  }
});

test.run();
