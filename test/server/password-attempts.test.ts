// Password guessing and IPv6 clients (issue 25 item 6, issue 34): POST /api/v1/auth/login
// and the OAuth sign-in form spend the same windows, whichever form an attempt comes
// through: every attempt per address; wrong passwords per account (the user the login
// names) from devices that have not signed in to it, and per account and address; a
// browser that signed in before (its device cookie) keeps signing in while the account
// is locked to others. An IPv6 client is counted as its /64 there and on the contact
// relay's limit. Addresses come in X-Forwarded-For (PROVENANT_TRUST_PROXY=1); the
// sign-in form's browser sends none, so its address is the socket's, 127.0.0.1.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync, randomBytes, sign as edSign } from 'node:crypto';
import { clientKey } from '../../server/src/ratelimit.js';
import { agentKeyFromPublicKey } from '../../src/lib/keys.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { authorizeQuery, Browser, PASSWORD, registerApp, type PageAnswer } from '../oauth/support.js';

/** SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts). */
const engine = testEngine(import.meta.url);
/** Spec 8: password attempts a minute, per address and per account. */
const LIMIT = 30;
/** Wrong passwords a minute from one address against one account, and from one known browser. */
const SHARE = 10;
let counter = 0;
const address = () => `pw-${process.pid}-${Date.now()}-${++counter}@example.com`;
/** A client address not used before in this file (X-Forwarded-For). */
const freshIp = () => `198.18.${Math.floor(++counter / 250)}.${(counter % 250) + 1}`;

interface LoginAnswer {
  status: number;
  body: { error?: string; message?: string; token?: string; user?: { id: string } };
  retryAfter: string | null;
  /** The device cookie this answer set (name=value), or null. */
  deviceCookie: string | null;
  setCookies: string[];
}

