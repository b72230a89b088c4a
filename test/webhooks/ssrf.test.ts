// Server-side request forgery (spec 4.15, 6 rule 5; decisions.md 8; issue 18): the URL
// rules at registration, with every spelling of a non-public address, and DNS
// rebinding at delivery. The server here runs as in production (no
// PROVENANT_WEBHOOK_ALLOW_PRIVATE) and resolves through a DNS server of the test's own
// (PROVENANT_DNS_SERVERS) whose answers it scripts. Also the library's
// verifyWebhookSignature against node:crypto.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac, randomBytes } from 'node:crypto';
import { createServerCell } from '../../server/src/domain/cells.js';
import type { Logger, LogFields } from '../../server/src/log.js';
import { isPublicAddress } from '../../server/src/domain/url-rules.js';
import { verifyWebhookSignature } from '../../src/lib/webhook.js';
import { apiRequest, startTestServer, type TestServer } from '../helpers/server.js';
import { makeTestCa, Receiver, TEST_DOMAIN, TestDns, type TestCa } from './fixtures.js';

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

const warnings: { msg: string; fields: LogFields }[] = [];
const log: Logger = { debug() {}, info() {}, error() {}, warn: (msg, fields = {}) => void warnings.push({ msg, fields }) };

/** The scripted zone: name (under TEST_DOMAIN) -> answers per query type; `rebind` answers a public address first, loopback after. */
const ZONE: Record<string, { A?: string[]; AAAA?: string[] }> = {
  public: { A: [PUBLIC_V4], AAAA: [PUBLIC_V6] },
  private: { A: ['10.1.2.3'] },
  metadata: { A: ['169.254.169.254'] },
  mixed: { A: [PUBLIC_V4, '127.0.0.1'] },
  v6local: { A: [PUBLIC_V4], AAAA: ['fd00::1'] },
  mapped: { AAAA: ['::ffff:127.0.0.1'] },
  cgnat: { A: ['100.100.100.100'] },
  compat: { AAAA: ['::a00:1'] },
  nat64: { AAAA: ['64:ff9b::a9fe:a9fe'] },
};

let ca: TestCa;
let receiver: Receiver;
let dns: TestDns;
let srv: TestServer;
let developer: { token: string; userId: string; appId: string; appToken: string };

const test = suite('webhooks: SSRF');
test.before(async () => {
  ca = makeTestCa();
  receiver = await Receiver.start(ca);
  dns = await TestDns.start((name, type, n) => {
    if (!name.endsWith(`.${TEST_DOMAIN}`)) return null;
    const label = name.slice(0, -TEST_DOMAIN.length - 1);
    if (label === 'rebind') return type === 'A' ? [n === 1 ? PUBLIC_V4 : '127.0.0.1'] : [];
    // public over IPv4 at registration; at delivery only an IPv4-compatible IPv6 loopback
    if (label === 'rebind6') return n === 1 ? (type === 'A' ? [PUBLIC_V4] : []) : (type === 'AAAA' ? ['::7f00:1'] : []);
    const entry = ZONE[label];
    return entry ? (entry[type] ?? []) : null;
  });
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off', PROVENANT_DNS_SERVERS: dns.server }, { webhookCa: ca.caPem, log });
  const { token, user } = await srv.register();
  await srv.deps.store.accounts.setOrgTier((await srv.deps.store.accounts.personalOrg(user.id))!.id, 'enterprise');
  await createServerCell(srv.deps, user.id);
  const appId = (await apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { token, body: { name: 'a' } })).body.client_id;
  const appToken = (await apiRequest(srv.url, 'POST', `/api/v1/developer/apps/${appId}/token`, { token })).body.token;
  developer = { token, userId: user.id, appId, appToken };
});
test.after(async () => {
  await srv.close();
  await dns.close();
  await receiver.close();
  ca.remove();
});

const register = (url: string) =>
  apiRequest(srv.url, 'POST', `/api/v1/webhooks?app_id=${developer.appId}`, { token: developer.token, body: { url, events: ['sign.created'] } });

