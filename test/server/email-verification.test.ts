// E-mail address verification: registration mails a link (into the outbox without SMTP,
// over real SMTP with it); opening the link verifies nothing, its page's button does
// (a POST with that page's CSRF token), once, within 24 hours, for the address it was
// sent to; the resend endpoint and its limit; registration answers without waiting
// on the mail server; and a verified address is what the OAuth `email` scope shares
// (spec 2.8), offered on the consent page and returned by userinfo.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from '../helpers/smtp.js';
import { apiRequest, startTestServer, testEngine, type TestServer, type TestUser } from '../helpers/server.js';
import { authorizeQuery, Browser, PASSWORD, pkce, postJson, registerApp, unescape } from '../oauth/support.js';

/** SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts). */
const engine = testEngine(import.meta.url);
const VERIFY = '/api/v1/auth/email/verify';
const RESEND = '/api/v1/auth/email/verification';

let counter = 0;
const address = (tag: string) => `${tag}-${process.pid}-${Date.now()}-${++counter}@mail.example`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Mail {
  envelope: { from: string; to: string[] };
  eml: string;
  mode: number;
}

/** The outbox's messages, oldest first. */
function outbox(srv: TestServer): Mail[] {
  const dir = join(srv.dataDir, 'outbox');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.eml')).sort();
  } catch {
    return [];
  }
  return names.map((n) => ({
    eml: readFileSync(join(dir, n), 'utf8'),
    envelope: JSON.parse(readFileSync(join(dir, n.replace(/\.eml$/, '.envelope.json')), 'utf8')),
    mode: statSync(join(dir, n)).mode & 0o777,
  }));
}

