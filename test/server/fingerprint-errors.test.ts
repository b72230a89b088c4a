// What uploads that give no fingerprint answer (spec 4.2, 4.11, 8): a file the decoder
// refuses (in a sandbox under PROVENANT_DECODER_MEMORY_MB) is fingerprint null
// (/fingerprint) and match_type none (/verify-file); a file still decoding at the
// fingerprinter's deadline (PROVENANT_FINGERPRINT_TIMEOUT_MS, 0.6 s on a second server
// here) is 504 fingerprint_timeout on both, and the next upload is served. Audio whose
// header declares an absurd sample rate is refused before ffmpeg starts, and ffmpeg
// runs under PROVENANT_DECODER_MEMORY_MB too (issue 25 item 14; a wrapper as FFMPEG_PATH
// records each run's data limit).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConfigError, loadConfig } from '../../server/src/config.js';
import { ffmpegPath } from '../../src/media/ffmpeg.js';
import { hostileVorbis } from '../helpers/hostile-audio.js';

const S = '/api/v1/sign-it';
const jpeg = new Uint8Array(readFileSync(new URL('../fixtures/media/fruits.jpg', import.meta.url)));
/** A server with the default deadline, and one with a deadline of 0.6 s (its workers stop their decoders at 0.1 s). */
let srv: TestServer;
let short: TestServer;
let token: string;
let shortToken: string;
let ffmpegDir: string;
let ffmpegLog: string;
const savedFfmpegPath = process.env.FFMPEG_PATH;

test.before(async () => {
  // before the servers start: their worker threads take this environment
  ffmpegDir = mkdtempSync(join(tmpdir(), 'provenant-ffmpeg-limit-'));
  ffmpegLog = join(ffmpegDir, 'limits.log');
  const wrapper = join(ffmpegDir, 'ffmpeg');
  writeFileSync(wrapper, `#!/bin/sh\ngrep '^Max data size' /proc/self/limits | awk '{print $4}' >> '${ffmpegLog}'\nexec '${ffmpegPath()}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  process.env.FFMPEG_PATH = wrapper;
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DECODER_MEMORY_MB: '300' });
  short = await startTestServer({ PROVENANT_FINGERPRINT_TIMEOUT_MS: '600', PROVENANT_RATE_LIMIT: 'off' });
  token = (await srv.register()).token;
  shortToken = (await short.register()).token;
});

test.after(async () => {
  await Promise.all([srv.close(), short.close()]);
  if (savedFfmpegPath === undefined) delete process.env.FFMPEG_PATH;
  else process.env.FFMPEG_PATH = savedFfmpegPath;
  rmSync(ffmpegDir, { recursive: true, force: true });
});

async function upload(path: string, bytes: Uint8Array, server = srv): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${S}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server === srv ? token : shortToken}`, 'content-type': 'application/octet-stream' },
    body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
  });
  return { status: res.status, body: await res.json() };
}

test('PROVENANT_FINGERPRINT_TIMEOUT_MS (60000 by default), PROVENANT_DECODER_MEMORY_MB and PROVENANT_CREDENTIALS_TIMEOUT_MS (10000); a bad value names the variable', () => {
  assert.is(loadConfig({}).fingerprintTimeoutMs, 60_000);
  assert.is(loadConfig({ PROVENANT_FINGERPRINT_TIMEOUT_MS: '1500' }).fingerprintTimeoutMs, 1500);
  assert.is(loadConfig({}).decoderMemoryMb, undefined, "the sandbox's own default");
  assert.is(loadConfig({ PROVENANT_DECODER_MEMORY_MB: '512' }).decoderMemoryMb, 512);
  assert.is(loadConfig({}).credentialsTimeoutMs, 10_000);
  assert.is(loadConfig({ PROVENANT_CREDENTIALS_TIMEOUT_MS: '2500' }).credentialsTimeoutMs, 2500);
  for (const [variable, bad] of [['PROVENANT_FINGERPRINT_TIMEOUT_MS', '0'], ['PROVENANT_FINGERPRINT_TIMEOUT_MS', '1.5'], ['PROVENANT_FINGERPRINT_TIMEOUT_MS', 'soon'], ['PROVENANT_DECODER_MEMORY_MB', '64'], ['PROVENANT_DECODER_MEMORY_MB', '1GB'], ['PROVENANT_CREDENTIALS_TIMEOUT_MS', '0']]) {
    assert.throws(() => loadConfig({ [variable]: bad }), (e: unknown) => e instanceof ConfigError && e.variable === variable, `${variable}=${bad}`);
  }
});

