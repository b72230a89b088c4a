// Password guessing and IPv6 clients (issue 25 item 6): POST /api/v1/auth/login and the
// OAuth sign-in form spend one window per account and one per address, whichever form
// an attempt comes through; an IPv6 client is counted as its /64 there and on the
// contact relay's limit. Addresses come in X-Forwarded-For (PROVENANT_TRUST_PROXY=1);
// the sign-in form's browser sends none, so its address is the socket's, 127.0.0.1.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { clientKey } from '../../server/src/ratelimit.js';
import { agentKeyFromPublicKey } from '../../src/lib/keys.js';
import { startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { authorizeQuery, Browser, PASSWORD, registerApp, type PageAnswer } from '../oauth/support.js';

/** SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts). */
const engine = testEngine(import.meta.url);
/** Spec 8: password attempts a minute, per address and per account. */
const LIMIT = 30;
let counter = 0;
const address = () => `pw-${process.pid}-${Date.now()}-${++counter}@example.com`;

/** POST /api/v1/auth/login, from `ip` (X-Forwarded-For) or, without it, from 127.0.0.1. */
async function login(srv: TestServer, login: string, password: string, ip?: string): Promise<{ status: number; body: { error?: string; token?: string } ; retryAfter: string | null }> {
  const res = await fetch(`${srv.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}) },
    body: JSON.stringify({ email_or_username: login, password }),
  });
  return { status: res.status, body: (await res.json()) as { error?: string }, retryAfter: res.headers.get('retry-after') };
}

async function withServer(env: Record<string, string>, body: (srv: TestServer) => Promise<void>): Promise<void> {
  const srv = await startTestServer({ PROVENANT_TRUST_PROXY: '1', ...env }, { engine });
  try {
    await body(srv);
  } finally {
    await srv.close();
  }
}

/** The sign-in form of an authorization request, in a fresh browser. */
async function signInForm(srv: TestServer): Promise<{ browser: Browser; page: PageAnswer }> {
  const app = await registerApp(srv, ['openid']);
  const browser = new Browser(srv.url);
  const page = await browser.request(`/oauth/authorize?${authorizeQuery(app)}`);
  assert.is(page.status, 200);
  assert.match(page.html, /name="password"/);
  return { browser, page };
}

const test = suite('password attempts');

test('one account, many addresses: attempts through /login and the sign-in form share the account\'s window', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    await srv.register(email, { password: PASSWORD });
    const { browser, page: first } = await signInForm(srv);
    // two thirds through the API, each from an address of its own
    for (let i = 0; i < LIMIT - 10; i++) assert.is((await login(srv, email, 'wrong', `198.51.100.${i + 1}`)).status, 401);
    // the rest through the sign-in form
    let page = first;
    for (let i = 0; i < 10; i++) {
      page = await browser.submit(page, { email_or_username: email, password: 'wrong' });
      assert.is(page.status, 401, page.html);
    }
    // the account's window is used up: the right password, from a fresh address, through either form
    const api = await login(srv, email, PASSWORD, '203.0.113.77');
    assert.equal([api.status, api.body.error], [429, 'rate_limited']);
    assert.ok(Number(api.retryAfter) >= 1);
    const form = await browser.submit(page, { email_or_username: email.toUpperCase(), password: PASSWORD });
    assert.is(form.status, 429, 'the same account, however it is spelled');
    assert.match(form.html, /Too many sign-in attempts; try again in \d+ s\./);
    assert.ok(Number(form.headers.get('retry-after')) >= 1);
    assert.is(form.location, null, 'no session, no redirect');
    // another account from the same addresses is not held up
    const other = address();
    await srv.register(other, { password: PASSWORD });
    assert.is((await login(srv, other, PASSWORD, '198.51.100.1')).status, 200);
  });
});

test('one address, many accounts: attempts through the sign-in form and /login share the address\'s window', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    await srv.register(email, { password: PASSWORD });
    const { browser, page: first } = await signInForm(srv);
    let page = first;
    for (let i = 0; i < LIMIT - 10; i++) {
      page = await browser.submit(page, { email_or_username: address(), password: 'guess' });
      assert.is(page.status, 401);
    }
    for (let i = 0; i < 10; i++) assert.is((await login(srv, address(), 'guess')).status, 401);
    assert.is((await login(srv, email, PASSWORD)).status, 429, 'the address\'s window is used up, right password or not');
    assert.is((await browser.submit(page, { email_or_username: email, password: PASSWORD })).status, 429);
    assert.is((await login(srv, email, PASSWORD, '198.51.100.9')).status, 200, 'another address signs in');
  });
});

test('an IPv6 client is its /64: fresh addresses in one /64 share a window, the next /64 has its own', async () => {
  await withServer({}, async (srv) => {
    for (let i = 0; i < LIMIT; i++) assert.is((await login(srv, address(), 'guess', `2001:db8:1:2::${(i + 1).toString(16)}`)).status, 401);
    assert.is((await login(srv, address(), 'guess', '2001:db8:1:2:ffff:ffff:ffff:fffe')).status, 429, 'another address of the same /64');
    assert.is((await login(srv, address(), 'guess', '2001:db8:1:3::1')).status, 401, 'the next /64');
    assert.is((await login(srv, address(), 'guess', '203.0.113.5')).status, 401, 'an IPv4 client');
  });
});

test('PROVENANT_RATE_LIMIT_IPV6_PREFIX=48: the whole /48 shares one window', async () => {
  await withServer({ PROVENANT_RATE_LIMIT_IPV6_PREFIX: '48' }, async (srv) => {
    for (let i = 0; i < LIMIT; i++) assert.is((await login(srv, address(), 'guess', `2001:db8:1:${(i + 1).toString(16)}::1`)).status, 401);
    assert.is((await login(srv, address(), 'guess', '2001:db8:1:ffff::1')).status, 429);
    assert.is((await login(srv, address(), 'guess', '2001:db8:2::1')).status, 401, 'the next /48');
  });
});

test('the contact relay\'s 3 an hour: counted per /64, still answered alike', async () => {
  await withServer({}, async (srv) => {
    const bodies: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${srv.url}/api/v1/sign-it/contact`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `2001:db8:9:9::${i + 1}` },
        body: JSON.stringify({ signer_agent_key: agentKeyFromPublicKey(randomBytes(32)), sender_name: 'Bea', sender_email: 'bea@buyer.example', message: 'hello', purpose: 'other' }),
      });
      assert.is(res.status, 200);
      bodies.push(await res.text());
    }
    assert.is(new Set(bodies).size, 1, 'one answer');
    await srv.deps.contactRelay.idle();
    // an unknown signer: each request queued is dropped by the relay; over the limit nothing is queued
    assert.is(srv.deps.contactRelay.counts.dropped, 3, 'three requests from the /64 were queued, two were not');
  });
});