/** The body of a message with quoted-printable undone (soft line breaks, =XX). */
function bodyOf(eml: string): string {
  const body = eml.slice(eml.search(/\r?\n\r?\n/));
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

/** The one verification link in a message: the server's public base URL, the verify path, a token. */
function linkIn(srv: TestServer, eml: string): { url: string; token: string } {
  const base = srv.deps.config.baseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const links = [...bodyOf(eml).matchAll(new RegExp(`${base}${VERIFY}\\?token=([A-Za-z0-9_-]+)`, 'g'))];
  assert.is(links.length, 1, `one link in: ${bodyOf(eml)}`);
  return { url: links[0][0], token: links[0][1] };
}

/** Messages sent to `to` (the outbox), after the sends in flight end. */
async function mailsTo(srv: TestServer, to: string): Promise<Mail[]> {
  await srv.deps.verificationMail.idle();
  return outbox(srv).filter((m) => m.envelope.to.includes(to));
}

/**
 * Opens a link as a browser would (the path and query on the test server): the page it
 * shows and, when that page has the confirm button, the page after pressing it.
 */
async function open(srv: TestServer, url: string) {
  const u = new URL(url);
  const browser = new Browser(srv.url);
  const page = await browser.request(`${u.pathname}${u.search}`);
  const last = page.status === 200 && page.html.includes('<form') ? await browser.submit(page, {}) : page;
  return { status: last.status, headers: last.headers, html: last.html };
}

const me = async (srv: TestServer, user: TestUser) => (await apiRequest(srv.url, 'GET', '/api/v1/auth/me', { token: user.token })).body.user;

// ---------------------------------------------------------------- the outbox (no SMTP)

const flow = suite<{ srv: TestServer }>('email verification, outbox');
flow.before(async (ctx) => {
  ctx.srv = await startTestServer({ PROVENANT_MAIL_FROM: 'accounts@provenant.example' }, { engine });
});
flow.after(async ({ srv }) => srv.close());

flow('registration mails one link to the address; following it verifies; a second use fails', async ({ srv }) => {
  const email = address('ana');
  const ana = await srv.register(email);
  assert.is(ana.user.email_verified, false, 'the registration answer: not verified yet');
  const mails = await mailsTo(srv, email);
  assert.is(mails.length, 1, 'one message');
  const [mail] = mails;
  assert.equal(mail.envelope, { from: 'accounts@provenant.example', to: [email] });
  assert.is(mail.mode, 0o600);
  assert.match(mail.eml, /^From: Provenant <accounts@provenant\.example>$/m);
  assert.match(mail.eml, new RegExp(`^To: ${email.replace(/\./g, '\\.')}$`, 'm'));
  const { url, token } = linkIn(srv, mail.eml);
  assert.is(Buffer.from(token, 'base64url').length, 32, '32 random bytes');

  // stored only as its SHA-256
  const sql = await srv.sql();
  const rows = await sql.all<Record<string, unknown>>('SELECT * FROM email_verifications WHERE user_id = ?', [ana.user.id]);
  assert.is(rows.length, 1);
  assert.is(rows[0].hash, sha256(token));
  assert.not.ok(JSON.stringify(rows).includes(token), 'the token itself is nowhere in the row');
  assert.is(Number(rows[0].expires_at) - Number(rows[0].created_at), 24 * 3600 * 1000, '24 hours');
  assert.is((await me(srv, ana)).email_verified, false);

  const page = await open(srv, url);
  assert.is(page.status, 200, page.html);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
  assert.not.match(page.headers.get('content-security-policy')!, /script-src/);
  assert.not.match(page.html, /<script/i);
  assert.ok(page.html.includes(email), 'the page names the address');
  assert.is((await me(srv, ana)).email_verified, true, 'GET /me: verified');

  const again = await open(srv, url);
  assert.is(again.status, 400);
  assert.match(again.html, /used already/);
  assert.match(again.html, /invalid_verification_token/);
  assert.is((await me(srv, ana)).email_verified, true, 'still verified');
});

flow('opening the link verifies nothing (a mail scanner fetches links); its button does, with the CSRF token of that page, that browser and that link', async ({ srv }) => {
  const email = address('scanned');
  const user = await srv.register(email);
  const [mail] = await mailsTo(srv, email);
  const { url, token } = linkIn(srv, mail.eml);
  const u = new URL(url);
  const browser = new Browser(srv.url);
  const page = await browser.request(`${u.pathname}${u.search}`);
  assert.is(page.status, 200, page.html);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(page.headers.get('content-security-policy')!, /default-src 'none'.*form-action 'self'/);
  assert.not.match(page.html, /<script/i);
  assert.match(page.html, new RegExp(`<form method="post" action="${VERIFY}">`));
  assert.match(page.html, /<button type="submit">Confirm my address<\/button>/);
  const csrf = unescape(/name="csrf_token" value="([^"]*)"/.exec(page.html)![1]);
  // a scanner fetching the link again, and previews: still nothing
  await fetch(`${srv.url}${u.pathname}${u.search}`);
  assert.is((await me(srv, user)).email_verified, false, 'GET verified nothing');

  // a POST without this browser's cookie (another site's form, a scanner posting the form): refused
  const cookieless = await fetch(`${srv.url}${VERIFY}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, csrf_token: csrf }).toString(), redirect: 'manual' });
  assert.is(cookieless.status, 403);
  assert.match(await cookieless.text(), /did not come from this page/);
  // the cookie, but the CSRF token of no page, or the page's token with another link
  const other = address('other-link');
  await srv.register(other);
  const otherToken = linkIn(srv, (await mailsTo(srv, other))[0].eml).token;
  assert.is((await browser.request(VERIFY, { form: { token, csrf_token: Buffer.alloc(32, 1).toString('base64url') } })).status, 403);
  assert.is((await browser.request(VERIFY, { form: { token: otherToken, csrf_token: csrf } })).status, 403, 'a token is bound to its link');
  assert.is((await browser.request(VERIFY, { form: { token } })).status, 403, 'no CSRF token');
  assert.is((await me(srv, user)).email_verified, false, 'none of those verified');

  const done = await browser.submit(page, {});
  assert.is(done.status, 200, done.html);
  assert.ok(done.html.includes(email), 'the page names the address');
  assert.is((await me(srv, user)).email_verified, true, 'the button verified');
});

flow('an expired link fails and verifies nothing; unknown, malformed and missing tokens fail alike', async ({ srv }) => {
  const email = address('late');
  const late = await srv.register(email);
  const [mail] = await mailsTo(srv, email);
  const { url } = linkIn(srv, mail.eml);
  await (await srv.sql()).run('UPDATE email_verifications SET expires_at = ? WHERE user_id = ?', [Date.now() - 1, late.user.id]);
  const page = await open(srv, url);
  assert.is(page.status, 400);
  assert.match(page.html, /expired/);
  assert.is((await me(srv, late)).email_verified, false);

  for (const query of [`?token=${Buffer.alloc(32, 7).toString('base64url')}`, '?token=short', '?token=a&token=b', '']) {
    const r = await open(srv, `${srv.url}${VERIFY}${query}`);
    assert.is(r.status, 400, query);
    assert.match(r.html, /not one we sent/, query);
    assert.match(r.headers.get('content-security-policy')!, /default-src 'none'/);
  }
});

flow('a link is bound to the address it was sent to: after the address changes it verifies nothing', async ({ srv }) => {
  const email = address('moved');
  const moved = await srv.register(email);
  const [mail] = await mailsTo(srv, email);
  await (await srv.sql()).run('UPDATE users SET email = ? WHERE id = ?', [address('elsewhere'), moved.user.id]);
  const page = await open(srv, linkIn(srv, mail.eml).url);
  assert.is(page.status, 400);
  assert.match(page.html, /no longer has/);
  assert.is((await me(srv, moved)).email_verified, false);
});

flow('resend: a session token only; a new link each time, every one valid (once); 3 an hour per user', async ({ srv }) => {
  const email = address('again');
  const user = await srv.register(email);
  assert.is((await apiRequest(srv.url, 'POST', RESEND)).status, 401);
  for (let i = 0; i < 3; i++) {
    const r = await apiRequest(srv.url, 'POST', RESEND, { token: user.token });
    assert.is(r.status, 202, r.text);
    assert.equal(r.body, { email, email_verified: false, verification_sent: true });
  }
  const over = await apiRequest(srv.url, 'POST', RESEND, { token: user.token });
  assert.is(over.status, 429);
  assert.is(over.body.error, 'rate_limited');
  const other = await srv.register(address('other'));
  assert.is((await apiRequest(srv.url, 'POST', RESEND, { token: other.token })).status, 202, 'the limit is per user');

  const mails = await mailsTo(srv, email);
  assert.is(mails.length, 4, 'registration and three resends');
  const links = mails.map((m) => linkIn(srv, m.eml));
  assert.is(new Set(links.map((l) => l.token)).size, 4, 'a new token each time');
  assert.is((await open(srv, links[1].url)).status, 200, 'an earlier link still works');
  assert.is((await open(srv, links[1].url)).status, 400, 'once');
  assert.is((await open(srv, links[3].url)).status, 200, 'another unused link for the same address confirms it again, harmlessly');
  assert.is((await me(srv, user)).email_verified, true);
});

flow('resend when verified sends nothing; an account without an address and an app\'s access token are refused', async ({ srv }) => {
  const email = address('done');
  const user = await srv.register(email);
  await open(srv, linkIn(srv, (await mailsTo(srv, email))[0].eml).url);
  const r = await apiRequest(srv.url, 'POST', RESEND, { token: user.token });
  assert.is(r.status, 200);
  assert.equal(r.body, { email, email_verified: true, verification_sent: false });
  assert.is((await mailsTo(srv, email)).length, 1, 'nothing sent');

  // an OAuth access token of an app the user authorized: 403
  const app = await registerApp(srv, ['openid']);
  const { verifier, challenge } = pkce();
  const back = await new Browser(srv.url).authorize(authorizeQuery(app, { scope: 'openid' }, challenge), { email });
  const tokens = await postJson(srv, '/oauth/token', { grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
  const refused = await apiRequest(srv.url, 'POST', RESEND, { token: tokens.body.access_token });
  assert.is(refused.status, 403);
  assert.is(refused.body.error, 'forbidden');
});

flow('after verification the email scope shares the address: offered on the consent page, email and email_verified in userinfo', async ({ srv }) => {
  const app = await registerApp(srv, ['openid', 'email']);
  const email = address('shared');
  const user = await srv.register(email);
  const browser = new Browser(srv.url);
  const { verifier, challenge } = pkce();
  const query = authorizeQuery(app, { scope: 'openid email' }, challenge);

  // before: the consent page offers no address
  const signIn = await browser.request(`/oauth/authorize?${query}`);
  const signedIn = await browser.submit(signIn, { email_or_username: email, password: PASSWORD });
  assert.is(signedIn.status, 303);
  const unverifiedConsent = await browser.request(`/oauth/authorize?${query}`);
  assert.is(unverifiedConsent.status, 200);
  assert.match(unverifiedConsent.html, /no verified address, so none will be shared/);
  assert.not.ok(unverifiedConsent.html.includes(`<strong>${email}</strong>`), 'an unverified address is not offered');

  await open(srv, linkIn(srv, (await mailsTo(srv, email))[0].eml).url);
  const consent = await browser.request(`/oauth/authorize?${query}`);
  assert.is(consent.status, 200);
  assert.ok(consent.html.includes(`<strong>${email}</strong> will be shared`), 'the verified address is offered');
  const back = await browser.submit(consent, { decision: 'approve' });
  assert.is(back.status, 303);
  const code = back.location!.searchParams.get('code');
  const tokens = await postJson(srv, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
  assert.is(tokens.status, 200, tokens.text);
  const info = await apiRequest(srv.url, 'GET', '/oauth/userinfo', { token: tokens.body.access_token });
  assert.equal(info.body, { sub: user.user.id, email, email_verified: true, scope: 'openid email' });
});

flow.run();

// ---------------------------------------------------------------- the mail server

const smtp = suite<{ srv: TestServer; server: SmtpCapture; mails: CapturedMail[] }>('email verification, SMTP');
smtp.before(async (ctx) => {
  ctx.server = await startSmtpCapture();
  ctx.mails = ctx.server.mails;
  ctx.srv = await startTestServer({ PROVENANT_SMTP_URL: ctx.server.url, PROVENANT_MAIL_FROM: 'accounts@provenant.example' }, { engine });
});
smtp.after(async ({ srv, server }) => {
  await srv.close();
  await server.close();
});

smtp('the link arrives over SMTP and verifies; nothing goes to the outbox', async ({ srv, mails }) => {
  const email = address('smtp');
  const user = await srv.register(email);
  await srv.deps.verificationMail.idle();
  const sent = mails.filter((m) => m.to.includes(email));
  assert.is(sent.length, 1);
  assert.is(sent[0].from, 'accounts@provenant.example');
  const page = await open(srv, linkIn(srv, sent[0].data).url);
  assert.is(page.status, 200, page.html);
  assert.is((await me(srv, user)).email_verified, true);
  assert.equal(outbox(srv), []);
  assert.is((await srv.deps.parts.health()).verification_mail.sent, 1);
});

smtp('registration does not wait on the mail server: answered while the send hangs; a failed send is retried by a resend', async () => {
  // a mail server that accepts connections and never says a word, then one that hangs up at once
  const held = new Set<Socket>();
  let silent = true;
  const mute = createServer((socket) => (silent ? held.add(socket) : socket.destroy()));
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', () => resolve()));
  const port = (mute.address() as { port: number }).port;
  const srv = await startTestServer({ PROVENANT_SMTP_URL: `smtp://127.0.0.1:${port}` }, { engine });
  try {
    const user = await srv.register(address('mute'));
    assert.is(srv.deps.verificationMail.pending, 1, 'the send is still in flight after the 201');
    silent = false;
    for (const socket of held) socket.destroy(); // the connection drops: the send fails
    await srv.deps.verificationMail.idle();
    assert.equal(srv.deps.verificationMail.counts, { sent: 0, failed: 1 });
    assert.is((await me(srv, user)).email_verified, false);
    const resend = await apiRequest(srv.url, 'POST', RESEND, { token: user.token });
    assert.is(resend.status, 202, 'asking again queues a new link');
    await srv.deps.verificationMail.idle();
    assert.equal(srv.deps.verificationMail.counts, { sent: 0, failed: 2 }, 'sent again (and failed again here)');
  } finally {
    for (const socket of held) socket.destroy();
    await srv.close();
    await new Promise<void>((resolve) => mute.close(() => resolve()));
  }
});

smtp.run();