/** At least 25 spellings, each of which must be 400 invalid_url. */
const REFUSED = [
  'https://127.0.0.1/',
  'https://127.1/',
  'https://2130706433/',
  'https://0x7f000001/',
  'https://0x7f.0.0.1/',
  'https://0177.0.0.1/',
  'https://017700000001/',
  'https://127.000.000.001/',
  'https://%31%32%37.0.0.1/',
  'https://\uFF11\uFF12\uFF17.0.0.1/', // full-width digits
  'https://127.0.0.1:8443/hook',
  'https://0.0.0.0/',
  'https://0/',
  'https://10.0.0.1/',
  'https://172.16.5.4/',
  'https://192.168.1.1/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://198.18.0.1/',
  'https://[::1]/',
  'https://[0:0:0:0:0:0:0:1]/',
  'https://[::]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:10.0.0.1]/',
  'https://[fe80::1]/',
  'https://[fc00::1]/',
  'https://[fd12:3456::1]/',
  'https://[ff02::1]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[2002:7f00:1::]/',
  'https://[::127.0.0.1]/', // IPv4-compatible ::/96, stored as [::7f00:1]
  'https://[::a00:1]/',
  'https://[::7f00:1]:8443/',
  'https://[64:ff9b:1::a00:1]/',
  'https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', // Teredo, client 10.0.0.1
  'https://localhost/',
  'https://LOCALHOST./',
  'https://localhost:443/',
  'https://api.localhost/',
  'https://printer.local/',
  'https://metadata.google.internal/',
  'https://router.home.arpa/',
  'https://intranet/',
  `https://trusted.example.com@127.0.0.1/`,
  `https://user:pass@public.${TEST_DOMAIN}/`,
  `https://public.${TEST_DOMAIN}#@127.0.0.1/`,
  `http://public.${TEST_DOMAIN}/`,
  `ftp://public.${TEST_DOMAIN}/`,
  'not a url',
  `https://private.${TEST_DOMAIN}/`,
  `https://metadata.${TEST_DOMAIN}/`,
  `https://mixed.${TEST_DOMAIN}/`,
  `https://v6local.${TEST_DOMAIN}/`,
  `https://mapped.${TEST_DOMAIN}/`,
  `https://cgnat.${TEST_DOMAIN}/`,
  `https://nxdomain.${TEST_DOMAIN}/`,
  `https://compat.${TEST_DOMAIN}/`,
  `https://nat64.${TEST_DOMAIN}/`,
];

test(`${REFUSED.length} spellings of loopback, private, link-local, CGNAT, multicast, unspecified, mapped and local names: 400 invalid_url`, async () => {
  assert.ok(REFUSED.length >= 25);
  for (const url of REFUSED) {
    const res = await register(url);
    assert.equal([res.status, res.body.error], [400, 'invalid_url'], `${url}: ${res.text}`);
    assert.ok(res.body.message.startsWith('url: '), res.body.message);
  }
  assert.equal(await srv.deps.store.webhooks.listForApp(developer.appId), []);
  assert.is(receiver.received.length, 0);
});

test('an IPv6 address with a non-public IPv4 inside: the message names the IPv4 address and the range', async () => {
  const cases: [string, string, string][] = [
    ['https://[::127.0.0.1]/', '127.0.0.1', 'IPv4-compatible, ::/96'],
    ['https://[::a00:1]/', '10.0.0.1', 'IPv4-compatible, ::/96'],
    ['https://[64:ff9b::a9fe:a9fe]/', '169.254.169.254', 'NAT64, 64:ff9b::/96'],
    ['https://[64:ff9b:1::c0a8:101]/', '192.168.1.1', 'local-use NAT64, 64:ff9b:1::/48'],
    ['https://[2002:c0a8:101::1]/', '192.168.1.1', '6to4, 2002::/16'],
    ['https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', '10.0.0.1', 'Teredo, 2001::/32'],
  ];
  for (const [url, inside, range] of cases) {
    const res = await register(url);
    assert.equal([res.status, res.body.error], [400, 'invalid_url'], `${url}: ${res.text}`);
    assert.ok(res.body.message.includes(`IPv4 address ${inside} `), `${url}: ${res.body.message}`);
    assert.ok(res.body.message.includes(`(${range})`), `${url}: ${res.body.message}`);
  }
  // with a public IPv4 inside the ranges are still refused (nothing routes ::/96; gateways translate the others), saying which range
  for (const [url, range] of [['https://[::8.8.8.8]/', 'IPv4-compatible, ::/96'], ['https://[64:ff9b::808:808]/', 'NAT64, 64:ff9b::/96'], ['https://[2002:808:808::]/', '6to4, 2002::/16']]) {
    const res = await register(url);
    assert.equal([res.status, res.body.error], [400, 'invalid_url'], url);
    assert.ok(res.body.message.includes(`(${range})`), `${url}: ${res.body.message}`);
  }
});

test('a name that resolves to a non-public address: the message does not echo the address (no map of internal DNS)', async () => {
  const resolved: Record<string, string[]> = {
    private: ['10.1.2.3'], metadata: ['169.254.169.254'], mixed: ['127.0.0.1'], v6local: ['fd00::1'], mapped: ['::ffff:127.0.0.1', '::ffff:7f00:1', '127.0.0.1'],
    cgnat: ['100.100.100.100'], compat: ['::a00:1', '10.0.0.1'], nat64: ['64:ff9b::a9fe:a9fe', '169.254.169.254'],
  };
  for (const [label, addresses] of Object.entries(resolved)) {
    const res = await register(`https://${label}.${TEST_DOMAIN}/`);
    assert.equal([res.status, res.body.error], [400, 'invalid_url'], label);
    assert.is(res.body.message, `url: ${label}.${TEST_DOMAIN} resolves to a private address.`);
    for (const a of addresses) assert.not.ok(res.text.includes(a), `${label}: ${res.text} names ${a}`);
  }
});

test('a public hostname whose every address is public is accepted, without any request to it', async () => {
  const res = await register(`https://public.${TEST_DOMAIN}/hooks/in?x=1`);
  assert.is(res.status, 201, res.text);
  assert.is(res.body.webhook.url, `https://public.${TEST_DOMAIN}/hooks/in?x=1`);
  assert.ok(dns.queries.some((q) => q.name === `public.${TEST_DOMAIN}`), 'resolved through PROVENANT_DNS_SERVERS');
  await apiRequest(srv.url, 'DELETE', `/api/v1/webhooks/${res.body.webhook.id}`, { token: developer.token });
});