test('clientKey: IPv4 (and IPv4-mapped IPv6) by address, IPv6 by its network of the configured prefix', () => {
  const ctx = (socket: string, xff = '') => ({ socket: { remoteAddress: socket }, get: (h: string) => (h === 'x-forwarded-for' ? xff : '') }) as unknown as Parameters<typeof clientKey>[0];
  const at = (prefix: number, trustProxy = 0) => ({ rateLimitIpv6Prefix: prefix, trustProxy });
  assert.is(clientKey(ctx('203.0.113.7'), at(64)), '203.0.113.7');
  assert.is(clientKey(ctx('::ffff:203.0.113.7'), at(64)), '203.0.113.7');
  assert.is(clientKey(ctx('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), at(64)), '2001:db8:1:2::/64');
  assert.is(clientKey(ctx('2001:DB8:1:2::1'), at(64)), '2001:db8:1:2::/64', 'any spelling');
  assert.is(clientKey(ctx('2001:db8:1:2:aaaa::1'), at(56)), '2001:db8:1::/56');
  assert.is(clientKey(ctx('2001:db8:1:2:aaaa::1'), at(128)), '2001:db8:1:2:aaaa::1');
  assert.is(clientKey(ctx('127.0.0.1', '2001:db8:7:7::9'), at(64, 1)), '2001:db8:7:7::/64', 'through a trusted proxy');
});

test.run();
