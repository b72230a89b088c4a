// The CLI and the vault read Content Credentials in a sandbox process with the limits and
// a deadline (issue 34 item 1): `provenant integrity` and the vault's drafts say the
// credentials were not read when the read runs past PROVENANT_CREDENTIALS_TIMEOUT_MS
// (the sandbox process is killed), read them within it, and refuse a bad value naming
// the variable. The sandbox runs the compiled child of dist/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeContentCredentials } from '../../src/media/c2pa-write.js';
import { generateSigningKey } from '../../src/lib/identity.js';
import { draftRecords } from '../../src/vault/sign.js';
import { credentialsTimeoutFromEnv } from '../../src/media/local-credentials.js';
import { cli } from '../helpers/vault.js';

const test = suite('c2pa/local-deadline');
const key = generateSigningKey();
const work = mkdtempSync(join(tmpdir(), 'provenant-local-deadline-'));
let slow = '';

test.before(async () => {
  // 900 assertions: within the limits, and a read of about 0.3 s or more
  const assertions = Array.from({ length: 900 }, (_, i) => ({ label: `org.example.a${i}`, data: { i } }));
  const jpeg = await writeContentCredentials(new Uint8Array(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'media', 'fruits.jpg'))), {
    title: 'x', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture', assertions, generator: { name: 'deadline-test', version: '1' },
  }, { privateKeyPkcs8: key.privateKeyPkcs8, commonName: 'deadline test' });
  slow = join(work, 'slow.jpg');
  writeFileSync(slow, jpeg);
});
test.after(() => rmSync(work, { recursive: true, force: true }));

const env = (extra: Record<string, string> = {}) => ({ ...process.env, ...extra }) as Record<string, string>;

test('provenant integrity: past the deadline the credentials are not read and the report still answers; within it they are', async () => {
  const hurried = await cli(['integrity', slow, '--json'], env({ PROVENANT_CREDENTIALS_TIMEOUT_MS: '100' }));
  assert.is(hurried.status, 0, hurried.stderr);
  const report = JSON.parse(hurried.stdout);
  assert.equal(report.content_credentials, { present: null, message: 'not read: reading Content Credentials ran past its deadline (100 ms; docs/c2pa.md)' });
  assert.ok(Array.isArray(report.checks_performed) && report.checks_performed.length > 0);
  const roomy = await cli(['integrity', slow, '--json'], env());
  assert.is(roomy.status, 0, roomy.stderr);
  const read = JSON.parse(roomy.stdout).content_credentials;
  assert.is(read.present, true);
  assert.is(read.claim_generator, 'deadline-test/1');
});

test('provenant integrity: a bad PROVENANT_CREDENTIALS_TIMEOUT_MS is one line naming it, exit 1', async () => {
  for (const bad of ['0', '-5', 'soon', '99', '3600001']) {
    const r = await cli(['integrity', slow], env({ PROVENANT_CREDENTIALS_TIMEOUT_MS: bad }));
    assert.is(r.status, 1, bad);
    assert.match(r.stderr, /PROVENANT_CREDENTIALS_TIMEOUT_MS must be a whole number of milliseconds from 100 to 3600000/, bad);
  }
  assert.is(credentialsTimeoutFromEnv({}), 10_000);
  assert.is(credentialsTimeoutFromEnv({ PROVENANT_CREDENTIALS_TIMEOUT_MS: '2500' }), 2500);
});

test("the vault's drafts: the integrity report's credentials under the same deadline", async () => {
  const saved = process.env.PROVENANT_CREDENTIALS_TIMEOUT_MS;
  try {
    process.env.PROVENANT_CREDENTIALS_TIMEOUT_MS = '100';
    const [hurried] = await draftRecords([slow], { intent: 'Authorship' }, () => {});
    assert.equal((hurried.content.integrity_report as { content_credentials?: unknown } | null)?.content_credentials, { present: null, message: 'not read: reading Content Credentials ran past its deadline (100 ms; docs/c2pa.md)' });
    assert.ok(hurried.content.perceptual_hash !== null, 'the fingerprint is made as ever');
    delete process.env.PROVENANT_CREDENTIALS_TIMEOUT_MS;
    const [roomy] = await draftRecords([slow], { intent: 'Authorship' }, () => {});
    assert.is(((roomy.content.integrity_report as { content_credentials?: { present: boolean } } | null)?.content_credentials)?.present, true);
  } finally {
    if (saved === undefined) delete process.env.PROVENANT_CREDENTIALS_TIMEOUT_MS;
    else process.env.PROVENANT_CREDENTIALS_TIMEOUT_MS = saved;
  }
});

test.run();