test('DNS rebinding: public at registration, 127.0.0.1 at delivery: the delivery is refused and counted as a failure', async () => {
  const host = `rebind.${TEST_DOMAIN}`;
  const res = await register(receiver.url('/rebound', host));
  assert.is(res.status, 201, res.text);
  const signed = await apiRequest(srv.url, 'POST', '/api/v1/sign-it/sign', { token: developer.appToken, body: { file_hash: randomBytes(32).toString('hex') } });
  assert.is(signed.status, 200);
  await srv.deps.webhooks.idle();
  assert.ok(dns.queries.filter((q) => q.name === host && q.type === 'A').length >= 2, 'resolved again at delivery');
  assert.is(receiver.received.length, 0, 'nothing reached the loopback receiver');
  const [state] = (await apiRequest(srv.url, 'GET', `/api/v1/webhooks?app_id=${developer.appId}`, { token: developer.token })).body.webhooks;
  assert.equal([state.id, state.failure_count, state.active, state.last_triggered_at], [res.body.webhook.id, 1, true, null]);
  const failure = warnings.find((w) => w.fields.webhook === state.id);
  assert.is(failure?.fields.reason, 'refused_address');
  assert.match(String(failure?.fields.error), /127\.0\.0\.1/);
});

test('DNS rebinding to an IPv4-compatible IPv6 loopback (::7f00:1) at delivery: refused, counted, the log names the address', async () => {
  const host = `rebind6.${TEST_DOMAIN}`;
  const res = await register(receiver.url('/rebound6', host));
  assert.is(res.status, 201, res.text);
  const signed = await apiRequest(srv.url, 'POST', '/api/v1/sign-it/sign', { token: developer.appToken, body: { file_hash: randomBytes(32).toString('hex') } });
  assert.is(signed.status, 200);
  await srv.deps.webhooks.idle();
  assert.ok(dns.queries.filter((q) => q.name === host && q.type === 'AAAA').length >= 2, 'resolved again at delivery');
  assert.is(receiver.received.length, 0, 'nothing reached the loopback receiver');
  const id = res.body.webhook.id;
  const state = (await apiRequest(srv.url, 'GET', `/api/v1/webhooks?app_id=${developer.appId}`, { token: developer.token })).body.webhooks.find((w: { id: string }) => w.id === id);
  assert.is(state.failure_count, 1);
  const failure = warnings.find((w) => w.fields.webhook === id);
  assert.is(failure?.fields.reason, 'refused_address');
  assert.match(String(failure?.fields.error), /resolves to ::(7f00:1|127\.0\.0\.1), which carries the IPv4 address 127\.0\.0\.1 \(loopback\) inside \(IPv4-compatible/);
  await apiRequest(srv.url, 'DELETE', `/api/v1/webhooks/${id}`, { token: developer.token });
});

test('isPublicAddress: only public unicast', () => {
  for (const a of ['8.8.8.8', PUBLIC_V4, '1.1.1.1', PUBLIC_V6, '2001:4860:4860::8888']) assert.ok(isPublicAddress(a), a);
  for (const a of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.0.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '224.0.0.251', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::', '2001:db8::1', 'localhost', '',
    '::7f00:1', '::a00:1', '::808:808', '64:ff9b:1::808:808', '2001:0:4136:e378:8000:63bf:3fff:fdd2']) {
    assert.not.ok(isPublicAddress(a), a);
  }
});

test('verifyWebhookSignature: true for the HMAC-SHA256 node:crypto computes over the exact bytes, false for anything else', () => {
  for (const size of [0, 1, 63, 64, 65, 1000, 70_000]) {
    const secret = randomBytes(32).toString('hex');
    const body = randomBytes(size);
    const header = createHmac('sha256', secret).update(body).digest('hex');
    assert.ok(verifyWebhookSignature(secret, body, header), `size ${size}`);
    assert.ok(verifyWebhookSignature(secret, body, header.toUpperCase()), 'hex in either case');
    const flipped = Buffer.from(body);
    if (size > 0) {
      flipped[size - 1] ^= 1;
      assert.not.ok(verifyWebhookSignature(secret, flipped, header), 'a changed body');
    }
    assert.not.ok(verifyWebhookSignature(`${secret}0`, body, header), 'another secret');
    assert.not.ok(verifyWebhookSignature(secret, body, header.slice(0, 63)), 'a short header');
    assert.not.ok(verifyWebhookSignature(secret, body, `${header}00`), 'a long header');
    assert.not.ok(verifyWebhookSignature(secret, body, `sha256=${header}`));
    assert.not.ok(verifyWebhookSignature(secret, body, undefined));
  }
  const text = '{"event":"sign.created","timestamp":1}';
  assert.ok(verifyWebhookSignature('k', text, createHmac('sha256', 'k').update(text).digest('hex')), 'a string body as UTF-8');
});

test.run();
