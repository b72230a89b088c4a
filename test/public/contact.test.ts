// POST /contact, the blind relay (spec 4.13): one answer for every case, byte for byte;
// messages queued and sent in the background, to a real SMTP server (smtp-server on
// loopback) or, without SMTP, into the outbox as .eml files; From the service, To the
// signer, Reply-To the sender, no other address anywhere; only to verified addresses;
// header injection neutralised.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startSmtpCapture, type CapturedMail, type SmtpCapture } from '../helpers/smtp.js';
import { ContactRelay } from '../../server/src/contact/mailer.js';
import { startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { newSigner, S, sign, revoke, type Signer } from './support.js';

/** SQLite, or PostgreSQL when imported with ?engine=postgres (test/postgres/suites.test.ts). */
const engine = testEngine(import.meta.url);

const hex = () => randomBytes(32).toString('hex');
let ipCounter = 0;
/** A fresh client address per call (PROVENANT_TRUST_PROXY=1), so the 3/hour limit is the test's to spend. */
const freshIp = () => `203.0.113.${++ipCounter}`;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function contact(srv: TestServer, body: string | object, opts: { ip?: string; type?: string } = {}): Promise<Answer> {
  const res = await fetch(`${srv.url}${S}/contact`, {
    method: 'POST',
    headers: { 'content-type': opts.type ?? 'application/json', 'x-forwarded-for': opts.ip ?? freshIp() },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    // Date is the clock's; X-Request-Id is new on every answer of every endpoint
    if (k !== 'date' && k !== 'x-request-id') headers[k] = v;
  });
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

function request(signer: Signer | { agentKey: string }, over: Record<string, unknown> = {}) {
  return { signer_agent_key: signer.agentKey, sender_name: 'Bea Buyer', sender_email: 'bea@buyer.example', message: 'May I license this photo?', purpose: 'licensing', ...over };
}

/** The outbox's messages: each .eml with its envelope. */
function outbox(srv: TestServer): { eml: string; envelope: { from: string; to: string[] }; mode: number }[] {
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

/** The header block of a message, unfolded, as [name, value] in order. */
function headersOf(eml: string): [string, string][] {
  const head = eml.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  return head.split(/\r?\n/).map((line) => {
    const i = line.indexOf(':');
    return [line.slice(0, i).toLowerCase(), line.slice(i + 1).trim()];
  });
}

const named = (h: [string, string][], name: string) => h.filter(([n]) => n === name).map(([, v]) => v);

/** Every e-mail address anywhere in a message (headers and body), but the Message-ID's id. */
function addressesIn(eml: string): string[] {
  const unfolded = eml.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/).filter((line) => !/^message-id:/i.test(line)).join('\n');
  return [...new Set(unfolded.match(/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g) ?? [])].sort();
}

// ---------------------------------------------------------------- the outbox (no SMTP)

const relay = suite<{ srv: TestServer; optedIn: Signer; silent: Signer; profile: Signer; unverified: Signer; fileOpen: string; fileClosed: string; fileUnverified: string }>('contact relay, outbox');

relay.before(async (ctx) => {
  ctx.srv = await startTestServer({ PROVENANT_TRUST_PROXY: '1', PROVENANT_MAIL_FROM: 'relay@provenant.example' }, { engine });
  ctx.optedIn = await newSigner(ctx.srv, { email: `open-${Date.now()}@signer.example` });
  ctx.silent = await newSigner(ctx.srv, { email: `closed-${Date.now()}@signer.example` });
  ctx.profile = await newSigner(ctx.srv, { email: `profile-${Date.now()}@signer.example`, contactOptIn: true });
  // opted in everywhere, but the address was never confirmed: counts as not opted in
  ctx.unverified = await newSigner(ctx.srv, { email: `unverified-${Date.now()}@signer.example`, contactOptIn: true, verified: false });
  ctx.fileOpen = hex();
  ctx.fileClosed = hex();
  ctx.fileUnverified = hex();
  await sign(ctx.srv, ctx.unverified, { file_hash: ctx.fileUnverified, content_rights: { contact_preference: 'allow_contact_requests' } });
  await sign(ctx.srv, ctx.optedIn, { file_hash: ctx.fileOpen, content_rights: { license: 'cc-by', contact_preference: 'allow_contact_requests' } });
  await sign(ctx.srv, ctx.silent, { file_hash: ctx.fileClosed, content_rights: { contact_preference: 'no_contact' } });
  await ctx.srv.deps.verificationMail.idle(); // the signers' address-verification mails are in the outbox before any count
});
relay.after(async ({ srv }) => srv.close());

relay('every case answers the same status, headers and bytes: invalid, unknown, not opted in, opted in, over the limit', async (ctx) => {
  const { srv } = ctx;
  const unknown = { agentKey: `uhCAk${randomBytes(36).toString('base64url')}` };
  const cases: [string, string | object, { type?: string }?][] = [
    ['opted in', request(ctx.optedIn, { file_hash: ctx.fileOpen })],
    ['not opted in', request(ctx.silent, { file_hash: ctx.fileClosed })],
    ['unknown signer', request(unknown, { file_hash: hex() })],
    ['profile contact, opted in', request(ctx.profile)],
    ['profile contact, not opted in', request(ctx.silent)],
    ['opted in, address not verified', request(ctx.unverified, { file_hash: ctx.fileUnverified })],
    ['profile contact opted in, address not verified', request(ctx.unverified)],
    ['missing sender_email', request(ctx.optedIn, { file_hash: ctx.fileOpen, sender_email: undefined })],
    ['message over 500 characters', request(ctx.optedIn, { file_hash: ctx.fileOpen, message: 'x'.repeat(501) })],
    ['bad file_hash', request(ctx.optedIn, { file_hash: 'nope' })],
    ['not JSON', '{"signer_agent_key":'],
    ['a JSON array', '[1,2]'],
    ['an XML body', '<contact/>', { type: 'application/xml' }],
    ['empty body', ''],
  ];
  const answers = [];
  for (const [label, body, opts] of cases) answers.push([label, await contact(srv, body, opts)] as const);
  // over the limit: 3 per hour per IP, the 4th and later answered alike
  const ip = freshIp();
  for (let i = 0; i < 5; i++) answers.push([`request ${i + 1} from one address`, await contact(srv, request(ctx.silent), { ip })] as const);

  const [, first] = answers[0];
  assert.is(first.status, 200);
  assert.equal(JSON.parse(first.body.toString()), { success: true, message: JSON.parse(first.body.toString()).message });
  for (const [label, a] of answers) {
    assert.is(a.status, 200, label);
    assert.ok(a.body.equals(first.body), `${label}: the same bytes`);
    assert.equal(a.headers, first.headers, `${label}: the same headers`);
  }
  assert.not.ok(Object.keys(first.headers).some((h) => h.startsWith('x-ratelimit') || h === 'retry-after'), 'no limit headers tell the limit apart');
  await srv.deps.contactRelay.idle();
});

relay('delivered to the outbox only where the signer opted in with a verified address: one .eml per message, 0600, From the service, To the signer, Reply-To the sender, no other address', async (ctx) => {
  const { srv } = ctx;
  const before = outbox(srv).length;
  await contact(srv, request(ctx.optedIn, { file_hash: ctx.fileOpen, message: 'Hello from the outbox test', sender_name: 'Outbox Tester' }));
  await contact(srv, request(ctx.silent, { file_hash: ctx.fileClosed, message: 'never delivered' }));
  await contact(srv, request(ctx.silent, { message: 'never delivered either' }));
  await contact(srv, request(ctx.unverified, { file_hash: ctx.fileUnverified, message: 'not to an unconfirmed address' }));
  await contact(srv, request(ctx.unverified, { message: 'nor through the profile' }));
  await srv.deps.contactRelay.idle();
  const mails = outbox(srv).slice(before);
  assert.is(mails.length, 1, 'only the opted-in signer with a verified address gets mail');
  const [mail] = mails;
  assert.is(mail.mode, 0o600);
  assert.equal(mail.envelope, { from: 'relay@provenant.example', to: [ctx.optedIn.email] });
  const h = headersOf(mail.eml);
  assert.equal(named(h, 'from').length, 1, 'exactly one From');
  assert.match(named(h, 'from')[0], /<relay@provenant\.example>$/);
  assert.equal(named(h, 'bcc'), []);
  assert.equal(named(h, 'cc'), []);
  assert.equal(named(h, 'to'), [ctx.optedIn.email], 'To: the signer, their own address alone');
  assert.equal(named(h, 'reply-to'), ['Outbox Tester <bea@buyer.example>']);
  assert.is(mail.eml.split(ctx.optedIn.email).length - 1, 1, "the signer's address only in To");
  assert.is(mail.eml.split('bea@buyer.example').length - 1, 1, "the sender's address only in Reply-To");
  assert.equal(addressesIn(mail.eml), ['bea@buyer.example', ctx.optedIn.email, 'relay@provenant.example'].sort(), 'no other address anywhere');
  assert.ok(mail.eml.includes('Hello from the outbox test'));
  assert.ok(mail.eml.includes(ctx.fileOpen));
  assert.is(await srv.deps.store.contacts.pending(), 0, 'delivered and dropped requests leave the queue');
});

relay('a profile contact goes to a signer whose profile accepts contact; a revoked signature no longer opts in', async (ctx) => {
  const { srv } = ctx;
  let before = outbox(srv).length;
  await contact(srv, request(ctx.profile, { message: 'about your work in general' }));
  await srv.deps.contactRelay.idle();
  const mails = outbox(srv).slice(before);
  assert.is(mails.length, 1);
  assert.equal(mails[0].envelope.to, [ctx.profile.email]);
  assert.match(mails[0].eml, /creator profile/);

  const file = hex();
  const action = await sign(srv, ctx.silent, { file_hash: file, content_rights: { contact_preference: 'allow_contact_requests' } });
  await revoke(srv, ctx.silent, action);
  before = outbox(srv).length;
  await contact(srv, request(ctx.silent, { file_hash: file }));
  await srv.deps.contactRelay.idle();
  assert.is(outbox(srv).length, before, 'revoked: not delivered');
});

relay('CR/LF and header injection in every field is neutralised: one line per header, no added header, no second address', async (ctx) => {
  const { srv } = ctx;
  const before = outbox(srv).length;
  await contact(srv, request(ctx.optedIn, {
    file_hash: ctx.fileOpen,
    sender_name: 'Eve\r\nBcc: victim@evil.example\r\nX-Injected: 1',
    message: 'line one\r\nBcc: victim2@evil.example\r\n\r\n.\r\nMAIL FROM:<x@evil.example>',
    purpose: 'licensing\r\nBcc: victim3@evil.example',
  }));
  // an address with a line break, a comma or a second address is dropped, not sent
  for (const email of ['bea@buyer.example\r\nBcc: v@evil.example', 'a@b.example, v@evil.example', 'Eve <eve@evil.example>', 'eve@evil.example\n']) {
    await contact(srv, request(ctx.optedIn, { file_hash: ctx.fileOpen, sender_email: email }));
  }
  await srv.deps.contactRelay.idle();
  const mails = outbox(srv).slice(before);
  assert.is(mails.length, 1, 'only the request with a plain address is sent');
  const h = headersOf(mails[0].eml);
  assert.equal(named(h, 'bcc'), []);
  assert.equal(named(h, 'x-injected'), []);
  assert.is(named(h, 'reply-to').length, 1);
  assert.match(named(h, 'reply-to')[0], /^"?Eve Bcc: victim@evil\.example X-Injected: 1"? <bea@buyer\.example>$/);
  assert.match(named(h, 'subject')[0], /^Contact request \(other\)/, 'an unknown purpose is recorded as other');
  assert.equal(mails[0].envelope.to, [ctx.optedIn.email], 'no recipient added');
});

relay('a request queued before a restart is sent by the next relay over the same store', async (ctx) => {
  const { srv } = ctx;
  const before = outbox(srv).length;
  await srv.deps.store.contacts.enqueue({
    signerAgentKey: ctx.optedIn.agentKey, fileHash: ctx.fileOpen, senderName: 'Left Over', senderEmail: 'left@over.example',
    message: 'queued while the relay was down', purpose: 'other', createdAt: Date.now(),
  });
  const next = new ContactRelay({ store: srv.deps.store, config: srv.deps.config, log: srv.deps.log, mail: srv.deps.mail });
  next.start();
  await next.idle();
  await next.close();
  await srv.deps.contactRelay.idle();
  const mails = outbox(srv).slice(before);
  assert.is(mails.length, 1, 'sent once');
  assert.ok(mails[0].eml.includes('queued while the relay was down'));
});

relay.run();

// ---------------------------------------------------------------- SMTP

const smtp = suite<{ srv: TestServer; server: SmtpCapture; mails: CapturedMail[]; signer: Signer; file: string }>('contact relay, SMTP');

smtp.before(async (ctx) => {
  ctx.server = await startSmtpCapture();
  ctx.mails = ctx.server.mails;
  ctx.srv = await startTestServer({ PROVENANT_SMTP_URL: ctx.server.url, PROVENANT_MAIL_FROM: 'relay@provenant.example' }, { engine });
  ctx.signer = await newSigner(ctx.srv, { email: `smtp-${Date.now()}@signer.example` });
  ctx.file = hex();
  await sign(ctx.srv, ctx.signer, { file_hash: ctx.file, content_rights: { contact_preference: 'allow_contact_requests' } });
  await ctx.srv.deps.verificationMail.idle();
  ctx.mails.length = 0; // the signer's address-verification mail: not the relay's
});
smtp.after(async ({ srv, server }) => {
  await srv.close();
  await server.close();
});

smtp('delivered over SMTP: envelope and To the signer, one From, no Cc or Bcc, the sender only in Reply-To, no other address, no outbox file', async (ctx) => {
  const { srv } = ctx;
  const r = await contact(srv, request(ctx.signer, { file_hash: ctx.file, message: 'over real SMTP' }));
  assert.is(r.status, 200);
  await srv.deps.contactRelay.idle();
  assert.is(ctx.mails.length, 1);
  const [mail] = ctx.mails;
  assert.is(mail.from, 'relay@provenant.example');
  assert.equal(mail.to, [ctx.signer.email]);
  const h = headersOf(mail.data);
  assert.is(named(h, 'from').length, 1);
  assert.match(named(h, 'from')[0], /<relay@provenant\.example>$/);
  assert.equal(named(h, 'bcc'), []);
  assert.equal(named(h, 'cc'), []);
  assert.equal(named(h, 'to'), [ctx.signer.email], 'To: the signer (SpamAssassin MISSING_HEADERS otherwise)');
  assert.equal(named(h, 'reply-to'), ['Bea Buyer <bea@buyer.example>']);
  assert.is(mail.data.split(ctx.signer.email).length - 1, 1, "the signer's address only in To");
  assert.is(mail.data.split('bea@buyer.example').length - 1, 1);
  assert.equal(addressesIn(mail.data), ['bea@buyer.example', ctx.signer.email, 'relay@provenant.example'].sort(), 'no other address anywhere');
  assert.ok(mail.data.includes('over real SMTP'));
  assert.equal(outbox(srv), []);
  const health = (await srv.deps.parts.health()).contact_relay;
  assert.is(health.transport, 'smtp');
  assert.is(health.pending, 0);
});

smtp('an SMTP server that is down: the answer is the same, the request stays queued for a retry', async () => {
  const srv = await startTestServer({ PROVENANT_SMTP_URL: 'smtp://127.0.0.1:1' }, { engine });
  try {
    const signer = await newSigner(srv);
    const file = hex();
    await sign(srv, signer, { file_hash: file, content_rights: { contact_preference: 'allow_contact_requests' } });
    const r = await contact(srv, request(signer, { file_hash: file }));
    assert.is(r.status, 200);
    await srv.deps.contactRelay.idle();
    assert.is(srv.deps.contactRelay.counts.failed, 1);
    assert.is(await srv.deps.store.contacts.pending(), 1, 'kept for a later attempt');
  } finally {
    await srv.close();
  }
});

smtp.run();