/** POST /api/v1/auth/login, from `ip` (X-Forwarded-For) or, without it, from 127.0.0.1; `cookie`: a Cookie header. */
async function login(srv: TestServer, login: string, password: string, ip?: string, cookie?: string): Promise<LoginAnswer> {
  const res = await fetch(`${srv.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}), ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ email_or_username: login, password }),
  });
  const setCookies = res.headers.getSetCookie();
  const device = setCookies.find((c) => c.startsWith('provenant_device='));
  return { status: res.status, body: (await res.json()) as LoginAnswer['body'], retryAfter: res.headers.get('retry-after'), deviceCookie: device?.split(';')[0] ?? null, setCookies };
}

async function withServer(env: Record<string, string>, body: (srv: TestServer) => Promise<void>): Promise<void> {
  const srv = await startTestServer({ PROVENANT_TRUST_PROXY: '1', ...env }, { engine });
  try {
    await body(srv);
  } finally {
    await srv.close();
  }
}

/** The sign-in form of an authorization request, in `browser` (a fresh one by default). */
async function signInForm(srv: TestServer, browser = new Browser(srv.url)): Promise<{ browser: Browser; page: PageAnswer }> {
  const app = await registerApp(srv, ['openid']);
  const page = await browser.request(`/oauth/authorize?${authorizeQuery(app)}`);
  assert.is(page.status, 200);
  assert.match(page.html, /name="password"/);
  return { browser, page };
}

/** Locks the account to devices it does not know: 10 wrong passwords from each of three fresh addresses, through `logins` in turn. */
async function lockAccount(srv: TestServer, logins: string[]): Promise<void> {
  for (let a = 0; a < LIMIT / SHARE; a++) {
    const ip = freshIp();
    for (let i = 0; i < SHARE; i++) assert.is((await login(srv, logins[i % logins.length], 'wrong', ip)).status, 401, `address ${a + 1}, attempt ${i + 1}`);
  }
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

test('issue 34: 30 wrong passwords from one address do not lock the account: the right password from another address signs in, by /login and by the sign-in form', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    await srv.register(email, { password: PASSWORD });
    const guesses: number[] = [];
    for (let i = 0; i < LIMIT; i++) guesses.push((await login(srv, email, 'wrong', '198.51.100.66')).status);
    assert.equal(guesses, [...Array(SHARE).fill(401), ...Array(LIMIT - SHARE).fill(429)], 'that address is refused for this account after 10');
    const api = await login(srv, email, PASSWORD, '203.0.113.7');
    assert.is(api.status, 200, `the right password from another address: ${JSON.stringify(api.body)}`);
    const { browser, page } = await signInForm(srv);
    const form = await browser.submit(page, { email_or_username: email, password: PASSWORD });
    assert.is(form.status, 303, 'and through the sign-in form');
  });
});

test('issue 34: e-mail and username are one account: three addresses, 10 wrong passwords each through either name, lock it to devices it does not know', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    const username = `pw${process.pid}u${++counter}`;
    await srv.register(email, { password: PASSWORD, username });
    await lockAccount(srv, [email, username.toUpperCase()]);
    for (const name of [email, username]) {
      const refused = await login(srv, name, PASSWORD, freshIp());
      assert.equal([refused.status, refused.body.error], [429, 'rate_limited'], `${name}: the right password from a device the account does not know`);
      assert.match(refused.body.message!, /devices that have not signed in to it before; retry in \d+ s\./);
      assert.ok(Number(refused.retryAfter) >= 1);
    }
    const { browser, page } = await signInForm(srv);
    assert.is((await browser.submit(page, { email_or_username: email, password: PASSWORD })).status, 429, 'the sign-in form too');
  });
});

test('issue 34: a browser that signed in before keeps signing in while the account is locked to others, through the form and /login (its device cookie)', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    await srv.register(email, { password: PASSWORD });
    const { browser, page } = await signInForm(srv);
    assert.is((await browser.submit(page, { email_or_username: email, password: PASSWORD })).status, 303);
    const cookies = browser.setCookies.filter((c) => c.startsWith('provenant_device='));
    assert.equal(cookies.map((c) => /; Path=([^;]+)/.exec(c)![1]).sort(), ['/api/v1/auth/login', '/oauth/authorize'], 'sent only where a password is tried');
    for (const c of cookies) assert.match(c, /; Max-Age=15552000; HttpOnly; SameSite=Strict$/, 'HttpOnly, Strict, 180 days (no Secure over http)');
    assert.not.ok(cookies[0].includes(email.split('@')[0]), 'the cookie does not carry the address');

    await lockAccount(srv, [email]);
    assert.is((await login(srv, email, PASSWORD, freshIp())).status, 429, 'a device the account does not know');
    // the browser, signed out, through the form again
    browser.cookies.delete('provenant_session');
    const again = await signInForm(srv, browser);
    const form = await browser.submit(again.page, { email_or_username: email, password: PASSWORD });
    assert.is(form.status, 303, form.html);
    // and its cookie with /login, from another address
    const api = await login(srv, email, PASSWORD, freshIp(), `provenant_device=${browser.cookies.get('provenant_device')}`);
    assert.is(api.status, 200, JSON.stringify(api.body));
    assert.ok(api.deviceCookie, 'each sign-in gives a fresh cookie');
  });
});

test('issue 34: a device cookie is one account\'s: forged or another account\'s, it opens nothing; its own 10 wrong passwords lock it alone', async () => {
  await withServer({}, async (srv) => {
    const [a, b, c] = [address(), address(), address()];
    for (const email of [a, b, c]) await srv.register(email, { password: PASSWORD });
    const cookieOf = async (email: string) => (await login(srv, email, PASSWORD, freshIp())).deviceCookie!;
    const [cookieA, cookieB, cookieC] = [await cookieOf(a), await cookieOf(b), await cookieOf(c)];
    await lockAccount(srv, [a]);
    const forged = cookieA.slice(0, -2) + (cookieA.endsWith('AA') ? 'BB' : 'AA');
    assert.is((await login(srv, a, PASSWORD, freshIp(), forged)).status, 429, 'a forged cookie');
    assert.is((await login(srv, a, PASSWORD, freshIp(), cookieB)).status, 429, 'another account\'s cookie');
    assert.is((await login(srv, a, PASSWORD, freshIp(), cookieA)).status, 200, 'the account\'s own');

    const guesses: number[] = [];
    for (let i = 0; i <= SHARE; i++) guesses.push((await login(srv, c, 'wrong', freshIp(), cookieC)).status);
    assert.equal(guesses, [...Array(SHARE).fill(401), 429], 'the cookie is locked after 10');
    const locked = await login(srv, c, PASSWORD, freshIp(), cookieC);
    assert.equal([locked.status, locked.body.error], [429, 'rate_limited'], 'the right password with the locked cookie');
    assert.match(locked.body.message!, /from this browser/);
    assert.is((await login(srv, c, PASSWORD, freshIp())).status, 200, 'the cookie\'s failures did not lock the account');
  });
});

test('issue 34: an unknown login is answered as a known one, window for window', async () => {
  await withServer({}, async (srv) => {
    const known = address();
    await srv.register(known, { password: PASSWORD });
    const answers = async (name: string) => {
      const seen: string[] = [];
      for (let a = 0; a < 4; a++) {
        const ip = freshIp();
        for (let i = 0; i <= SHARE; i++) {
          const r = await login(srv, name, 'wrong', ip);
          seen.push(`${r.status} ${r.body.error}`);
        }
      }
      return seen;
    };
    const ofKnown = await answers(known);
    assert.equal(await answers(address()), ofKnown);
    const perAddress = [...Array(SHARE).fill('401 invalid_credentials'), '429 rate_limited'];
    assert.equal(ofKnown, [...perAddress, ...perAddress, ...perAddress, ...Array(SHARE + 1).fill('429 rate_limited')]);
  });
});

test('issue 34: a linked vault signs in by its key while the account is locked to browsers', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    const { token, user } = await srv.register(email, { password: PASSWORD });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const agentKey = agentKeyFromPublicKey(new Uint8Array(Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url')));
    const signed = async () => {
      const c = await apiRequest(srv.url, 'POST', '/api/v1/auth/vault/challenge', { body: { agent_pub_key: agentKey } });
      return { challenge: c.body.challenge, agent_pub_key: agentKey, signature: edSign(null, Buffer.from(c.body.challenge, 'utf8'), privateKey).toString('base64') };
    };
    assert.is((await apiRequest(srv.url, 'POST', '/api/v1/auth/agents', { token, body: await signed() })).status, 201);
    await lockAccount(srv, [email]);
    assert.is((await login(srv, email, PASSWORD, freshIp())).status, 429);
    const vault = await apiRequest(srv.url, 'POST', '/api/v1/auth/vault/token', { body: await signed() });
    assert.equal([vault.status, vault.body.user.id], [200, user.id]);
  });
});

test('issue 34: 40 wrong passwords at once from one address against one account: 10 are checked, 30 refused unchecked', async () => {
  await withServer({}, async (srv) => {
    const email = address();
    await srv.register(email, { password: PASSWORD });
    const answers = await Promise.all(Array.from({ length: 40 }, () => login(srv, email, 'wrong', '198.51.100.99')));
    const statuses = answers.map((r) => r.status);
    assert.equal([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [SHARE, 40 - SHARE]);
    assert.is((await login(srv, email, PASSWORD, freshIp())).status, 200, 'the refused ones counted against nobody');
  });
});

test.run();