/** The "Max data size" soft limits (bytes) of this process's decoder sandboxes. */
function sandboxDataLimits(): number[] {
  const limits: number[] = [];
  for (const line of execFileSync('ps', ['-eo', 'pid=,ppid=,args=']).toString().split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (!m || Number(m[2]) !== process.pid || !m[3].includes('sandbox-child.js')) continue;
    const limit = readFileSync(`/proc/${m[1]}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max data size'))!;
    limits.push(Number(limit.split(/\s{2,}/)[1]));
  }
  return limits;
}

test('a truncated JPEG is fingerprint null and match_type none', async () => {
  const truncated = jpeg.subarray(0, jpeg.length >> 1);
  assert.equal(await upload('/fingerprint', truncated), { status: 200, body: { fingerprint: null } });
  const v = await upload('/verify-file', truncated);
  assert.is(v.status, 200);
  assert.equal({ ...v.body, content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }, { signatures: [], count: 0, match_type: 'none', content_credentials: undefined, embedded_record: undefined, conflicts: undefined, recovered_credentials: undefined }); // issues 21 and 33's fields: test/c2pa
  assert.ok(sandboxDataLimits().includes(300 * 1024 * 1024), 'the decoder sandbox runs under PROVENANT_DECODER_MEMORY_MB');
});

test('audio declaring 536,915,012 Hz is fingerprint null and match_type none, refused before ffmpeg starts; ffmpeg runs under PROVENANT_DECODER_MEMORY_MB', async () => {
  const hostile = hostileVorbis({ rate: 536_915_012 });
  assert.equal(await upload('/fingerprint', hostile), { status: 200, body: { fingerprint: null } });
  const v = await upload('/verify-file', hostile);
  assert.is(v.status, 200);
  assert.is(v.body.match_type, 'none');
  assert.is(v.body.count, 0);
  assert.not.ok(existsSync(ffmpegLog), 'no ffmpeg was started');
  const ogg = new Uint8Array(readFileSync(new URL('../fixtures/audio/drascula-track2-18s.ogg', import.meta.url)));
  assert.is((await upload('/fingerprint', ogg)).body.fingerprint?.hash_type, 'AudioChromaprint');
  assert.equal(readFileSync(ffmpegLog, 'utf8').trim().split('\n').map(Number), [300 * 1024 * 1024], 'one ffmpeg run, under the 300 MB limit');
});

test('a file still decoding at the deadline is 504 fingerprint_timeout on /fingerprint and /verify-file; the next upload is served', async () => {
  // 100 MP (the cap): 300 MB of pixels to inflate, which no machine does in the 0.1 s the
  // deadline leaves the decoder (a 49 MP file and 0.5 s were decoded in time on an idle
  // machine: issue 25 item 12, a test of the machine rather than the code)
  const big = new Uint8Array(await sharp({ create: { width: 10000, height: 10000, channels: 3, background: '#406080' } }).png().toBuffer());
  for (const path of ['/fingerprint', '/verify-file']) {
    const r = await upload(path, big, short);
    assert.is(r.status, 504, `${path}: ${JSON.stringify(r.body)}`);
    assert.is(r.body.error, 'fingerprint_timeout');
    assert.match(r.body.message, /within 0.6 seconds/);
  }
  // its worker answers (no decoder to start: a file of no supported type)
  assert.equal(await upload('/fingerprint', new TextEncoder().encode('not media, just text'), short), { status: 200, body: { fingerprint: null } });
});

test.run();
